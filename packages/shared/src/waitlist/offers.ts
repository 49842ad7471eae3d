import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import { DomainError, notFound } from '../errors.js';
import { isUuid } from '../ids.js';
import { seatsOfHold } from '../inventory/holds.repository.js';
import type { HeldSeat } from '../inventory/holds.service.js';
import { enqueueFanout, POOL_GRACE_SECONDS } from './availability.js';
import type { ClaimTokens } from './claim-token.js';
import { directAdmissionClaims, holdAdmissionClaims, MAX_HOLD_EXTENSION_SECONDS, signToken, type TokenKey } from '../queue/edge.js';
import { blockFor, poolSeats } from './pool.js';
import { entryCriteria, type CriteriaRow } from './criteria.js';
import type { Selectable } from 'kysely';
import type { OfferStatus, WaitlistOffersTable } from './waitlist.table.js';

/** A claimed offer: the fan's own hold, to pay for as any other (POST /holds/:id/checkout). */
export interface ClaimedHold {
  holdId: string;
  eventId: string;
  offerId: string;
  seats: HeldSeat[];
  quantity: number;
  amountCents: number;
  expiresAt: Date;
  /** The fan's place for this release (1 = first offered), carried into the admission token. */
  place: number;
}

/** An offer row, with whether its deadline has passed by the database's clock. */
type OfferRow = Selectable<WaitlistOffersTable> & { expired: boolean };

async function lockOffer(trx: Trx, offerId: string): Promise<OfferRow | undefined> {
  if (!isUuid(offerId)) return undefined;
  const { rows } = await sql<OfferRow>`
    SELECT *, expires_at <= now() AS expired FROM waitlist_offers WHERE id = ${offerId} FOR UPDATE`.execute(trx);
  return rows[0] ? { ...rows[0], availability_id: Number(rows[0].availability_id), entry_id: Number(rows[0].entry_id) } : undefined;
}

/**
 * Claims: turns a claim token into the fan's own hold on the returned seats, without the waiting room (the
 * offer is the admission). OFFER: the seats reserved for this fan. BROADCAST: the best block the fan's criteria
 * accept among what is left of the release, first come first served (the release is locked while a claim picks).
 * The per-account limit holds as for any hold; a claimed offer removes the fan's waitlist entry.
 */
export async function claimOffer(db: Db, tokens: ClaimTokens, accountId: string, token: unknown): Promise<ClaimedHold> {
  const claims = tokens.verify(token, accountId);
  return db.transaction().execute(async (trx) => {
    if (claims.kind === 'offer') {
      const offer = await lockOffer(trx, claims.offerId);
      if (!offer) throw notFound('OFFER_NOT_FOUND', 'no such offer', 'claimToken');
      if (offer.account_id !== accountId) throw new DomainError('forbidden', 'CLAIM_TOKEN_WRONG_ACCOUNT', 'this offer belongs to another account', { field: 'claimToken' });
      assertOpen(offer);
      return takeSeats(trx, offer, accountId, offer.reserve_hold_id!, null);
    }
    const { rows } = await sql<{ id: number; listing_id: string; event_id: string; mode: string; pool_hold_id: string | null }>`
      SELECT id, listing_id, event_id, mode, pool_hold_id FROM availability_events WHERE id = ${claims.availabilityId} FOR UPDATE`.execute(trx);
    const av = rows[0];
    if (!av || av.mode !== 'BROADCAST' || !av.pool_hold_id) throw notFound('OFFER_NOT_FOUND', 'no such release', 'claimToken');
    const prior = await trx
      .selectFrom('waitlist_offers')
      .select('id')
      .where('availability_id', '=', Number(av.id))
      .where('account_id', '=', accountId)
      .where('status', '=', 'CLAIMED')
      .executeTakeFirst();
    if (prior) throw new DomainError('conflict', 'OFFER_ALREADY_CLAIMED', 'this claim token has been used', { field: 'claimToken' });
    const entry = await sql<CriteriaRow & { id: number }>`
      SELECT id, date_from::text, date_to::text, max_price_cents, quantity, sections, price_levels FROM waitlist_entries
      WHERE listing_id = ${av.listing_id} AND account_id = ${accountId} AND expires_at > now()`.execute(trx);
    const e = entry.rows[0];
    if (!e) throw new DomainError('conflict', 'WAITLIST_ENTRY_GONE', 'you are no longer on this waitlist', { field: 'claimToken' });
    const block = blockFor(entryCriteria(e), await poolSeats(trx, av.pool_hold_id));
    if (!block) throw new DomainError('conflict', 'OFFER_SEATS_GONE', 'every seat of this release that fits your request has been claimed', { field: 'claimToken' });
    const offerId = randomUUID();
    await sql`
      INSERT INTO waitlist_offers (id, availability_id, listing_id, event_id, entry_id, account_id, quantity, status, expires_at)
      VALUES (${offerId}, ${av.id}, ${av.listing_id}, ${av.event_id}, ${e.id}, ${accountId}, ${block.length}, 'OPEN', to_timestamp(${claims.exp}))`.execute(trx);
    const offer = (await lockOffer(trx, offerId))!;
    return takeSeats(trx, offer, accountId, av.pool_hold_id, block.map((s) => s.id));
  });
}

