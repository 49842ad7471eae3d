import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { sql } from 'kysely';
import { createOpenEvent, createTestDatabase, domainError, testSecrets, type TestDatabase } from '../testing/index.js';
import { parseEventFile } from '../events/index.js';
import { EventCache } from '../allocations/index.js';
import { DomainError } from '../errors.js';
import { CardFingerprints, CheckoutService, SimulatedPaymentGateway, TEST_CARDS, cancelOrder } from '../checkout/index.js';
import { reconcileInventory, sweepExpiredHolds } from '../jobs/reconcile.js';
import { HoldService } from './holds.service.js';
import { SeatmapCache } from './seatmap.js';
import { getInventoryCounts } from './inventory.service.js';
import { splitCapacity } from './ga.js';
import { attemptGaHold } from './ga.repository.js';

let t: TestDatabase;
let events: EventCache;
let holds: HoldService;
let checkout: CheckoutService;

const card = { payment: { instrument: { type: 'card' as const, number: TEST_CARDS.success } } };

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 30 });
  // No event cache between steps: a test changes an event and reads it back at once.
  events = new EventCache(t.db, 0);
  holds = new HoldService({ db: t.db, events, seatmap: new SeatmapCache(t.db, 0) });
  checkout = new CheckoutService({
    db: t.db,
    cards: new CardFingerprints(testSecrets().cardFingerprintSecret),
    payments: new SimulatedPaymentGateway({ tps: 10_000, latencyMs: 1, failureRate: 0 }),
  });
});
afterAll(() => t.drop());

const refusal = domainError;

/** An open event with one GA section `GA` (and, optionally, a reserved section `S` of 200 seats). */
function gaEvent(capacity: number, shards: number, opts: { reserved?: boolean; limit?: number } = {}) {
  return createOpenEvent(t.db, {
    limits: { perAccountSeats: opts.limit ?? 4, perInstrumentSeats: opts.limit ?? 4 },
    priceLevels: [
      { code: 'P', name: 'Seated', priceCents: 5000 },
      { code: 'FLOOR', name: 'Standing', priceCents: 3000 },
    ],
    sections: [
      { kind: 'GA', code: 'GA', name: 'Floor', priceLevel: 'FLOOR', capacity, shards },
      ...(opts.reserved ? [{ code: 'S', priceLevel: 'P', qualityRank: 2, rowCount: 10, seatsPerRow: 20 }] : []),
    ],
  });
}

async function shards(eventId: string) {
  return t.db.selectFrom('ga_shards').selectAll().where('event_id', '=', eventId).orderBy('shard').execute();
}

/** The GA invariants: every shard's held/sold counters equal the units in that state, and the event adds up. */
async function checkGa(eventId: string, capacity: number) {
  const { rows } = await sql<{ mismatched: number }>`
    SELECT count(*)::int AS mismatched FROM ga_shards s
    WHERE s.event_id = ${eventId}
      AND (s.held <> (SELECT coalesce(sum(quantity), 0) FROM ga_hold_units u WHERE u.event_id = s.event_id AND u.section_code = s.section_code AND u.shard = s.shard AND u.state = 'HELD')
        OR s.sold <> (SELECT coalesce(sum(quantity), 0) FROM ga_hold_units u WHERE u.event_id = s.event_id AND u.section_code = s.section_code AND u.shard = s.shard AND u.state = 'SOLD'))`.execute(
    t.db,
  );
  expect(rows[0]!.mismatched).toBe(0);
  const counts = await getInventoryCounts(t.db, eventId, capacity);
  expect(counts.drift).toBe(0);
  return counts;
}

