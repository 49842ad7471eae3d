import type { Db } from '../db/connect.js';
import { DomainError } from '../errors.js';
import type { Tier } from '../allocations/allocations.service.js';
import { leftAlone } from './best-available.js';
import * as repo from './holds.repository.js';
import type { AvailableSeat } from './holds.repository.js';

/** One conditional write of the given seats (see `attemptHold`): what it took, or expiresAt null on a miss. */
export type Attempt = (seatIds: number[]) => Promise<{ used: number; taken: number[]; expiresAt: Date | null }>;

/** Adjacent seats of one row in words: "row C seats 5-6", "row C seat 5". */
export function seatRange(seats: readonly AvailableSeat[]): string {
  const first = seats[0]!;
  const last = seats[seats.length - 1]!;
  return seats.length === 1
    ? `row ${first.rowLabel} seat ${first.seatNumber}`
    : `row ${first.rowLabel} seats ${first.seatNumber}-${last.seatNumber}`;
}

/**
 * The single-seat rule on an exact-seat pick, judged on a fresh read of its rows (`free`: their free seats of the fan's
 * tier): refused (`SINGLE_SEAT_LEFT`, with the seats it would leave alone and the same number of seats that would not)
 * when it leaves a seat alone that a pick of as many seats in the same run would not. A pick of a seat that is not free
 * goes on to its attempt, which answers SEATS_UNAVAILABLE.
 */
function assertLeavesNoSingle(free: AvailableSeat[], seatIds: number[]): void {
  const freeIds = new Set(free.map((s) => s.id));
  if (!seatIds.every((id) => freeIds.has(id))) return;
  const { avoidable, instead } = leftAlone(free, new Set(seatIds));
  if (avoidable.length === 0) return;
  const alone = avoidable.map((s) => `${s.rowLabel}${s.seatNumber}`).join(', ');
  const other = instead.map((b) => seatRange(b)).join(' and ');
  const one = avoidable.length === 1;
  throw new DomainError(
    'conflict',
    'SINGLE_SEAT_LEFT',
    `those seats would leave ${one ? 'seat' : 'seats'} ${alone} on ${one ? 'its' : 'their'} own, which nobody could then sit in with anyone; pick ${other} instead, or add ${alone} to your seats`,
    { field: 'seatIds', seats: avoidable.map((s) => s.id), instead: instead.flat().map((s) => s.id) },
  );
}

/**
 * An exact-seat pick: the seats exist, are of the fan's presale tier, leave no single seat when the event says so,
 * and are taken whole in one attempt (SEATS_UNAVAILABLE otherwise, naming the ones gone).
 */
export async function takeExact(
  db: Db,
  eventId: string,
  seatIds: number[],
  attempt: Attempt,
  tier: Tier | null,
  noSingleSeats: boolean,
): Promise<Date> {
  // The picked seats' rows in one read: the picks themselves, and what the single-seat rule judges them on.
  const rows = await repo.findSeatsInRowsOf(db, eventId, seatIds);
  const picked = new Set(seatIds);
  const existing = rows.filter((r) => picked.has(r.id));
  if (existing.length !== seatIds.length) {
    const known = new Set(existing.map((r) => r.id));
    throw new DomainError('not_found', 'SEAT_NOT_FOUND', 'some seats are not part of this event', {
      field: 'seatIds',
      missing: seatIds.filter((id) => !known.has(id)),
    });
  }
  const elsewhere = tier ? existing.filter((r) => r.allocation !== tier.code).map((r) => r.id) : [];
  if (tier && elsewhere.length > 0)
    throw new DomainError('conflict', 'SEAT_NOT_IN_TIER', `some seats are not part of the ${tier.name} sale`, {
      field: 'seatIds',
      tier: tier.code,
      seats: elsewhere,
    });
  if (noSingleSeats) {
    const allocation = tier?.code ?? null;
    assertLeavesNoSingle(
      rows.filter((r) => r.free && r.allocation === allocation),
      seatIds,
    );
  }
  const r = await attempt(seatIds);
  if (!r.expiresAt) {
    const got = new Set(r.taken);
    throw new DomainError('conflict', 'SEATS_UNAVAILABLE', 'some of those seats are no longer available', {
      field: 'seatIds',
      unavailable: seatIds.filter((id) => !got.has(id)),
    });
  }
  return r.expiresAt;
}
