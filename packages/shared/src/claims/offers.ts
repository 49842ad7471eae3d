import { randomUUID } from 'node:crypto';
import type { Db, Trx } from '../db/connect.js';
import { DomainError, notFound } from '../errors.js';
import { seatsOfHold } from '../inventory/holds.service.js';
import { assertSeatLimits } from '../inventory/hold-rules.js';
import type { HeldSeat } from '../inventory/holds.service.js';
import { directAdmissionClaims, holdAdmissionClaims, MAX_HOLD_EXTENSION_SECONDS, signToken, type TokenKey } from '../queue/edge.js';
import { priceOfSeats } from '../tickets/index.js';
import type { ClaimTokens } from '../waitlist/claim-token.js';
import { blockFor, poolSeats } from '../waitlist/pool.js';
import { entryCriteria } from '../waitlist/criteria.js';
import * as repo from '../waitlist/offers.js';
import { assertOpen, lockOffer, type OfferRow } from '../waitlist/offers.js';

// A waitlist offer claimed: the fan's own hold on the returned seats, with its admission token. Above the waitlist,
// the inventory and the tickets (docs/architecture.md, "The layers"): the waitlist offers seats; a claim takes them.

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
      if (offer.account_id !== accountId)
        throw new DomainError('forbidden', 'CLAIM_TOKEN_WRONG_ACCOUNT', 'this offer belongs to another account', { field: 'claimToken' });
      assertOpen(offer);
      return takeSeats(trx, offer, accountId, offer.reserve_hold_id!, null);
    }
    const av = await repo.lockAvailabilityEvent(trx, claims.availabilityId);
    if (!av || av.mode !== 'BROADCAST' || !av.pool_hold_id) throw notFound('OFFER_NOT_FOUND', 'no such release', 'claimToken');
    const prior = await repo.findClaimedOffer(trx, Number(av.id), accountId);
    if (prior) throw new DomainError('conflict', 'OFFER_ALREADY_CLAIMED', 'this claim token has been used', { field: 'claimToken' });
    const e = await repo.findLiveEntry(trx, av.listing_id, accountId);
    if (!e) throw new DomainError('conflict', 'WAITLIST_ENTRY_GONE', 'you are no longer on this waitlist', { field: 'claimToken' });
    const block = blockFor(entryCriteria(e), await poolSeats(trx, av.pool_hold_id));
    if (!block)
      throw new DomainError('conflict', 'OFFER_SEATS_GONE', 'every seat of this release that fits your request has been claimed', {
        field: 'claimToken',
      });
    const offerId = randomUUID();
    await repo.insertClaimRecord(trx, {
      offerId,
      availabilityId: av.id,
      listingId: av.listing_id,
      eventId: av.event_id,
      entryId: e.id,
      accountId,
      quantity: block.length,
      expiresAtSeconds: claims.exp,
    });
    const offer = (await lockOffer(trx, offerId))!;
    return takeSeats(
      trx,
      offer,
      accountId,
      av.pool_hold_id,
      block.map((s) => s.id),
    );
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
  const admission = directAdmissionClaims({
    eventId: hold.eventId,
    accountId: input.accountId,
    deviceHash: input.deviceHash,
    position: hold.place,
    nowMs,
  });
  const admissionToken = await signToken(
    tokenKey,
    holdAdmissionClaims(admission, hold.holdId, hold.expiresAt.getTime(), MAX_HOLD_EXTENSION_SECONDS, nowMs),
  );
  return { ...hold, admissionToken };
}
/** Moves the seats (all of `fromHold`'s, or `seatIds` of it) into a new hold of the fan's, under the account limit. */
async function takeSeats(trx: Trx, offer: OfferRow, accountId: string, fromHold: string, seatIds: number[] | null): Promise<ClaimedHold> {
  const e = await repo.lockAccountSeats(trx, offer.event_id, accountId);
  assertSeatLimits({ quantity: offer.quantity, used: e.used, limit: e.per_account_seat_limit, field: 'claimToken' });
  const holdId = randomUUID();
  const expiresAt = await repo.insertFanHold(trx, {
    holdId,
    eventId: offer.event_id,
    accountId,
    quantity: offer.quantity,
    ttlSeconds: e.hold_ttl_seconds,
  });
  const moved = await repo.moveHeldSeats(trx, { fromHold, toHold: holdId, expiresAt, seatIds });
  if (moved !== offer.quantity)
    throw new DomainError('gone', 'OFFER_SEATS_GONE', 'the seats of this offer are no longer held for you', { field: 'claimToken' });
  const seats = await seatsOfHold(trx, holdId);
  if (new Set(seats.map((s) => s.section)).size === 1) await repo.setHoldSection(trx, holdId, seats[0]!.section);
  if (offer.reserve_hold_id) await repo.releaseHold(trx, offer.reserve_hold_id);
  await repo.markOfferClaimed(trx, offer.id, holdId);
  await repo.deleteEntry(trx, offer.listing_id, accountId);
  const place = await repo.offerPlace(trx, offer.availability_id, offer.id);
  return {
    holdId,
    eventId: offer.event_id,
    offerId: offer.id,
    seats,
    quantity: offer.quantity,
    // A resold seat (the face-value exchange) costs its listed price: what the checkout will charge.
    amountCents: await priceOfSeats(trx, seats),
    expiresAt,
    place: Math.max(1, place),
  };
}
