import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import type { Alert } from './alerts.js';
import type { AlertDeliveryKind, AlertDeliveryStatus } from './warroom.table.js';

// All SQL of the war room's alert history and alert webhooks, including the graphile-worker jobs that carry the
// messages (enqueued by SQL so they commit or roll back with the alert change that causes them).

/** The graphile-worker task that sends one alert message. */
export const ALERT_DELIVER_TASK = 'alert_deliver';
/** Tries of one message before it is dead-lettered (graphile's backoff: about 30 minutes in all). */
export const ALERT_DELIVERY_MAX_ATTEMPTS = 10;

/** Events the monitor reads: in their on-sale window (2 h before the open until the event starts, sold-out ones for an hour), or with an alert open. */
export async function findMonitoredEventIds(db: Db | Trx, limit: number): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    SELECT e.id FROM events e JOIN queue_state q ON q.event_id = e.id
    WHERE (now() >= e.onsale_at - interval '2 hours' AND now() < e.starts_at
           AND (q.sold_out_at IS NULL OR q.sold_out_at > now() - interval '1 hour'))
       OR EXISTS (SELECT 1 FROM event_alerts a WHERE a.event_id = e.id AND a.resolved_at IS NULL)
    ORDER BY e.onsale_at, e.id
    LIMIT ${limit}`.execute(db);
  return rows.map((r) => r.id);
}

/** One monitor at a time across every worker process: a transaction-scoped advisory lock, not waited for. */
export async function tryMonitorLock(trx: Trx): Promise<boolean> {
  const { rows } = await sql<{
    got: boolean;
  }>`SELECT pg_try_advisory_xact_lock(hashtextextended('onsale:war-room-monitor', 0)) AS got`.execute(trx);
  return rows[0]?.got === true;
}

export interface OpenAlertRow {
  id: number;
  event_id: string;
  code: string;
  scope: string;
  severity: 'critical' | 'warning';
  last_seen_at: Date;
}

/** The open alerts of the events, locked (the monitor holds its own lock too; this keeps a slow writer honest). */
export async function findOpenAlerts(trx: Trx, eventIds: readonly string[]): Promise<OpenAlertRow[]> {
  if (eventIds.length === 0) return [];
  const { rows } = await sql<OpenAlertRow>`
    SELECT id, event_id, code, scope, severity, last_seen_at FROM event_alerts
    WHERE resolved_at IS NULL AND event_id = ANY(${[...eventIds]}::uuid[]) ORDER BY id FOR UPDATE`.execute(trx);
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}

/** Records a newly firing alert; returns its id (undefined when one is already open for the key: nothing written). */
export async function insertAlert(trx: Trx, eventId: string, a: Alert, at: Date): Promise<number | undefined> {
  const { rows } = await sql<{ id: number }>`
    INSERT INTO event_alerts (event_id, code, scope, severity, peak_severity, metric, title, action, detail, source, value, threshold, fired_at, last_seen_at)
    VALUES (${eventId}, ${a.code}, ${a.scope}, ${a.severity}, ${a.severity}, ${a.metric}, ${a.title}, ${a.action}, ${a.detail}, ${a.source},
            ${finite(a.value)}, ${finite(a.threshold)}, ${at}, ${at})
    ON CONFLICT (event_id, code, scope) WHERE resolved_at IS NULL DO NOTHING
    RETURNING id`.execute(trx);
  return rows[0] ? Number(rows[0].id) : undefined;
}

/** An open alert seen again: its latest words, figures and severity (the peak kept). */
export async function touchAlert(trx: Trx, id: number, a: Alert, at: Date): Promise<void> {
  await sql`
    UPDATE event_alerts SET severity = ${a.severity}, peak_severity = CASE WHEN ${a.severity} = 'critical' THEN 'critical' ELSE peak_severity END,
           title = ${a.title}, action = ${a.action}, detail = ${a.detail}, value = ${finite(a.value)}, threshold = ${finite(a.threshold)},
           last_seen_at = greatest(last_seen_at, ${at}::timestamptz)
    WHERE id = ${id}`.execute(trx);
}

export async function resolveAlerts(trx: Trx, ids: readonly number[], at: Date): Promise<void> {
  if (ids.length === 0) return;
  await sql`UPDATE event_alerts SET resolved_at = greatest(last_seen_at, ${at}::timestamptz) WHERE id = ANY(${[...ids]}::bigint[]) AND resolved_at IS NULL`.execute(
    trx,
  );
}

/** JSON numbers only: an Infinity or NaN ratio is stored as null. */
const finite = (x: number | null) => (x !== null && Number.isFinite(x) ? x : null);

/**
 * The messages of an alert change, one per receiver, each with its job, in one statement: FIRING to every active
 * endpoint of the event (or of every event) whose minimum severity the alert meets; ESCALATED to those that were
 * told it fired; RESOLVED to those that were told it fired or escalated. Unique per (endpoint, alert, kind): a
 * message is never queued twice. Jobs run in a named queue per endpoint, so one receiver gets an alert's messages
 * in order. Returns the delivery ids.
 */
export async function enqueueAlertDeliveries(trx: Trx, alertId: number, kind: AlertDeliveryKind): Promise<number[]> {
  const receivers =
    kind === 'FIRING'
      ? sql`SELECT e.id FROM alert_endpoints e JOIN event_alerts a ON a.id = ${alertId}
            WHERE e.active AND (e.event_id IS NULL OR e.event_id = a.event_id) AND (e.min_severity = 'warning' OR a.severity = 'critical')`
      : kind === 'ESCALATED'
        ? sql`SELECT DISTINCT d.endpoint_id AS id FROM alert_deliveries d JOIN alert_endpoints e ON e.id = d.endpoint_id
              WHERE d.alert_id = ${alertId} AND d.kind = 'FIRING' AND e.active`
        : sql`SELECT DISTINCT d.endpoint_id AS id FROM alert_deliveries d JOIN alert_endpoints e ON e.id = d.endpoint_id
              WHERE d.alert_id = ${alertId} AND d.kind IN ('FIRING', 'ESCALATED') AND e.active`;
  const { rows } = await sql<{ id: number }>`
    WITH d AS (
      INSERT INTO alert_deliveries (endpoint_id, alert_id, kind)
      SELECT r.id, ${alertId}::bigint, ${kind} FROM (${receivers}) r
      ON CONFLICT (endpoint_id, alert_id, kind) DO NOTHING
      RETURNING id, endpoint_id
    ), specs AS (
      SELECT array_agg(ROW(${ALERT_DELIVER_TASK}::text, json_build_object('deliveryId', d.id), 'alert:' || d.endpoint_id,
                           NULL::timestamptz, ${ALERT_DELIVERY_MAX_ATTEMPTS}::int, NULL::text, NULL::int, NULL::text[])::graphile_worker.job_spec ORDER BY d.id) AS specs
      FROM d HAVING count(*) > 0
    ), jobs AS (
      SELECT count(*) AS n FROM specs, LATERAL graphile_worker.add_jobs(specs.specs) j
    )
    SELECT d.id FROM d CROSS JOIN jobs ORDER BY d.id`.execute(trx);
  return rows.map((r) => Number(r.id));
}

/** An event's alerts, newest first, with how many messages each had and how many arrived. */
export interface AlertHistoryRow {
  id: number;
  code: string;
  scope: string;
  severity: 'critical' | 'warning';
  peak_severity: 'critical' | 'warning';
  metric: string;
  title: string;
  action: string;
  detail: string;
  source: string;
  fired_at: Date;
  last_seen_at: Date;
  resolved_at: Date | null;
  messages: number;
  delivered: number;
  dead: number;
}

export async function findAlertHistory(db: Db | Trx, eventId: string, limit: number): Promise<AlertHistoryRow[]> {
  const { rows } = await sql<AlertHistoryRow>`
    SELECT a.id, a.code, a.scope, a.severity, a.peak_severity, a.metric, a.title, a.action, a.detail, a.source, a.fired_at, a.last_seen_at, a.resolved_at,
           count(d.id)::int AS messages, count(d.id) FILTER (WHERE d.status = 'DELIVERED')::int AS delivered,
           count(d.id) FILTER (WHERE d.status = 'DEAD')::int AS dead
    FROM event_alerts a LEFT JOIN alert_deliveries d ON d.alert_id = a.id
    WHERE a.event_id = ${eventId}
    GROUP BY a.id ORDER BY a.id DESC LIMIT ${limit}`.execute(db);
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}

export interface AlertEndpointRow {
  id: string;
  url: string;
  event_id: string | null;
  event_name: string | null;
  min_severity: 'critical' | 'warning';
  active: boolean;
  created_by: string;
  created_at: Date;
  delivered: number;
  failing: number;
  last_error: string | null;
}

export async function insertAlertEndpoint(
  db: Db | Trx,
  row: { url: string; eventId: string | null; minSeverity: 'critical' | 'warning'; secret: string; createdBy: string },
): Promise<string> {
  const r = await db
    .insertInto('alert_endpoints')
    .values({ url: row.url, event_id: row.eventId, min_severity: row.minSeverity, secret: row.secret, created_by: row.createdBy })
    .returning('id')
    .executeTakeFirstOrThrow();
  return r.id;
}

/** Every endpoint (or one), oldest first, with its delivery counts and its latest error. */
export async function findAlertEndpoints(db: Db | Trx, opts: { id?: string } = {}): Promise<AlertEndpointRow[]> {
  const { rows } = await sql<AlertEndpointRow>`
    SELECT e.id, e.url, e.event_id, v.name AS event_name, e.min_severity, e.active, e.created_by, e.created_at,
           count(d.id) FILTER (WHERE d.status = 'DELIVERED')::int AS delivered,
           count(d.id) FILTER (WHERE d.status IN ('RETRYING', 'DEAD'))::int AS failing,
           (SELECT last_error FROM alert_deliveries x WHERE x.endpoint_id = e.id AND x.last_error IS NOT NULL ORDER BY x.updated_at DESC LIMIT 1) AS last_error
    FROM alert_endpoints e LEFT JOIN events v ON v.id = e.event_id LEFT JOIN alert_deliveries d ON d.endpoint_id = e.id
    ${opts.id ? sql`WHERE e.id = ${opts.id}` : sql``}
    GROUP BY e.id, v.name ORDER BY e.created_at, e.id`.execute(db);
  return rows;
}

export async function updateAlertEndpointActive(db: Db | Trx, id: string, active: boolean): Promise<boolean> {
  const r = await db.updateTable('alert_endpoints').set({ active }).where('id', '=', id).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export interface AlertDeliveryRow {
  id: number;
  endpoint_id: string;
  alert_id: number;
  kind: AlertDeliveryKind;
  status: AlertDeliveryStatus;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
  title: string;
  event_name: string;
}

export async function findAlertDeliveries(db: Db | Trx, endpointId: string, limit: number): Promise<AlertDeliveryRow[]> {
  const { rows } = await sql<AlertDeliveryRow>`
    SELECT d.id, d.endpoint_id, d.alert_id, d.kind, d.status, d.attempts, d.last_status_code, d.last_error, d.created_at, d.delivered_at,
           a.title, v.name AS event_name
    FROM alert_deliveries d JOIN event_alerts a ON a.id = d.alert_id JOIN events v ON v.id = a.event_id
    WHERE d.endpoint_id = ${endpointId} ORDER BY d.id DESC LIMIT ${limit}`.execute(db);
  return rows.map((r) => ({ ...r, id: Number(r.id), alert_id: Number(r.alert_id) }));
}

/** A message to send: the delivery, its endpoint and alert, and the event's name. */
export interface AlertDeliveryToSend {
  id: number;
  kind: AlertDeliveryKind;
  status: AlertDeliveryStatus;
  attempts: number;
  url: string;
  secret: string;
  active: boolean;
  alert_id: number;
  code: string;
  scope: string;
  severity: 'critical' | 'warning';
  title: string;
  action: string;
  detail: string;
  fired_at: Date;
  resolved_at: Date | null;
  event_id: string;
  event_name: string;
}

export async function loadAlertDelivery(db: Db, id: number): Promise<AlertDeliveryToSend | undefined> {
  const { rows } = await sql<AlertDeliveryToSend>`
    SELECT d.id, d.kind, d.status, d.attempts, e.url, e.secret, e.active, a.id AS alert_id, a.code, a.scope,
           CASE WHEN d.kind = 'FIRING' THEN a.severity ELSE a.peak_severity END AS severity,
           a.title, a.action, a.detail, a.fired_at, a.resolved_at, v.id AS event_id, v.name AS event_name
    FROM alert_deliveries d JOIN alert_endpoints e ON e.id = d.endpoint_id JOIN event_alerts a ON a.id = d.alert_id JOIN events v ON v.id = a.event_id
    WHERE d.id = ${id}`.execute(db);
  const r = rows[0];
  return r ? { ...r, id: Number(r.id), alert_id: Number(r.alert_id) } : undefined;
}

export async function markAlertDelivered(db: Db, id: number, statusCode: number): Promise<void> {
  await sql`
    UPDATE alert_deliveries SET status = 'DELIVERED', attempts = attempts + 1, last_status_code = ${statusCode}, last_error = NULL,
           delivered_at = now(), updated_at = now()
    WHERE id = ${id} AND status <> 'DELIVERED'`.execute(db);
}

/** A failed try: RETRYING, or DEAD on the last one (or `dead`); the attempt counts only when a request was made. */
export async function recordAlertFailure(
  db: Db,
  id: number,
  f: { statusCode: number | null; error: string; dead: boolean; requested: boolean },
): Promise<void> {
  await sql`
    UPDATE alert_deliveries SET status = ${f.dead ? 'DEAD' : 'RETRYING'}, attempts = attempts + ${f.requested ? 1 : 0},
           last_status_code = ${f.statusCode}, last_error = ${f.error.slice(0, 600)}, updated_at = now()
    WHERE id = ${id} AND status NOT IN ('DELIVERED', 'DEAD')`.execute(db);
}
