// The few Cloudflare Workers globals the worker uses beyond the web platform (lib "WebWorker"): typed here rather
// than through @cloudflare/workers-types, whose globals clash with the web types the shared edge modules are written against.
interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException(): void;
}
interface CacheStorage {
  /** The data centre's shared cache (the Cache API's default cache). */
  readonly default: Cache;
}