describe('general admission: event file', () => {
  const base = {
    name: 'Field day',
    venueName: 'Park',
    startsAt: '2027-06-01T18:00:00Z',
    onsaleAt: '2027-01-01T10:00:00Z',
    priceLevels: [{ code: 'GA', name: 'General', priceCents: 4000 }],
  };

  it('takes { code, kind: GA, priceLevel, capacity, shards? } and defaults shards to 16', () => {
    const spec = parseEventFile({ ...base, sections: [{ code: 'FIELD', kind: 'GA', priceLevel: 'GA', capacity: 20_000 }] });
    expect(spec.sections[0]).toMatchObject({ kind: 'GA', code: 'FIELD', capacity: 20_000, shards: 16, qualityRank: 1 });
  });

  it('reads examples/ga.json: an all-GA event of 20,000 units in 16 shards', async () => {
    const { readFile } = await import('node:fs/promises');
    const spec = parseEventFile(JSON.parse(await readFile(new URL('../../../../examples/ga.json', import.meta.url), 'utf8')));
    expect(spec.sections).toEqual([expect.objectContaining({ kind: 'GA', code: 'FIELD', capacity: 20_000, shards: 16 })]);
  });

  it('rejects bad GA sections, naming the field', () => {
    const bad = (section: Record<string, unknown>) => {
      try {
        parseEventFile({ ...base, sections: [section] });
      } catch (e) {
        return (e as DomainError).details.issues as { path: string; message: string }[];
      }
      throw new Error('expected INVALID_EVENT_FILE');
    };
    expect(bad({ code: 'F', kind: 'GA', priceLevel: 'GA' })).toContainEqual(expect.objectContaining({ path: 'sections.0.capacity' }));
    expect(bad({ code: 'F', kind: 'GA', priceLevel: 'GA', capacity: 0 })).toContainEqual(
      expect.objectContaining({ path: 'sections.0.capacity' }),
    );
    expect(bad({ code: 'F', kind: 'GA', priceLevel: 'GA', capacity: 2.5 })).toContainEqual({
      path: 'sections.0.capacity',
      message: 'enter a whole number of places',
    });
    expect(bad({ code: 'F', kind: 'GA', priceLevel: 'GA', capacity: 10, shards: 0 })).toContainEqual(
      expect.objectContaining({ path: 'sections.0.shards' }),
    );
    expect(bad({ code: 'F', kind: 'GA', priceLevel: 'GA', capacity: 10, shards: 1000 })).toContainEqual(
      expect.objectContaining({ path: 'sections.0.shards' }),
    );
    expect(bad({ code: 'F', kind: 'GA', priceLevel: 'GA', capacity: 10, rowCount: 2 })).toContainEqual({
      path: 'sections.0.rowCount',
      message: 'a GA section has a capacity, not seat rows',
    });
    expect(bad({ code: 'F', kind: 'STANDING', priceLevel: 'GA', capacity: 10 })).toContainEqual(
      expect.objectContaining({ path: 'sections.0.kind' }),
    );
    expect(bad({ code: 'F', kind: 'GA', priceLevel: 'VIP', capacity: 10 })).toContainEqual({
      path: 'sections.0.priceLevel',
      message: 'there is no price level VIP; choose one of the price levels above',
    });
  });

  it('splits a capacity evenly over its shards, never into empty shards', () => {
    expect(splitCapacity(20_000, 16)).toEqual(Array(16).fill(1250));
    expect(splitCapacity(10, 4)).toEqual([3, 3, 2, 2]);
    expect(splitCapacity(3, 16)).toEqual([1, 1, 1]);
    expect(splitCapacity(7, 1)).toEqual([7]);
  });

  it('creates shard rows that add up to the section and the event capacity', async () => {
    const { eventId, capacity } = await gaEvent(1000, 8, { reserved: true });
    expect(capacity).toBe(1200);
    const rows = await shards(eventId);
    expect(rows).toHaveLength(8);
    expect(rows.reduce((a, r) => a + r.capacity, 0)).toBe(1000);
    for (const r of rows) expect(r).toMatchObject({ available: r.capacity, held: 0, sold: 0 });
    const section = await t.db
      .selectFrom('sections')
      .select(['kind', 'capacity'])
      .where('event_id', '=', eventId)
      .where('code', '=', 'GA')
      .executeTakeFirstOrThrow();
    expect(section).toEqual({ kind: 'GA', capacity: 1000 });
    const counts = await checkGa(eventId, capacity);
    expect(counts.sections).toContainEqual({ code: 'GA', available: 1000, held: 0, sold: 0 });
  });
});

