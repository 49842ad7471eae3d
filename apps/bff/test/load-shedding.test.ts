/** A connection taken from the pool (all the test does with it is give it back). */
type PoolClient = { release(): void };
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { poolOf, sql } from '@onsale/shared/db';
import { DEFAULT_SHEDDING_LIMITS } from '@onsale/shared/overload';
import { createTestDatabase, type TestDatabase } from '@onsale/shared/testing';
import { buildBff } from '../src/app.js';
import { BFF_SHED_ORDER_OF, bffShedOrderOf } from '../src/load-shedding.js';
import { appRouter } from '../src/root.js';
import { seedEvent, seedUser } from './fixtures.js';

// In the console's BFF: overloaded, it answers the heavy reports 503 SERVICE_UNAVAILABLE with
// Retry-After (in tRPC's shape, per procedure) before they queue, and keeps the war room's figures and controls.

let tdb: TestDatabase;
let app: FastifyInstance;
let base: string;
let eventId: string;
let cookie: string;

beforeAll(async () => {
  tdb = await createTestDatabase(inject('templateDatabaseUrl'), { max: 2 });
  await seedUser(tdb.db, 'admin@shed.test', 'admin');
  ({ eventId } = await seedEvent(tdb.db, 'Shed Night'));
  app = await buildBff({
    db: tdb.db,
    auth: { sessionTtlSeconds: 3600 },
    loadShedding: {
      limits: {
        ...DEFAULT_SHEDDING_LIMITS,
        eventLoopDelayMs: { first: 60_000, standard: 60_000, last: 60_000 },
        poolWaiting: { first: 2, standard: 40 },
      },
      sampleIntervalMs: 100,
    },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  const signIn = await fetch(`${base}/trpc/auth.signIn`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-csrf': '1' },
    body: JSON.stringify({ email: 'admin@shed.test', password: 'password of admin@shed.test' }),
  });
  expect(signIn.status).toBe(200);
  cookie = String(signIn.headers.get('set-cookie')).split(';')[0]!;
});
afterAll(async () => {
  await app?.close();
  await tdb?.drop();
});

const query = async (path: string, input: unknown) => {
  const r = await fetch(`${base}/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`, {
    headers: { cookie },
    signal: AbortSignal.timeout(30_000),
  });
  return { status: r.status, retryAfter: r.headers.get('retry-after'), json: (await r.json()) as any };
};

describe('load shedding in the BFF', () => {
  it('names real procedures; a batch is shed as its most expensive procedure; the war room goes last', () => {
    const procedures = new Set(Object.keys(appRouter._def.procedures));
    for (const p of Object.keys(BFF_SHED_ORDER_OF)) expect(procedures, p).toContain(p);
    expect(bffShedOrderOf('GET', '/trpc/warRoom.snapshot,warRoom.controls?batch=1')).toBe('last');
    expect(bffShedOrderOf('GET', '/trpc/warRoom.snapshot,fairnessAudit.get?batch=1')).toBe('first');
    expect(bffShedOrderOf('GET', '/trpc/events.list')).toBe('standard');
    expect(bffShedOrderOf('GET', '/healthz')).toBe('last');
    expect(bffShedOrderOf('GET', '/assets/index.js')).toBe('standard');
  });

  it('with queries queueing for a full pool, a heavy report is answered 503 SERVICE_UNAVAILABLE in tRPC shape with Retry-After; served again once the pool frees', async () => {
    expect((await query('fairnessAudit.get', { eventId })).status).toBe(200);
    const pool = poolOf(tdb.db);
    const held: PoolClient[] = await Promise.all([pool.connect(), pool.connect()]);
    const queued = [1, 2, 3].map(() => sql`SELECT 1`.execute(tdb.db));
    try {
      await expect.poll(() => app.isUnderPressure()).toBe(true);
      const shed = await query('fairnessAudit.get', { eventId });
      expect(shed).toMatchObject({
        status: 503,
        retryAfter: expect.stringMatching(/^[2-5]$/),
        json: {
          error: {
            data: { code: 'SERVICE_UNAVAILABLE', httpStatus: 503, domainCode: 'SERVICE_UNAVAILABLE' },
            message: expect.stringContaining('overloaded'),
          },
        },
      });
    } finally {
      for (const c of held) c.release();
    }
    await Promise.all(queued);
    await expect.poll(async () => (await query('fairnessAudit.get', { eventId })).status).toBe(200);
  });
});
