import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * The admission controller's once-a-second count of seats returned in the last minute (`liveSignals`) read every
 * hold of the event to find the few released or lapsed in that minute: a scan that grows with the sale (51,000 holds
 * at the 200,000-fan stadium's pace). Released holds by when they were released and swept-expired holds by when they
 * lapsed, each in a partial index (live holds already have `holds_live_idx`): the minute's rows only. A hold enters
 * at most one of them, once, when it ends (its status change already writes every index of the row).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX IF NOT EXISTS holds_released_idx ON holds (event_id, updated_at) WHERE status = 'RELEASED'`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS holds_expired_idx ON holds (event_id, expires_at) WHERE status = 'EXPIRED'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS holds_expired_idx`.execute(db);
  await sql`DROP INDEX IF EXISTS holds_released_idx`.execute(db);
}
