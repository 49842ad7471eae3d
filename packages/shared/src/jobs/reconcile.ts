import type { Db } from '../db/connect.js';
import { emitAvailability, type ReturnedSeat } from '../waitlist/availability.js';
import { moveGaUnits } from '../inventory/ga.service.js';
import { countInventory, expireLapsedHolds, findTierDrift, returnLapsedSeats, saveReconciliation } from './reconcile.repository.js';
import type { ReconciliationResult } from './reconciliation.js';

export type { ReconciliationResult };

/**
 * Tidies lapsed holds in small batches, so a sweep never holds many row locks for long. Cosmetic for sale
 * (every query already treats a lapsed hold's seats as available), but it is how the waitlist hears that seats
 * came back: nothing writes at expiry, so the sweep that notices emits the availability event, in its own
 * transaction (and after a sell-out the seats go to the waitlist).
 */
export async function sweepExpiredHolds(db: Db, batch = 500): Promise<Map<string, number>> {
  const swept = new Map<string, number>();
  for (;;) {
    const rows = await db.transaction().execute(async (trx) => {
      const rows = await expireLapsedHolds(trx, batch);
      if (rows.length > 0) {
        const seats = await returnLapsedSeats(
          trx,
          rows.map((r) => r.id),
        );
        const byEvent = new Map<string, ReturnedSeat[]>();
        for (const s of seats) byEvent.set(s.eventId, [...(byEvent.get(s.eventId) ?? []), { ...s, id: Number(s.id) }]);
        for (const [eventId, returned] of byEvent) await emitAvailability(trx, eventId, 'HOLD_EXPIRED', returned);
        // General-admission units of the swept holds back to their shards' counters (reads already count them as available).
        await moveGaUnits(
          trx,
          rows.map((r) => r.id),
          'HELD',
          'RETURNED',
        );
      }
      return rows;
    });
    for (const r of rows) swept.set(r.event_id, (swept.get(r.event_id) ?? 0) + 1);
    if (rows.length < batch) return swept;
  }
}

/**
 * The invariant check, per event: available + held + sold = capacity, and sold seats = seats of confirmed
 * orders. Results are kept in inventory_reconciliations (exported as metrics) and returned.
 */
export async function reconcileInventory(db: Db): Promise<ReconciliationResult[]> {
  const swept = await sweepExpiredHolds(db);
  const rows = await countInventory(db);
  // Per presale tier: the seats and GA units it owns against its recorded capacity.
  const tiers = await findTierDrift(db);
  const tierDrift = new Map<string, Record<string, number>>();
  for (const t of tiers.filter((x) => x.drift !== 0)) tierDrift.set(t.event_id, { ...tierDrift.get(t.event_id), [t.code]: t.drift });
  const results = rows.map((r) => ({
    eventId: r.event_id,
    capacity: r.capacity,
    available: r.available,
    held: r.held,
    sold: r.sold,
    drift: r.available + r.held + r.sold - r.capacity,
    orderDrift: r.sold - r.ordered,
    expiredSwept: swept.get(r.event_id) ?? 0,
    tierDrift: tierDrift.get(r.event_id) ?? {},
  }));
  for (const r of results) {
    await saveReconciliation(db, r);
  }
  return results;
}

export { latestReconciliations } from './reconcile.repository.js';
