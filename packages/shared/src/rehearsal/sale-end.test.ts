import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { EventCache } from '../allocations/index.js';
import { CardFingerprints, CheckoutService, SimulatedPaymentGateway, TEST_CARDS } from '../checkout/index.js';
import type { Db } from '../db/connect.js';
import { HoldService, SeatmapCache, getInventoryCounts } from '../inventory/index.js';
import { createOpenEvent, createTestDatabase, testSecrets, type TestDatabase } from '../testing/index.js';
import { readBackSales } from './rehearsal.repository.js';
import { readSaleEnd } from './sale-end.js';

// The rehearsal report's sale-end read (readSaleEnd) while checkouts are still finishing, as when a run is stopped
// early (--stop-after, Ctrl-C) with fans paying: the report's "orders beyond the seats sold" (a part of doubleSold)
// must be 0 when the database sold no seat twice. Real PostgreSQL, real holds and checkouts.

let t: TestDatabase;
let eventId: string;
let listingId: string;
let holds: HoldService;
let checkout: CheckoutService;
const CAPACITY = 4 * 10 * 10;
const fan = (i: number) => `sale-end-${i}`;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
  ({ eventId } = await createOpenEvent(t.db, {
    name: 'Sale end',
    priceLevels: [{ code: 'P', name: 'All', priceCents: 2500 }],
    sections: ['A', 'B', 'C', 'D'].map((code, i) => ({ code, priceLevel: 'P', qualityRank: i + 1, rowCount: 10, seatsPerRow: 10 })),
    limits: { perAccountSeats: 4, perInstrumentSeats: 100 },
  }));
  listingId = (await t.db.selectFrom('events').select('listing_id').where('id', '=', eventId).executeTakeFirstOrThrow()).listing_id;
  holds = new HoldService({ db: t.db, events: new EventCache(t.db), seatmap: new SeatmapCache(t.db) });
  // Payments take 5-15 ms, so checkouts commit one after another through the reads below.
  const payments = new SimulatedPaymentGateway({ tps: 10_000, latencyMs: 10, failureRate: 0 });
  checkout = new CheckoutService({ db: t.db, cards: new CardFingerprints(testSecrets().cardFingerprintSecret), payments });
});
afterAll(() => t.drop());

const saleEnd = (db: Db) => readSaleEnd(db, { eventId, capacity: CAPACITY, listingId, botPrefix: 'bot-', notifiedSince: null });

/** Holds for fans `from`..`from + n - 1`, 1-2 seats each, across the four sections. */
async function holdsFor(from: number, n: number) {
  const made = await Promise.all(
    Array.from({ length: n }, (_, k) =>
      holds.create(fan(from + k), eventId, { section: 'ABCD'[(from + k) % 4]!, quantity: 1 + ((from + k) % 2) }),
    ),
  );
  return made.map((h, k) => ({ fan: fan(from + k), holdId: h.holdId, seats: h.seats.length }));
}

const pay = (h: { fan: string; holdId: string }) =>
  checkout.checkout(h.fan, h.holdId, `${h.fan}-key-0000`, { payment: { instrument: { type: 'card', number: TEST_CARDS.success } } });

/**
 * The database `db` with a pause after its first query's answer, in which `between` runs (on another connection):
 * a checkout committing between the report's reads, at the one moment it matters.
 */
function afterFirstRead(db: Db, between: () => Promise<unknown>): Db {
  let first = true;
  const plugin: KyselyPlugin = {
    transformQuery: (a) => a.node,
    transformResult: async (a) => {
      if (first) {
        first = false;
        await between();
      }
      return a.result;
    },
  };
  return db.withPlugin(plugin);
}

describe("the rehearsal report's sale-end read", () => {
  it('counts no order seat beyond the seats sold when a checkout commits between its reads (reads apart did)', async () => {
    const [a, b] = await holdsFor(0, 2);
    // Apart, as the report read them before: the seats counted, a checkout commits, then the orders read.
    const apart = afterFirstRead(t.db, () => pay(a!));
    const counted = await getInventoryCounts(apart, eventId, CAPACITY, undefined, { recount: true });
    const read = await readBackSales(apart, eventId, listingId, 'bot-', null);
    expect(read.orderSeats - counted.sold).toBe(a!.seats);

    // In one snapshot: the checkout that commits between the reads is in none of them.
    const before = await saleEnd(t.db);
    const end = await saleEnd(afterFirstRead(t.db, () => pay(b!)));
    expect(end.ordersBeyondSold).toBe(0);
    expect(end.drift).toBe(0);
    expect([end.counts.sold, end.sales.orderSeats, end.sales.orders]).toEqual([
      before.counts.sold,
      before.sales.orderSeats,
      before.sales.orders,
    ]);
    // ...and the next read has it, in both.
    const after = await saleEnd(t.db);
    expect(after.counts.sold).toBe(before.counts.sold + b!.seats);
    expect(after.sales.orderSeats).toBe(after.counts.sold);
  });

  it('reads 0 beyond the seats sold, and no drift, at every read while 60 checkouts finish', async () => {
    const held = await holdsFor(10, 60);
    const reads: { beyond: number; drift: number; sold: number; orderSeats: number }[] = [];
    const read = async () => {
      const r = await saleEnd(t.db);
      reads.push({ beyond: r.ordersBeyondSold, drift: r.drift, sold: r.counts.sold, orderSeats: r.sales.orderSeats });
    };
    // The report's read, again and again, as a stopped run's would land: among checkouts still committing. The
    // checkouts go in six waves of ten, read throughout each wave and once after it, so the reads see the sale move
    // however the machine schedules them (a wave's read after it sees more seats sold than the one before).
    const settled: PromiseSettledResult<unknown>[] = [];
    for (let w = 0; w < held.length; w += 10) {
      const wave = Promise.allSettled(held.slice(w, w + 10).map(pay));
      let done = false;
      void wave.then(() => (done = true));
      while (!done) await read();
      settled.push(...(await wave));
      await read();
    }
    expect(settled.filter((r) => r.status === 'rejected')).toEqual([]);
    // Reads landed while the sale moved (six waves: at least six seat counts).
    expect(new Set(reads.map((r) => r.sold)).size).toBeGreaterThan(2);
    expect(reads.filter((r) => r.beyond !== 0 || r.drift !== 0 || r.orderSeats !== r.sold)).toEqual([]);
    const end = await saleEnd(t.db);
    expect(end.sales.orderSeats).toBe(end.counts.sold);
    expect(end.counts.sold).toBe(3 + held.reduce((n, h) => n + h.seats, 0));
  });
});
