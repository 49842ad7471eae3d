import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * Releases hand their fan-out to a relay: a fan-out job added inside a release would NOTIFY the workers, and
 * PostgreSQL serializes every committing transaction that notified (one lock, held through the commit's WAL flush),
 * so a stampede of releases would queue on it. A released hold writes its availability event with
 * `fanout_enqueued = false`; the worker's relay enqueues those in batches (one commit, one notification each).
 * Existing rows were enqueued when written.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE availability_events ADD COLUMN fanout_enqueued boolean NOT NULL DEFAULT true`.execute(db);
  await sql`CREATE INDEX availability_events_relay_idx ON availability_events (id) WHERE NOT fanout_enqueued`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS availability_events_relay_idx`.execute(db);
  await sql`ALTER TABLE availability_events DROP COLUMN fanout_enqueued`.execute(db);
}
