import fp from 'fastify-plugin';
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AbuseMetrics } from '@onsale/shared/abuse';
import type { StoreApiConfig } from '../env.js';
import { errorSchema } from '../routes/schemas.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Requests counted so far in the current window on this route group, by this account and from this IP. */
    requestCounts: { account: number; ip: number } | null;
  }
}

type Group = 'join' | 'status' | 'hold';

/** The routes with request limits, by name. Everything else (metrics, health, docs, event pages) has none. */
export const RATE_LIMITED: Readonly<Record<string, Group>> = {
  'POST /events/:id/queue': 'join',
  'GET /events/:id/queue/status': 'status',
  'POST /events/:id/holds': 'hold',
  // A lottery event's join is its registration, its status poll the fan's registration, its admission the invitation.
  'POST /events/:id/lottery/registrations': 'join',
  'GET /events/:id/lottery/registration': 'status',
  'POST /events/:id/lottery/admission': 'join',
};

type Limiter = (req: FastifyRequest) => Promise<
  | { isAllowed: true; key: string }
  | { isAllowed: false; key: string; max: number; remaining: number; ttlInSeconds: number; isExceeded: boolean }
>;

/**
 * Request limits per account and per IP on join, status and hold (@fastify/rate-limit's limiter and in-memory
 * store; fixed windows). The IP is checked first, before the account token is verified, so a flood from one
 * address costs a map lookup; the account is checked once the account hook has identified the fan. A refusal is
 * 429 with Retry-After and `{ error: 'RATE_LIMITED', message, retryAfterSeconds }`. Counts live in this
 * instance's memory: behind a balancer each instance counts its own share, so a deployment of N instances either
 * divides the limits by N or moves the counts to a shared store (@fastify/rate-limit takes a Redis client).
 */
export const rateLimitPlugin = fp<{ config: StoreApiConfig['rateLimit']; metrics: AbuseMetrics }>(
  async (app, { config, metrics }) => {
    app.decorateRequest('requestCounts', null);
    if (!config.enabled) return;
    await app.register(rateLimit, { global: false, cache: config.cacheSize });
    const timeWindow = config.windowSeconds * 1000;
    const limiter = (max: number, keyGenerator: (req: FastifyRequest) => string) =>
      app.createRateLimit({ max, timeWindow, keyGenerator, cache: config.cacheSize } as Parameters<typeof app.createRateLimit>[0]) as Limiter;
    const limiters = Object.fromEntries(
      (['join', 'status', 'hold'] as const).map((g) => [
        g,
        { ip: limiter(config[g].perIp, (req) => normalizeIP(req.ip)), account: limiter(config[g].perAccount, (req) => req.accountId) },
      ]),
    ) as Record<Group, { ip: Limiter; account: Limiter }>;

    const groupOf = (req: FastifyRequest) => (req.routeOptions.url ? RATE_LIMITED[`${req.method} ${req.routeOptions.url}`] : undefined);
    const refuse = (reply: FastifyReply, group: Group, scope: 'ip' | 'account', r: { max: number; ttlInSeconds: number }) => {
      metrics.rateLimited.inc({ route: group, scope });
      const retryAfterSeconds = Math.max(1, r.ttlInSeconds);
      return reply
        .code(429)
        .header('retry-after', String(retryAfterSeconds))
        .header('x-ratelimit-limit', String(r.max))
        .header('x-ratelimit-remaining', '0')
        .send({
          error: 'RATE_LIMITED',
          message: `too many requests from this ${scope === 'ip' ? 'address' : 'account'} (at most ${r.max} per ${config.windowSeconds} s); retry after ${retryAfterSeconds} s`,
          retryAfterSeconds,
          scope,
          limit: r.max,
          windowSeconds: config.windowSeconds,
        });
    };

    // A 429 is part of each limited route's contract (and so of the generated OpenAPI document).
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat())
        if (RATE_LIMITED[`${method} ${route.url}`] && route.schema?.response && typeof route.schema.response === 'object')
          (route.schema.response as Record<number, unknown>)[429] ??= errorSchema;
    });

    app.addHook('onRequest', async (req, reply) => {
      const group = groupOf(req);
      if (!group) return;
      const r = await limiters[group].ip(req);
      if (r.isAllowed) return;
      req.requestCounts = { account: 0, ip: r.max - r.remaining };
      if (r.isExceeded) return refuse(reply, group, 'ip', r);
    });
    // preParsing: after every onRequest hook, so the account is known (and unadmitted requests are already out).
    app.addHook('preParsing', async (req, reply) => {
      const group = groupOf(req);
      if (!group || !req.accountId) return;
      const r = await limiters[group].account(req);
      if (r.isAllowed) return;
      req.requestCounts = { account: r.max - r.remaining, ip: req.requestCounts?.ip ?? 0 };
      if (r.isExceeded) return refuse(reply, group, 'account', r);
    });
  },
  { name: 'rate-limit' },
);
