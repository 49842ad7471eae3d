import { z } from 'zod';
import { installDataDir, installSecrets, trustProxyOf } from '@onsale/shared/install';
import {
  checkTimeoutOrder,
  loadSheddingConfigOf,
  loadSheddingEnvShape,
  STORE_SERVER_TIMEOUTS,
  type LoadSheddingConfig,
} from '@onsale/shared/overload';

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const schema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  STORE_API_PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  STORE_API_HOST: z.string().default('127.0.0.1'),
  /**
   * Whose X-Forwarded-For to believe for the fan's address (rate limits per IP): unset, nobody's (the socket's
   * address); `true`, any proxy's (only when nothing else can reach the store API); else addresses or CIDR ranges,
   * comma-separated, or `loopback` (what `npm start -- --edge` sets: the local edge in front of it).
   */
  STORE_API_TRUST_PROXY: z.string().optional(),
  /**
   * Redis for what every store-API process must share: request-limit counters and used proof-of-work challenges.
   * Unset: each process counts in its own memory (N processes let through up to N times a limit).
   */
  REDIS_URL: z.string().url().optional(),
  /** Prefix of every key this install writes to Redis (tests use their own, so parallel runs do not collide). */
  REDIS_KEY_PREFIX: z.string().min(1).max(64).default('onsale:'),
  /** This process's name in GET /healthz (the multi-process start names them store-1, store-2, ...). */
  STORE_API_INSTANCE: z.string().min(1).max(64).default('store-1'),
  DATABASE_URL: z.string().url().optional(),
  // AUTH_SECRET, QUEUE_TOKEN_SECRET and CARD_FINGERPRINT_SECRET are read by installSecrets (the install's own
  // generated ones under ./.data/ when unset; required in production).
  /** Development sign-in (POST /auth/dev-login); off in production, where turning it on is refused. */
  DEV_AUTH: bool.optional(),
  /**
   * Fans' identity provider (OIDC): its JSON Web Key Set, and the issuer and audience every token must carry. Set,
   * account tokens are asymmetric JWTs (RS256, ES256, EdDSA) verified against it, the account being `sub`.
   */
  AUTH_JWKS_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  AUTH_ISSUER: z.string().min(1).optional(),
  AUTH_AUDIENCE: z.string().min(1).optional(),
  /** At most one key set fetch per this many seconds for an unknown `kid`; how long a fetched key set is used. */
  AUTH_JWKS_COOLDOWN_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
  AUTH_JWKS_CACHE_SECONDS: z.coerce.number().int().min(10).max(86_400).default(600),
  // Small on purpose: on a 2-core machine 8-12 connections out-run 30+ (less contention in PostgreSQL).
  DB_POOL_MAX: z.coerce.number().int().min(1).max(500).default(10),
  /**
   * The database's cores. The store processes together keep at most 5 connections per core of the database
   * (`storePoolSize`): with N processes each gets DB_POOL_MAX or its share of that, whichever is smaller. Unset: this
   * machine's cores when the database is on it (a Unix socket, loopback, the embedded server), else no bound.
   */
  DB_CORES: z.coerce.number().int().min(1).max(4096).optional(),
  /**
   * The longest a request waits for a pooled connection, ms: past it the request is answered 503 with Retry-After
   * (a database that hangs, or more work than the pool can do) instead of waiting for the socket timeouts.
   */
  DB_POOL_WAIT_MS: z.coerce.number().int().min(100).max(60_000).default(3000),
  /** Holds and checkouts take the next pooled connection before seat maps, joins and the rest (packages/shared/src/db/pool-lanes.ts). */
  DB_POOL_PRIORITY: bool.optional(),
  /**
   * The longest a request may take in the process, ms: past it, it is answered 503 with Retry-After (reason
   * request_budget) before any socket timeout could close it unanswered. Above DB_POOL_WAIT_MS, below the server's
   * 10 s idle-socket timeout; 0 (off) is refused in production. See checkTimeoutOrder.
   */
  REQUEST_BUDGET_MS: z.coerce.number().int().min(0).max(60_000).default(4000),
  /**
   * How hold attempts and releases commit: 'async' (default) without waiting for the WAL flush, 'sync' waiting for
   * it. Checkout and orders always wait. See HoldCommit in @onsale/shared/inventory for what 'async' risks.
   */
  HOLD_COMMIT: z.enum(['async', 'sync']).default('async'),
  /**
   * A fan's identical hold request without an Idempotency-Key within this many seconds of a live hold it made gets
   * that hold back rather than a second one (a retry whose answer was lost); 0 turns it off.
   */
  HOLD_REPEAT_WINDOW_SECONDS: z.coerce.number().int().min(0).max(600).default(30),
  /** Load shedding (@fastify/under-pressure): see loadSheddingEnvShape; the store API's classes are in plugins/load-shedding.ts. */
  ...loadSheddingEnvShape,
  /** Simulated payment gateway. */
  PAYMENT_TPS: z.coerce.number().int().min(1).default(1000),
  PAYMENT_LATENCY_MS: z.coerce.number().int().min(0).default(150),
  PAYMENT_FAILURE_RATE: z.coerce.number().min(0).max(1).default(0),
  /**
   * Request rate limits per account and per IP on join, status and hold, each per RATE_LIMIT_WINDOW_SECONDS.
   * Counted in Redis when REDIS_URL is set (every instance shares them), else in this instance's memory: N
   * instances behind a balancer then let through up to N times a limit.
   */
  RATE_LIMIT_ENABLED: bool.optional(),
  RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  RATE_LIMIT_JOIN_PER_ACCOUNT: z.coerce.number().int().min(1).default(20),
  RATE_LIMIT_JOIN_PER_IP: z.coerce.number().int().min(1).default(300),
  RATE_LIMIT_STATUS_PER_ACCOUNT: z.coerce.number().int().min(1).default(60),
  RATE_LIMIT_STATUS_PER_IP: z.coerce.number().int().min(1).default(1200),
  RATE_LIMIT_HOLD_PER_ACCOUNT: z.coerce.number().int().min(1).default(60),
  RATE_LIMIT_HOLD_PER_IP: z.coerce.number().int().min(1).default(600),
  /** Keys (accounts, addresses) remembered per limit; the least recently seen are forgotten first. */
  RATE_LIMIT_CACHE_SIZE: z.coerce.number().int().min(100).default(100_000),
  /**
   * How many store-API processes share REDIS_URL's counts (`npm start -- --store-instances N` sets it): while Redis
   * does not answer, each counts in its own memory at 1/N of every limit, so together they allow no more than it.
   */
  STORE_API_PROCESSES: z.coerce.number().int().min(1).max(10_000).default(1),
  /** The bot-score hook on queue joins: a score at or above BOT_CHALLENGE_SCORE must solve a proof-of-work, at or above BOT_LOW_PRIORITY_SCORE joins later. */
  BOT_GATE_ENABLED: bool.optional(),
  BOT_CHALLENGE_SCORE: z.coerce.number().min(0).max(1).default(0.6),
  BOT_LOW_PRIORITY_SCORE: z.coerce.number().min(0).max(1).default(0.85),
  BOT_LOW_PRIORITY_DELAY_SECONDS: z.coerce.number().int().min(0).max(86_400).default(60),
  POW_DIFFICULTY_BITS: z.coerce.number().int().min(1).max(32).default(18),
  POW_TTL_SECONDS: z.coerce.number().int().min(10).max(3600).default(120),
  /** The fans' page build (apps/fan's Vite output) served at /e/:eventId; unset: the page is not served. */
  FAN_DIR: z.string().min(1).optional(),
  /** Seconds an edge or CDN in front may serve `/e/:eventId` from its cache (CDN-Cache-Control); browsers always revalidate. 0: never. */
  FAN_PAGE_EDGE_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  /** Fans sign in with this OpenID Connect provider (authorization code + PKCE in the page); unset: no provider button. */
  FAN_OIDC_ISSUER: z.string().url().optional(),
  FAN_OIDC_CLIENT_ID: z.string().min(1).max(256).optional(),
  FAN_OIDC_SCOPE: z.string().min(1).max(500).default('openid profile'),
  /** Sent as `audience` to providers that want it (Auth0) for a JWT access token. */
  FAN_OIDC_AUDIENCE: z.string().min(1).max(500).optional(),
  /** Which of the provider's tokens the page sends as the account token (AUTH_AUDIENCE must match its `aud`). */
  FAN_OIDC_TOKEN: z.enum(['id_token', 'access_token']).default('id_token'),
  /** Where the provider sends fans back (registered with it as the redirect URI on this origin). */
  FAN_OIDC_REDIRECT_PATH: z
    .string()
    .regex(/^\/e\/[A-Za-z0-9._~/-]*$/, 'a path under /e/')
    .default('/e/callback'),
});

