// Kill -9 of a store-API process in the middle of a face-value resale purchase and of a transfer (issue 29), with
// real processes (apps/store-api/src/server.ts) on one real PostgreSQL database, as store-kill.test.ts does:
// afterwards exactly one holder of the seat, one valid set of codes, and the money recorded once.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { TEST_CARDS } from '@onsale/shared/checkout';
import { createTokenKey, type TokenKey } from '@onsale/shared/queue';
import { createTestDatabase, testSecrets, waitUntil, type TestDatabase } from '@onsale/shared/testing';
import { relayFanouts, runFanout } from '@onsale/shared/waitlist';
import { cardNumberOf, makeEvent } from './helper.js';
import {
  admittedFan as admitted,
  call,
  holdInTransaction,
  killHard,
  signIn,
  startStore as startStoreOn,
  stopStores,
  type Store,
} from './store-processes.js';

let t: TestDatabase;
let tokenKey: TokenKey;

/** The live tickets of a seat (ACTIVE, LISTED or ADMITTED): there must be exactly one. */
async function holdersOf(ticketId: string) {
  const { rows } = await sql<{ id: string; holder: string; status: string }>`
    SELECT t.id, t.holder_account_id AS holder, t.status FROM tickets t
    WHERE t.slot = (SELECT slot FROM tickets WHERE id = ${ticketId}) AND t.event_id = (SELECT event_id FROM tickets WHERE id = ${ticketId})
      AND t.status IN ('ACTIVE', 'LISTED', 'ADMITTED')`.execute(t.db);
  return rows;
}

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 8 });
  tokenKey = await createTokenKey(testSecrets().queueTokenSecret);
}, 30_000);

afterAll(async () => {
  await stopStores();
  await t?.drop();
});

const startStore = (name: string, extra: Record<string, string> = {}) => startStoreOn(t.url, name, extra);
const admittedFan = (store: Store, eventId: string, accountId: string) => admitted(store, tokenKey, eventId, accountId);

