import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOpenEvent, createTestDatabase, testSecrets, waitUntil, type TestDatabase } from '../testing/index.js';
import { EventCache } from '../allocations/index.js';
import { HoldService, SeatmapCache } from '../inventory/index.js';
import { countBySection, recountBySection } from '../inventory/inventory.repository.js';
import { CheckoutService } from './checkout.service.js';
import { CardFingerprints } from './card-fingerprint.js';
import type { ChargeResult, PaymentProvider } from './payment.js';

// While a payment runs, its hold's seats never turn available: the checkout's first step keeps the hold, and its
// seats, from lapsing for at least the payment window. A hold that already lives past the window keeps its expiry,
// and its seats are not written by that step at all (a seat is written once by a paid checkout, by the sale); a hold
// with less left is moved to the window's floor, hold and seats together, and a failed payment moves both back.

let t: TestDatabase;
let eventId: string;
let holds: HoldService;
let checkout: CheckoutService;
let answer: (r: ChargeResult) => void = () => {};

/** A provider that answers each charge when the test says so. */
const gated: PaymentProvider = {
  charge: () => new Promise<ChargeResult>((r) => (answer = r)),
  refund: () => Promise.resolve(),
  lookup: () => Promise.resolve(null),
};

const WINDOW_SECONDS = 120;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
  ({ eventId } = await createOpenEvent(t.db, {
    name: 'Payment window',
    priceLevels: [{ code: 'P', name: 'All', priceCents: 2500 }],
    sections: [{ code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: 4, seatsPerRow: 10 }],
    holds: { ttlSeconds: 360, extensionSeconds: 60 },
    limits: { perAccountSeats: 4, perInstrumentSeats: 20 },
  }));
  holds = new HoldService({ db: t.db, events: new EventCache(t.db), seatmap: new SeatmapCache(t.db) });
  checkout = new CheckoutService({
    db: t.db,
    cards: new CardFingerprints(testSecrets().cardFingerprintSecret),
    payments: gated,
    paymentWindowSeconds: WINDOW_SECONDS,
  });
});
afterAll(() => t.drop());

interface SeatRow {
  id: string;
  status: string;
  expires_at: Date | null;
  ctid: string;
  xmin: string;
}
const seatsOf = async (holdId: string) =>
  (await sql<SeatRow>`SELECT id, status, expires_at, ctid::text, xmin::text FROM seats WHERE hold_id = ${holdId} ORDER BY id`.execute(t.db))
    .rows;
const holdOf = async (holdId: string) =>
  (await sql<{ status: string; expires_at: Date }>`SELECT status, expires_at FROM holds WHERE id = ${holdId}`.execute(t.db)).rows[0]!;

/** Starts a checkout and waits until its first step committed (the hold PAYING; the charge then waits for `answer`). */
async function startPaying(account: string, holdId: string, key: string, number = '4242424242424242') {
  const paying = checkout.checkout(account, holdId, key, { payment: { instrument: { type: 'card', number } } });
  let failed: unknown;
  paying.catch((e: unknown) => (failed = e));
  await waitUntil('the hold to be PAYING', async () => failed !== undefined || (await holdOf(holdId)).status === 'PAYING');
  if (failed !== undefined) throw failed as Error;
  return { paying }; // wrapped: an async function returning the promise itself would wait for it
}

/** The seat counts the database keeps agree with a full count. */
async function expectNoDrift() {
  const kept = await countBySection(t.db, eventId);
  const full = await recountBySection(t.db, eventId);
  const norm = (rows: { section_code?: string; sectionCode?: string }[]) =>
    [...rows].sort((a, b) => String(a.section_code ?? a.sectionCode).localeCompare(String(b.section_code ?? b.sectionCode)));
  expect(norm(kept as never)).toEqual(norm(full as never));
}

