import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * Holds of admitted fans a store process answered 503 without serving them (load shedding), over the last 5 s, per
 * event and process (`store_load.holds_shed`): fans the admission window let in that the store could not take. The
 * controller reads it as a congestion window reads a loss, and halves the window (issue 28).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE store_load ADD COLUMN holds_shed integer NOT NULL DEFAULT 0 CHECK (holds_shed >= 0)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE store_load DROP COLUMN holds_shed`.execute(db);
}
