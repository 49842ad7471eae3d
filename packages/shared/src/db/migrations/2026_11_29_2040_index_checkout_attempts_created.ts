import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * Checkout attempts by time. The admission controller (every second, per event) and the war room read the last
 * two minutes of checkout attempts for the error rate and the payment attempts per second; without this index each
 * read scans every attempt ever made, which over a Saturday of 40 on-sales is every order of all of them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX IF NOT EXISTS checkout_attempts_created_idx ON checkout_attempts (created_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS checkout_attempts_created_idx`.execute(db);
}