describe('general admission: holds', () => {
  it("sets synchronous_commit off for a GA hold's own transaction under 'async' (the session keeps the server's), the server's under 'sync'", async () => {
    const { eventId } = await gaEvent(100, 4);
    const server = (await sql<{ s: string }>`SELECT current_setting('synchronous_commit') AS s`.execute(t.db)).rows[0]!.s;
    expect(server).not.toBe('off');
    const attempt = (accountId: string) =>
      ({
        eventId,
        holdId: randomUUID(),
        accountId,
        sectionCode: 'GA',
        quantity: 2,
        ttlSeconds: 360,
        limit: 4,
        deviceHash: null,
        deviceLimit: 4,
        seed: 1,
        allocation: null,
      }) as const;
    const a = await attemptGaHold(t.db, attempt('ga-commit-async'), 'async');
    const s = await attemptGaHold(t.db, attempt('ga-commit-sync'), 'sync');
    expect([a.commitMode, a.expiresAt !== null, s.commitMode, s.expiresAt !== null]).toEqual(['off', true, server, true]);
    expect((await sql<{ s: string }>`SELECT current_setting('synchronous_commit') AS s`.execute(t.db)).rows[0]!.s).toBe(server);
  });

  it('holds units from one shard: no seats, units with the price, counters moved', async () => {
    const { eventId, capacity } = await gaEvent(100, 4);
    const hold = await holds.create('ga-one', eventId, { section: 'GA', quantity: 3 });
    expect(hold).toMatchObject({
      status: 'HELD',
      seats: [],
      units: [{ section: 'GA', quantity: 3, priceCents: 3000 }],
      quantity: 3,
      amountCents: 9000,
    });
    const units = await t.db.selectFrom('ga_hold_units').selectAll().where('hold_id', '=', hold.holdId).execute();
    expect(units).toHaveLength(1);
    expect(units[0]).toMatchObject({ quantity: 3, state: 'HELD' });
    const s = (await shards(eventId)).find((r) => r.shard === units[0]!.shard)!;
    expect(s).toMatchObject({ held: 3, available: s.capacity - 3 });
    expect((await checkGa(eventId, capacity)).sections).toContainEqual({ code: 'GA', available: 97, held: 3, sold: 0 });
    const read = await holds.get(t.db, 'ga-one', hold.holdId);
    expect(read).toMatchObject({ status: 'HELD', seats: [], units: [{ section: 'GA', quantity: 3, priceCents: 3000 }], amountCents: 9000 });
  });

  it('spans shards when no one shard has enough, all or nothing', async () => {
    const { eventId, capacity } = await gaEvent(8, 4, { limit: 8 }); // shards of 2
    const hold = await holds.create('ga-span', eventId, { section: 'GA', quantity: 5 });
    const units = await t.db.selectFrom('ga_hold_units').select(['shard', 'quantity']).where('hold_id', '=', hold.holdId).execute();
    expect(units.length).toBeGreaterThanOrEqual(3);
    expect(units.reduce((a, u) => a + u.quantity, 0)).toBe(5);
    expect(hold.units).toEqual([{ section: 'GA', quantity: 5, priceCents: 3000 }]);

    // 3 left: 4 is refused and writes nothing.
    const before = await shards(eventId);
    const e = await refusal(holds.create('ga-span-2', eventId, { section: 'GA', quantity: 4 }));
    expect(e).toMatchObject({ code: 'GA_QUANTITY_UNAVAILABLE', kind: 'conflict', details: { field: 'quantity', available: 3 } });
    expect(await shards(eventId)).toEqual(before);
    expect(await t.db.selectFrom('holds').select('id').where('account_id', '=', 'ga-span-2').execute()).toEqual([]);

    await holds.create('ga-span-3', eventId, { section: 'GA', quantity: 3 });
    const soldOut = await refusal(holds.create('ga-span-4', eventId, { section: 'GA', quantity: 1 }));
    expect(soldOut).toMatchObject({ code: 'SECTION_SOLD_OUT', details: { field: 'section', available: 0 } });
    expect((await checkGa(eventId, capacity)).sections).toContainEqual({ code: 'GA', available: 0, held: 8, sold: 0 });
  });

  it('offers other sections that can take the party when a GA section cannot', async () => {
    const { eventId } = await gaEvent(2, 1, { reserved: true });
    const e = await refusal(holds.create('ga-alt', eventId, { section: 'GA', quantity: 3 }));
    expect(e.code).toBe('GA_QUANTITY_UNAVAILABLE');
    expect(e.details.alternatives).toEqual([{ section: 'S', name: 'Section S', available: 200, priceCents: 5000 }]);
  });

  it('the per-account limit counts reserved seats and GA units together', async () => {
    const { eventId, capacity } = await gaEvent(100, 4, { reserved: true, limit: 4 });
    await holds.create('mixed', eventId, { section: 'S', quantity: 3 });
    const e = await refusal(holds.create('mixed', eventId, { section: 'GA', quantity: 2 }));
    expect(e).toMatchObject({ code: 'ACCOUNT_LIMIT_EXCEEDED', kind: 'limit', details: { field: 'quantity', limit: 4, current: 3 } });
    await holds.create('mixed', eventId, { section: 'GA', quantity: 1 });
    const other = await refusal(holds.create('mixed', eventId, { section: 'S', quantity: 1 }));
    expect(other).toMatchObject({ code: 'ACCOUNT_LIMIT_EXCEEDED', details: { current: 4 } });

    // GA first, then reserved.
    await holds.create('mixed-2', eventId, { section: 'GA', quantity: 4 });
    expect((await refusal(holds.create('mixed-2', eventId, { section: 'S', quantity: 1 }))).code).toBe('ACCOUNT_LIMIT_EXCEEDED');
    await checkGa(eventId, capacity);
  });

  it('the per-device limit counts reserved seats and GA units of every account on the device', async () => {
    const { eventId, capacity } = await gaEvent(100, 4, { reserved: true, limit: 4 });
    const phone = { deviceHash: 'device-shared-by-two-accounts' };
    await holds.create('device-a', eventId, { section: 'S', quantity: 3 }, phone);
    const e = await refusal(holds.create('device-b', eventId, { section: 'GA', quantity: 2 }, phone));
    expect(e).toMatchObject({ code: 'DEVICE_LIMIT_EXCEEDED', kind: 'limit', details: { field: 'x-device-id', limit: 4, current: 3 } });
    const ga = await holds.create('device-b', eventId, { section: 'GA', quantity: 1 }, phone);
    const row = await t.db.selectFrom('holds').select('device_hash').where('id', '=', ga.holdId).executeTakeFirstOrThrow();
    expect(row.device_hash).toBe('device-shared-by-two-accounts');
    expect((await refusal(holds.create('device-c', eventId, { section: 'S', quantity: 1 }, phone))).code).toBe('DEVICE_LIMIT_EXCEEDED');
    await checkGa(eventId, capacity);
  });

  it('the per-account limit holds under concurrent GA and reserved requests from one account', async () => {
    const { eventId, capacity } = await gaEvent(200, 8, { reserved: true, limit: 6 });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) => holds.create('racer', eventId, { section: i % 2 === 0 ? 'GA' : 'S', quantity: 1 + (i % 3) })),
    );
    for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as DomainError).code).toBe('ACCOUNT_LIMIT_EXCEEDED');
    const got = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.quantity] : [])).reduce((a, q) => a + q, 0);
    expect(got).toBeLessThanOrEqual(6);
    expect(got).toBeGreaterThanOrEqual(5); // quantities 1-3: at most one unit short of the limit
    const counts = await checkGa(eventId, capacity);
    expect(counts.held).toBe(got);
  });

  it('never oversells under concurrent holds from many accounts (16 shards, 500 units, 400 requests)', async () => {
    const { eventId, capacity } = await gaEvent(500, 16);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 400 }, (_, i) => holds.create(`crowd-${i}`, eventId, { section: 'GA', quantity: 1 + (i % 4) })),
    );
    for (const o of outcomes)
      if (o.status === 'rejected') expect((o.reason as DomainError).code).toMatch(/^(SECTION_SOLD_OUT|GA_QUANTITY_UNAVAILABLE)$/);
    const held = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.quantity] : [])).reduce((a, q) => a + q, 0);
    expect(held).toBeLessThanOrEqual(500);
    expect(held).toBeGreaterThanOrEqual(497); // the last few units only go to a party small enough
    const counts = await checkGa(eventId, capacity);
    expect(counts).toMatchObject({ held, available: 500 - held, sold: 0 });
  });
});

