import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';

export interface SectionCounts {
  section_code: string;
  available: number;
  held: number;
  sold: number;
}

/**
 * Counts seats by effective status. Expiry is a read-time predicate: a HELD seat whose expires_at has
 * passed counts as available, whether or not any sweeper has run.
 */
export async function countBySection(db: Db | Trx, eventId: string): Promise<SectionCounts[]> {
  const { rows } = await sql<SectionCounts>`
    SELECT section_code,
           count(*) FILTER (WHERE status = 'AVAILABLE' OR (status = 'HELD' AND expires_at <= now()))::int AS available,
           count(*) FILTER (WHERE status = 'HELD' AND expires_at > now())::int AS held,
           count(*) FILTER (WHERE status = 'SOLD')::int AS sold
    FROM seats WHERE event_id = ${eventId}
    GROUP BY section_code`.execute(db);
  return rows;
}
