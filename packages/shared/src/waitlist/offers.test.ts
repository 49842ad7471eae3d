import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import { createOpenEvent, createTestDatabase, domainError, type TestDatabase } from '../testing/index.js';
import { DomainError } from '../errors.js';
import { EventCache } from '../allocations/index.js';
import { HoldService, SeatmapCache } from '../inventory/index.js';
import { reconcileInventory } from '../jobs/reconcile.js';
import { cancelOrder } from '../checkout/cancel.js';
import { ClaimTokens } from './claim-token.js';
import { runFanout } from './fanout.js';
import { maintainWaitlist } from './maintenance.js';
import { renderNotifications } from './notifications.js';
import { declineOffer, expireOffer } from './offers.js';
import { claimOffer } from '../claims/offers.js';
import { WaitlistService } from './waitlist.service.js';

let t: TestDatabase;
let waitlist: WaitlistService;
let holds: HoldService;
const tokens = new ClaimTokens('offer-test-secret');

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
  waitlist = new WaitlistService(t.db);
  holds = new HoldService({ db: t.db, events: new EventCache(t.db), seatmap: new SeatmapCache(t.db) });
});
afterAll(() => t.drop());

/** A small sold-out show: every seat held by `holder` accounts except none; returns the event and its listing. */
async function soldOutShow(name: string, mode: 'OFFER' | 'BROADCAST') {
  const { eventId } = await createOpenEvent(t.db, {
    name,
    sections: [{ code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: 1, seatsPerRow: 8 }],
  });
  const { listing_id: listingId } = await t.db
    .selectFrom('events')
    .select('listing_id')
    .where('id', '=', eventId)
    .executeTakeFirstOrThrow();
  await sql`UPDATE listings SET waitlist_mode = ${mode} WHERE id = ${listingId}`.execute(t.db);
  const seats = (await t.db.selectFrom('seats').select('id').where('event_id', '=', eventId).orderBy('seat_number').execute()).map((s) =>
    Number(s.id),
  );
  const hold = await holds.create('holder-1', eventId, { seatIds: seats.slice(0, 4) });
  const other = await holds.create('holder-2', eventId, { seatIds: seats.slice(4) });
  await sql`UPDATE queue_state SET sold_out_at = now(), inventory_state = 'SOLD_OUT' WHERE event_id = ${eventId}`.execute(t.db);
  return { eventId, listingId, hold, other };
}

async function releaseHold(account: string, holdId: string) {
  await t.db.transaction().execute((trx) => holds.release(trx, account, holdId));
  const av = await t.db
    .selectFrom('availability_events')
    .select(['id', 'mode', 'pool_hold_id'])
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow();
  return av;
}

async function openOffers(availabilityId: number) {
  return t.db
    .selectFrom('waitlist_offers')
    .selectAll()
    .where('availability_id', '=', availabilityId)
    .where('status', '=', 'OPEN')
    .execute();
}

async function tokenFor(offerId: string) {
  const n = await t.db
    .selectFrom('notifications')
    .select('id')
    .where('offer_id', '=', offerId)
    .where('kind', '=', 'OFFER')
    .executeTakeFirstOrThrow();
  const [view] = await renderNotifications(t.db, tokens, [Number(n.id)]);
  return view!.claim!.claimToken!;
}