export interface StoreApiConfig {
  nodeEnv: 'development' | 'production' | 'test';
  port: number;
  host: string;
  /** Fastify's trustProxy: false, true, or the addresses / ranges whose X-Forwarded-For is believed. */
  trustProxy: boolean | string[];
  instance: string;
  /** Shared counters and single-use memory across processes; null: per process. */
  redis: { url: string; keyPrefix: string } | null;
  databaseUrl: string | undefined;
  authSecret: string;
  queueTokenSecret: string;
  /** Keys the stored fingerprints of payment cards (HMAC). */
  cardFingerprintSecret: string;
  devAuth: boolean;
  /** Where fans' account tokens come from: the install's own HS256 secret (development), or an identity provider. */
  identity:
    | { kind: 'dev' }
    | { kind: 'jwks'; jwksUrl: string; issuer: string; audience: string; cooldownSeconds: number; cacheMaxAgeSeconds: number };
  dbPoolMax: number;
  /** DB_CORES: the database's cores, when set (else judged from where the database is: `databaseCores`). */
  dbCores: number | undefined;
  dbPoolWaitMs: number;
  /** DB_POOL_PRIORITY: the purchase path first in the pool's queue. */
  dbPoolPriority: boolean;
  /** A request's budget in the process, ms (0: none); see REQUEST_BUDGET_MS. */
  requestBudgetMs: number;
  holdCommit: 'async' | 'sync';
  holdRepeatWindowSeconds: number;
  payment: { tps: number; latencyMs: number; failureRate: number };
  /** Load shedding: null when off. */
  loadShedding: LoadSheddingConfig;
  rateLimit: {
    enabled: boolean;
    windowSeconds: number;
    cacheSize: number;
    /** Store-API processes sharing the Redis counts: while Redis is away each counts 1/processes of every limit. */
    processes: number;
    join: RouteLimits;
    status: RouteLimits;
    hold: RouteLimits;
  };
  /** The fans' page: where its build is, and how fans sign in. */
  fan: {
    dir: string | undefined;
    /** How long a shared cache in front (the edge) may keep the page itself (CDN-Cache-Control), 0: not at all. */
    edgeCacheSeconds: number;
    oidc: {
      issuer: string;
      clientId: string;
      scope: string;
      audience: string | null;
      useToken: 'id_token' | 'access_token';
      redirectPath: string;
    } | null;
  };
  botGate: {
    enabled: boolean;
    challengeScore: number;
    lowPriorityScore: number;
    lowPriorityDelaySeconds: number;
    powDifficultyBits: number;
    powTtlSeconds: number;
  };
}