describe('a paid checkout and its hold’s payment window', () => {
  it('a hold that outlives the window: the first step writes no seat and keeps the expiry; the seats stay held while it pays; paid, sold once', async () => {
    const hold = await holds.create('window-1', eventId, { section: 'S', quantity: 2 });
    const before = await seatsOf(hold.holdId);
    const heldBefore = await holdOf(hold.holdId);
    const { paying } = await startPaying('window-1', hold.holdId, 'key-window-0001');

    // Not written: the same row versions, the same expiry as the hold's, which outlives the window.
    const during = await seatsOf(hold.holdId);
    expect(during).toEqual(before);
    const h = await holdOf(hold.holdId);
    expect(h.expires_at.getTime()).toBe(heldBefore.expires_at.getTime());
    for (const s of during) {
      expect(s.status).toBe('HELD');
      expect(s.expires_at!.getTime()).toBe(h.expires_at.getTime());
    }
    // None of them is available to a hold statement (`AVAILABLE`, or `HELD` and lapsed), now or within the window.
    const free = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM seats WHERE hold_id = ${hold.holdId}
        AND (status = 'AVAILABLE' OR (status = 'HELD' AND expires_at <= now() + make_interval(secs => ${WINDOW_SECONDS - 5})))`.execute(
      t.db,
    );
    expect(free.rows[0]!.n).toBe(0);
    await expectNoDrift();

    answer({ status: 'succeeded', reference: 'ref-window-1' });
    expect(await paying).toMatchObject({ status: 'CONFIRMED', seatCount: 2 });
    const after = await seatsOf(hold.holdId);
    for (const s of after) expect(s).toMatchObject({ status: 'SOLD', expires_at: null });
    expect((await holdOf(hold.holdId)).status).toBe('PURCHASED');
    await expectNoDrift();
  });

  it('a hold that outlives the window, declined: back to HELD with its own expiry, its seats never written', async () => {
    const hold = await holds.create('window-2', eventId, { section: 'S', quantity: 2 });
    const before = await seatsOf(hold.holdId);
    const heldBefore = await holdOf(hold.holdId);
    const { paying } = await startPaying('window-2', hold.holdId, 'key-window-0002');
    answer({ status: 'declined', reason: 'card_declined' });
    await expect(paying).rejects.toMatchObject({ code: 'PAYMENT_DECLINED' });
    const h = await holdOf(hold.holdId);
    expect(h.status).toBe('HELD');
    expect(h.expires_at.getTime()).toBe(heldBefore.expires_at.getTime());
    expect(await seatsOf(hold.holdId)).toEqual(before);
    await expectNoDrift();
  });

  it('a hold with less than the window left: hold and seats moved to the floor together while it pays, and back when the gateway fails', async () => {
    const hold = await holds.create('window-3', eventId, { section: 'S', quantity: 3 });
    await t.db.transaction().execute(async (trx) => {
      await sql`UPDATE holds SET expires_at = now() + interval '20 seconds' WHERE id = ${hold.holdId}`.execute(trx);
      await sql`UPDATE seats SET expires_at = (SELECT expires_at FROM holds WHERE id = ${hold.holdId}) WHERE hold_id = ${hold.holdId}`.execute(
        trx,
      );
    });
    const original = (await holdOf(hold.holdId)).expires_at;
    const { paying } = await startPaying('window-3', hold.holdId, 'key-window-0003');
    const h = await holdOf(hold.holdId);
    expect(h.expires_at.getTime()).toBeGreaterThan(Date.now() + (WINDOW_SECONDS - 10) * 1000);
    for (const s of await seatsOf(hold.holdId)) expect(s).toMatchObject({ status: 'HELD', expires_at: h.expires_at });
    await expectNoDrift();

    answer({ status: 'rate_limited', retryAfterSeconds: 1 });
    await expect(paying).rejects.toMatchObject({ code: 'PAYMENT_GATEWAY_BUSY' });
    const back = await holdOf(hold.holdId);
    expect(back).toMatchObject({ status: 'HELD', expires_at: original });
    for (const s of await seatsOf(hold.holdId)) expect(s).toMatchObject({ status: 'HELD', expires_at: original });

    // Paid on a retry under the same key: moved again, then sold.
    const { paying: retry } = await startPaying('window-3', hold.holdId, 'key-window-0003');
    answer({ status: 'succeeded', reference: 'ref-window-3' });
    expect(await retry).toMatchObject({ status: 'CONFIRMED', seatCount: 3 });
    for (const s of await seatsOf(hold.holdId)) expect(s).toMatchObject({ status: 'SOLD', expires_at: null });
    await expectNoDrift();
  });
});
