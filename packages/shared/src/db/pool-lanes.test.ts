import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../testing/index.js';
import { createDb, inPoolLane, observePoolWait, poolOf, warmPool, type Db } from './connect.js';
import { databaseFaultOf } from './faults.js';
import type { PoolTag } from './pool-lanes.js';

let t: TestDatabase;
let db: Db;
const seen: { kind: string | undefined; ms: number }[] = [];

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 2 });
  db = createDb(t.url, { max: 1, connectionTimeoutMillis: 20_000 });
  observePoolWait(db, (tag, ms) => seen.push({ kind: tag?.kind, ms }));
});
afterAll(async () => {
  await db.destroy();
  await t.drop();
});

// Route kinds' shared tags, as the store API's (its checkouts get a tag a request: see the `begun` test).
const hold = (): PoolTag => ({ lane: 'purchase', kind: 'hold' });
const seatmap = (): PoolTag => ({ lane: 'standard', kind: 'seatmap' });

/** Polls until `check` holds (no fixed sleeps: the machine is loaded). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 5));
}

describe('the pool lanes', () => {
  it('with the pool busy, a hold waiting behind seat-map reads gets the next connection', async () => {
    const pool = poolOf(db);
    const order: string[] = [];
    let free!: () => void;
    const busy = new Promise<void>((r) => (free = r));
    // The one connection, held until released.
    const holder = db.connection().execute(async (conn) => {
      await sql`SELECT 1`.execute(conn);
      await busy;
    });
    await until(() => pool.totalCount === 1 && pool.idleCount === 0);
    const read = (i: number) => sql`SELECT ${i}::int AS i`.execute(inPoolLane(db, seatmap())).then(() => order.push(`seatmap${i}`));
    const reads = [read(1), read(2), read(3)];
    await until(() => pool.waitingCount === 3);
    const held = sql`SELECT 0 AS h`.execute(inPoolLane(db, hold())).then(() => order.push('hold'));
    await until(() => pool.waitingCount === 4);
    free();
    await Promise.all([holder, held, ...reads]);
    // The hold came last and went first; the seat maps kept their order.
    expect(order).toEqual(['hold', 'seatmap1', 'seatmap2', 'seatmap3']);
    expect(pool.waitingCount).toBe(0);
    const kinds = seen.map((s) => s.kind);
    expect(kinds).toContain('hold');
    expect(kinds.filter((k) => k === 'seatmap')).toHaveLength(3);
    expect(kinds).toContain(undefined); // the holder, outside any lane
  });

  it('a purchase request that has had a connection already waits ahead of purchase requests not yet begun', async () => {
    const pool = poolOf(db);
    const order: string[] = [];
    let free!: () => void;
    const busy = new Promise<void>((r) => (free = r));
    const holder = db.connection().execute(async (conn) => {
      await sql`SELECT 1`.execute(conn);
      await busy;
    });
    await until(() => pool.totalCount === 1 && pool.idleCount === 0);
    const fresh = sql`SELECT 1`.execute(inPoolLane(db, hold())).then(() => order.push('new hold'));
    await until(() => pool.waitingCount === 1);
    const checkout: PoolTag = { lane: 'purchase', kind: 'checkout', begun: true };
    const second = sql`SELECT 2`.execute(inPoolLane(db, checkout)).then(() => order.push('checkout, second transaction'));
    await until(() => pool.waitingCount === 2);
    free();
    await Promise.all([holder, fresh, second]);
    expect(order).toEqual(['checkout, second transaction', 'new hold']);
  });

  it('a query past the pool wait fails as an overloaded pool does, and its place is given up', async () => {
    const short = createDb(t.url, { max: 1, connectionTimeoutMillis: 200 });
    let free: () => void = () => {};
    try {
      await warmPool(short); // the connection opened first: the wait below is the pool's queue, not a backend's start
      const busy = new Promise<void>((r) => (free = r));
      const holder = short.connection().execute(async (conn) => {
        await sql`SELECT 1`.execute(conn);
        await busy;
      });
      await until(() => poolOf(short).idleCount === 0 && poolOf(short).totalCount === 1);
      const err = await sql`SELECT 1`.execute(inPoolLane(short, hold())).then(
        () => null,
        (e: unknown) => e,
      );
      // A 503 at the store API (the same error pg-pool's own wait gives: POOL_WAIT_EXCEEDED).
      expect((err as Error).message).toMatch(/timeout exceeded when trying to connect/);
      expect(databaseFaultOf(err)).not.toBeNull();
      expect(poolOf(short).waitingCount).toBe(0);
      free();
      await holder;
      // The permit came back: the pool serves at once.
      expect((await sql<{ one: number }>`SELECT 1 AS one`.execute(short)).rows).toEqual([{ one: 1 }]);
    } finally {
      free();
      await short.destroy();
    }
  });

  it("a request's own tag is marked begun by its first connection, a route's shared tag never; a lane's Db is the pool's", async () => {
    const own: PoolTag = { lane: 'purchase', kind: 'checkout', begun: false };
    const request = inPoolLane(db, own);
    await sql`SELECT 1`.execute(request);
    expect(own.begun).toBe(true);
    const shared = hold();
    const lane = inPoolLane(db, shared);
    expect(inPoolLane(db, shared)).toBe(lane); // one Db a shared tag
    await lane.transaction().execute((trx) => sql`SELECT 1`.execute(trx));
    expect(shared.begun).toBeUndefined();
    expect(poolOf(lane)).toBe(poolOf(db));
    await lane.destroy(); // ends nothing: the pool is db's
    expect((await sql<{ one: number }>`SELECT 1 AS one`.execute(db)).rows).toEqual([{ one: 1 }]);
  });

  it("pg's own pool.query goes through the lanes too (graphile-worker's way in)", async () => {
    const r = await poolOf(db).query('SELECT 2 AS two');
    expect(r.rows).toEqual([{ two: 2 }]);
    expect(poolOf(db).waitingCount).toBe(0);
  });
});
