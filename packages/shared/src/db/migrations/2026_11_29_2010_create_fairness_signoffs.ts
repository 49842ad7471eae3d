import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  // A promoter's sign-off of an event's fairness mode: who, when, and the plain-words description fans are
  // shown, as it read when it was signed. At most one live sign-off per event; changing the mode supersedes it
  // (who, when, why) so a new one is needed. Rows are never deleted: the history is the record.
  await sql`
    CREATE TABLE fairness_signoffs (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      event_id uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
      fairness_mode text NOT NULL,
      description text NOT NULL,
      signed_off_by text NOT NULL,
      signed_off_at timestamptz NOT NULL DEFAULT now(),
      event_version integer NOT NULL,
      superseded_at timestamptz,
      superseded_by text,
      superseded_reason text,
      CONSTRAINT fairness_signoffs_mode CHECK (fairness_mode IN ('RANDOMIZED_PREOPEN_THEN_FIFO', 'FIFO', 'REGISTRATION_LOTTERY')),
      CONSTRAINT fairness_signoffs_description CHECK (char_length(description) > 0),
      CONSTRAINT fairness_signoffs_superseded CHECK ((superseded_at IS NULL) = (superseded_by IS NULL))
    )`.execute(db);
  await sql`CREATE UNIQUE INDEX fairness_signoffs_live_uq ON fairness_signoffs (event_id) WHERE superseded_at IS NULL`.execute(db);
  await sql`CREATE INDEX fairness_signoffs_event_idx ON fairness_signoffs (event_id, id)`.execute(db);

  // The console's audit log view filters by actor and by action, newest first.
  await sql`CREATE INDEX audit_log_actor_idx ON audit_log (actor, id)`.execute(db);
  await sql`CREATE INDEX audit_log_action_idx ON audit_log (action, id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS audit_log_action_idx`.execute(db);
  await sql`DROP INDEX IF EXISTS audit_log_actor_idx`.execute(db);
  await sql`DROP TABLE IF EXISTS fairness_signoffs`.execute(db);
}
