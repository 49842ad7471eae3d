import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOpenEvent, createTestDatabase, testSecrets, withAdminClient, withDatabase, type TestDatabase } from '../testing/index.js';
import { EventCache } from '../allocations/index.js';
import { HoldService, SeatmapCache } from '../inventory/index.js';
import { CheckoutService } from '../checkout/checkout.service.js';
import { CardFingerprints } from '../checkout/card-fingerprint.js';
import { SimulatedPaymentGateway } from '../checkout/payment.js';

/** Cards the simulated gateway charges (each within the event's seats-per-card limit here). */
const CARDS = ['4242424242424242', '5555555555554444', '4012888888881881', '5105105105105100'];

// The store runs its statements as named prepared statements, which PostgreSQL plans generically after their fifth
// run. A statement that only works on a custom plan (a partial index's predicate given as parameters in ON CONFLICT,
// say) passes a test that runs it a few times and fails in a sale. Here every connection plans generically from the
// first run, so a confirmed order (its tickets written in the same transaction) meets that plan at once.
let t: TestDatabase;
let eventId: string;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 2 });
  const name = new URL(t.url).pathname.slice(1);
  // Before the pool opens its first connection: each of them then starts with the setting.
  await withAdminClient(withDatabase(t.url, 'postgres'), (c) => c.query(`ALTER DATABASE ${name} SET plan_cache_mode = force_generic_plan`));
  ({ eventId } = await createOpenEvent(t.db, {
    name: 'Generic plans',
    priceLevels: [{ code: 'P', name: 'All', priceCents: 2500 }],
    sections: [{ code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: 4, seatsPerRow: 10 }],
  }));
});
afterAll(() => t.drop());

describe('a sale on generic plans', () => {
  it('confirms orders and issues their tickets, order after order', async () => {
    const holds = new HoldService({ db: t.db, events: new EventCache(t.db), seatmap: new SeatmapCache(t.db) });
    const payments = new SimulatedPaymentGateway({ tps: 1000, latencyMs: 0, failureRate: 0 });
    const checkout = new CheckoutService({ db: t.db, cards: new CardFingerprints(testSecrets().cardFingerprintSecret), payments });
    // Two seats an order, on four cards: eight orders stay within each card's four seats.
    for (let i = 0; i < 8; i++) {
      const account = `generic-${i}`;
      const hold = await holds.create(account, eventId, { section: 'S', quantity: 2 });
      const order = await checkout.checkout(account, hold.holdId, `key-generic-${String(i).padStart(4, '0')}`, {
        payment: { instrument: { type: 'card', number: CARDS[i % CARDS.length]! } },
      });
      expect(order).toMatchObject({ status: 'CONFIRMED' });
    }
    const tickets = await t.db.selectFrom('tickets').select(['slot', 'status']).where('event_id', '=', eventId).execute();
    expect(tickets).toHaveLength(16);
    expect(new Set(tickets.map((x) => x.slot)).size).toBe(16);
    expect(tickets.every((x) => x.status === 'ACTIVE')).toBe(true);
  });

  it('revokes the live ticket of a seat sold again (its insert conflicts) and issues the new one', async () => {
    // Seats back on sale by a path that did not revoke their tickets: the ticketed seats are the only ones left.
    await sql`UPDATE seats SET status = 'SOLD', expires_at = NULL, hold_id = (SELECT id FROM holds WHERE event_id = ${eventId} LIMIT 1)
              WHERE event_id = ${eventId} AND status <> 'SOLD'`.execute(t.db);
    await sql`UPDATE seats SET status = 'AVAILABLE', hold_id = NULL, expires_at = NULL
              WHERE event_id = ${eventId} AND id IN (SELECT seat_id FROM tickets WHERE event_id = ${eventId})`.execute(t.db);
    const holds = new HoldService({ db: t.db, events: new EventCache(t.db), seatmap: new SeatmapCache(t.db) });
    const payments = new SimulatedPaymentGateway({ tps: 1000, latencyMs: 0, failureRate: 0 });
    const checkout = new CheckoutService({ db: t.db, cards: new CardFingerprints(testSecrets().cardFingerprintSecret), payments });
    const hold = await holds.create('generic-again', eventId, { section: 'S', quantity: 2 });
    const order = await checkout.checkout('generic-again', hold.holdId, 'key-generic-again', {
      payment: { instrument: { type: 'card', number: '6011111111111117' } },
    });
    expect(order).toMatchObject({ status: 'CONFIRMED' });
    const slots = (await holds.get(t.db, 'generic-again', hold.holdId)).seats.map((x) => `seat:${x.id}`);
    expect(slots).toHaveLength(2);
    const rows = await t.db
      .selectFrom('tickets')
      .select(['slot', 'status', 'holder_account_id', 'end_reason'])
      .where('event_id', '=', eventId)
      .where('slot', 'in', slots)
      .execute();
    for (const slot of slots) {
      const of = rows.filter((x) => x.slot === slot);
      expect(of).toHaveLength(2);
      expect(of.filter((x) => x.status === 'ACTIVE')).toEqual([expect.objectContaining({ holder_account_id: 'generic-again' })]);
      expect(of.filter((x) => x.status === 'REVOKED')).toEqual([
        expect.objectContaining({ end_reason: expect.stringMatching(/^seat sold again/) as unknown }),
      ]);
    }
  });
});
