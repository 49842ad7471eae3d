import fp from 'fastify-plugin';
import type { Metrics } from '@onsale/shared/metrics';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics;
  }
}

/** Request timing by route, and `GET /metrics` in Prometheus text format. */
export const metricsPlugin = fp<{ metrics: Metrics }>(async (app, { metrics }) => {
  app.decorate('metrics', metrics);
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    metrics.httpDuration.observe({ method: req.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
  });
  app.get('/metrics', { config: { public: true }, schema: { hide: true } }, async (_req, reply) => {
    reply.header('content-type', metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}, { name: 'metrics' });
