// The worker's settings: its bindings (wrangler.toml [vars], Worker secrets, or workerd serve's environment locally),
// read and checked in this one place, once per isolate.

/** What the worker is bound to. Every value is a string, as Workers bindings of vars and secrets are. */
export interface EdgeEnv {
  /** The store API the worker fronts (e.g. https://origin.example.com). */
  STORE_API_URL?: string;
  /** The install's queue token secret (a Worker secret): verifies queue tokens, signs admission tokens. */
  QUEUE_TOKEN_SECRET?: string;
  /** The install's account token secret (a Worker secret): identifies the fan as the store API does. */
  AUTH_SECRET?: string;
  /** Seconds an event's watermark is answered from cache before the origin is asked again (default 2). */
  EDGE_WATERMARK_TTL_SECONDS?: string;
  /** Seconds without a watermark from the origin after which fans read PAUSED and nobody is admitted (default 15). */
  EDGE_STALE_SECONDS?: string;
  /** How long one origin request for the watermark may take, in milliseconds (default 5000). */
  EDGE_ORIGIN_TIMEOUT_MS?: string;
  /**
   * How long a proxied request outside the fans' routes may take (the API docs, /metrics, /healthz), the origin's
   * whole answer included, in milliseconds (default 12000: above the store API's own server timeouts).
   */
  EDGE_PROXY_TIMEOUT_MS?: string;
  /** The same for the fans' routes (joins, holds, checkout, waitlists, pages), in milliseconds (default 5000). */
  EDGE_FAN_TIMEOUT_MS?: string;
  /** Origin failures in a row (no answer, refused, reset, timed out) that open the circuit (default 5). */
  EDGE_BREAKER_FAILURES?: string;
  /** Seconds an open circuit answers 503 at once before one request is let through to try the origin (default 5). */
  EDGE_BREAKER_OPEN_SECONDS?: string;
  /**
   * `memory`: keep cacheable origin answers in the isolate's own memory (`workerd serve`, which has no Cache API
   * storage); unset: the runtime's Cache API (Cloudflare).
   */
  EDGE_CACHE?: string;
  /**
   * Joins sent to the origin many to a request (POST /edge/joins, signed with the queue token secret): the most in
   * one batch, 1-100 (default 100), or `off` (each join proxied alone).
   */
  EDGE_JOIN_BATCH?: string;
  /**
   * Joins at the origin (sent alone or in batches, not yet answered) below which a join goes alone, as with batching
   * off (default 32); 0: every join waits for a batch. Only with EDGE_JOIN_BATCH on.
   */
  EDGE_JOIN_ALONE_BELOW?: string;
  /** The longest a join of the backlog waits for its batch to fill before the batch is sent, in milliseconds (default 10). */
  EDGE_JOIN_BATCH_WAIT_MS?: string;
}

export interface EdgeConfig {
  originUrl: string;
  queueTokenSecret: string | null;
  authSecret: string | null;
  watermarkTtlMs: number;
  staleMs: number;
  originTimeoutMs: number;
  proxyTimeoutMs: number;
  fanTimeoutMs: number;
  breakerFailures: number;
  breakerOpenMs: number;
  /** Cacheable answers kept in the isolate's memory rather than the Cache API. */
  memoryCache: boolean;
  /** Most joins in one batch to the origin; 0: joins are proxied alone. */
  joinBatchMax: number;
  /** Joins at the origin below which a join goes alone. */
  joinAloneBelow: number;
  /** The longest a backlogged join waits for its batch (ms). */
  joinBatchWaitMs: number;
  /** Why the worker cannot answer status polls itself (it then passes them to the origin), or null. */
  misconfigured: string | null;
}

function seconds(v: string | undefined, name: string, fallback: number, min: number, max: number): number {
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min || n > max)
    throw new Error(`${name} must be a number from ${min} to ${max} (got ${JSON.stringify(v)})`);
  return n;
}

function cacheKind(v: string | undefined): boolean {
  if (v === undefined || v === '') return false;
  if (v === 'memory') return true;
  throw new Error(`EDGE_CACHE must be "memory" or unset (got ${JSON.stringify(v)})`);
}

/**
 * Reads the bindings. Throws for a missing or malformed STORE_API_URL or a bad number (the worker then answers 503
 * to everything: it cannot even proxy). Missing secrets do not throw: status polls then go to the origin, which
 * answers them itself (slower, never wrong), and `misconfigured` says why.
 */
export function loadEdgeConfig(env: EdgeEnv): EdgeConfig {
  const origin = env.STORE_API_URL;
  if (!origin) throw new Error('STORE_API_URL is required: the store API this edge fronts');
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    throw new Error(`STORE_API_URL is not a URL: ${JSON.stringify(origin)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('STORE_API_URL must be http(s)');
  const secret = (name: string, v: string | undefined) => (v && v.length >= 32 ? v : null);
  const queueTokenSecret = secret('QUEUE_TOKEN_SECRET', env.QUEUE_TOKEN_SECRET);
  const authSecret = secret('AUTH_SECRET', env.AUTH_SECRET);
  const missing = [!queueTokenSecret && 'QUEUE_TOKEN_SECRET', !authSecret && 'AUTH_SECRET'].filter(Boolean);
  return {
    originUrl: url.origin + url.pathname.replace(/\/+$/, ''),
    queueTokenSecret,
    authSecret,
    watermarkTtlMs: seconds(env.EDGE_WATERMARK_TTL_SECONDS, 'EDGE_WATERMARK_TTL_SECONDS', 2, 0.1, 300) * 1000,
    staleMs: seconds(env.EDGE_STALE_SECONDS, 'EDGE_STALE_SECONDS', 15, 1, 3600) * 1000,
    originTimeoutMs: seconds(env.EDGE_ORIGIN_TIMEOUT_MS, 'EDGE_ORIGIN_TIMEOUT_MS', 5000, 50, 60_000),
    proxyTimeoutMs: seconds(env.EDGE_PROXY_TIMEOUT_MS, 'EDGE_PROXY_TIMEOUT_MS', 12_000, 50, 120_000),
    fanTimeoutMs: seconds(env.EDGE_FAN_TIMEOUT_MS, 'EDGE_FAN_TIMEOUT_MS', 5000, 50, 120_000),
    breakerFailures: seconds(env.EDGE_BREAKER_FAILURES, 'EDGE_BREAKER_FAILURES', 5, 1, 1000),
    breakerOpenMs: seconds(env.EDGE_BREAKER_OPEN_SECONDS, 'EDGE_BREAKER_OPEN_SECONDS', 5, 0.1, 300) * 1000,
    memoryCache: cacheKind(env.EDGE_CACHE),
    // Off unless asked for: batched joins hung in a 20,000-fan rehearsal (docs/edge.md, "Joins in batches").
    joinBatchMax:
      env.EDGE_JOIN_BATCH === undefined || env.EDGE_JOIN_BATCH === '' || env.EDGE_JOIN_BATCH === 'off'
        ? 0
        : seconds(env.EDGE_JOIN_BATCH, 'EDGE_JOIN_BATCH', 100, 1, 100),
    joinAloneBelow: Math.floor(seconds(env.EDGE_JOIN_ALONE_BELOW, 'EDGE_JOIN_ALONE_BELOW', 32, 0, 100_000)),
    joinBatchWaitMs: seconds(env.EDGE_JOIN_BATCH_WAIT_MS, 'EDGE_JOIN_BATCH_WAIT_MS', 10, 0, 1000),
    misconfigured:
      missing.length > 0
        ? `${missing.join(' and ')} not set (32+ characters each, as Worker secrets): status polls go to the origin`
        : null,
  };
}
