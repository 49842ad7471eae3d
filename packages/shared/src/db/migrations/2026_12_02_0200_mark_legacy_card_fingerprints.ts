import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * Card fingerprints become keyed (HMAC with the install's CARD_FINGERPRINT_SECRET). A migration has no secret, so it
 * marks every fingerprint written before as `legacy:<old value>`; the store API, `npm start` and `onsale migrate`
 * then key each marked row in place with the secret (rekeyLegacyCardFingerprints), after which no unkeyed
 * fingerprint is left in the database. Until then the per-card limit counts a marked row as the same card.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`UPDATE orders SET instrument_fingerprint = 'legacy:' || instrument_fingerprint WHERE instrument_fingerprint ~ '^[0-9a-f]{32}$'`.execute(
    db,
  );
  await sql`UPDATE checkout_attempts SET instrument_fingerprint = 'legacy:' || instrument_fingerprint WHERE instrument_fingerprint ~ '^[0-9a-f]{32}$'`.execute(
    db,
  );
  await sql`CREATE INDEX IF NOT EXISTS orders_legacy_fingerprint_idx ON orders (id) WHERE instrument_fingerprint LIKE 'legacy:%'`.execute(
    db,
  );
  await sql`CREATE INDEX IF NOT EXISTS checkout_attempts_legacy_fingerprint_idx ON checkout_attempts (account_id, idempotency_key) WHERE instrument_fingerprint LIKE 'legacy:%'`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS orders_legacy_fingerprint_idx`.execute(db);
  await sql`DROP INDEX IF EXISTS checkout_attempts_legacy_fingerprint_idx`.execute(db);
}
