import type { Db, Trx } from '../db/connect.js';
import { notFound } from '../errors.js';
import { isUuid } from '../ids.js';
import type { WaitlistMode } from './waitlist.table.js';
import { findListingPlaces, findListingRow, findPerformanceRows, updateListingSettings } from './listings.repository.js';

/** One performance (event) of a listing, as the waitlist sees it. */
export interface Performance {
  eventId: string;
  name: string;
  startsAt: Date;
  /** The performance's calendar date (UTC), which date criteria compare with. */
  date: string;
  perAccountSeatLimit: number;
  soldOut: boolean;
}

/** A listing with what joining and matching need: its performances, and the sections and price levels they have. */
export interface ListingInfo {
  id: string;
  name: string;
  mode: WaitlistMode;
  ttlSeconds: number;
  offerTtlSeconds: number;
  inlineThreshold: number;
  performances: Performance[];
  sections: Set<string>;
  priceLevels: Set<string>;
}

export async function loadListing(db: Db | Trx, listingId: string): Promise<ListingInfo> {
  if (!isUuid(listingId)) throw notFound('LISTING_NOT_FOUND', `no listing ${listingId}`, 'id');
  const listing = await findListingRow(db, listingId);
  if (!listing) throw notFound('LISTING_NOT_FOUND', `no listing ${listingId}`, 'id');
  const performances = await findPerformanceRows(db, listingId);
  const places = await findListingPlaces(db, listingId);
  return {
    id: listing.id,
    name: listing.name,
    mode: listing.waitlist_mode,
    ttlSeconds: listing.waitlist_ttl_seconds,
    offerTtlSeconds: listing.offer_ttl_seconds,
    inlineThreshold: listing.fanout_inline_threshold,
    performances: performances.map((p) => ({
      eventId: p.id,
      name: p.name,
      startsAt: p.starts_at,
      date: p.date,
      perAccountSeatLimit: p.per_account_seat_limit,
      soldOut: p.sold_out,
    })),
    sections: new Set(places.map((p) => p.section)),
    priceLevels: new Set(places.map((p) => p.price_level)),
  };
}

/**
 * Listings cached per process for a few seconds: a join burst on a sold-out show reads the same listing
 * thousands of times a second, and its performances and sections change rarely. Concurrent misses share a load.
 */
export class ListingCache {
  private readonly entries = new Map<string, { at: number; value: Promise<ListingInfo> }>();
  constructor(
    private readonly db: Db,
    private readonly ttlMs = 5000,
  ) {}

  get(listingId: string): Promise<ListingInfo> {
    const now = Date.now();
    const hit = this.entries.get(listingId);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    const value = loadListing(this.db, listingId);
    this.entries.set(listingId, { at: now, value });
    value.catch(() => this.entries.delete(listingId));
    if (this.entries.size > 10_000) this.entries.clear();
    return value;
  }
}

/** Waitlist settings a promoter or operator may change per listing. */
export interface ListingWaitlistSettings {
  mode?: WaitlistMode;
  ttlSeconds?: number;
  offerTtlSeconds?: number;
  inlineThreshold?: number;
}

export async function setListingWaitlistSettings(db: Db | Trx, listingId: string, s: ListingWaitlistSettings): Promise<void> {
  if (!isUuid(listingId)) throw notFound('LISTING_NOT_FOUND', `no listing ${listingId}`, 'id');
  const set = {
    ...(s.mode ? { waitlist_mode: s.mode } : {}),
    ...(s.ttlSeconds ? { waitlist_ttl_seconds: s.ttlSeconds } : {}),
    ...(s.offerTtlSeconds ? { offer_ttl_seconds: s.offerTtlSeconds } : {}),
    ...(s.inlineThreshold ? { fanout_inline_threshold: s.inlineThreshold } : {}),
  };
  const found = await updateListingSettings(db, listingId, set);
  if (!found) throw notFound('LISTING_NOT_FOUND', `no listing ${listingId}`, 'id');
}
