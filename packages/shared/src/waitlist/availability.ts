import { randomUUID } from 'node:crypto';
import type { Db, Trx } from '../db/connect.js';
import { longestRun } from './criteria.js';
import * as repo from './waitlist.repository.js';
import type { AvailabilityCause, AvailabilityMode, AvailableSection } from './waitlist.table.js';

/** The system account that owns seats set aside for the waitlist. */
export const WAITLIST_ACCOUNT = '~waitlist';
/** Extra life of seats set aside for the waitlist beyond an offer's deadline, so a cascade never leaves a gap. */
export const POOL_GRACE_SECONDS = 120;

export interface ReturnedSeat {
  id: number;
  sectionCode: string;
  rowIndex: number;
  seatNumber: number;
}

export interface EmittedAvailability {
  availabilityId: number;
  mode: AvailabilityMode;
  /** True when the seats were set aside for the waitlist (the event had sold out): they are not on open sale. */
  pooled: boolean;
}

/**
 * Seats came back (a released or lapsed hold, a cancelled order, new inventory, an allocation rolled forward):
 * records the availability event and enqueues its fan-out, in the caller's transaction, so the change and the
 * event commit together or not at all. The seats must already be AVAILABLE in this transaction.
 *
 * After a sell-out the seats go to the waitlist, not to whoever refreshes fastest: they are set aside under a
 * waitlist hold (the pool) that the fan-out hands out as offers (OFFER mode) or that matching fans claim, first
 * come first served (BROADCAST mode). Before a sell-out they stay on open sale and matching fans are told so.
 */
export async function emitAvailability(
  trx: Trx,
  eventId: string,
  cause: AvailabilityCause,
  seats: ReturnedSeat[],
  opts: { deferFanout?: boolean; pool?: boolean } = {},
): Promise<EmittedAvailability | null> {
  if (seats.length === 0) return null;
  const c = await repo.findAvailabilityContext(trx, eventId, [...new Set(seats.map((s) => s.sectionCode))]);
  if (!c) return null;
  const sections = summarize(seats, new Map(c.prices.map((p) => [p.code, p])));

  let poolHoldId: string | null = null;
  let mode: AvailabilityMode = 'ON_SALE';
  // A resale's seat goes to the waitlist first whether or not the event sold out (opts.pool).
  if (c.sold_out || opts.pool === true) {
    mode = c.mode;
    poolHoldId = randomUUID();
    await repo.setAsidePool(trx, {
      holdId: poolHoldId,
      eventId,
      accountId: WAITLIST_ACCOUNT,
      seatIds: seats.map((s) => s.id),
      ttlSeconds: c.offer_ttl_seconds + POOL_GRACE_SECONDS,
    });
  }
  // The availability event and its fan-out job in one statement; or, deferred, the event alone, for the relay
  // (relayFanouts) to enqueue: a job added here would notify the workers, and every transaction that notified
  // commits in turn behind one database-wide lock (see migration 2026_11_30_0010).
  const availabilityId = await repo.insertAvailabilityEvent(trx, {
    listingId: c.listing_id,
    eventId,
    cause,
    performanceDate: c.date,
    sections,
    seatCount: seats.length,
    poolHoldId,
    mode,
    deferFanout: opts.deferFanout === true,
  });
  return { availabilityId, mode, pooled: poolHoldId !== null };
}

/** Enqueues (or re-arms) the fan-out job of an availability event, in the caller's transaction. */
export async function enqueueFanout(trx: Trx, availabilityId: number): Promise<void> {
  await repo.enqueueFanoutJob(trx, availabilityId);
}

/**
 * The relay of deferred fan-outs: enqueues the jobs of up to `limit` availability events written with
 * `deferFanout`, oldest first, in one transaction (one commit, one notification). Concurrent relays take
 * disjoint rows (SKIP LOCKED). Returns how many it enqueued.
 */
export function relayFanouts(db: Db, limit = 500): Promise<number> {
  return repo.relayDeferredFanouts(db, limit);
}

/** Per section: the seats, their price and price level, and the longest run of adjacent seats. */
export function summarize(seats: ReturnedSeat[], prices: Map<string, { price_level: string; price_cents: number }>): AvailableSection[] {
  const bySection = new Map<string, ReturnedSeat[]>();
  for (const s of seats) bySection.set(s.sectionCode, [...(bySection.get(s.sectionCode) ?? []), s]);
  return [...bySection].map(([section, ss]) => ({
    section,
    priceLevel: prices.get(section)?.price_level ?? '',
    priceCents: prices.get(section)?.price_cents ?? 0,
    seatIds: ss.map((s) => s.id).sort((a, b) => a - b),
    longestRun: longestRun(ss),
  }));
}
