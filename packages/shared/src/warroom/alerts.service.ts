import type { Db, Trx } from '../db/connect.js';
import { invalid, notFound } from '../errors.js';
import { isUuid } from '../ids.js';
import { findEvent } from '../events/events.service.js';
import { DEFAULT_OUTBOUND_POLICY, generateWebhookSecret, refusedReceiverUrl, type OutboundPolicy } from '../notify/index.js';
import { diffAlerts } from './alert-history.js';
import * as repo from './alerts.repository.js';
import { alertEndpointInputSchema, type AlertEndpointInput } from './warroom.schema.js';
import type { WarRoomSnapshot } from './warroom.service.js';

// The war room's alerts outside the browser: each event's alert history in PostgreSQL, and messages to operators'
// receivers (Slack-compatible webhooks) when an alert fires, escalates and resolves, de-duplicated.

/** What one recording did, per event: alerts fired, escalated, resolved, and messages queued. */
export interface RecordedAlerts {
  fired: number;
  escalated: number;
  resolved: number;
  messages: number;
}

/**
 * Records the alerts of the snapshots in the caller's transaction (which holds the monitor's lock): an alert that
 * fires is written with its words and FIRING messages queued; one still firing is touched (and, from warning to
 * critical, ESCALATED queued); one quiet for the resolve period is resolved and RESOLVED queued to whoever heard
 * it fired. Each snapshot's own clock (`at`) times it.
 */
export async function recordAlerts(
  trx: Trx,
  snapshots: readonly WarRoomSnapshot[],
  opts: { resolveAfterMs?: number } = {},
): Promise<RecordedAlerts> {
  const out: RecordedAlerts = { fired: 0, escalated: 0, resolved: 0, messages: 0 };
  const open = await repo.findOpenAlerts(
    trx,
    snapshots.map((s) => s.eventId),
  );
  for (const s of snapshots) {
    const at = new Date(s.at);
    const mine = open
      .filter((o) => o.event_id === s.eventId)
      .map((o) => ({ id: o.id, code: o.code, scope: o.scope, severity: o.severity, lastSeenAt: o.last_seen_at }));
    const changes = diffAlerts(mine, s.alerts, at, opts.resolveAfterMs);
    for (const a of changes.fired) {
      const id = await repo.insertAlert(trx, s.eventId, a, at);
      if (id === undefined) continue;
      out.fired++;
      out.messages += (await repo.enqueueAlertDeliveries(trx, id, 'FIRING')).length;
    }
    for (const c of changes.continuing) {
      await repo.touchAlert(trx, c.id, c.alert, at);
      if (!c.escalated) continue;
      out.escalated++;
      out.messages += (await repo.enqueueAlertDeliveries(trx, c.id, 'ESCALATED')).length;
      // Receivers of critical alerts only hear of it now, as it fires for them.
      out.messages += (await repo.enqueueAlertDeliveries(trx, c.id, 'FIRING')).length;
    }
    await repo.resolveAlerts(trx, changes.resolved, at);
    for (const id of changes.resolved) {
      out.resolved++;
      out.messages += (await repo.enqueueAlertDeliveries(trx, id, 'RESOLVED')).length;
    }
  }
  return out;
}

/** One alert of an event's history as the console shows it. */
export interface AlertHistoryEntry {
  id: number;
  code: string;
  scope: string;
  severity: 'critical' | 'warning';
  peakSeverity: 'critical' | 'warning';
  title: string;
  action: string;
  detail: string;
  source: string;
  firedAt: Date;
  lastSeenAt: Date;
  resolvedAt: Date | null;
  messages: { queued: number; delivered: number; dead: number };
}

/** An event's alerts, newest first (at most `limit`, default 200). */
export async function listAlertHistory(db: Db | Trx, eventId: string, limit = 200): Promise<AlertHistoryEntry[]> {
  if (!isUuid(eventId)) throw notFound('EVENT_NOT_FOUND', `no event ${eventId}`, 'eventId');
  return (await repo.findAlertHistory(db, eventId, Math.min(Math.max(1, limit), 1000))).map((r) => ({
    id: r.id,
    code: r.code,
    scope: r.scope,
    severity: r.severity,
    peakSeverity: r.peak_severity,
    title: r.title,
    action: r.action,
    detail: r.detail,
    source: r.source,
    firedAt: r.fired_at,
    lastSeenAt: r.last_seen_at,
    resolvedAt: r.resolved_at,
    messages: { queued: r.messages, delivered: r.delivered, dead: r.dead },
  }));
}