/**
 * Claims an offer (claimOffer) and issues the fan's admission for the new hold: the offer is the admission, as a
 * lottery invitation is, so the fan gets the waiting room's own token, bound to the account and the device
 * (`deviceHash`, hashDevice of X-Device-Id), at their place in the release, for this hold only and as long as
 * the hold can live (holdAdmissionClaims): they pay, extend or release it as any other hold.
 */
export async function claimOfferWithAdmission(
  db: Db,
  tokens: ClaimTokens,
  tokenKey: TokenKey,
  input: { accountId: string; deviceHash: string; claimToken: unknown; nowMs?: number },
): Promise<ClaimedHold & { admissionToken: string }> {
  const hold = await claimOffer(db, tokens, input.accountId, input.claimToken);
  const nowMs = input.nowMs ?? Date.now();
  const admission = directAdmissionClaims({ eventId: hold.eventId, accountId: input.accountId, deviceHash: input.deviceHash, position: hold.place, nowMs });
  const admissionToken = await signToken(tokenKey, holdAdmissionClaims(admission, hold.holdId, hold.expiresAt.getTime(), MAX_HOLD_EXTENSION_SECONDS, nowMs));
  return { ...hold, admissionToken };
}

function assertOpen(offer: OfferRow) {
  if (offer.status === 'CLAIMED') throw new DomainError('conflict', 'OFFER_ALREADY_CLAIMED', 'this offer has been claimed', { field: 'claimToken' });
  if (offer.status === 'DECLINED') throw new DomainError('conflict', 'OFFER_DECLINED', 'this offer was declined', { field: 'claimToken' });
  if (offer.status !== 'OPEN' || offer.expired) throw new DomainError('gone', 'OFFER_EXPIRED', 'this offer has expired', { field: 'claimToken' });
}

