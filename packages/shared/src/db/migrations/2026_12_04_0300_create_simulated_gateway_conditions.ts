import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * A condition the simulated payment gateway is put in for one rehearsal's event, while the store processes run (the
 * rehearsal's `slow-payments` fault): until `until`, it answers `busy_share` of that event's charges as refused for
 * load (HTTP 429 at a real gateway) with `retry_after_seconds`, and answers the rest `delay_ms` late. Every store
 * process reads it, so all of them see the same gateway, as they would a real provider's.
 *
 * Only a rehearsal's event can be given one (the trigger refuses any other, and the gateway ignores a condition on an
 * event that is not a rehearsal's), so no real sale's payments can be slowed by it. Bounded in time by construction.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE simulated_gateway_conditions (
      event_id uuid PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
      busy_share double precision NOT NULL CHECK (busy_share >= 0 AND busy_share <= 1),
      retry_after_seconds integer NOT NULL CHECK (retry_after_seconds BETWEEN 1 AND 60),
      delay_ms integer NOT NULL CHECK (delay_ms BETWEEN 0 AND 30000),
      started_at timestamptz NOT NULL DEFAULT now(),
      until timestamptz NOT NULL,
      CHECK (until > started_at AND until <= started_at + interval '1 hour')
    )`.execute(db);
  await sql`
    CREATE FUNCTION simulated_gateway_conditions_rehearsal_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM events WHERE id = NEW.event_id AND rehearsal_time_scale IS NOT NULL) THEN
        RAISE EXCEPTION 'event % is not a rehearsal''s: the simulated gateway''s conditions are for rehearsals only', NEW.event_id
          USING ERRCODE = 'check_violation';
      END IF;
      RETURN NEW;
    END
    $$`.execute(db);
  await sql`
    CREATE TRIGGER simulated_gateway_conditions_rehearsal_only
      BEFORE INSERT OR UPDATE ON simulated_gateway_conditions
      FOR EACH ROW EXECUTE FUNCTION simulated_gateway_conditions_rehearsal_only()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS simulated_gateway_conditions`.execute(db);
  await sql`DROP FUNCTION IF EXISTS simulated_gateway_conditions_rehearsal_only()`.execute(db);
}
