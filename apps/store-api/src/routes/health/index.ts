import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ping, type Db } from '@onsale/shared/db';
import { serviceUnavailableSchema } from '../schemas.js';

/** Liveness: which process answered (several serve one port under `npm start -- --store-instances N`), and the database. */
export const healthRoutes: FastifyPluginAsyncZod<{ db: Db; instance: string }> = async (app, { db, instance }) => {
  app.get(
    '/healthz',
    {
      config: { public: true },
      schema: {
        tags: ['ops'],
        summary: 'Liveness, the process that answered (instance and pid) and database reachability',
        response: {
          200: z.object({ status: z.literal('ok'), instance: z.string(), pid: z.number(), database: z.literal('ok') }),
          // Either the database does not answer (the route's own answer, with the process named), or the process is
          // overloaded and the load shedder answered before the route ran (its body, with the reason): one shape with
          // both sets of fields, a 503 with Retry-After either way, never a 500.
          503: serviceUnavailableSchema
            .extend({
              status: z.literal('unavailable').optional(),
              instance: z.string().optional(),
              pid: z.number().optional(),
            })
            .describe(
              'The database does not answer (status, instance and pid name the process), or the process is overloaded (reason, retryAfterSeconds): look again after the Retry-After header',
            ),
        },
      },
    },
    async (_req, reply) => {
      try {
        await ping(db);
        return { status: 'ok' as const, instance, pid: process.pid, database: 'ok' as const };
      } catch {
        return reply
          .status(503)
          .header('retry-after', '5')
          .send({
            error: 'DATABASE_UNAVAILABLE',
            message: 'the database does not answer',
            status: 'unavailable' as const,
            instance,
            pid: process.pid,
          });
      }
    },
  );
};
