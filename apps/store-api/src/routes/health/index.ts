import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ping, type Db } from '@onsale/shared/db';
import { errorCodeSchema, serviceUnavailableSchema } from '../schemas.js';

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
          // Either the database does not answer (the route's own answer), or the process is overloaded and the load
          // shedder answered before the route ran (its body): both are a 503 with Retry-After, never a 500.
          503: z.union([
            z
              .object({
                error: errorCodeSchema,
                message: z.string(),
                status: z.literal('unavailable'),
                instance: z.string(),
                pid: z.number(),
              })
              .describe('The database does not answer; look again after the Retry-After header'),
            serviceUnavailableSchema,
          ]),
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
