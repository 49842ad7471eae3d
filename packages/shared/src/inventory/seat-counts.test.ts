import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { EventCache } from '../allocations/index.js';
import { CardFingerprints, CheckoutService, refundOrder, SimulatedPaymentGateway, TEST_CARDS } from '../checkout/index.js';
import { reconcileInventory } from '../jobs/reconcile.js';
import { createOpenEvent, createTestDatabase, testSecrets, type TestDatabase } from '../testing/index.js';
import { HoldService } from './holds.service.js';
import { foldInventoryCounts, getInventoryCounts } from './inventory.service.js';
import { SeatmapCache } from './seatmap.js';

// The seats' counts the database keeps (seat_counts + seat_count_changes, written by triggers on seats in each
// writer's transaction; folded by the admission controller's tick) against a recount of every seat row, on real
// PostgreSQL, while holds, releases, expiry, the sweeper, checkouts, refunds and folds run at once.

let t: TestDatabase;
let eventId: string;
let holds: HoldService;
let payments: SimulatedPaymentGateway;
let checkout: CheckoutService;
const CAPACITY = 2 * 6 * 10;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
  ({ eventId } = await createOpenEvent(t.db, {
    name: 'Kept counts',
    priceLevels: [{ code: 'P', name: 'All', priceCents: 2500 }],
    sections: [
      { code: 'A', priceLevel: 'P', qualityRank: 1, rowCount: 6, seatsPerRow: 10 },
      { code: 'B', priceLevel: 'P', qualityRank: 2, rowCount: 6, seatsPerRow: 10 },
    ],
  }));
  holds = new HoldService({ db: t.db, events: new EventCache(t.db), seatmap: new SeatmapCache(t.db) });
  payments = new SimulatedPaymentGateway({ tps: 1000, latencyMs: 0, failureRate: 0 });
  checkout = new CheckoutService({ db: t.db, cards: new CardFingerprints(testSecrets().cardFingerprintSecret), payments });
});
afterAll(() => t.drop());

/** The kept counts and a recount of every seat row, read in one snapshot. */
async function bothCounts() {
  return t.db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => ({
      kept: await getInventoryCounts(trx, eventId, CAPACITY),
      recount: await getInventoryCounts(trx, eventId, CAPACITY, undefined, { recount: true }),
    }));
}

async function expectNoDrift() {
  const { kept, recount } = await bothCounts();
  expect(recount.drift).toBe(0);
  expect(kept).toEqual(recount);
  return kept;
}

const pendingChanges = async () =>
  (await sql<{ n: number }>`SELECT count(*)::int AS n FROM seat_count_changes WHERE event_id = ${eventId}`.execute(t.db)).rows[0]!.n;

describe('the seat counts the database keeps', () => {
  it('start equal to the seats, and a fold leaves them equal with no changes pending', async () => {
    const before = await expectNoDrift();
    expect(before).toMatchObject({ available: CAPACITY, held: 0, sold: 0 });
    await foldInventoryCounts(t.db, eventId);
    expect(await pendingChanges()).toBe(0);
    await expectNoDrift();
  });

  it('never drift from a recount under concurrent holds, releases, folds, expiry, sweeps, checkouts and refunds', async () => {
    // 30 fans hold 1-3 seats at once while the controller's fold runs beside them.
    const fans = Array.from({ length: 30 }, (_, i) => `kept-${i}`);
    const results = await Promise.allSettled([
      ...fans.map((f, i) => holds.create(f, eventId, { section: i % 2 === 0 ? 'A' : 'B', quantity: 1 + (i % 3) })),
      ...Array.from({ length: 5 }, () => foldInventoryCounts(t.db, eventId)),
    ]);
    const made = results
      .slice(0, fans.length)
      .flatMap((r, i) => (r.status === 'fulfilled' && r.value ? [{ fan: fans[i]!, hold: r.value }] : []));
    expect(made.length).toBeGreaterThan(10);
    const held = await expectNoDrift();
    expect(held.held).toBe(made.reduce((n, m) => n + m.hold.seats.length, 0));

    // A third released, a third paid for, while folds run; the rest are left to lapse.
    const releasing = made.filter((_, i) => i % 3 === 0);
    const paying = made.filter((_, i) => i % 3 === 1).slice(0, 3);
    const lapsing = made.filter((_, i) => i % 3 === 2);
    const [paid] = await Promise.all([
      Promise.allSettled(
        paying.map((m, i) =>
          checkout.checkout(m.fan, m.hold.holdId, `kept-key-${i}-0000`, {
            payment: { instrument: { type: 'card', number: TEST_CARDS.success } },
          }),
        ),
      ),
      Promise.all(releasing.map((m) => t.db.transaction().execute((trx) => holds.release(trx, m.fan, m.hold.holdId)))),
      Promise.all(Array.from({ length: 3 }, () => foldInventoryCounts(t.db, eventId))),
    ]);
    const orders = paid.flatMap((r) => (r.status === 'fulfilled' ? [r.value.orderId] : []));
    expect(orders.length).toBeGreaterThan(0);
    const afterSales = await expectNoDrift();
    expect(afterSales.sold).toBeGreaterThan(0);

    // Lapse: the holds' time runs out (no write changes a seat's status): read-time expiry counts them available.
    const ids = lapsing.map((m) => m.hold.holdId);
    await sql`UPDATE seats SET expires_at = now() - interval '1 second' WHERE hold_id IN (${sql.join(ids)}) AND status = 'HELD'`.execute(
      t.db,
    );
    await sql`UPDATE holds SET expires_at = now() - interval '1 second' WHERE id IN (${sql.join(ids)})`.execute(t.db);
    const lapsed = await expectNoDrift();
    expect(lapsed.held).toBe(afterSales.held - lapsing.reduce((n, m) => n + m.hold.seats.length, 0));

    // The sweeper gives the lapsed seats back and a refund returns an order's seats, beside a fold.
    await Promise.all([
      reconcileInventory(t.db),
      refundOrder(t.db, payments, orders[0]!, { actor: 'test', reason: 'kept counts' }),
      foldInventoryCounts(t.db, eventId),
    ]);
    const end = await expectNoDrift();
    expect(end.sold).toBeLessThan(afterSales.sold);
    await foldInventoryCounts(t.db, eventId);
    expect(await pendingChanges()).toBe(0);
    await expectNoDrift();
  });

  it('take nothing from a write that rolled back', async () => {
    const before = await expectNoDrift();
    await expect(
      t.db.transaction().execute(async (trx) => {
        await sql`UPDATE seats SET status = 'SOLD', hold_id = gen_random_uuid(), expires_at = NULL
                  WHERE event_id = ${eventId} AND status = 'AVAILABLE'`.execute(trx);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await expectNoDrift()).toEqual(before);
  });
});
