import { createRequire } from 'node:module';
import fp from 'fastify-plugin';
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { localShareOfLimit, type AbuseMetrics } from '@onsale/shared/abuse';
import type { StoreApiConfig } from '../env.js';
import { errorSchema } from '../routes/schemas.js';
import type { Answer } from '../errors.js';
import type { OutageLog } from './redis.js';
import { routeOf } from './route-of.js';
import { JOIN_ROUTE_KEY } from '../routes/queue/join-checks.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Requests counted so far in the current window on this route group, by this account and from this IP. */
    requestCounts: { account: number; ip: number } | null;
  }
  interface FastifyInstance {
    /** The request limits as the hooks count them, for requests run without a request of their own (the edge's joins). */
    requestLimits: RequestLimits;
  }
}

export type Group = 'join' | 'status' | 'hold';

/** Who a request is, as the limits count it: its address (Fastify's req.ip) and, once known, its account. */
export interface Counted {
  ip: string | undefined;
  accountId: string;
}

/** One request's count on a limit: its place in the window, and the refusal when over it. */
export interface LimitCount {
  /** Requests counted in the window so far, this one included. */
  used: number;
  /** The 429 this request gets, or null when it is within the limit. */
  refusal: Answer | null;
}

/**
 * The request limits the hooks apply, for code that counts a request itself (POST /edge/joins runs each join of a
 * batch without a request of its own): null when the request is not counted (limits off), else its count and refusal.
 */
export interface RequestLimits {
  count(group: Group, scope: 'ip' | 'account', who: Counted): LimitCount | null | Promise<LimitCount | null>;
}

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

/** What the hooks need of one limiter's count (@fastify/rate-limit's result, narrowed). */
interface Count {
  max: number;
  remaining: number;
  ttlInSeconds: number;
  isExceeded: boolean;
}

type Limiter = (req: Counted) => Promise<{ isAllowed: true; key: string } | ({ isAllowed: false; key: string } & Count)>;

/** The limiter's memory store (fixed windows in a bounded LRU), used synchronously below. */
interface LocalStoreLike {
  incr(key: string, cb: (err: Error | null, res: { current: number; ttl: number }) => void, timeWindow: number, max: number): void;
}
const LocalStore = createRequire(import.meta.url)('@fastify/rate-limit/store/LocalStore.js') as new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
  cache: number,
) => LocalStoreLike;

// An address without a colon is not IPv6, and normalizeIP only lower-cases those: the IPv6 pattern is skipped.
// Node leaves the socket's address undefined once the client has hung up (Fastify's req.ip is then undefined, though
// typed string): such a request is counted under one key of its own rather than failing with a TypeError (a 500).
export const ipKey = (ip: string | undefined) =>
  ip === undefined ? 'disconnected' : ip.includes(':') ? normalizeIP(ip) : ip.toLowerCase();

// Redis's keys name the group and the scope: there every limiter shares one key space.
const keyOf = (group: Group, scope: 'ip' | 'account', req: Counted) =>
  scope === 'ip' ? `${group}:ip:${ipKey(req.ip)}` : `${group}:account:${req.accountId}`;

const GROUPS = ['join', 'status', 'hold'] as const;
const maxOf = (config: StoreApiConfig['rateLimit'], group: Group, scope: 'ip' | 'account') =>
  config[group][scope === 'ip' ? 'perIp' : 'perAccount'];

/**
 * The limiters of every group in this process's memory: @fastify/rate-limit's own store with the options its
 * createRateLimit gives it (fixed windows, no continueExceeding, no backoff, an LRU of cacheSize keys per limiter),
 * counted without a promise (the store answers synchronously), so a request in memory mode passes without one.
 * `share` scales each limit (the fallback while Redis is away counts 1/N of it, see localShareOfLimit).
 */
