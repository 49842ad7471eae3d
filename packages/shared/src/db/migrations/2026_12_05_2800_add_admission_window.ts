import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * Admission that follows what the store serves. Each store-API process reports, per event and every half second,
 * what it is doing now (`store_load`: holds and checkouts in flight, the holds it answered over the last seconds and
 * how long they took at the 90th percentile); the admission controller reads the fresh rows and keeps a window on
 * the fans inside (`queue_state.admit_window`, a congestion window: halved when the store lags, at most once per
 * `admit_window_cut_at` interval, raised step by step while it keeps up). `last_advance_at` is when the watermark
 * last moved: the tail rule lets the next fan in a few seconds after it whatever the per-minute plan says.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE queue_state
      ADD COLUMN admit_window double precision,
      ADD COLUMN admit_window_cut_at timestamptz,
      ADD COLUMN last_advance_at timestamptz`.execute(db);
  await sql`
    CREATE TABLE store_load (
      event_id uuid NOT NULL,
      instance text NOT NULL,
      reported_at timestamptz NOT NULL,
      holds_in_flight integer NOT NULL CHECK (holds_in_flight >= 0),
      checkouts_in_flight integer NOT NULL CHECK (checkouts_in_flight >= 0),
      holds_answered integer NOT NULL CHECK (holds_answered >= 0),
      hold_latency_p90_ms double precision NOT NULL CHECK (hold_latency_p90_ms >= 0),
      oldest_in_flight_ms double precision NOT NULL DEFAULT 0 CHECK (oldest_in_flight_ms >= 0),
      PRIMARY KEY (event_id, instance)
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS store_load`.execute(db);
  await sql`ALTER TABLE queue_state DROP COLUMN admit_window, DROP COLUMN admit_window_cut_at, DROP COLUMN last_advance_at`.execute(db);
}
