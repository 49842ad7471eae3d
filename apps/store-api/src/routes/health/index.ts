import { sql } from 'kysely';
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Db } from '@onsale/shared/db';

export const healthRoutes: FastifyPluginAsyncZod<{ db: Db }> = async (app, { db }) => {
  app.get(
    '/healthz',
    {
      config: { public: true },
      schema: {
        tags: ['ops'],
        summary: 'Liveness and database reachability',
        response: { 200: z.object({ status: z.literal('ok'), database: z.literal('ok') }), 503: z.object({ error: z.string(), message: z.string() }).describe('The database does not answer; look again after the Retry-After header') },
      },
    },
    async (_req, reply) => {
      try {
        await sql`select 1`.execute(db);
        return { status: 'ok' as const, database: 'ok' as const };
      } catch {
        return reply.status(503).header('retry-after', '5').send({ error: 'DATABASE_UNAVAILABLE', message: 'the database does not answer' });
      }
    },
  );
};
