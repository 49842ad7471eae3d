import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * A place in line follows its fan to another device: `device_moves` counts how often the place moved (the queue
 * tokens of earlier devices carry a lower count, and stop), `moved_at` when it last did. The partial index finds an
 * event's moved places (what every status answer checks, from memory) without reading the others.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE queue_entries
      ADD COLUMN device_moves integer NOT NULL DEFAULT 0 CONSTRAINT queue_entries_device_moves CHECK (device_moves >= 0),
      ADD COLUMN moved_at timestamptz`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS queue_entries_moved_idx ON queue_entries (event_id) INCLUDE (join_index, device_moves) WHERE moved_at IS NOT NULL`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS queue_entries_moved_idx`.execute(db);
  await sql`ALTER TABLE queue_entries DROP COLUMN device_moves, DROP COLUMN moved_at`.execute(db);
}
