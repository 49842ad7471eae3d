import { sql, type RawBuilder } from 'kysely';
import type { Db, Trx } from '../db/connect.js';

export interface SectionCounts {
  section_code: string;
  available: number;
  held: number;
  sold: number;
}

/**
 * Counts seats by effective status. Expiry is a read-time predicate: a HELD seat whose expires_at has
 * passed counts as available, whether or not any sweeper has run. General-admission sections count the same
 * way (see gaHeldUnits): held = units of live holds; available = the shards' available plus units of lapsed
 * holds nothing has given back yet; sold = the shards' sold.
 *
 * Reserved seats are not scanned: the database keeps their counts by stored status (`seat_counts`, plus the
 * statements' `seat_count_changes` not folded yet; migration 2026_12_08_4100), and only the HELD seats whose
 * expiry passed (the few the sweeper has not given back) are read, to move them from held to available.
 * `recountBySection` is the same figure from every seat row, which the counts are tested against.
 */
export async function countBySection(db: Db | Trx, eventId: string, tier?: { code: string; general: boolean }): Promise<SectionCounts[]> {
  // One presale tier's seats and GA units only, when a tier is given.
  const kept = tier ? sql`AND allocation = ${tier.code}` : sql``;
  const { rows } = await sql<SectionCounts>`
    SELECT section_code, sum(available)::int AS available, sum(held)::int AS held, sum(sold)::int AS sold
    FROM (SELECT section_code, available, held, sold FROM seat_counts WHERE event_id = ${eventId} ${kept}
          UNION ALL
          SELECT section_code, available, held, sold FROM seat_count_changes WHERE event_id = ${eventId} ${kept}
          UNION ALL
          SELECT section_code, count(*), -count(*), 0 FROM seats
          WHERE event_id = ${eventId} AND status = 'HELD' AND expires_at <= now() ${tier ? sql`AND allocation = ${tier.code}` : sql``}
          GROUP BY section_code) c
    GROUP BY section_code
    HAVING sum(available) + sum(held) + sum(sold) > 0
    UNION ALL
    ${gaCounts(eventId, tier)}`.execute(db);
  return rows;
}

/** `countBySection` from every seat row of the event (a full scan): what the kept counts must always equal. */
export async function recountBySection(db: Db | Trx, eventId: string, tier?: { code: string; general: boolean }): Promise<SectionCounts[]> {
  const { rows } = await sql<SectionCounts>`
    SELECT section_code,
           count(*) FILTER (WHERE status = 'AVAILABLE' OR (status = 'HELD' AND expires_at <= now()))::int AS available,
           count(*) FILTER (WHERE status = 'HELD' AND expires_at > now())::int AS held,
           count(*) FILTER (WHERE status = 'SOLD')::int AS sold
    FROM seats WHERE event_id = ${eventId} ${tier ? sql`AND allocation = ${tier.code}` : sql``}
    GROUP BY section_code
    UNION ALL
    ${gaCounts(eventId, tier)}`.execute(db);
  return rows;
}

function gaCounts(eventId: string, tier?: { code: string; general: boolean }) {
  return sql`
    SELECT g.section_code, (g.available + coalesce(u.lapsed, 0))::int, coalesce(u.held, 0)::int, g.sold::int
    FROM (SELECT section_code, sum(available) AS available, sum(sold) AS sold FROM ga_shards
          WHERE event_id = ${eventId} ${tier ? sql`AND allocation = ${tier.code}` : sql``} GROUP BY section_code) g
    LEFT JOIN (${gaHeldUnits(eventId, tier?.code)}) u ON u.section_code = g.section_code`;
}

/**
 * Folds the seat-count changes of an event's statements so far into its kept counts (the admission controller's
 * tick, once a second): one statement, so the changes a reader adds stay a second's worth. Changes committed
 * while it runs are not in its snapshot and wait for the next fold.
 */
export async function foldSeatCounts(db: Db | Trx, eventId: string): Promise<void> {
  await sql`
    WITH gone AS (DELETE FROM seat_count_changes WHERE event_id = ${eventId} RETURNING *)
    INSERT INTO seat_counts AS k (event_id, section_code, allocation, available, held, sold)
    SELECT event_id, section_code, allocation, sum(available), sum(held), sum(sold) FROM gone
    GROUP BY event_id, section_code, allocation
    ON CONFLICT (event_id, section_code, allocation) DO UPDATE
    SET available = k.available + excluded.available, held = k.held + excluded.held, sold = k.sold + excluded.sold`.execute(db);
}

/**
 * The HELD units of an event's GA holds per section, split by read-time expiry: `held` (the hold is live) and
 * `lapsed` (it is not, and nothing has given its units back to the shard yet). Since every shard keeps
 * available + held + sold = capacity, counting `available + lapsed` as available also checks the shards' held
 * counters against these units: any disagreement shows as drift in the reconciliation.
 */
export function gaHeldUnits(eventId: string | RawBuilder<unknown>, allocation?: string) {
  // One presale tier's units: those on the tier's shards.
  const tier =
    allocation === undefined
      ? sql``
      : sql`AND EXISTS (SELECT 1 FROM ga_shards s WHERE s.event_id = u.event_id AND s.section_code = u.section_code AND s.shard = u.shard AND s.allocation = ${allocation})`;
  return sql`
    SELECT u.section_code,
           coalesce(sum(u.quantity) FILTER (WHERE h.status IN ('HELD', 'PAYING', 'WAITLIST') AND h.expires_at > now()), 0) AS held,
           coalesce(sum(u.quantity) FILTER (WHERE NOT (h.status IN ('HELD', 'PAYING', 'WAITLIST') AND h.expires_at > now())), 0) AS lapsed
    FROM ga_hold_units u JOIN holds h ON h.id = u.hold_id
    WHERE u.event_id = ${eventId} AND u.state = 'HELD' ${tier}
    GROUP BY u.section_code`;
}

export interface SectionSeatRow {
  id: number;
  row_label: string;
  seat_number: number;
  available: boolean;
}

/**
 * Every seat of one reserved section in seat-map order, each with whether it can be held now (read-time expiry:
 * a lapsed hold's seat is available). With `allocation`, seats of other presale tiers read as unavailable.
 */
export async function sectionSeats(db: Db | Trx, eventId: string, sectionCode: string, allocation?: string): Promise<SectionSeatRow[]> {
  const { rows } = await sql<SectionSeatRow>`
    SELECT id, row_label, seat_number,
           ((status = 'AVAILABLE' OR (status = 'HELD' AND expires_at <= now())) ${allocation === undefined ? sql`` : sql`AND allocation = ${allocation}`}) AS available
    FROM seats WHERE event_id = ${eventId} AND section_code = ${sectionCode}
    ORDER BY row_index, seat_number`.execute(db);
  return rows;
}