describe('kill -9 during a resale purchase and a transfer', () => {
  it('leaves exactly one holder, one valid set of codes and the money recorded once', async () => {
    // A: the gateway answers after 4 s, so the kill comes with the buyer's payment charged and no order yet.
    const [a, b] = await Promise.all([startStore('tk-store-a', { PAYMENT_LATENCY_MS: '4000' }), startStore('tk-store-b')]);
    const { eventId, listingId } = await makeEvent(t, {
      sections: [{ code: 'A', priceLevel: 'P1', qualityRank: 1, rowCount: 1, seatsPerRow: 6 }],
    });

    // The seller buys two seats (on B, which pays at once).
    const seller = await admittedFan(b, eventId, 'kill-seller');
    const hold = await call(b, 'POST', `/events/${eventId}/holds`, seller, { section: 'A', quantity: 2 });
    expect(hold.status, JSON.stringify(hold.json)).toBe(201);
    const paid = await call(
      b,
      'POST',
      `/holds/${hold.json.holdId}/checkout`,
      { ...seller, 'idempotency-key': 'kill-seller-pay' },
      { payment: { instrument: { type: 'card', number: cardNumberOf(9100) } } },
    );
    expect(paid.status, JSON.stringify(paid.json)).toBe(200);
    const mine = (await call(b, 'GET', '/me/tickets', seller)).json.tickets as { ticketId: string }[];
    const [forSale, toGive] = mine;

    // --- the resale purchase, killed mid-payment ---
    const buyer = await signIn(b, 'kill-buyer');
    expect((await call(b, 'PUT', `/listings/${listingId}/waitlist`, buyer, { criteria: { quantity: 1 } })).status).toBe(201);
    const listed = await call(b, 'POST', `/tickets/${forSale!.ticketId}/resale`, seller, { priceCents: 12_500 });
    expect(listed.status, JSON.stringify(listed.json)).toBe(200);
    await relayFanouts(t.db);
    const av = await t.db.selectFrom('availability_events').select('id').where('cause', '=', 'RESALE').executeTakeFirstOrThrow();
    await runFanout({ db: t.db }, Number(av.id));
    const offer = (await call(b, 'GET', '/me/notifications', buyer)).json.notifications[0];
    const claimed = await call(b, 'POST', '/waitlist/claims', buyer, { claimToken: offer.claim.claimToken });
    expect(claimed.status, JSON.stringify(claimed.json)).toBe(201);
    const payHeaders = { ...buyer, 'x-admission-token': claimed.json.admissionToken, 'idempotency-key': 'kill-buyer-pay' };
    const payBody = { payment: { instrument: { type: 'card', number: TEST_CARDS.success } } };
    const inFlight = call(a, 'POST', `/holds/${claimed.json.holdId}/checkout`, payHeaders, payBody);
    await waitUntil(
      'the buyer charged at the gateway, no order yet',
      async () => {
        const { rows } = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM simulated_gateway_charges WHERE status = 'succeeded' AND amount_cents = 12500`.execute(t.db);
        return rows[0]!.n === 1;
      },
      { timeoutMs: 60_000, intervalMs: 20 },
    );
    await killHard(a);
    expect((await inFlight).status).toBe(0);

    // The buyer retries on B with the same key until the outcome (B settles the dead process's attempt).
    let outcome = await call(b, 'POST', `/holds/${claimed.json.holdId}/checkout`, payHeaders, payBody);
    await waitUntil(
      'the buyer’s retry answered with the order',
      async () => {
        if (outcome.status === 200) return true;
        expect([outcome.status, outcome.json.error]).toEqual([409, 'CHECKOUT_IN_PROGRESS']);
        await new Promise((r) => setTimeout(r, Number(outcome.retryAfter ?? 1) * 1000));
        outcome = await call(b, 'POST', `/holds/${claimed.json.holdId}/checkout`, payHeaders, payBody);
        return outcome.status === 200;
      },
      { timeoutMs: 120_000, intervalMs: 10 },
    );
    expect(outcome.json).toMatchObject({ status: 'CONFIRMED', amountCents: 12_500 });

    const afterSale = await holdersOf(forSale!.ticketId);
    expect(afterSale).toEqual([expect.objectContaining({ holder: 'kill-buyer', status: 'ACTIVE' })]);
    const seller1 = await t.db.selectFrom('tickets').select('status').where('id', '=', forSale!.ticketId).executeTakeFirstOrThrow();
    expect(seller1.status).toBe('RESOLD');
    const money = await sql<{ orders: number; charges: number; payouts: number; payout: number }>`
      SELECT (SELECT count(*) FROM orders WHERE hold_id = ${claimed.json.holdId})::int AS orders,
             (SELECT count(*) FROM simulated_gateway_charges WHERE amount_cents = 12500 AND refunded_at IS NULL)::int AS charges,
             (SELECT count(*) FROM ticket_payouts)::int AS payouts,
             (SELECT sum(amount_cents) FROM ticket_payouts)::int AS payout`.execute(t.db);
    expect(money.rows[0]).toEqual({ orders: 1, charges: 1, payouts: 1, payout: 12_500 });
    // The buyer's code admits; the seller's ticket has none.
    const buyerCode = await call(b, 'GET', `/tickets/${afterSale[0]!.id}/code`, buyer);
    expect(buyerCode.status).toBe(200);
    expect((await call(b, 'GET', `/tickets/${forSale!.ticketId}/code`, seller)).json.error).toBe('TICKET_NOT_ACTIVE');

    // --- the transfer, killed while its transaction waits on the ticket's row ---
    const c = await startStore('tk-store-c');
    await signIn(b, 'kill-friend');
    const rowLock = await holdInTransaction(t.db, async (trx) => {
      await sql`SELECT id FROM tickets WHERE id = ${toGive!.ticketId} FOR UPDATE`.execute(trx);
    });
    const sellerOnC = await signIn(c, 'kill-seller');
    const transfer = call(c, 'POST', `/tickets/${toGive!.ticketId}/transfer`, sellerOnC, { toAccountId: 'kill-friend' });
    await waitUntil(
      "the transfer waiting on the ticket's row",
      async () => {
        const { rows } = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FROM tickets WHERE id%FOR UPDATE%'`.execute(
          t.db,
        );
        return rows[0]!.n >= 1;
      },
      { timeoutMs: 60_000, intervalMs: 20 },
    );
    await killHard(c);
    expect((await transfer).status).toBe(0);
    await rowLock.release();
    // The killed process's transaction never commits: the seller still holds the ticket, alone.
    await waitUntil(
      'the killed transfer rolled back',
      async () => {
        const { rows } = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE '%FROM tickets WHERE id%FOR UPDATE%' AND state <> 'idle' AND pid <> pg_backend_pid()`.execute(
          t.db,
        );
        return rows[0]!.n === 0;
      },
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    expect(await holdersOf(toGive!.ticketId)).toEqual([
      expect.objectContaining({ id: toGive!.ticketId, holder: 'kill-seller', status: 'ACTIVE' }),
    ]);
    // The seller retries on B: one transfer, one holder.
    const retried = await call(b, 'POST', `/tickets/${toGive!.ticketId}/transfer`, seller, { toAccountId: 'kill-friend' });
    expect(retried.status, JSON.stringify(retried.json)).toBe(200);
    expect(await holdersOf(toGive!.ticketId)).toEqual([expect.objectContaining({ holder: 'kill-friend', status: 'ACTIVE' })]);
    const transfers = await sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_log WHERE action = 'ticket.transferred'`.execute(t.db);
    expect(transfers.rows[0]!.n).toBe(1);
  }, 600_000);
});
