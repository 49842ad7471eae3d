import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * An event made by a rehearsal (`onsale rehearse`) is marked with the factor its clock was compressed by (hold
 * TTLs, pacing and windows divided by it). NULL: a real event. The console and reports tell rehearsals apart by it,
 * so a rehearsal's figures are never read as a real on-sale's.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE events ADD COLUMN rehearsal_time_scale double precision`.execute(db);
  await sql`ALTER TABLE events ADD CONSTRAINT events_rehearsal_time_scale CHECK (rehearsal_time_scale IS NULL OR rehearsal_time_scale >= 1)`.execute(
    db,
  );
  await sql`CREATE INDEX events_rehearsal_idx ON events (created_at) WHERE rehearsal_time_scale IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS events_rehearsal_idx`.execute(db);
  await sql`ALTER TABLE events DROP CONSTRAINT IF EXISTS events_rehearsal_time_scale`.execute(db);
  await sql`ALTER TABLE events DROP COLUMN IF EXISTS rehearsal_time_scale`.execute(db);
}