describe('general admission: expiry, release, checkout', () => {
  const lapse = (holdId: string) => sql`UPDATE holds SET expires_at = now() - interval '1 second' WHERE id = ${holdId}`.execute(t.db);

  it("a lapsed hold's units are available at once, with no sweeper, and a new hold reclaims them", async () => {
    const { eventId, capacity } = await gaEvent(4, 2);
    const first = await holds.create('early', eventId, { section: 'GA', quantity: 4 });
    expect((await refusal(holds.create('late', eventId, { section: 'GA', quantity: 2 }))).code).toBe('SECTION_SOLD_OUT');

    await lapse(first.holdId);
    // Read-time expiry: the counts see the units as available; the shard rows have not been touched.
    expect((await checkGa(eventId, capacity)).sections).toContainEqual({ code: 'GA', available: 4, held: 0, sold: 0 });
    expect((await shards(eventId)).reduce((a, s) => a + s.held, 0)).toBe(4);
    expect((await holds.get(t.db, 'early', first.holdId)).status).toBe('EXPIRED');

    const late = await holds.create('late', eventId, { section: 'GA', quantity: 2 });
    expect(late.units).toEqual([{ section: 'GA', quantity: 2, priceCents: 3000 }]);
    expect((await checkGa(eventId, capacity)).sections).toContainEqual({ code: 'GA', available: 2, held: 2, sold: 0 });
    // The lapsed hold can no longer be paid for, and its units are not the late fan's twice.
    expect((await refusal(checkout.checkout('early', first.holdId, 'early-key-1', card))).code).toBe('HOLD_EXPIRED');
    const units = await t.db.selectFrom('ga_hold_units').select(['state']).where('hold_id', '=', first.holdId).execute();
    for (const u of units) expect(u.state).toBe('RETURNED');
  });

  it('the sweeper gives lapsed units back to the counters (cosmetic) and the reconciliation finds no drift', async () => {
    const { eventId, capacity } = await gaEvent(10, 2);
    const a = await holds.create('sweep-a', eventId, { section: 'GA', quantity: 3 });
    await holds.create('sweep-b', eventId, { section: 'GA', quantity: 2 });
    await lapse(a.holdId);
    await sweepExpiredHolds(t.db);
    expect((await shards(eventId)).reduce((x, s) => x + s.held, 0)).toBe(2);
    const [r] = (await reconcileInventory(t.db)).filter((x) => x.eventId === eventId);
    expect(r).toMatchObject({ capacity: 10, available: 8, held: 2, sold: 0, drift: 0, orderDrift: 0 });
    await checkGa(eventId, capacity);
  });

  it('release gives the units back at once; releasing again changes nothing', async () => {
    const { eventId, capacity } = await gaEvent(10, 2);
    const hold = await holds.create('releaser', eventId, { section: 'GA', quantity: 4 });
    const released = await t.db.transaction().execute((trx) => holds.release(trx, 'releaser', hold.holdId));
    expect(released.status).toBe('RELEASED');
    expect((await shards(eventId)).reduce((x, s) => x + s.available, 0)).toBe(10);
    const again = await t.db.transaction().execute((trx) => holds.release(trx, 'releaser', hold.holdId));
    expect(again.status).toBe('RELEASED');
    expect((await checkGa(eventId, capacity)).sections).toContainEqual({ code: 'GA', available: 10, held: 0, sold: 0 });
  });

  it('checkout sells the units (one order, the GA price), extend works, and a cancelled order gives them back', async () => {
    const { eventId, capacity } = await gaEvent(10, 2);
    const hold = await holds.create('buyer', eventId, { section: 'GA', quantity: 3 });
    const extended = await t.db.transaction().execute((trx) => holds.extend(trx, 'buyer', hold.holdId));
    expect(extended.expiresAt.getTime()).toBeGreaterThan(hold.expiresAt.getTime());
    const order = await checkout.checkout('buyer', hold.holdId, 'buyer-key-1', card);
    expect(order).toMatchObject({ status: 'CONFIRMED', seatCount: 3, amountCents: 9000 });
    const replay = await checkout.checkout('buyer', hold.holdId, 'buyer-key-1', card);
    expect(replay).toMatchObject({ orderId: order.orderId, replayed: true });
    expect((await checkGa(eventId, capacity)).sections).toContainEqual({ code: 'GA', available: 7, held: 0, sold: 3 });
    expect(await holds.get(t.db, 'buyer', hold.holdId)).toMatchObject({
      status: 'PURCHASED',
      units: [{ section: 'GA', quantity: 3, priceCents: 3000 }],
    });
    const [r] = (await reconcileInventory(t.db)).filter((x) => x.eventId === eventId);
    expect(r).toMatchObject({ sold: 3, drift: 0, orderDrift: 0 });
    // A released hold cannot be checked out; an order counts against the account limit.
    expect((await refusal(holds.create('buyer', eventId, { section: 'GA', quantity: 2 }))).code).toBe('ACCOUNT_LIMIT_EXCEEDED');

    const cancelled = await cancelOrder(t.db, order.orderId, { actor: 'test', reason: 'duplicate purchase' });
    expect(cancelled).toMatchObject({ status: 'CANCELLED', seatsReturned: 3 });
    expect((await checkGa(eventId, capacity)).sections).toContainEqual({ code: 'GA', available: 10, held: 0, sold: 0 });
    const [r2] = (await reconcileInventory(t.db)).filter((x) => x.eventId === eventId);
    expect(r2).toMatchObject({ sold: 0, drift: 0, orderDrift: 0 });
  });

  it('a GA hold that lapsed and was reclaimed while its payment was in flight is refunded, not sold twice', async () => {
    const { eventId, capacity } = await gaEvent(2, 1);
    const hold = await holds.create('slow-payer', eventId, { section: 'GA', quantity: 2 });
    // The payment window is short and the gateway slow: the hold lapses mid-payment and another fan takes the units.
    // The gateway answers only when the test lets it, so "mid-payment" holds however slow the machine is.
    const gateway = new SimulatedPaymentGateway({ tps: 10_000, latencyMs: 0, failureRate: 0 });
    let answer!: () => void;
    const answered = new Promise<void>((r) => (answer = r));
    const slow = new CheckoutService({
      cards: new CardFingerprints(testSecrets().cardFingerprintSecret),
      db: t.db,
      payments: {
        charge: async (req) => (await answered, gateway.charge(req)),
        refund: (ref) => gateway.refund(ref),
        lookup: (key) => gateway.lookup(key),
      },
      paymentWindowSeconds: 0,
    });
    const paying = refusal(slow.checkout('slow-payer', hold.holdId, 'slow-key-01', card));
    // Once the payment has started, the hold lapses.
    await vi.waitFor(async () => expect((await holds.get(t.db, 'slow-payer', hold.holdId)).status).toBe('PAYING'), {
      timeout: 60_000,
      interval: 10,
    });
    await sql`UPDATE holds SET expires_at = now() - interval '1 millisecond' WHERE id = ${hold.holdId}`.execute(t.db);
    const other = await holds.create('quick', eventId, { section: 'GA', quantity: 2 });
    answer();
    expect(other.quantity).toBe(2);
    expect((await paying).code).toBe('HOLD_EXPIRED');
    const counts = await checkGa(eventId, capacity);
    expect(counts.sections).toContainEqual({ code: 'GA', available: 0, held: 2, sold: 0 });
    expect(await t.db.selectFrom('orders').select('id').where('hold_id', '=', hold.holdId).execute()).toEqual([]);
  });

  it('inventory:add refuses a GA section (it has a capacity, not rows)', async () => {
    const { addSeats } = await import('./add-seats.js');
    const { eventId } = await gaEvent(10, 2);
    const e = await refusal(addSeats(t.db, eventId, { section: 'GA', rows: 1, seatsPerRow: 5 }, 'test'));
    expect(e).toMatchObject({ code: 'SECTION_IS_GA', details: { field: 'section' } });
  });
});
