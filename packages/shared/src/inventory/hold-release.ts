import type { Trx } from '../db/connect.js';
import { DomainError, notFound } from '../errors.js';
import { isUuid } from '../ids.js';
import { emitAvailability } from '../waitlist/availability.js';
import * as repo from './holds.repository.js';
import type { AvailableSeat } from './holds.repository.js';
import { moveGaUnits } from './ga.repository.js';
import { viewKey } from './hold-best-available.js';
import type { FanHoldStatus, Hold, ReleaseRequest } from './hold-types.js';

/** A hold-scoped request must come with admission to the hold's own event. */
export function assertAdmittedFor(holdEventId: string, admittedEventId: string | undefined): void {
  if (admittedEventId !== undefined && admittedEventId !== holdEventId)
    throw new DomainError('forbidden', 'ADMISSION_WRONG_EVENT', 'the admission token is for another event', { field: 'x-admission-token' });
}

/** A fan touches only their own hold (HOLD_NOT_FOUND, HOLD_NOT_OWNED), with admission to its event when they carry one. */
export function assertOwned<R extends { account_id: string; event_id: string }>(
  row: R | undefined,
  holdId: string,
  accountId: string,
  admittedEventId?: string,
): R {
  if (!row) throw notFound('HOLD_NOT_FOUND', `no hold ${holdId}`, 'id');
  if (row.account_id !== accountId)
    throw new DomainError('forbidden', 'HOLD_NOT_OWNED', 'this hold belongs to another account', { field: 'id' });
  assertAdmittedFor(row.event_id, admittedEventId);
  return row;
}

/**
 * Releases in the caller's transaction, each checked on its own (not found, another fan's, another event's
 * admission, a payment in flight, paid for): a refusal is that request's answer alone, as a DomainError in its
 * place. Holds are locked in id order; the seats of all of them go back in one statement, GA units in another,
 * and the waitlist hears once per event and cause. `restored` is told of seats back on open sale (a process's
 * availability view); fan support releases a fan's hold through this too, as that fan.
 */
export async function releaseHolds(
  trx: Trx,
  reqs: ReleaseRequest[],
  restored?: (eventId: string, viewKey: string, seats: AvailableSeat[]) => void,
): Promise<(Hold | DomainError)[]> {
  const ids = [...new Set(reqs.map((r) => r.holdId).filter(isUuid))];
  const rows = new Map((ids.length > 0 ? await repo.lockHoldsWithEvent(trx, ids) : []).map((r) => [r.id, r]));
  const out: (Hold | DomainError)[] = [];
  const releasing = new Map<string, { row: NonNullable<ReturnType<typeof rows.get>>; lapsed: boolean }>();
  for (const req of reqs) {
    try {
      const row = assertOwned(rows.get(req.holdId), req.holdId, req.accountId, req.admittedEventId);
      const lapsed = row.expires_at.getTime() <= row.db_now.getTime();
      if (row.status === 'PAYING' && !lapsed)
        throw new DomainError('conflict', 'CHECKOUT_IN_PROGRESS', 'a payment for this hold is in progress');
      if (row.status === 'PURCHASED') throw new DomainError('conflict', 'HOLD_PURCHASED', 'this hold has been paid for');
      if (row.status === 'HELD' || row.status === 'PAYING') {
        releasing.set(row.id, { row, lapsed });
        row.status = lapsed ? 'EXPIRED' : 'RELEASED'; // a second request for the same hold reports the new state
      }
      out.push({
        holdId: row.id,
        eventId: row.event_id,
        status: row.status as FanHoldStatus,
        seats: [],
        quantity: row.quantity,
        amountCents: 0,
        expiresAt: row.expires_at,
        extended: row.extended,
      });
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      out.push(e);
    }
  }
  if (releasing.size === 0) return out;

  const released = await repo.releaseHoldsSeats(
    trx,
    [...releasing.values()].map(({ row, lapsed }) => ({ holdId: row.id, status: lapsed ? 'EXPIRED' : 'RELEASED' })),
  );
  // A hold without seats is general admission: its units go back to their shards' counters.
  const withSeats = new Set(released.map((r) => r.holdId));
  await moveGaUnits(
    trx,
    [...releasing.keys()].filter((id) => !withSeats.has(id)),
    'HELD',
    'RETURNED',
  );
  // Seats came back: the waitlist hears of it in this transaction (after a sell-out they go to it, not on sale),
  // once per event and cause. Its fan-out job goes through the worker's relay (see emitAvailability).
  const groups = new Map<string, { eventId: string; cause: 'HOLD_EXPIRED' | 'HOLD_RELEASED'; seats: typeof released }>();
  for (const seat of released) {
    const { row, lapsed } = releasing.get(seat.holdId)!;
    const cause = lapsed ? 'HOLD_EXPIRED' : 'HOLD_RELEASED';
    const k = `${row.event_id}\u0000${cause}`;
    const g = groups.get(k) ?? groups.set(k, { eventId: row.event_id, cause, seats: [] }).get(k)!;
    g.seats.push(seat);
  }
  for (const g of groups.values()) {
    const emitted = await emitAvailability(trx, g.eventId, g.cause, g.seats, { deferFanout: true });
    // Pooled seats are the waitlist's; the rest are on sale again.
    if (emitted?.pooled) continue;
    const byView = new Map<string, AvailableSeat[]>();
    for (const r of g.seats) {
      const key = viewKey(r.sectionCode, r.allocation);
      byView.set(key, [...(byView.get(key) ?? []), r]);
    }
    for (const [key, seats] of byView) restored?.(g.eventId, key, seats);
  }
  return out;
}
