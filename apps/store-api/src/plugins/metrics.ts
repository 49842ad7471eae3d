import fp from 'fastify-plugin';
import { z } from 'zod';
import { recordReconciliations, requestTimer, type Metrics } from '@onsale/shared/metrics';
import { latestReconciliations } from '@onsale/shared/jobs';
import { databaseFaultOf, type Db } from '@onsale/shared/db';
import { routeOf } from './route-of.js';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics;
  }
}

/**
 * Request timing by route, and `GET /metrics` in Prometheus text format: with `cluster` (a store process of
 * `npm start -- --store-instances N`), every process's figures merged (metrics/cluster.ts in the shared package).
 */
export const metricsPlugin = fp<{
  metrics: Metrics;
  db: Db;
  beforeScrape?: () => Promise<void>;
  cluster?: ((own: Metrics['registry']) => Promise<string>) | null;
}>(
  async (app, { metrics, db, beforeScrape, cluster }) => {
    app.decorate('metrics', metrics);
    // A callback hook, not an async one: every response passes here, and an async hook costs a promise per request.
    // The histogram's entry for a route and status is found by the route's key (requestTimer), not prom-client's
    // label string built per observation.
    const observe = requestTimer(metrics.httpDuration);
    app.addHook('onResponse', (req, reply, done) => {
      const route = routeOf(req);
      const url = route.url ?? 'unmatched';
      observe(route.key ?? `${req.method} unmatched`, req.method, url, reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
    // Under a cluster the whole cluster's figures, whichever process answers (`?scope=process`: this process's alone).
    const query = z.object({ scope: z.enum(['cluster', 'process']).default('cluster') });
    app.get('/metrics', { config: { public: true }, schema: { hide: true, querystring: query } }, async (req, reply) => {
      // Inventory gauges come from the reconciliation job's latest results (one small table read per scrape). During
      // a database outage the process's own figures are still served (database_up 0 among them: the war room reads it).
      try {
        recordReconciliations(metrics, await latestReconciliations(db));
        await beforeScrape?.();
      } catch (err) {
        if (!databaseFaultOf(err)) throw err;
      }
      reply.header('content-type', metrics.registry.contentType);
      const scope = (req.query as z.infer<typeof query>).scope;
      return cluster && scope === 'cluster' ? cluster(metrics.registry) : metrics.registry.metrics();
    });
  },
  { name: 'metrics' },
);
