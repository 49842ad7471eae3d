import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * Checkouts orphaned by a dead process are settled within seconds, not minutes: each attempt names the store-API
 * process that owns it (`owner`), and each process keeps a lease (`store_processes`, renewed every second; a clean
 * stop sets `stopped_at`). An attempt still PENDING whose owner stopped, or went silent while the database was
 * reachable, is settled by another process (it asks the payment provider what became of the charge).
 *
 * The simulated payment gateway keeps its charges in a table of its own, as a real provider remembers what it
 * charged whatever happens to its client: after a crash, recovery asks it and hears the truth.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE checkout_attempts ADD COLUMN owner text`.execute(db);
  await sql`
    CREATE TABLE store_processes (
      id text PRIMARY KEY,
      started_at timestamptz NOT NULL DEFAULT now(),
      seen_at timestamptz NOT NULL DEFAULT now(),
      stopped_at timestamptz
    )`.execute(db);
  await sql`
    CREATE TABLE simulated_gateway_charges (
      idempotency_key text PRIMARY KEY,
      request_fingerprint text NOT NULL,
      status text NOT NULL CHECK (status IN ('succeeded', 'declined')),
      reference text,
      reason text,
      amount_cents integer NOT NULL,
      currency text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      refunded_at timestamptz,
      CHECK ((status = 'succeeded') = (reference IS NOT NULL))
    )`.execute(db);
  await sql`CREATE UNIQUE INDEX simulated_gateway_charges_reference ON simulated_gateway_charges (reference) WHERE reference IS NOT NULL`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS simulated_gateway_charges`.execute(db);
  await sql`DROP TABLE IF EXISTS store_processes`.execute(db);
  await sql`ALTER TABLE checkout_attempts DROP COLUMN IF EXISTS owner`.execute(db);
}
