import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOpenEvent, createTestDatabase, testSecrets, waitUntil, type TestDatabase } from '../testing/index.js';
import { EventCache } from '../allocations/index.js';
import { HoldService, SeatmapCache } from '../inventory/index.js';
import { CheckoutService } from './checkout.service.js';
import { CardFingerprints } from './card-fingerprint.js';
import { SimulatedPaymentGateway } from './payment.js';

// The checkout's first step locks the hold and reads it with its event's settings in one statement
// (`replayOrLockHoldWithEvent`): the statement's snapshot is taken before it waits for the hold's lock, so the hold
// it reads must still be the version committed while it waited (FOR UPDATE follows the row's update chain), as the
// separate read after the lock saw it before.

let t: TestDatabase;
let eventId: string;
let holds: HoldService;
let checkout: CheckoutService;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 4 });
  ({ eventId } = await createOpenEvent(t.db, {
    name: 'First step',
    priceLevels: [{ code: 'P', name: 'All', priceCents: 2500 }],
    sections: [{ code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: 4, seatsPerRow: 10 }],
  }));
  holds = new HoldService({ db: t.db, events: new EventCache(t.db), seatmap: new SeatmapCache(t.db) });
  checkout = new CheckoutService({
    db: t.db,
    cards: new CardFingerprints(testSecrets().cardFingerprintSecret),
    payments: new SimulatedPaymentGateway({ tps: 1000, latencyMs: 0, failureRate: 0, db: t.db }),
  });
});
afterAll(() => t.drop());

/** Runs `change` on the hold in a transaction that keeps the hold's lock until `commit` is called. */
async function lockedChange(holdId: string, change: string) {
  let commit!: () => void;
  const committed = new Promise<void>((r) => (commit = r));
  let changed!: () => void;
  const isChanged = new Promise<void>((r) => (changed = r));
  const done = t.db.transaction().execute(async (trx) => {
    await sql`SELECT 1 FROM holds WHERE id = ${holdId} FOR UPDATE`.execute(trx);
    await sql.raw(`UPDATE holds SET ${change}, updated_at = now() WHERE id = '${holdId}'`).execute(trx);
    changed();
    await committed;
  });
  await isChanged;
  return { commit, done };
}

/** Waits until a backend of this database waits for a row lock (the checkout's first step, behind the hold's lock). */
const waitingForLock = () =>
  waitUntil('the checkout to wait for the hold lock', async () => {
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(t.db);
    return rows[0]!.n > 0;
  });

const pay = (account: string, holdId: string, key: string) =>
  checkout.checkout(account, holdId, key, { payment: { instrument: { type: 'card', number: '4242424242424242' } } });

describe("the checkout's first step", () => {
  it('reads the hold as committed while it waited for its lock: a hold released meanwhile is refused HOLD_RELEASED', async () => {
    const hold = await holds.create('first-step-1', eventId, { section: 'S', quantity: 2 });
    const other = await lockedChange(hold.holdId, `status = 'RELEASED'`);
    const paying = pay('first-step-1', hold.holdId, 'key-first-step-0001');
    const outcome = paying.then(
      () => 'paid',
      (e: unknown) => (e as { code?: string }).code,
    );
    await waitingForLock();
    other.commit();
    await other.done;
    expect(await outcome).toBe('HOLD_RELEASED');
  });

  it('reads the hold as committed while it waited: a hold whose expiry was moved on meanwhile is paid, not refused as lapsed', async () => {
    const hold = await holds.create('first-step-2', eventId, { section: 'S', quantity: 2 });
    // Lapsed as the statement's snapshot sees it, moved on by the transaction it waits for.
    await sql`UPDATE holds SET expires_at = now() - interval '1 second' WHERE id = ${hold.holdId}`.execute(t.db);
    await sql`UPDATE seats SET expires_at = now() + interval '10 minutes' WHERE hold_id = ${hold.holdId}`.execute(t.db);
    const other = await lockedChange(hold.holdId, `expires_at = now() + interval '10 minutes'`);
    const paying = pay('first-step-2', hold.holdId, 'key-first-step-0002');
    await waitingForLock();
    other.commit();
    await other.done;
    expect(await paying).toMatchObject({ status: 'CONFIRMED', seatCount: 2 });
  });

  it('answers a retry from its attempt, and another request under the key with the hold of the first', async () => {
    const hold = await holds.create('first-step-3', eventId, { section: 'S', quantity: 2 });
    const first = await pay('first-step-3', hold.holdId, 'key-first-step-0003');
    expect(first).toMatchObject({ status: 'CONFIRMED' });
    expect(await pay('first-step-3', hold.holdId, 'key-first-step-0003')).toMatchObject({ orderId: first.orderId, replayed: true });
    await expect(pay('first-step-3', hold.holdId, 'key-first-step-0004')).rejects.toMatchObject({ code: 'HOLD_PURCHASED' });
    await expect(pay('someone-else', hold.holdId, 'key-first-step-0005')).rejects.toMatchObject({ code: 'HOLD_NOT_OWNED' });
  });
});
