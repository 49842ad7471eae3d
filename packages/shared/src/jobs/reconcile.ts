import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { emitAvailability, type ReturnedSeat } from '../waitlist/availability.js';
import { moveGaUnits } from '../inventory/ga.repository.js';
import { gaHeldUnits } from '../inventory/inventory.repository.js';

export interface ReconciliationResult {
  eventId: string;
  capacity: number;
  available: number;
  held: number;
  sold: number;
  /** available + held + sold - capacity (must be 0). */
  drift: number;
  /** sold seats - seats in confirmed orders (must be 0). */
  orderDrift: number;
  /** Lapsed holds whose rows the sweeper tidied (cosmetic: expiry is a read-time predicate). */
  expiredSwept: number;
  /** Presale tiers whose seats do not add up to their capacity (available + held + sold = capacity per tier): code -> drift. */
  tierDrift: Record<string, number>;
}

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
      const { rows } = await sql<{ id: string; event_id: string }>`
        UPDATE holds SET status = 'EXPIRED', updated_at = now()
        WHERE id IN (SELECT id FROM holds WHERE status IN ('HELD', 'PAYING') AND expires_at <= now()
                     ORDER BY expires_at LIMIT ${batch} FOR UPDATE SKIP LOCKED)
        RETURNING id, event_id`.execute(trx);
      if (rows.length > 0) {
        const { rows: seats } = await sql<ReturnedSeat & { eventId: string }>`
          UPDATE seats SET status = 'AVAILABLE', hold_id = NULL, expires_at = NULL, version = version + 1
          WHERE hold_id = ANY(${rows.map((r) => r.id)}::uuid[]) AND status = 'HELD' AND expires_at <= now()
          RETURNING event_id AS "eventId", id, section_code AS "sectionCode", row_index AS "rowIndex", seat_number AS "seatNumber"`.execute(
          trx,
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
  const { rows } = await sql<{ event_id: string; capacity: number; available: number; held: number; sold: number; ordered: number }>`
    SELECT e.id AS event_id, e.capacity,
           (coalesce(s.available, 0) + coalesce(g.available, 0))::int AS available, (coalesce(s.held, 0) + coalesce(g.held, 0))::int AS held,
           (coalesce(s.sold, 0) + coalesce(g.sold, 0))::int AS sold,
           (coalesce((SELECT sum(seat_count) FROM orders o WHERE o.event_id = e.id AND o.status = 'CONFIRMED'), 0)
            -- A seat on the face-value exchange (listed: in the waitlist's pool; sold: the buyer's order has it) is no
            -- longer its seller's order's.
            - (SELECT count(*) FROM ticket_resales r JOIN tickets t ON t.id = r.ticket_id JOIN orders o ON o.id = t.order_id
               WHERE r.event_id = e.id AND r.status IN ('LISTED', 'SOLD') AND o.status = 'CONFIRMED'))::int AS ordered
    FROM events e
    LEFT JOIN LATERAL (
      SELECT count(*) FILTER (WHERE status = 'AVAILABLE' OR (status = 'HELD' AND expires_at <= now())) AS available,
             count(*) FILTER (WHERE status = 'HELD' AND expires_at > now()) AS held,
             count(*) FILTER (WHERE status = 'SOLD') AS sold
      FROM seats WHERE event_id = e.id) s ON true
    LEFT JOIN LATERAL (
      -- General admission with the same read-time expiry (units of lapsed holds are available); see gaHeldUnits.
      SELECT sum(c.available) + coalesce(sum(u.lapsed), 0) AS available, coalesce(sum(u.held), 0) AS held, sum(c.sold) AS sold
      FROM (SELECT section_code, sum(available) AS available, sum(sold) AS sold FROM ga_shards WHERE event_id = e.id GROUP BY section_code) c
      LEFT JOIN (${gaHeldUnits(sql.ref('e.id'))}) u ON u.section_code = c.section_code) g ON true`.execute(db);
  // Per presale tier: the seats and GA units it owns against its recorded capacity.
  const { rows: tiers } = await sql<{ event_id: string; code: string; drift: number }>`
    SELECT a.event_id, a.code,
           ((SELECT count(*) FROM seats s WHERE s.event_id = a.event_id AND s.allocation = a.code)
            + coalesce((SELECT sum(available + held + sold) FROM ga_shards g WHERE g.event_id = a.event_id AND g.allocation = a.code), 0)
            - a.capacity)::int AS drift
    FROM allocations a`.execute(db);
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
    await sql`
      INSERT INTO inventory_reconciliations (event_id, checked_at, capacity, available, held, sold, drift, order_drift, expired_swept)
      VALUES (${r.eventId}, now(), ${r.capacity}, ${r.available}, ${r.held}, ${r.sold}, ${r.drift}, ${r.orderDrift}, ${r.expiredSwept})
      ON CONFLICT (event_id) DO UPDATE SET checked_at = excluded.checked_at, capacity = excluded.capacity,
        available = excluded.available, held = excluded.held, sold = excluded.sold, drift = excluded.drift,
        order_drift = excluded.order_drift, expired_swept = excluded.expired_swept`.execute(db);
  }
  return results;
}

/** The latest reconciliation per event, for /metrics. */
export function latestReconciliations(db: Db) {
  return db.selectFrom('inventory_reconciliations').selectAll().execute();
}
