import { sql } from 'kysely';
import type { Trx } from '../db/connect.js';

// Adding seat rows to a section's SQL (add-seats.ts).

/** The event's row, locked: one addition at a time per event. */
export function lockEventRow(trx: Trx, eventId: string) {
  return trx.selectFrom('events').select('id').where('id', '=', eventId).forUpdate().executeTakeFirst();
}

export function findSectionKind(trx: Trx, eventId: string, section: string) {
  return trx.selectFrom('sections').select(['code', 'kind']).where('event_id', '=', eventId).where('code', '=', section).executeTakeFirst();
}

/** The row index a new row of the section takes (0 for a section without rows). */
export async function nextRowIndex(trx: Trx, eventId: string, section: string): Promise<number> {
  const { rows: last } = await sql<{ next: number }>`
    SELECT coalesce(max(row_index) + 1, 0)::int AS next FROM seats WHERE event_id = ${eventId} AND section_code = ${section}`.execute(trx);
  return last[0]!.next;
}

/** The section's and the event's capacity grow by `added` seats (the event's version moves: caches reload it). */
export async function addCapacity(trx: Trx, eventId: string, section: string, added: number): Promise<void> {
  await sql`UPDATE sections SET capacity = capacity + ${added} WHERE event_id = ${eventId} AND code = ${section}`.execute(trx);
  await sql`UPDATE events SET capacity = capacity + ${added}, version = version + 1, updated_at = now() WHERE id = ${eventId}`.execute(trx);
}

/** The section's seats from row `first` on. */
export async function seatsFromRow(trx: Trx, eventId: string, section: string, first: number) {
  const { rows } = await sql<{ id: number; sectionCode: string; rowIndex: number; seatNumber: number }>`
    SELECT id, section_code AS "sectionCode", row_index AS "rowIndex", seat_number AS "seatNumber" FROM seats
    WHERE event_id = ${eventId} AND section_code = ${section} AND row_index >= ${first}`.execute(trx);
  return rows;
}
