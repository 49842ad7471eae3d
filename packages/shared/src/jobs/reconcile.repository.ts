import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import type { ReturnedSeat } from '../waitlist/availability.js';
import { gaHeldUnits } from '../inventory/inventory.service.js';
import type { ReconciliationResult } from './reconciliation.js';

// The sweeper's and the reconciliation's SQL (reconcile.ts).

/** Up to `batch` lapsed holds (HELD or PAYING past their expiry) marked EXPIRED, skipping locked ones. */
export async function expireLapsedHolds(trx: Trx, batch: number) {
  const { rows } = await sql<{ id: string; event_id: string }>`
    UPDATE holds SET status = 'EXPIRED', updated_at = now()
    WHERE id IN (SELECT id FROM holds WHERE status IN ('HELD', 'PAYING') AND expires_at <= now()
                 ORDER BY expires_at LIMIT ${batch} FOR UPDATE SKIP LOCKED)
    RETURNING id, event_id`.execute(trx);
  return rows;
}

/** The lapsed seats of those holds back to AVAILABLE, with their events. */
export async function returnLapsedSeats(trx: Trx, holdIds: string[]) {
  const { rows: seats } = await sql<ReturnedSeat & { eventId: string }>`
    UPDATE seats SET status = 'AVAILABLE', hold_id = NULL, expires_at = NULL, version = version + 1
    WHERE hold_id = ANY(${holdIds}::uuid[]) AND status = 'HELD' AND expires_at <= now()
    RETURNING event_id AS "eventId", id, section_code AS "sectionCode", row_index AS "rowIndex", seat_number AS "seatNumber"`.execute(trx);
  return seats;
}

/** Per event: capacity, and seats plus GA units available, held and sold (read-time expiry), and seats in confirmed orders. */
export async function countInventory(db: Db) {
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
  return rows;
}

/** Per presale tier: its seats and GA units less its recorded capacity. */
export async function findTierDrift(db: Db) {
  const { rows: tiers } = await sql<{ event_id: string; code: string; drift: number }>`
    SELECT a.event_id, a.code,
           ((SELECT count(*) FROM seats s WHERE s.event_id = a.event_id AND s.allocation = a.code)
            + coalesce((SELECT sum(available + held + sold) FROM ga_shards g WHERE g.event_id = a.event_id AND g.allocation = a.code), 0)
            - a.capacity)::int AS drift
    FROM allocations a`.execute(db);
  return tiers;
}

/** Keeps an event's latest reconciliation (exported as metrics; the tiers' drift is not kept). */
export async function saveReconciliation(db: Db, r: Omit<ReconciliationResult, 'tierDrift'>): Promise<void> {
  await sql`
    INSERT INTO inventory_reconciliations (event_id, checked_at, capacity, available, held, sold, drift, order_drift, expired_swept)
    VALUES (${r.eventId}, now(), ${r.capacity}, ${r.available}, ${r.held}, ${r.sold}, ${r.drift}, ${r.orderDrift}, ${r.expiredSwept})
    ON CONFLICT (event_id) DO UPDATE SET checked_at = excluded.checked_at, capacity = excluded.capacity,
      available = excluded.available, held = excluded.held, sold = excluded.sold, drift = excluded.drift,
      order_drift = excluded.order_drift, expired_swept = excluded.expired_swept`.execute(db);
}

/** The latest reconciliation per event, for /metrics. */
export function latestReconciliations(db: Db) {
  return db.selectFrom('inventory_reconciliations').selectAll().execute();
}
