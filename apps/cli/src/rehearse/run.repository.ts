import { sql } from 'kysely';
import type { Db } from '@onsale/shared/db';

// The rehearsal driver's own reads of the product's database (run.ts): what the admission controller says and did.

/** The admission controller's reason for its current rate (shown on the progress line), or null. */
export async function controllerReason(db: Db, eventId: string): Promise<string | null> {
  const r = await db.selectFrom('queue_state').select('controller_reason').where('event_id', '=', eventId).executeTakeFirst();
  return r?.controller_reason ?? null;
}

/** When the event sold out, or null. */
export async function soldOutAtOf(db: Db, eventId: string): Promise<Date | null> {
  const r = await db.selectFrom('queue_state').select('sold_out_at').where('event_id', '=', eventId).executeTakeFirst();
  return r?.sold_out_at ?? null;
}

/** The controller's last sign of life for the event: its heartbeat or the sell-out, whichever is later. */
export async function controllerLastTick(db: Db, eventId: string): Promise<Date | null> {
  const r = await db
    .selectFrom('queue_state')
    .select(sql<Date | null>`greatest(heartbeat_at, sold_out_at)`.as('t'))
    .where('event_id', '=', eventId)
    .executeTakeFirst();
  return r?.t ?? null;
}

/**
 * The seats not sold at the end, as the rows leave them: runs of seats side by side (seat numbers in a row are
 * consecutive), how many runs are a single seat alone, the longest run, and the sections they are in. Tells a tail
 * of stranded singles (parties of two to four refused) from seats nobody came for.
 */
export async function unsoldShape(
  db: Db,
  eventId: string,
): Promise<{ seats: number; runs: number; singles: number; longest: number; sections: number }> {
  const r = await sql<{ seats: string; runs: string; singles: string; longest: string; sections: string }>`
    WITH u AS (
      SELECT section_code, row_label,
             seat_number - row_number() OVER (PARTITION BY section_code, row_label ORDER BY seat_number) AS g
      FROM seats WHERE event_id = ${eventId} AND status <> 'SOLD'
    ), runs AS (SELECT section_code, count(*) AS n FROM u GROUP BY section_code, row_label, g)
    SELECT coalesce(sum(n), 0) AS seats, count(*) AS runs, count(*) FILTER (WHERE n = 1) AS singles,
           coalesce(max(n), 0) AS longest, count(DISTINCT section_code) AS sections
    FROM runs`.execute(db);
  const x = r.rows[0]!;
  return {
    seats: Number(x.seats),
    runs: Number(x.runs),
    singles: Number(x.singles),
    longest: Number(x.longest),
    sections: Number(x.sections),
  };
}
