import type { FastifyRequest } from 'fastify';

/** What the store API's hooks read of a request's route. */
export interface RouteOf {
  /** The route's URL pattern (`/events/:id/queue/status`); undefined when no route matched. */
  url: string | undefined;
  /** `METHOD url` (the key of the per-route tables: rate limits, admission, shedding); undefined without a route. */
  key: string | undefined;
  /** Whether the route is marked `config: { public: true }` (no account needed). */
  public: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's route as the hooks read it, once read (see routeOf). */
    onsaleRoute: RouteOf | null;
  }
}

/**
 * The request's route, read once per request. Fastify's `req.routeOptions` is a getter that builds a new object of
 * a dozen fields (and asks the router about version constraints) on every read, and the store API's hooks read it
 * several times for each request: auth, admission, the rate limits (twice each), the bot gate and the metrics.
 */
export function routeOf(req: FastifyRequest): RouteOf {
  let route = req.onsaleRoute;
  if (!route) {
    const o = req.routeOptions;
    const config = o.config as { public?: unknown } | undefined;
    route = { url: o.url, key: o.url ? `${req.method} ${o.url}` : undefined, public: Boolean(config?.public) };
    req.onsaleRoute = route;
  }
  return route;
}
