import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import { createOpenEvent, createTestDatabase, pollUntil, type TestDatabase } from '../testing/index.js';
import { EventCache } from '../allocations/index.js';
import { HoldService, SeatmapCache } from '../inventory/index.js';
import { reconcileInventory } from './reconcile.js';
import { startWorker } from './worker.js';

let t: TestDatabase;
let eventId: string;
let holds: HoldService;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
  ({ eventId } = await createOpenEvent(t.db, {
    name: 'Reconcile',
    sections: [{ code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: 4, seatsPerRow: 10 }],
  }));
  const events = new EventCache(t.db);
  holds = new HoldService({ db: t.db, events, seatmap: new SeatmapCache(t.db) });
});
afterAll(() => t.drop());

describe('inventory reconciliation', () => {
  it('sweeps lapsed holds (cosmetically) and finds no drift', async () => {
    const live = await holds.create('acct-live', eventId, { section: 'S', quantity: 2 });
    const lapsed = await holds.create('acct-lapsed', eventId, { section: 'S', quantity: 3 });
    await sql`UPDATE holds SET expires_at = now() - interval '1 second' WHERE id = ${lapsed.holdId}`.execute(t.db);
    await sql`UPDATE seats SET expires_at = now() - interval '1 second' WHERE hold_id = ${lapsed.holdId}`.execute(t.db);

    const [r] = await reconcileInventory(t.db);
    expect(r).toMatchObject({ eventId, capacity: 40, available: 38, held: 2, sold: 0, drift: 0, orderDrift: 0, expiredSwept: 1 });
    const row = await t.db.selectFrom('holds').select('status').where('id', '=', lapsed.holdId).executeTakeFirstOrThrow();
    expect(row.status).toBe('EXPIRED');
    const liveRow = await t.db.selectFrom('holds').select('status').where('id', '=', live.holdId).executeTakeFirstOrThrow();
    expect(liveRow.status).toBe('HELD');
    const stored = await t.db.selectFrom('inventory_reconciliations').selectAll().where('event_id', '=', eventId).executeTakeFirstOrThrow();
    expect(stored.drift).toBe(0);
  });

  it('reports drift when the data breaks the invariant', async () => {
    // A sold seat with no order behind it, and a seat row gone missing.
    await sql`UPDATE seats SET status = 'SOLD', hold_id = gen_random_uuid() WHERE id = (SELECT min(id) FROM seats WHERE event_id = ${eventId} AND status = 'AVAILABLE')`.execute(
      t.db,
    );
    await sql`DELETE FROM seats WHERE id = (SELECT max(id) FROM seats WHERE event_id = ${eventId} AND status = 'AVAILABLE')`.execute(t.db);
    const [r] = await reconcileInventory(t.db);
    expect(r!.drift).toBe(-1);
    expect(r!.orderDrift).toBe(1);
  });

  it("relays a release's deferred waitlist fan-out: the worker queues its job within moments, once", async () => {
    const hold = await holds.create('relay-fan', eventId, { section: 'S', quantity: 2 });
    await t.db.transaction().execute((trx) => holds.release(trx, 'relay-fan', hold.holdId));
    const av = await t.db
      .selectFrom('availability_events')
      .select(['id', 'fanout_enqueued'])
      .where('event_id', '=', eventId)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(av.fanout_enqueued).toBe(false);
    const worker = await startWorker({
      connectionString: t.url,
      db: t.db,
      concurrency: 1,
      claimTokenSecret: 'test-claim-secret',
      admission: false,
      relayMs: 50,
    });
    try {
      const enqueued = await pollUntil(
        async () =>
          (await t.db.selectFrom('availability_events').select('fanout_enqueued').where('id', '=', av.id).executeTakeFirstOrThrow())
            .fanout_enqueued,
        (v) => v,
      );
      expect(enqueued).toBe(true);
      // Its fan-out then runs as a job (no waitlist here: it completes at once).
      const status = await pollUntil(
        async () =>
          (await t.db.selectFrom('availability_events').select('status').where('id', '=', av.id).executeTakeFirstOrThrow()).status,
        (v) => v === 'DONE',
      );
      expect(status).toBe('DONE');
    } finally {
      await worker.stop();
    }
  });

  it('runs as a background job on graphile-worker at start', async () => {
    await sql`DELETE FROM inventory_reconciliations`.execute(t.db);
    const worker = await startWorker({ connectionString: t.url, db: t.db, concurrency: 1, claimTokenSecret: 'test-claim-secret' });
    try {
      const found = await pollUntil(
        async () => !!(await t.db.selectFrom('inventory_reconciliations').select('event_id').executeTakeFirst()),
        (v) => v,
      );
      expect(found).toBe(true);
    } finally {
      await worker.stop();
    }
  });
});