/** Moves the seats (all of `fromHold`'s, or `seatIds` of it) into a new hold of the fan's, under the account limit. */
async function takeSeats(trx: Trx, offer: OfferRow, accountId: string, fromHold: string, seatIds: number[] | null): Promise<ClaimedHold> {
  const { rows: ev } = await sql<{ hold_ttl_seconds: number; per_account_seat_limit: number; used: number }>`
    SELECT hold_ttl_seconds, per_account_seat_limit, onsale_lock_account_seats(id, ${accountId}) AS used FROM events WHERE id = ${offer.event_id}`.execute(trx);
  const e = ev[0]!;
  if (e.used + offer.quantity > e.per_account_seat_limit)
    throw new DomainError('limit', 'ACCOUNT_LIMIT_EXCEEDED', `this account already has ${e.used} of ${e.per_account_seat_limit} seats for this event`, {
      field: 'claimToken',
      limit: e.per_account_seat_limit,
      current: e.used,
    });
  const holdId = randomUUID();
  await sql`INSERT INTO accounts (id) VALUES (${accountId}) ON CONFLICT DO NOTHING`.execute(trx);
  const { rows: hold } = await sql<{ expires_at: Date }>`
    INSERT INTO holds (id, event_id, account_id, section_code, quantity, expires_at)
    VALUES (${holdId}, ${offer.event_id}, ${accountId}, NULL, ${offer.quantity}, now() + make_interval(secs => ${e.hold_ttl_seconds}))
    RETURNING expires_at`.execute(trx);
  const moved = await sql`
    UPDATE seats SET hold_id = ${holdId}, expires_at = ${hold[0]!.expires_at}, version = version + 1
    WHERE hold_id = ${fromHold} AND status = 'HELD' AND (${seatIds}::bigint[] IS NULL OR id = ANY(${seatIds}::bigint[]))`.execute(trx);
  if (Number(moved.numAffectedRows) !== offer.quantity)
    throw new DomainError('gone', 'OFFER_SEATS_GONE', 'the seats of this offer are no longer held for you', { field: 'claimToken' });
  const seats = await seatsOfHold(trx, holdId);
  await sql`UPDATE holds SET section_code = ${seats[0]!.section} WHERE id = ${holdId} AND ${new Set(seats.map((s) => s.section)).size === 1}`.execute(trx);
  if (offer.reserve_hold_id) await sql`UPDATE holds SET status = 'RELEASED', updated_at = now() WHERE id = ${offer.reserve_hold_id}`.execute(trx);
  await sql`UPDATE waitlist_offers SET status = 'CLAIMED', claimed_hold_id = ${holdId}, decided_at = now() WHERE id = ${offer.id}`.execute(trx);
  await sql`DELETE FROM waitlist_entries WHERE listing_id = ${offer.listing_id} AND account_id = ${accountId}`.execute(trx);
  const { rows: place } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM waitlist_offers WHERE availability_id = ${offer.availability_id} AND created_at <= (SELECT created_at FROM waitlist_offers WHERE id = ${offer.id})`.execute(trx);
  return {
    holdId,
    eventId: offer.event_id,
    offerId: offer.id,
    seats,
    quantity: offer.quantity,
    amountCents: seats.reduce((a, s) => a + s.priceCents, 0),
    expiresAt: hold[0]!.expires_at,
    place: Math.max(1, place[0]!.n),
  };
}

/** The fan says no: the offer's seats go to the next match at once. */
export async function declineOffer(db: Db, accountId: string, offerId: string): Promise<{ offerId: string; status: OfferStatus }> {
  return db.transaction().execute(async (trx) => {
    const offer = await lockOffer(trx, offerId);
    if (!offer) throw notFound('OFFER_NOT_FOUND', `no offer ${offerId}`, 'id');
    if (offer.account_id !== accountId) throw new DomainError('forbidden', 'OFFER_NOT_OWNED', 'this offer belongs to another account', { field: 'id' });
    if (offer.status === 'DECLINED') return { offerId, status: offer.status };
    assertOpen(offer);
    await returnOffer(trx, offer, 'DECLINED');
    return { offerId, status: 'DECLINED' as const };
  });
}

/**
 * An offer's deadline passed (the job scheduled at its expiry, or the maintenance sweep): it lapses and its
 * seats cascade to the next match. Early or repeated runs change nothing.
 */
export async function expireOffer(db: Db, offerId: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const offer = await lockOffer(trx, offerId);
    if (!offer || offer.status !== 'OPEN' || !offer.expired) return false;
    await returnOffer(trx, offer, 'EXPIRED');
    return true;
  });
}

/** Leaving a waitlist declines the fan's open offers on it. Runs in the caller's transaction. */
export async function declineOpenOffersOf(trx: Trx, accountId: string, listingId: string): Promise<void> {
  const open = await trx
    .selectFrom('waitlist_offers')
    .select('id')
    .where('account_id', '=', accountId)
    .where('listing_id', '=', listingId)
    .where('status', '=', 'OPEN')
    .execute();
  for (const o of open) {
    const offer = await lockOffer(trx, o.id);
    if (offer?.status === 'OPEN') await returnOffer(trx, offer, 'DECLINED');
  }
}

/**
 * The cascade: an OFFER's reserved seats go back to the release's pool and the release's fan-out resumes after
 * the last fan it considered, so the next match gets them. The fan whose offer lapsed is told (in the inbox).
 */
async function returnOffer(trx: Trx, offer: OfferRow, status: 'DECLINED' | 'EXPIRED'): Promise<void> {
  await sql`UPDATE waitlist_offers SET status = ${status}, decided_at = now() WHERE id = ${offer.id}`.execute(trx);
  if (!offer.reserve_hold_id) return; // a BROADCAST claim record has nothing reserved
  const { rows } = await sql<{ pool_hold_id: string; offer_ttl_seconds: number }>`
    SELECT a.pool_hold_id, l.offer_ttl_seconds FROM availability_events a JOIN listings l ON l.id = a.listing_id
    WHERE a.id = ${offer.availability_id} FOR UPDATE OF a`.execute(trx);
  const av = rows[0]!;
  const ttl = av.offer_ttl_seconds + POOL_GRACE_SECONDS;
  await sql`UPDATE holds SET status = 'WAITLIST', expires_at = now() + make_interval(secs => ${ttl}), updated_at = now() WHERE id = ${av.pool_hold_id}`.execute(trx);
  await sql`
    UPDATE seats SET hold_id = ${av.pool_hold_id}, expires_at = now() + make_interval(secs => ${ttl}), version = version + 1
    WHERE hold_id = ${offer.reserve_hold_id} AND status = 'HELD'`.execute(trx);
  await sql`UPDATE holds SET status = 'RELEASED', updated_at = now() WHERE id = ${offer.reserve_hold_id}`.execute(trx);
  await sql`UPDATE availability_events SET status = 'FANNING_OUT', completed_at = NULL, updated_at = now() WHERE id = ${offer.availability_id}`.execute(trx);
  if (status === 'EXPIRED')
    await sql`INSERT INTO notifications (account_id, listing_id, availability_id, entry_id, kind, offer_id)
              VALUES (${offer.account_id}, ${offer.listing_id}, ${offer.availability_id}, ${offer.entry_id}, 'OFFER_EXPIRED', ${offer.id})`.execute(trx);
  await enqueueFanout(trx, offer.availability_id);
}
