import fp from 'fastify-plugin';
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { AbuseMetrics } from '@onsale/shared/abuse';
import type { StoreApiConfig } from '../env.js';
import { errorSchema } from '../routes/schemas.js';
import type { OutageLog } from './redis.js';

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

type Limiter = (
  req: FastifyRequest,
) => Promise<
  | { isAllowed: true; key: string }
  | { isAllowed: false; key: string; max: number; remaining: number; ttlInSeconds: number; isExceeded: boolean }
>;

/** The limiters of every group, over one store (memory or Redis). */
async function limiterSet(
  app: FastifyInstance,
  config: StoreApiConfig['rateLimit'],
  store: { cache: number } | { redis: Redis; nameSpace: string },
) {
  // Each store in a context of its own (the plugin decorates the context it is registered in).
  let create!: FastifyInstance['createRateLimit'];
  await app.register(async (child) => {
    await child.register(rateLimit, { global: false, ...store });
    create = child.createRateLimit.bind(child);
  });
  const timeWindow = config.windowSeconds * 1000;
  // Keys name the group and the scope: with Redis every limiter shares one key space.
  const limiter = (max: number, keyGenerator: (req: FastifyRequest) => string) =>
    create({ max, timeWindow, keyGenerator, cache: config.cacheSize } as Parameters<typeof create>[0]) as Limiter;
  return Object.fromEntries(
    (['join', 'status', 'hold'] as const).map((g) => [
      g,
      {
        ip: limiter(config[g].perIp, (req) => `${g}:ip:${normalizeIP(req.ip)}`),
        account: limiter(config[g].perAccount, (req) => `${g}:account:${req.accountId}`),
      },
    ]),
  ) as Record<Group, { ip: Limiter; account: Limiter }>;
}

/**
 * Request limits per account and per IP on join, status and hold (@fastify/rate-limit's limiter; fixed windows).
 * The IP is checked first, before the account token is verified, so a flood from one address costs a map lookup;
 * the account is checked once the account hook has identified the fan. A refusal is 429 with Retry-After and
 * `{ error: 'RATE_LIMITED', message, retryAfterSeconds }`. With a Redis client (REDIS_URL) the counts are Redis's,
 * shared by every store-API process, so a limit holds across them; while Redis does not answer, and without it,
 * each process counts in its own memory (N processes then let through up to N times a limit).
 */
export const rateLimitPlugin = fp<{
  config: StoreApiConfig['rateLimit'];
  metrics: AbuseMetrics;
  redis?: { client: Redis; keyPrefix: string; outage: OutageLog };
}>(
  async (app, { config, metrics, redis }) => {
    app.decorateRequest('requestCounts', null);
    if (!config.enabled) return;
    const local = await limiterSet(app, config, { cache: config.cacheSize });
    const shared = redis ? await limiterSet(app, config, { redis: redis.client, nameSpace: `${redis.keyPrefix}rl:` }) : null;
    const check = async (group: Group, scope: 'ip' | 'account', req: FastifyRequest) => {
      if (shared) {
        try {
          const r = await shared[group][scope](req);
          redis!.outage.ok();
          return r;
        } catch (err) {
          redis!.outage.failed(err);
        }
      }
      return local[group][scope](req);
    };

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
      const r = await check(group, 'ip', req);
      if (r.isAllowed) return;
      req.requestCounts = { account: 0, ip: r.max - r.remaining };
      if (r.isExceeded) return refuse(reply, group, 'ip', r);
    });
    // preParsing: after every onRequest hook, so the account is known (and unadmitted requests are already out).
    app.addHook('preParsing', async (req, reply) => {
      const group = groupOf(req);
      if (!group || !req.accountId) return;
      const r = await check(group, 'account', req);
      if (r.isAllowed) return;
      req.requestCounts = { account: r.max - r.remaining, ip: req.requestCounts?.ip ?? 0 };
      if (r.isExceeded) return refuse(reply, group, 'account', r);
    });
  },
  { name: 'rate-limit' },
);