function localLimiters(config: StoreApiConfig['rateLimit'], share: (limit: number) => number = (limit) => limit) {
  const timeWindow = config.windowSeconds * 1000;
  const limiter = (group: Group, scope: 'ip' | 'account') => {
    const store = new LocalStore(false, false, config.cacheSize);
    const max = share(maxOf(config, group, scope));
    // The store calls back before incr returns: one callback per limiter, not a closure per request.
    let res = { current: 0, ttl: 0 };
    const got = (_err: Error | null, r: { current: number; ttl: number }) => void (res = r);
    // Each limiter has a store of its own here, so its keys need not name the group and scope: the account id (the
    // same string every poll, its hash computed once) and the address are the keys as they are.
    return (req: Counted): Count => {
      store.incr(scope === 'ip' ? ipKey(req.ip) : req.accountId, got, timeWindow, max);
      const { current, ttl } = res;
      return { max, remaining: Math.max(0, max - current), ttlInSeconds: Math.ceil(ttl / 1000), isExceeded: current > max };
    };
  };
  return Object.fromEntries(GROUPS.map((g) => [g, { ip: limiter(g, 'ip'), account: limiter(g, 'account') }])) as Record<
    Group,
    { ip: (req: Counted) => Count; account: (req: Counted) => Count }
  >;
}

/** The limiters of every group over Redis (every store-API process's counts), through @fastify/rate-limit. */
async function redisLimiters(app: FastifyInstance, config: StoreApiConfig['rateLimit'], store: { redis: Redis; nameSpace: string }) {
  // The store in a context of its own (the plugin decorates the context it is registered in).
  let create!: FastifyInstance['createRateLimit'];
  await app.register(async (child) => {
    await child.register(rateLimit, { global: false, ...store });
    create = child.createRateLimit.bind(child);
  });
  const timeWindow = config.windowSeconds * 1000;
  const limiter = (group: Group, scope: 'ip' | 'account') =>
    create({
      max: maxOf(config, group, scope),
      timeWindow,
      keyGenerator: (req: Counted) => keyOf(group, scope, req),
      cache: config.cacheSize,
    } as Parameters<typeof create>[0]) as Limiter;
  return Object.fromEntries(GROUPS.map((g) => [g, { ip: limiter(g, 'ip'), account: limiter(g, 'account') }])) as Record<
    Group,
    { ip: Limiter; account: Limiter }
  >;
}

/**
 * Request limits per account and per IP on join, status and hold (@fastify/rate-limit's limiter; fixed windows).
 * The IP is checked first, before the account token is verified, so a flood from one address costs a map lookup;
 * the account is checked once the account hook has identified the fan. A refusal is 429 with Retry-After and
 * `{ error: 'RATE_LIMITED', message, retryAfterSeconds }`. With a Redis client (REDIS_URL) the counts are Redis's,
 * shared by every store-API process, so a limit holds across them. While Redis does not answer, each process counts
 * in its own memory at its share of every limit (the limit divided by `config.processes`, STORE_API_PROCESSES), so
 * the processes together still allow no more than the limit; `request_limits_local` says so on /metrics (the war
 * room's SHARED_LIMITS_DOWN alert). Without Redis each process counts the whole limit (one process: the limit).
 */
