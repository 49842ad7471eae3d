import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * Holds are idempotent: a hold request may carry an Idempotency-Key, kept on the hold with a hash of the request,
 * so a retry whose first answer was lost (a timeout, a reset connection) gets the same hold back instead of a
 * second one that the fan's own limit refuses. One key per (event, account).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE holds ADD COLUMN idempotency_key text, ADD COLUMN request_hash text`.execute(db);
  await sql`CREATE UNIQUE INDEX holds_idempotency_uq ON holds (event_id, account_id, idempotency_key) WHERE idempotency_key IS NOT NULL`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS holds_idempotency_uq`.execute(db);
  await sql`ALTER TABLE holds DROP COLUMN IF EXISTS idempotency_key, DROP COLUMN IF EXISTS request_hash`.execute(db);
}
