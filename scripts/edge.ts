// `npm run edge`: the edge worker alone, on `workerd serve`, in front of the store API at STORE_API_URL.
import { startLocalEdge } from '@onsale/edge/local';
import { loadEdgeEnv } from '@onsale/edge/env';
import { loadStoreApiConfig } from '@onsale/store-api/env';

const USAGE = `usage: npm run edge

Runs the edge worker (apps/edge) locally on \`workerd serve\`, Cloudflare's open-source runtime, in front of a running store
API: STORE_API_URL (default http://127.0.0.1:3000), on EDGE_PORT (default 8787). It shares the store API's secrets
(QUEUE_TOKEN_SECRET, AUTH_SECRET, as the store API reads them). \`npm start -- --edge\` starts it with the whole
product instead. Settings: EDGE_WATERMARK_TTL_SECONDS (2), EDGE_STALE_SECONDS (15), EDGE_ORIGIN_TIMEOUT_MS (5000),
EDGE_FAN_TIMEOUT_MS (5000), EDGE_PROXY_TIMEOUT_MS (12000), EDGE_BREAKER_FAILURES (5), EDGE_BREAKER_OPEN_SECONDS (5),
EDGE_FRAMING_GUARD (on), EDGE_JOIN_BATCH (off; N: up to N joins sent to the store API in one request, off until a whole 20,000-fan rehearsal with it on is shown),
EDGE_JOIN_ALONE_BELOW (32: with batching on, a join goes alone while fewer joins are at the origin; only a backlog is batched),
EDGE_JOIN_BATCH_WAIT_MS (10: the longest a backlogged join waits for its batch),
EDGE_V8_FLAGS (--max-semi-space-size=1: workerd's V8 flags, separated by spaces; empty for V8's defaults). See docs/edge.md.`;

if (process.argv.slice(2).some((a) => a === '--help' || a === '-h')) {
  console.log(USAGE);
  process.exit(0);
}

let settings;
try {
  settings = { edge: loadEdgeEnv(), store: loadStoreApiConfig() };
} catch (e) {
  console.error(`npm run edge: invalid configuration: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
const { edge, store } = settings;
const storeApiUrl = edge.storeApiUrl ?? 'http://127.0.0.1:3000';
try {
  const running = await startLocalEdge({
    storeApiUrl,
    queueTokenSecret: store.queueTokenSecret,
    // With an identity provider (AUTH_JWKS_URL) the edge cannot check account tokens yet: it then passes polls on.
    authSecret: store.identity.kind === 'dev' ? store.authSecret : '',
    port: edge.port,
    host: edge.host,
    watermarkTtlSeconds: edge.watermarkTtlSeconds,
    staleSeconds: edge.staleSeconds,
    originTimeoutMs: edge.originTimeoutMs,
    proxyTimeoutMs: edge.proxyTimeoutMs,
    fanTimeoutMs: edge.fanTimeoutMs,
    breakerFailures: edge.breakerFailures,
    breakerOpenSeconds: edge.breakerOpenSeconds,
    framingGuard: edge.framingGuard,
    joinBatch: edge.joinBatch,
    joinAloneBelow: edge.joinAloneBelow,
    joinBatchWaitMs: edge.joinBatchWaitMs,
  });
  console.log(
    `edge        ${running.url}   (workerd serve${edge.framingGuard ? ' behind its framing guard' : ''}, in front of ${storeApiUrl}; status polls and watermarks answered here)`,
  );
  console.log('\nCtrl-C to stop.');
  // A second signal while stopping (Ctrl-C pressed twice, a group signal and a supervisor's) waits for the first.
  let stopping: Promise<void> | undefined;
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.on(sig, () => {
      stopping ??= running.close().finally(() => process.exit(0));
    });
} catch (e) {
  const err = e as Error & { code?: string };
  console.error(
    `npm run edge failed: ${err.message}${/EADDRINUSE|address already in use/i.test(err.message) ? ` (port ${edge.port} is taken; set EDGE_PORT)` : ''}`,
  );
  process.exit(1);
}
