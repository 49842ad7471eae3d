import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * The war room's series for the whole sale (issue 17, item 12): one row per event and minute, written by the
 * worker's war-room monitor as it reads the figures (the last reading of the minute wins), for as long as the
 * event is on sale. The war room's live chart keeps the last 15 minutes at one point a second; this is the long view
 * and what the CSV export downloads.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE sale_minutes (
      event_id uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
      minute timestamptz NOT NULL,
      state text NOT NULL,
      capacity integer NOT NULL,
      available integer NOT NULL,
      held integer NOT NULL,
      sold integer NOT NULL,
      joined integer NOT NULL,
      waiting integer NOT NULL,
      admitted_through bigint NOT NULL,
      admitted integer NOT NULL,
      controller_rate_per_min double precision NOT NULL,
      plan_admits_per_min double precision,
      rate_override_per_min integer,
      checkout_attempts integer NOT NULL,
      checkout_failed integer NOT NULL,
      checkout_declined integer NOT NULL,
      payment_attempts_per_second double precision NOT NULL,
      hold_latency_p99_ms double precision,
      alerts_critical integer NOT NULL,
      alerts_warning integer NOT NULL,
      recorded_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (event_id, minute)
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS sale_minutes`.execute(db);
}