/** Requests allowed per window on one route group. */
export interface RouteLimits {
  perAccount: number;
  perIp: number;
}

/**
 * The store API's configuration, read from the environment in this one place and checked. Secrets not in the
 * environment are the install's own (`installSecrets` under `dataDir`, default ./.data/); production refuses to
 * start without explicit ones, and refuses DEV_AUTH.
 */
export function loadStoreApiConfig(env: NodeJS.ProcessEnv = process.env, opts: { dataDir?: string } = {}): StoreApiConfig {
  const e = schema.parse(env);
  const production = e.NODE_ENV === 'production';
  if (production && e.DEV_AUTH === true) throw new Error('DEV_AUTH is refused when NODE_ENV=production: anyone could sign in as any fan');
  const jwks = e.AUTH_JWKS_URL;
  if (jwks) {
    if (!e.AUTH_ISSUER || !e.AUTH_AUDIENCE)
      throw new Error(
        'AUTH_JWKS_URL needs AUTH_ISSUER and AUTH_AUDIENCE (a token for another application of the provider must not sign a fan in)',
      );
    if (e.DEV_AUTH === true)
      throw new Error('DEV_AUTH cannot be on with AUTH_JWKS_URL: fans sign in with the identity provider, and HS256 tokens are refused');
    const host = new URL(jwks).hostname;
    if (production && new URL(jwks).protocol !== 'https:' && host !== '127.0.0.1' && host !== 'localhost' && host !== '[::1]')
      throw new Error('AUTH_JWKS_URL must be https:// when NODE_ENV=production');
  }
  if (!!e.FAN_OIDC_ISSUER !== !!e.FAN_OIDC_CLIENT_ID)
    throw new Error('FAN_OIDC_ISSUER and FAN_OIDC_CLIENT_ID go together: set both, or neither');
  checkTimeoutOrder({ poolWaitMs: e.DB_POOL_WAIT_MS, requestBudgetMs: e.REQUEST_BUDGET_MS, production });
  if (e.BOT_LOW_PRIORITY_SCORE < e.BOT_CHALLENGE_SCORE) throw new Error('BOT_LOW_PRIORITY_SCORE must be at least BOT_CHALLENGE_SCORE');
  // With an identity provider the install's HS256 secret signs nothing, so production does not ask for it.
  const secrets = installSecrets(opts.dataDir ?? installDataDir(), env, jwks ? { optional: ['authSecret'] } : {});
  return {
    nodeEnv: e.NODE_ENV,
    port: e.STORE_API_PORT,
    host: e.STORE_API_HOST,
    trustProxy: trustProxyOf(e.STORE_API_TRUST_PROXY),
    instance: e.STORE_API_INSTANCE,
    redis: e.REDIS_URL ? { url: e.REDIS_URL, keyPrefix: e.REDIS_KEY_PREFIX } : null,
    databaseUrl: e.DATABASE_URL,
    authSecret: secrets.authSecret,
    queueTokenSecret: secrets.queueTokenSecret,
    cardFingerprintSecret: secrets.cardFingerprintSecret,
    devAuth: e.DEV_AUTH ?? (!production && !jwks),
    identity: jwks
      ? {
          kind: 'jwks',
          jwksUrl: jwks,
          issuer: e.AUTH_ISSUER!,
          audience: e.AUTH_AUDIENCE!,
          cooldownSeconds: e.AUTH_JWKS_COOLDOWN_SECONDS,
          cacheMaxAgeSeconds: e.AUTH_JWKS_CACHE_SECONDS,
        }
      : { kind: 'dev' },
    dbPoolMax: e.DB_POOL_MAX,
    dbCores: e.DB_CORES,
    dbPoolWaitMs: e.DB_POOL_WAIT_MS,
    dbPoolPriority: e.DB_POOL_PRIORITY ?? true,
    requestBudgetMs: e.REQUEST_BUDGET_MS,
    holdCommit: e.HOLD_COMMIT,
    holdRepeatWindowSeconds: e.HOLD_REPEAT_WINDOW_SECONDS,
    payment: { tps: e.PAYMENT_TPS, latencyMs: e.PAYMENT_LATENCY_MS, failureRate: e.PAYMENT_FAILURE_RATE },
    loadShedding: loadSheddingConfigOf(e),
    rateLimit: {
      enabled: e.RATE_LIMIT_ENABLED ?? true,
      windowSeconds: e.RATE_LIMIT_WINDOW_SECONDS,
      cacheSize: e.RATE_LIMIT_CACHE_SIZE,
      processes: e.STORE_API_PROCESSES,
      join: { perAccount: e.RATE_LIMIT_JOIN_PER_ACCOUNT, perIp: e.RATE_LIMIT_JOIN_PER_IP },
      status: { perAccount: e.RATE_LIMIT_STATUS_PER_ACCOUNT, perIp: e.RATE_LIMIT_STATUS_PER_IP },
      hold: { perAccount: e.RATE_LIMIT_HOLD_PER_ACCOUNT, perIp: e.RATE_LIMIT_HOLD_PER_IP },
    },
    fan: {
      dir: e.FAN_DIR,
      edgeCacheSeconds: e.FAN_PAGE_EDGE_CACHE_SECONDS,
      oidc:
        e.FAN_OIDC_ISSUER && e.FAN_OIDC_CLIENT_ID
          ? {
              issuer: e.FAN_OIDC_ISSUER,
              clientId: e.FAN_OIDC_CLIENT_ID,
              scope: e.FAN_OIDC_SCOPE,
              audience: e.FAN_OIDC_AUDIENCE ?? null,
              useToken: e.FAN_OIDC_TOKEN,
              redirectPath: e.FAN_OIDC_REDIRECT_PATH,
            }
          : null,
    },
    botGate: {
      enabled: e.BOT_GATE_ENABLED ?? true,
      challengeScore: e.BOT_CHALLENGE_SCORE,
      lowPriorityScore: e.BOT_LOW_PRIORITY_SCORE,
      lowPriorityDelaySeconds: e.BOT_LOW_PRIORITY_DELAY_SECONDS,
      powDifficultyBits: e.POW_DIFFICULTY_BITS,
      powTtlSeconds: e.POW_TTL_SECONDS,
    },
  };
}

/**
 * The store API's HTTP server options: its socket timeouts (STORE_SERVER_TIMEOUTS), the same for every way it runs
 * (server.ts, each process of `npm start`). The request budget below them is the app's own (buildStoreApi).
 */
export function storeServerOptions() {
  return {
    connectionTimeout: STORE_SERVER_TIMEOUTS.connectionTimeoutMs,
    requestTimeout: STORE_SERVER_TIMEOUTS.requestTimeoutMs,
    keepAliveTimeout: STORE_SERVER_TIMEOUTS.keepAliveTimeoutMs,
  };
}
