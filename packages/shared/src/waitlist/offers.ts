import type { Db, Trx } from '../db/connect.js';
import { DomainError, notFound } from '../errors.js';
import { isUuid } from '../ids.js';
import { enqueueFanout, POOL_GRACE_SECONDS } from './availability.js';
import type { OfferStatus } from './waitlist.table.js';
import * as repo from './waitlist.repository.js';
import type { OfferRow } from './waitlist.repository.js';

// A waitlist offer's life on the waitlist's side: declined, lapsed, given back to the next match. Claiming one (the
// fan's hold) is claims/offers.ts.

export type { OfferRow };

/** The offer, locked for the caller's transaction; undefined for an id that is not a UUID or names no offer. */
export async function lockOffer(trx: Trx, offerId: string): Promise<OfferRow | undefined> {
  if (!isUuid(offerId)) return undefined;
  return repo.lockOffer(trx, offerId);
}

/** Refuses an offer that is no longer open: claimed, declined, or past its deadline. */
export function assertOpen(offer: OfferRow) {
  if (offer.status === 'CLAIMED')
    throw new DomainError('conflict', 'OFFER_ALREADY_CLAIMED', 'this offer has been claimed', { field: 'claimToken' });
  if (offer.status === 'DECLINED') throw new DomainError('conflict', 'OFFER_DECLINED', 'this offer was declined', { field: 'claimToken' });
  if (offer.status !== 'OPEN' || offer.expired)
    throw new DomainError('gone', 'OFFER_EXPIRED', 'this offer has expired', { field: 'claimToken' });
}

/** The fan says no: the offer's seats go to the next match at once. */
export async function declineOffer(db: Db, accountId: string, offerId: string): Promise<{ offerId: string; status: OfferStatus }> {
  return db.transaction().execute(async (trx) => {
    const offer = await lockOffer(trx, offerId);
    if (!offer) throw notFound('OFFER_NOT_FOUND', `no offer ${offerId}`, 'id');
    if (offer.account_id !== accountId)
      throw new DomainError('forbidden', 'OFFER_NOT_OWNED', 'this offer belongs to another account', { field: 'id' });
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
  for (const o of await repo.findOpenOffers(trx, accountId, listingId)) {
    const offer = await lockOffer(trx, o.id);
    if (offer?.status === 'OPEN') await returnOffer(trx, offer, 'DECLINED');
  }
}

/**
 * The cascade: an OFFER's reserved seats go back to the release's pool and the release's fan-out resumes after
 * the last fan it considered, so the next match gets them. The fan whose offer lapsed is told (in the inbox).
 */
async function returnOffer(trx: Trx, offer: OfferRow, status: 'DECLINED' | 'EXPIRED'): Promise<void> {
  await repo.markOfferDecided(trx, offer.id, status);
  if (!offer.reserve_hold_id) return; // a BROADCAST claim record has nothing reserved
  const av = await repo.lockReleasePool(trx, offer.availability_id);
  await repo.returnSeatsToPool(trx, {
    poolHoldId: av.pool_hold_id,
    reserveHoldId: offer.reserve_hold_id,
    ttlSeconds: av.offer_ttl_seconds + POOL_GRACE_SECONDS,
  });
  await repo.resumeFanout(trx, offer.availability_id);
  if (status === 'EXPIRED') await repo.insertOfferExpiredNotice(trx, offer);
  await enqueueFanout(trx, offer.availability_id);
}

// What a claim (claims/offers.ts) uses of this domain's repository (eslint-rules/onsale.js, onsale/domain-borders).
export {
  deleteEntry,
  findClaimedOffer,
  findLiveEntry,
  insertClaimRecord,
  insertFanHold,
  lockAccountSeats,
  lockAvailabilityEvent,
  markOfferClaimed,
  moveHeldSeats,
  offerPlace,
  releaseHold,
  setHoldSection,
} from './waitlist.repository.js';
