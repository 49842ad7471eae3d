import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * A checkout's card limit (`onsale_lock_instrument_seats`) counts the card's seats in pending attempts: with no index
 * on the attempts' card, its plan read every pending attempt of every event (`checkout_attempts_one_pending`) and
 * filtered them by card, so each checkout cost more the more fans were paying at once (5,700 pending: 13-24 ms a
 * call), and the generic plan was no cheaper than a custom one, so the function's statement was planned again on most
 * calls. Pending attempts by card, in a partial index: a probe of the card's few rows, and a generic plan as cheap as
 * a custom one. An attempt enters it once, when it is made (its status change already writes every index of the row).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX IF NOT EXISTS checkout_attempts_pending_instrument_idx ON checkout_attempts (instrument_fingerprint)
            WHERE status = 'PENDING'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS checkout_attempts_pending_instrument_idx`.execute(db);
}