/** An alert receiver as operators see it; its secret is shown once, when it is added. */
export interface AlertEndpoint {
  id: string;
  url: string;
  eventId: string | null;
  eventName: string | null;
  minSeverity: 'critical' | 'warning';
  active: boolean;
  createdBy: string;
  createdAt: Date;
  delivered: number;
  failing: number;
  lastError: string | null;
}

const toEndpoint = (r: repo.AlertEndpointRow): AlertEndpoint => ({
  id: r.id,
  url: r.url,
  eventId: r.event_id,
  eventName: r.event_name,
  minSeverity: r.min_severity,
  active: r.active,
  createdBy: r.created_by,
  createdAt: r.created_at,
  delivered: r.delivered,
  failing: r.failing,
  lastError: r.last_error,
});

/**
 * Adds an alert receiver (audited by the caller's router through the returned row). Returns its signing secret
 * this once: receivers that check `X-Onsale-Signature` need it; Slack's incoming webhooks ignore it.
 * INVALID_ALERT_ENDPOINT at the field (a URL whose host is internal, in any spelling or after DNS, unless the
 * install's `outbound` policy allows it); EVENT_NOT_FOUND for an unknown event.
 */
export async function addAlertEndpoint(
  db: Db | Trx,
  input: AlertEndpointInput,
  actor: string,
  opts: { outbound?: OutboundPolicy } = {},
): Promise<AlertEndpoint & { secret: string }> {
  const parsed = alertEndpointInputSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw invalid('INVALID_ALERT_ENDPOINT', issue.message, String(issue.path[0] ?? 'url'));
  }
  const i = parsed.data;
  const refused = await refusedReceiverUrl(i.url, opts.outbound ?? DEFAULT_OUTBOUND_POLICY);
  if (refused) throw invalid('INVALID_ALERT_ENDPOINT', refused, 'url');
  if (i.eventId !== undefined) {
    const exists = isUuid(i.eventId) && (await findEvent(db, i.eventId));
    if (!exists) throw notFound('EVENT_NOT_FOUND', `no event ${i.eventId}`, 'eventId');
  }
  const secret = generateWebhookSecret();
  const id = await repo.insertAlertEndpoint(db, {
    url: i.url,
    eventId: i.eventId ?? null,
    minSeverity: i.minSeverity,
    secret,
    createdBy: actor,
  });
  const [row] = await repo.findAlertEndpoints(db, { id });
  return { ...toEndpoint(row!), secret };
}

export async function listAlertEndpoints(db: Db | Trx): Promise<AlertEndpoint[]> {
  return (await repo.findAlertEndpoints(db)).map(toEndpoint);
}

/** Turns a receiver off (its queued messages are dead-lettered when their job runs) or on. ALERT_ENDPOINT_NOT_FOUND. */
export async function setAlertEndpointActive(db: Db | Trx, id: string, active: boolean): Promise<AlertEndpoint> {
  if (!isUuid(id) || !(await repo.updateAlertEndpointActive(db, id, active)))
    throw notFound('ALERT_ENDPOINT_NOT_FOUND', `no alert receiver ${id}`, 'id');
  return toEndpoint((await repo.findAlertEndpoints(db, { id }))[0]!);
}

/** A receiver's latest messages, newest first. */
export async function listAlertDeliveries(db: Db | Trx, endpointId: string, limit = 50) {
  if (!isUuid(endpointId)) throw notFound('ALERT_ENDPOINT_NOT_FOUND', `no alert receiver ${endpointId}`, 'id');
  return (await repo.findAlertDeliveries(db, endpointId, limit)).map((r) => ({
    id: r.id,
    alertId: r.alert_id,
    kind: r.kind,
    status: r.status,
    attempts: r.attempts,
    lastStatusCode: r.last_status_code,
    lastError: r.last_error,
    createdAt: r.created_at,
    deliveredAt: r.delivered_at,
    title: r.title,
    eventName: r.event_name,
  }));
}
