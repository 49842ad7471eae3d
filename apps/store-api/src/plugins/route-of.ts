import type { FastifyRequest } from 'fastify';

/** What the store API's hooks read of a request's route. */
export interface RouteOf {
  /** The route's URL pattern (`/events/:id/queue/status`); undefined when no route matched. */
  url: string | undefined;
  /** `METHOD url` (the key of the per-route tables: rate limits, admission, shedding); undefined without a route. */
  key: string | undefined;
  /** Whether the route is marked `config: { public: true }` (no account needed). */
  public: boolean;
  /** The request's method. */
  method: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's route as the hooks read it, once read (see routeOf). */
    onsaleRoute: Readonly<RouteOf> | null;
  }
}

// One RouteOf per route and method, shared by its requests (hooks only read it): its `key` is then the same string
// every request, so the tables keyed by it (rate limits, shedding, the request timer) hash it once, not per request.
const byRoute = new WeakMap<object, Readonly<RouteOf>>();

/**
 * The request's route, read once per request. Fastify's `req.routeOptions` is a getter that builds a new object of
 * a dozen fields (and asks the router about version constraints) on every read, and the store API's hooks read it
 * several times for each request: auth, admission, the rate limits (twice each), the bot gate and the metrics.
 */
export function routeOf(req: FastifyRequest): Readonly<RouteOf> {
  const seen = req.onsaleRoute;
  if (seen) return seen;
  const o = req.routeOptions;
  const config = o.config as { public?: unknown } | undefined;
  let route = config ? byRoute.get(config) : undefined;
  if (route === undefined || route.method !== req.method || route.url !== o.url) {
    route = { url: o.url, key: o.url ? `${req.method} ${o.url}` : undefined, public: Boolean(config?.public), method: req.method };
    if (config) byRoute.set(config, route);
  }
  req.onsaleRoute = route;
  return route;
}
