import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * How long the fans the store holds for had waited since they collected their admission (their admission token's
 * issue time to the hold reaching the store), at the 90th percentile over the last 30 s, per event and store process
 * (`store_load.admitted_wait_p90_ms`): a line in front of the store (its HTTP server's backlog, the edge, the fans'
 * connections) shows there, where no latency the store measures itself does. The admission controller counts a fan
 * who collected and has not held as inside for about twice that long (issue 28).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE store_load ADD COLUMN admitted_wait_p90_ms double precision NOT NULL DEFAULT 0 CHECK (admitted_wait_p90_ms >= 0)`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE store_load DROP COLUMN admitted_wait_p90_ms`.execute(db);
}