describe('OFFER mode after a sell-out', () => {
  it('sets returned seats aside, offers them in FIFO order, cascades on expiry and decline, and a claim makes a hold', async () => {
    const { eventId, listingId, hold } = await soldOutShow('Offers', 'OFFER');
    for (const fan of ['w1', 'w2', 'w3', 'w4']) await waitlist.join(fan, listingId, { quantity: 4 });

    const av = await releaseHold('holder-1', hold.holdId);
    expect(av.mode).toBe('OFFER');
    // Not on open sale: a refresh bot finds nothing.
    expect((await domainError(holds.create('bot', eventId, { section: 'S', quantity: 1 }))).code).toBe('SECTION_SOLD_OUT');

    await runFanout({ db: t.db }, Number(av.id));
    let [offer] = await openOffers(Number(av.id));
    expect(offer).toMatchObject({ account_id: 'w1', quantity: 4 });

    // w1 lets it lapse: it cascades to w2.
    await sql`UPDATE waitlist_offers SET expires_at = now() - interval '1 second' WHERE id = ${offer!.id}`.execute(t.db);
    expect(await expireOffer(t.db, offer!.id)).toBe(true);
    expect(await expireOffer(t.db, offer!.id)).toBe(false);
    await runFanout({ db: t.db }, Number(av.id));
    [offer] = await openOffers(Number(av.id));
    expect(offer!.account_id).toBe('w2');
    const lapsedNote = await t.db
      .selectFrom('notifications')
      .select('kind')
      .where('account_id', '=', 'w1')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(lapsedNote.kind).toBe('OFFER_EXPIRED');

    // w2 declines: w3 is next.
    expect((await domainError(declineOffer(t.db, 'w3', offer!.id))).code).toBe('OFFER_NOT_OWNED');
    expect(await declineOffer(t.db, 'w2', offer!.id)).toEqual({ offerId: offer!.id, status: 'DECLINED' });
    await runFanout({ db: t.db }, Number(av.id));
    [offer] = await openOffers(Number(av.id));
    expect(offer!.account_id).toBe('w3');

    // Bad claims change nothing.
    const token = await tokenFor(offer!.id);
    expect((await domainError(claimOffer(t.db, tokens, 'w4', token))).code).toBe('CLAIM_TOKEN_WRONG_ACCOUNT');
    expect((await domainError(claimOffer(t.db, tokens, 'w3', `${token.slice(0, -2)}${token.endsWith('AA') ? 'EA' : 'AA'}`))).code).toBe(
      'CLAIM_TOKEN_FORGED',
    );
    expect((await domainError(claimOffer(t.db, new ClaimTokens('another-secret'), 'w3', token))).code).toBe('CLAIM_TOKEN_FORGED');
    expect((await domainError(claimOffer(t.db, tokens, 'w3', 'garbage'))).code).toBe('CLAIM_TOKEN_INVALID');
    // Another spelling of the genuine signature (padding) is malformed, not a second valid token.
    expect((await domainError(claimOffer(t.db, tokens, 'w3', `${token}=`))).code).toBe('CLAIM_TOKEN_INVALID');
    const stale = tokens.sign({ kind: 'offer', offerId: offer!.id, accountId: 'w3', exp: Math.floor(Date.now() / 1000) - 1 });
    expect((await domainError(claimOffer(t.db, tokens, 'w3', stale))).code).toBe('CLAIM_TOKEN_EXPIRED');
    expect((await openOffers(Number(av.id)))[0]!.id).toBe(offer!.id);

    const claimed = await claimOffer(t.db, tokens, 'w3', token);
    expect(claimed).toMatchObject({ eventId, quantity: 4, offerId: offer!.id });
    expect(claimed.seats).toHaveLength(4);
    expect((await domainError(claimOffer(t.db, tokens, 'w3', token))).code).toBe('OFFER_ALREADY_CLAIMED');
    // The hold is the fan's own, and the entry is gone (a claimed offer removes it).
    expect((await holds.get(t.db, 'w3', claimed.holdId)).status).toBe('HELD');
    expect(await waitlist.mine('w3')).toEqual([]);
    expect((await waitlist.mine('w4')).length).toBe(1);
    const [r] = (await reconcileInventory(t.db)).filter((x) => x.eventId === eventId);
    expect(r).toMatchObject({ drift: 0, available: 0 });
  });

  it('gives back to open sale what no match can use once the matches run out', async () => {
    const { eventId, listingId, hold } = await soldOutShow('Leftover', 'OFFER');
    await waitlist.join('left-1', listingId, { quantity: 3 });
    const av = await releaseHold('holder-1', hold.holdId);
    await runFanout({ db: t.db }, Number(av.id));
    const offers = await openOffers(Number(av.id));
    expect(offers.map((o) => [o.account_id, o.quantity])).toEqual([['left-1', 3]]);
    const done = await t.db
      .selectFrom('availability_events')
      .select('status')
      .where('id', '=', Number(av.id) as never)
      .executeTakeFirstOrThrow();
    expect(done.status).toBe('DONE');
    // The one seat nobody asked for is on open sale again.
    const spare = await holds.create('someone', eventId, { section: 'S', quantity: 1 });
    expect(spare.seats).toHaveLength(1);
  });

  it('a cancelled order returns its seats to the waitlist', async () => {
    const { eventId, listingId, other } = await soldOutShow('Cancelled', 'OFFER');
    await waitlist.join('c-1', listingId, { quantity: 2 });
    // Pretend holder-2 bought their seats.
    const { rows } = await sql<{ id: string }>`
      INSERT INTO orders (hold_id, event_id, account_id, idempotency_key, seat_count, amount_cents, instrument_fingerprint, payment_reference)
      VALUES (${other.holdId}, ${eventId}, 'holder-2', 'k1', 4, 4000, 'fp', 'ref') RETURNING id`.execute(t.db);
    await sql`UPDATE seats SET status = 'SOLD', expires_at = NULL WHERE hold_id = ${other.holdId}`.execute(t.db);
    await sql`UPDATE holds SET status = 'PURCHASED' WHERE id = ${other.holdId}`.execute(t.db);
    expect((await domainError(cancelOrder(t.db, rows[0]!.id, { actor: 'ops', reason: ' ' }))).code).toBe('REASON_REQUIRED');
    const c = await cancelOrder(t.db, rows[0]!.id, { actor: 'ops', reason: 'chargeback' });
    expect(c).toMatchObject({ status: 'CANCELLED', seatsReturned: 4, toWaitlist: true });
    expect((await domainError(cancelOrder(t.db, rows[0]!.id, { actor: 'ops', reason: 'again' }))).code).toBe('ORDER_ALREADY_CANCELLED');
    await runFanout({ db: t.db }, c.availabilityId!);
    expect((await openOffers(c.availabilityId!)).map((o) => o.account_id)).toEqual(['c-1']);
    const audit = await t.db
      .selectFrom('audit_log')
      .select(['actor', 'action'])
      .where('event_id', '=', eventId)
      .where('action', '=', 'order.cancel')
      .execute();
    expect(audit).toEqual([{ actor: 'ops', action: 'order.cancel' }]);
  });

  it('a lapsed hold found by the sweep goes to the waitlist, and an overdue offer is lapsed by housekeeping', async () => {
    const { eventId, listingId, hold } = await soldOutShow('Swept', 'OFFER');
    await waitlist.join('s-1', listingId, { quantity: 2 });
    await sql`UPDATE holds SET expires_at = now() - interval '1 second' WHERE id = ${hold.holdId}`.execute(t.db);
    await sql`UPDATE seats SET expires_at = now() - interval '1 second' WHERE hold_id = ${hold.holdId}`.execute(t.db);
    await reconcileInventory(t.db);
    const av = await t.db.selectFrom('availability_events').selectAll().where('event_id', '=', eventId).executeTakeFirstOrThrow();
    expect(av).toMatchObject({ cause: 'HOLD_EXPIRED', mode: 'OFFER', seat_count: 4 });
    await runFanout({ db: t.db }, Number(av.id));
    const [offer] = await openOffers(Number(av.id));
    expect(offer!.account_id).toBe('s-1');
    await sql`UPDATE waitlist_offers SET expires_at = now() - interval '1 minute' WHERE id = ${offer!.id}`.execute(t.db);
    expect((await maintainWaitlist(t.db)).offersExpired).toBe(1);
  });
});

describe('BROADCAST mode after a sell-out', () => {
  it('tells every match; the first to claim gets the seats and the rest are told they are gone', async () => {
    const { listingId, hold } = await soldOutShow('Broadcast', 'BROADCAST');
    for (const fan of ['b1', 'b2', 'b3']) await waitlist.join(fan, listingId, { quantity: 4 });
    const av = await releaseHold('holder-1', hold.holdId);
    await runFanout({ db: t.db }, Number(av.id));
    const notes = await t.db
      .selectFrom('notifications')
      .select(['id', 'account_id'])
      .where('availability_id', '=', Number(av.id))
      .orderBy('id')
      .execute();
    expect(notes.map((n) => n.account_id)).toEqual(['b1', 'b2', 'b3']);
    const views = await renderNotifications(
      t.db,
      tokens,
      notes.map((n) => Number(n.id)),
    );
    const claims = await Promise.allSettled(views.map((v) => claimOffer(t.db, tokens, v.accountId, v.claim!.claimToken)));
    const won = claims.filter((c) => c.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const c of claims.filter((x) => x.status === 'rejected')) expect((c.reason as DomainError).code).toBe('OFFER_SEATS_GONE');
  });
});