export const rateLimitPlugin = fp<{
  config: StoreApiConfig['rateLimit'];
  metrics: AbuseMetrics;
  redis?: { client: Redis; keyPrefix: string; outage: OutageLog };
}>(
  async (app, { config, metrics, redis }) => {
    app.decorateRequest('requestCounts', null);
    if (!config.enabled) {
      app.decorate('requestLimits', { count: () => null } satisfies RequestLimits);
      return;
    }
    const local = localLimiters(config);
    const shared = redis ? await redisLimiters(app, config, { redis: redis.client, nameSpace: `${redis.keyPrefix}rl:` }) : null;
    // While Redis is away: this process's share of each limit, so N processes together allow no more than it.
    const fallback = shared ? localLimiters(config, (limit) => localShareOfLimit(limit, config.processes)) : local;
    let localNow = false;
    const counting = (isLocal: boolean) => {
      if (isLocal === localNow) return;
      localNow = isLocal;
      metrics.requestLimitsLocal.set(isLocal ? config.processes : 0);
    };
    // Redis's count, or this process's (without Redis; its share while Redis does not answer), the latter without a promise.
    const check = (group: Group, scope: 'ip' | 'account', req: Counted): Count | null | Promise<Count | null> => {
      if (!shared) return local[group][scope](req);
      return shared[group][scope](req).then(
        (r) => {
          redis!.outage.ok();
          counting(false);
          return r.isAllowed ? null : r;
        },
        (err: unknown) => {
          redis!.outage.failed(err);
          counting(true);
          return fallback[group][scope](req);
        },
      );
    };
    // The join route counts its own (its checks' order lives in routes/queue/join-checks.ts, with requestLimits).
    const groupOf = (req: FastifyRequest) => {
      const { key } = routeOf(req);
      return key && key !== JOIN_ROUTE_KEY ? RATE_LIMITED[key] : undefined;
    };
    const refusal = (group: Group, scope: 'ip' | 'account', r: { max: number; ttlInSeconds: number }): Answer => {
      metrics.rateLimited.inc({ route: group, scope });
      const retryAfterSeconds = Math.max(1, r.ttlInSeconds);
      return {
        status: 429,
        headers: { 'retry-after': String(retryAfterSeconds), 'x-ratelimit-limit': String(r.max), 'x-ratelimit-remaining': '0' },
        body: {
          error: 'RATE_LIMITED',
          message: `too many requests from this ${scope === 'ip' ? 'address' : 'account'} (at most ${r.max} per ${config.windowSeconds} s); retry after ${retryAfterSeconds} s`,
          retryAfterSeconds,
          scope,
          limit: r.max,
          windowSeconds: config.windowSeconds,
        },
      };
    };
    const refuse = (reply: FastifyReply, group: Group, scope: 'ip' | 'account', r: { max: number; ttlInSeconds: number }) => {
      const a = refusal(group, scope, r);
      return reply.code(a.status).headers(a.headers).send(a.body);
    };
    const limitCount = (group: Group, scope: 'ip' | 'account', r: Count | null): LimitCount | null =>
      r && { used: r.max - r.remaining, refusal: r.isExceeded ? refusal(group, scope, r) : null };
    app.decorate('requestLimits', {
      count: (group, scope, who) => {
        // @fastify/rate-limit's limiter reads the request's route config (for a groupId): a request of no route has none.
        const r = check(group, scope, shared ? ({ ip: who.ip, accountId: who.accountId, routeOptions: { config: {} } } as Counted) : who);
        return r instanceof Promise ? r.then((x) => limitCount(group, scope, x)) : limitCount(group, scope, r);
      },
    } satisfies RequestLimits);

    // A 429 is part of each limited route's contract (and so of the generated OpenAPI document).
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat())
        if (RATE_LIMITED[`${method} ${route.url}`] && route.schema?.response && typeof route.schema.response === 'object')
          (route.schema.response as Record<number, unknown>)[429] ??= errorSchema;
    });

    // Callback hooks: a request counted in memory passes without a promise (status polls are the hottest of them).
    // A refusal is sent from the hook, which then does not call done.
    const counted = (
      req: FastifyRequest,
      reply: FastifyReply,
      done: (err?: Error) => void,
      group: Group,
      scope: 'ip' | 'account',
      r: Count | null,
    ) => {
      if (r) {
        req.requestCounts =
          scope === 'ip' ? { account: 0, ip: r.max - r.remaining } : { account: r.max - r.remaining, ip: req.requestCounts?.ip ?? 0 };
        if (r.isExceeded) return void refuse(reply, group, scope, r);
      }
      done();
    };
    const limit = (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void, group: Group, scope: 'ip' | 'account') => {
      let r: Count | null | Promise<Count | null>;
      try {
        r = check(group, scope, req);
      } catch (e) {
        return done(e as Error);
      }
      if (r instanceof Promise) r.then((x) => counted(req, reply, done, group, scope, x), done);
      else counted(req, reply, done, group, scope, r);
    };
    app.addHook('onRequest', (req, reply, done) => {
      const group = groupOf(req);
      if (!group) return done();
      limit(req, reply, done, group, 'ip');
    });
    // preParsing: after every onRequest hook, so the account is known (and unadmitted requests are already out).
    app.addHook('preParsing', (req, reply, _payload, done) => {
      const group = groupOf(req);
      if (!group || !req.accountId) return done();
      limit(req, reply, done, group, 'account');
    });
  },
  { name: 'rate-limit' },
);
