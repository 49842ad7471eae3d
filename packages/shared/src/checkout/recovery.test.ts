import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import { createOpenEvent, createTestDatabase, testSecrets, type TestDatabase } from '../testing/index.js';
import { EventCache } from '../events/index.js';
import { HoldService, SeatmapCache } from '../inventory/index.js';
import { checkoutRequestHash, CheckoutService } from './checkout.service.js';
import { CardFingerprints } from './card-fingerprint.js';
import { SimulatedPaymentGateway, TEST_CARDS } from './payment.js';

let t: TestDatabase;
let eventId: string;
let holds: HoldService;
let payments: SimulatedPaymentGateway;
let checkout: CheckoutService;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
  ({ eventId } = await createOpenEvent(t.db, { name: 'Recovery', priceLevels: [{ code: 'P', name: 'All', priceCents: 2500 }] }));
  holds = new HoldService({ db: t.db, events: new EventCache(t.db), seatmap: new SeatmapCache(t.db) });
  payments = new SimulatedPaymentGateway({ tps: 1000, latencyMs: 0, failureRate: 0 });
  checkout = new CheckoutService({ db: t.db, cards: new CardFingerprints(testSecrets().cardFingerprintSecret), payments });
});
afterAll(() => t.drop());

/** What a process that died after "payment started" leaves behind: the attempt PENDING, the hold PAYING. */
async function diedMidPayment(account: string, key: string, charged: boolean) {
  const hold = await holds.create(account, eventId, { section: 'S', quantity: 2 });
  const fingerprint = new CardFingerprints(testSecrets().cardFingerprintSecret).of(TEST_CARDS.success);
  const requestHash = checkoutRequestHash(hold.holdId, fingerprint, { payment: { instrument: { type: 'card', number: TEST_CARDS.success } } });
  await sql`INSERT INTO checkout_attempts (account_id, idempotency_key, hold_id, request_hash, instrument_fingerprint, seat_count, created_at)
            VALUES (${account}, ${key}, ${hold.holdId}, ${requestHash}, ${fingerprint}, 2, now() - interval '10 minutes')`.execute(t.db);
  await sql`UPDATE holds SET status = 'PAYING' WHERE id = ${hold.holdId}`.execute(t.db);
  if (charged)
    await payments.charge({ idempotencyKey: `${account}:${key}`, amountCents: 5000, currency: 'USD', instrument: { type: 'card', number: TEST_CARDS.success } });
  return hold.holdId;
}

describe('checkouts interrupted by a crash', () => {
  it('are settled: charged -> the order is written; never charged -> the hold is given back, nothing sold', async () => {
    const charged = await diedMidPayment('crash-1', 'key-crash-0001', true);
    const notCharged = await diedMidPayment('crash-2', 'key-crash-0002', false);
    const r = await checkout.recoverStalePayments(60);
    expect(r).toEqual({ settled: 2, confirmed: 1 });

    const order = await t.db.selectFrom('orders').selectAll().where('hold_id', '=', charged).executeTakeFirstOrThrow();
    expect(order).toMatchObject({ seat_count: 2, amount_cents: 5000 });
    const sold = await sql<{ n: number }>`SELECT count(*)::int AS n FROM seats WHERE hold_id = ${charged} AND status = 'SOLD'`.execute(t.db);
    expect(sold.rows[0]!.n).toBe(2);

    const back = await t.db.selectFrom('holds').select('status').where('id', '=', notCharged).executeTakeFirstOrThrow();
    expect(back.status).toBe('HELD');
    const attempt = await t.db.selectFrom('checkout_attempts').select(['status', 'error_code']).where('idempotency_key', '=', 'key-crash-0002').executeTakeFirstOrThrow();
    expect(attempt).toEqual({ status: 'FAILED', error_code: 'PAYMENT_NOT_COMPLETED' });

    // A replay of the interrupted request gets the settled answer; a second pass settles nothing more.
    const replay = await checkout.checkout('crash-1', charged, 'key-crash-0001', { payment: { instrument: { type: 'card', number: TEST_CARDS.success } } });
    expect(replay).toMatchObject({ orderId: order.id, replayed: true });
    await expect(
      checkout.checkout('crash-2', notCharged, 'key-crash-0002', { payment: { instrument: { type: 'card', number: TEST_CARDS.success } } }),
    ).rejects.toMatchObject({ code: 'PAYMENT_NOT_COMPLETED' });
    expect(await checkout.recoverStalePayments(60)).toEqual({ settled: 0, confirmed: 0 });
    expect(payments.charges).toBe(1);
  });
});
