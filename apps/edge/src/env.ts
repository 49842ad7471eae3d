import { z } from 'zod';

// The local edge's settings (`npm start -- --edge`, `npm run edge`), read and checked in this one place. The worker
// itself reads its bindings in config.ts; these become those bindings. Its secrets are the store API's own (the
// caller passes them), so both sides of a token always agree.
const schema = z.object({
  EDGE_PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  EDGE_HOST: z.string().default('127.0.0.1'),
  EDGE_WATERMARK_TTL_SECONDS: z.coerce.number().min(0.1).max(300).default(2),
  EDGE_STALE_SECONDS: z.coerce.number().min(1).max(3600).default(15),
  EDGE_ORIGIN_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(5000),
  EDGE_PROXY_TIMEOUT_MS: z.coerce.number().int().min(50).max(120_000).default(12_000),
  EDGE_FAN_TIMEOUT_MS: z.coerce.number().int().min(50).max(120_000).default(5000),
  EDGE_BREAKER_FAILURES: z.coerce.number().int().min(1).max(1000).default(5),
  EDGE_BREAKER_OPEN_SECONDS: z.coerce.number().min(0.1).max(300).default(5),
  EDGE_FRAMING_GUARD: z.enum(['on', 'off']).default('on'),
  EDGE_JOIN_BATCH: z.union([z.literal('off'), z.coerce.number().int().min(1).max(100)]).default('off'),
  EDGE_JOIN_ALONE_BELOW: z.coerce.number().int().min(0).max(100_000).default(32),
  EDGE_JOIN_BATCH_WAIT_MS: z.coerce.number().min(0).max(1000).default(10),
});

export interface LocalEdgeEnv {
  port: number;
  host: string;
  storeApiUrl: string | undefined;
  watermarkTtlSeconds: number;
  staleSeconds: number;
  originTimeoutMs: number;
  proxyTimeoutMs: number;
  fanTimeoutMs: number;
  breakerFailures: number;
  breakerOpenSeconds: number;
  /** The framing guard in front of workerd (EDGE_FRAMING_GUARD, on unless `off`). */
  framingGuard: boolean;
  /** Most joins the worker sends the origin in one request (EDGE_JOIN_BATCH, 1-100, default 100), or `off`. */
  joinBatch: number | 'off';
  /** Joins at the origin below which a join goes alone (EDGE_JOIN_ALONE_BELOW, default 32; 0: every join batched). */
  joinAloneBelow: number;
  /** The longest a backlogged join waits for its batch (EDGE_JOIN_BATCH_WAIT_MS, default 10). */
  joinBatchWaitMs: number;
}

export function loadEdgeEnv(env: NodeJS.ProcessEnv = process.env): LocalEdgeEnv {
  const e = schema.parse(env);
  // STORE_API_URL may list several store APIs for the war room (comma-separated): the edge fronts the first.
  const first = env.STORE_API_URL?.split(',')[0]?.trim();
  return {
    port: e.EDGE_PORT,
    host: e.EDGE_HOST,
    storeApiUrl: first ? z.string().url().parse(first) : undefined,
    watermarkTtlSeconds: e.EDGE_WATERMARK_TTL_SECONDS,
    staleSeconds: e.EDGE_STALE_SECONDS,
    originTimeoutMs: e.EDGE_ORIGIN_TIMEOUT_MS,
    proxyTimeoutMs: e.EDGE_PROXY_TIMEOUT_MS,
    fanTimeoutMs: e.EDGE_FAN_TIMEOUT_MS,
    breakerFailures: e.EDGE_BREAKER_FAILURES,
    breakerOpenSeconds: e.EDGE_BREAKER_OPEN_SECONDS,
    framingGuard: e.EDGE_FRAMING_GUARD === 'on',
    joinBatch: e.EDGE_JOIN_BATCH,
    joinAloneBelow: e.EDGE_JOIN_ALONE_BELOW,
    joinBatchWaitMs: e.EDGE_JOIN_BATCH_WAIT_MS,
  };
}
