// The edge worker run locally in workerd, Cloudflare's open-source runtime, through miniflare (from npm: no
// account, no network). `npm start -- --edge`, `npm run edge`, the tests and the benchmark all start it here.
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Log, LogLevel, Miniflare } from 'miniflare';
import { withoutProcessHooks } from '@onsale/shared/install';
import type { EdgeEnv } from './config.js';

/** The compatibility date the worker is written for (wrangler.toml says the same). */
export const COMPATIBILITY_DATE = '2026-07-30';

const entry = fileURLToPath(new URL('./index.ts', import.meta.url));

/**
 * The worker bundled as wrangler bundles it for Cloudflare: one ES module, browser platform with the workerd
 * conditions, every import (the shared edge modules) inlined. `minify` as for a deploy.
 */
export async function bundleWorker(opts: { entry?: string; minify?: boolean } = {}): Promise<string> {
  const out = await build({
    entryPoints: [opts.entry ?? entry],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    minify: opts.minify ?? false,
    write: false,
    logLevel: 'silent',
  });
  return out.outputFiles[0]!.text;
}

export interface LocalEdgeOptions {
  /** The store API the worker fronts. */
  storeApiUrl: string;
  queueTokenSecret: string;
  authSecret: string;
  /** EDGE_PORT; 0 for any free port. */
  port?: number;
  host?: string;
  watermarkTtlSeconds?: number;
  staleSeconds?: number;
  originTimeoutMs?: number;
  proxyTimeoutMs?: number;
  /** Another worker script instead (the benchmark's bare route). */
  script?: string;
  /** workerd's own log level (default: warnings and errors). */
  logLevel?: LogLevel;
}

export interface LocalEdge {
  url: string;
  miniflare: Miniflare;
  close(): Promise<void>;
}

/** Starts the edge worker in workerd, listening on `port`, in front of `storeApiUrl`. */
export async function startLocalEdge(o: LocalEdgeOptions): Promise<LocalEdge> {
  const bindings: Record<keyof EdgeEnv, string> = {
    STORE_API_URL: o.storeApiUrl,
    QUEUE_TOKEN_SECRET: o.queueTokenSecret,
    AUTH_SECRET: o.authSecret,
    EDGE_WATERMARK_TTL_SECONDS: String(o.watermarkTtlSeconds ?? 2),
    EDGE_STALE_SECONDS: String(o.staleSeconds ?? 15),
    EDGE_ORIGIN_TIMEOUT_MS: String(o.originTimeoutMs ?? 5000),
    EDGE_PROXY_TIMEOUT_MS: String(o.proxyTimeoutMs ?? 20_000),
  };
  const script = o.script ?? (await bundleWorker());
  // Miniflare installs SIGINT/SIGTERM handlers that exit the process at once; whoever starts the edge owns the
  // signals and disposes it in order (npm start stops servers before the database), so they are taken back out.
  const miniflare = await withoutProcessHooks(
    ['SIGINT', 'SIGTERM', 'message'],
    () =>
      new Miniflare({
        modules: true,
        script,
        compatibilityDate: COMPATIBILITY_DATE,
        bindings,
        host: o.host ?? '127.0.0.1',
        port: o.port ?? 0,
        log: new Log(o.logLevel ?? LogLevel.WARN),
      }),
  );
  const url = (await miniflare.ready).toString().replace(/\/$/, '');
  return { url, miniflare, close: () => miniflare.dispose() };
}
