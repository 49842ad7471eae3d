import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * The war room's alerts outside the browser (issue 17, item 2). `event_alerts` is each event's alert history: one
 * row per firing of (event, code, scope) from the moment it fires until it resolves (at most one open row per key,
 * so a flapping figure is one alert, not many). `alert_endpoints` are operators' receivers (Slack-compatible
 * incoming webhooks): for one event or every event, from a severity up. `alert_deliveries` is one message (FIRING,
 * ESCALATED, RESOLVED) of one alert to one endpoint, unique on the three, carried by a graphile-worker job
 * enqueued in the transaction that records the change: a message is sent once, and never lost to a crash.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE event_alerts (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      event_id uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
      code text NOT NULL,
      scope text NOT NULL DEFAULT '',
      severity text NOT NULL,
      peak_severity text NOT NULL,
      metric text NOT NULL,
      title text NOT NULL,
      action text NOT NULL,
      detail text NOT NULL,
      source text NOT NULL,
      value double precision,
      threshold double precision,
      fired_at timestamptz NOT NULL DEFAULT now(),
      last_seen_at timestamptz NOT NULL DEFAULT now(),
      resolved_at timestamptz,
      CONSTRAINT event_alerts_severity CHECK (severity IN ('critical', 'warning') AND peak_severity IN ('critical', 'warning')),
      CONSTRAINT event_alerts_times CHECK (last_seen_at >= fired_at AND (resolved_at IS NULL OR resolved_at >= fired_at))
    )`.execute(db);
  await sql`CREATE UNIQUE INDEX event_alerts_open_uq ON event_alerts (event_id, code, scope) WHERE resolved_at IS NULL`.execute(db);
  await sql`CREATE INDEX event_alerts_event_idx ON event_alerts (event_id, id)`.execute(db);

  await sql`
    CREATE TABLE alert_endpoints (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      url text NOT NULL,
      event_id uuid REFERENCES events(id) ON DELETE CASCADE,
      min_severity text NOT NULL DEFAULT 'warning',
      secret text NOT NULL,
      active boolean NOT NULL DEFAULT true,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT alert_endpoints_severity CHECK (min_severity IN ('critical', 'warning')),
      CONSTRAINT alert_endpoints_url CHECK (url ~ '^https?://')
    )`.execute(db);

  await sql`
    CREATE TABLE alert_deliveries (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      endpoint_id uuid NOT NULL REFERENCES alert_endpoints(id) ON DELETE CASCADE,
      alert_id bigint NOT NULL REFERENCES event_alerts(id) ON DELETE CASCADE,
      kind text NOT NULL,
      status text NOT NULL DEFAULT 'PENDING',
      attempts integer NOT NULL DEFAULT 0,
      last_status_code integer,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      delivered_at timestamptz,
      CONSTRAINT alert_deliveries_kind CHECK (kind IN ('FIRING', 'ESCALATED', 'RESOLVED')),
      CONSTRAINT alert_deliveries_status CHECK (status IN ('PENDING', 'RETRYING', 'DELIVERED', 'DEAD')),
      CONSTRAINT alert_deliveries_once UNIQUE (endpoint_id, alert_id, kind)
    )`.execute(db);
  await sql`CREATE INDEX alert_deliveries_alert_idx ON alert_deliveries (alert_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS alert_deliveries`.execute(db);
  await sql`DROP TABLE IF EXISTS alert_endpoints`.execute(db);
  await sql`DROP TABLE IF EXISTS event_alerts`.execute(db);
}
