import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * Scheduled queue controls (issue 17, item 11): a pause, a resume or a rate change that an operator sets for a
 * time. Each runs once, by a graphile-worker job due at `run_at` (job key `queue_schedule:<id>`), through the same
 * domain functions as the war room's buttons, audited with who scheduled it. Cancelling removes the job; the row
 * stays as the record.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE queue_schedules (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      event_id uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
      tier text,
      action text NOT NULL,
      per_minute integer,
      reason text NOT NULL,
      run_at timestamptz NOT NULL,
      status text NOT NULL DEFAULT 'PENDING',
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      ran_at timestamptz,
      result text,
      cancelled_by text,
      cancelled_at timestamptz,
      CONSTRAINT queue_schedules_action CHECK (action IN ('PAUSE', 'RESUME', 'RATE')),
      CONSTRAINT queue_schedules_rate CHECK (action = 'RATE' OR per_minute IS NULL),
      CONSTRAINT queue_schedules_rate_bounds CHECK (per_minute IS NULL OR per_minute BETWEEN 0 AND 100000),
      CONSTRAINT queue_schedules_status CHECK (status IN ('PENDING', 'DONE', 'FAILED', 'CANCELLED')),
      CONSTRAINT queue_schedules_reason CHECK (char_length(reason) BETWEEN 1 AND 500)
    )`.execute(db);
  await sql`CREATE INDEX queue_schedules_event_idx ON queue_schedules (event_id, run_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS queue_schedules`.execute(db);
}
