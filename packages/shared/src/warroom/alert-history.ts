// Alert history and alert messages: pure rules, no I/O. Which alerts fired, stayed, escalated or resolved between
// two readings of an event's figures (de-duplicated on (event, code, scope), with a quiet period before an alert
// counts as resolved so a flapping figure is one alert, not many), and the message a receiver gets for each.
import { alertKey, alertReachOf, type Alert, type AlertSeverity } from './alerts.js';

/** An alert that fired and has not resolved, as recorded. */
export interface OpenAlert {
  id: number;
  code: string;
  scope: string;
  severity: AlertSeverity;
  lastSeenAt: Date;
}

/** What to record after one reading of an event's figures. */
export interface AlertChanges {
  /** Alerts firing now that were not open: recorded, and a FIRING message to every receiver that wants them. */
  fired: Alert[];
  /** Open alerts still firing: last seen now, their words and severity updated; `escalated` from warning to critical. */
  continuing: { id: number; alert: Alert; escalated: boolean }[];
  /** Open alerts absent for the quiet period: resolved, and a RESOLVED message to whoever was told they fired. */
  resolved: number[];
}

/** How long an alert must stay quiet before it counts as resolved (a figure hovering at a threshold is one alert). */
export const ALERT_RESOLVE_AFTER_MS = 30_000;

/**
 * The changes between the open alerts of an event and the alerts firing now (`now`: the reading's clock). An open
 * alert not firing now stays open until it has been absent for `resolveAfterMs`; firing again meanwhile, it is the
 * same alert.
 */
export function diffAlerts(
  open: readonly OpenAlert[],
  firing: readonly Alert[],
  now: Date,
  resolveAfterMs = ALERT_RESOLVE_AFTER_MS,
): AlertChanges {
  const openByKey = new Map(open.map((o) => [alertKey(o), o]));
  const changes: AlertChanges = { fired: [], continuing: [], resolved: [] };
  const seen = new Set<string>();
  for (const a of firing) {
    const key = alertKey(a);
    if (seen.has(key)) continue;
    seen.add(key);
    const o = openByKey.get(key);
    if (o) changes.continuing.push({ id: o.id, alert: a, escalated: o.severity === 'warning' && a.severity === 'critical' });
    else changes.fired.push(a);
  }
  for (const o of open) if (!seen.has(alertKey(o)) && now.getTime() - o.lastSeenAt.getTime() >= resolveAfterMs) changes.resolved.push(o.id);
  return changes;
}

/** One message of an alert's life. */
export type AlertMessageKind = 'FIRING' | 'ESCALATED' | 'RESOLVED';

/** What a message is built from: the alert as recorded and its event. */
export interface AlertMessageInput {
  kind: AlertMessageKind;
  deliveryId: number;
  alert: {
    id: number;
    code: string;
    scope: string;
    severity: AlertSeverity;
    title: string;
    action: string;
    detail: string;
    firedAt: Date;
    resolvedAt: Date | null;
  };
  event: { id: string; name: string };
  /** Where the event's war room is, when the console's address is known. */
  warRoomUrl?: string | null;
  sentAt: Date;
}

/**
 * The JSON body of an alert message: Slack-compatible (`text` for notifications and clients without blocks,
 * `blocks` for the layout), so an incoming-webhook URL of Slack (or of Mattermost, Rocket.Chat, Teams' Slack
 * adapter...) takes it as it is; and an `onsale` object with the same facts for receivers that parse it.
 * `onsale.dedupeKey` is the same for every retry of one message: receivers drop repeats on it.
 */
export function alertMessage(m: AlertMessageInput): {
  text: string;
  blocks: unknown[];
  onsale: Record<string, unknown>;
} {
  const a = m.alert;
  const head =
    m.kind === 'RESOLVED' ? 'RESOLVED' : m.kind === 'ESCALATED' ? 'NOW CRITICAL' : a.severity === 'critical' ? 'CRITICAL' : 'WARNING';
  const icon = m.kind === 'RESOLVED' ? ':white_check_mark:' : a.severity === 'critical' ? ':red_circle:' : ':large_orange_circle:';
  const lasted = a.resolvedAt ? ` after ${minutesBetween(a.firedAt, a.resolvedAt)}` : '';
  const platform = alertReachOf(a.code) === 'platform';
  // A platform-wide alert fires on every event on sale: the message says so, so nobody hunts for it in this event.
  const where = platform ? `${m.event.name} (platform-wide: every event on sale)` : m.event.name;
  const text = m.kind === 'RESOLVED' ? `${head}${lasted}: ${where}: ${a.title}` : `${head}: ${where}: ${a.title} What to do: ${a.action}`;
  const lines =
    m.kind === 'RESOLVED'
      ? [`${icon} *${head}*${lasted} · *${escape(where)}*`, escape(a.title)]
      : [`${icon} *${head}* · *${escape(where)}*`, `*${escape(a.title)}*`, `_What to do:_ ${escape(a.action)}`, escape(a.detail)];
  const context = [
    `fired ${a.firedAt.toISOString()}`,
    ...(a.resolvedAt ? [`resolved ${a.resolvedAt.toISOString()}`] : []),
    `alert ${a.code}${a.scope ? ` (${a.scope})` : ''}`,
  ];
  if (m.warRoomUrl) context.push(`<${m.warRoomUrl}|war room>`);
  return {
    text,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: lines.join('\n') } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: context.join(' · ') }] },
    ],
    onsale: {
      kind: m.kind,
      dedupeKey: `alert:${a.id}:${m.kind}`,
      deliveryId: m.deliveryId,
      alertId: a.id,
      eventId: m.event.id,
      eventName: m.event.name,
      code: a.code,
      scope: a.scope,
      reach: platform ? 'platform' : 'event',
      severity: a.severity,
      title: a.title,
      action: a.action,
      detail: a.detail,
      firedAt: a.firedAt.toISOString(),
      resolvedAt: a.resolvedAt?.toISOString() ?? null,
      warRoomUrl: m.warRoomUrl ?? null,
      sentAt: m.sentAt.toISOString(),
    },
  };
}

function minutesBetween(from: Date, to: Date): string {
  const s = Math.max(0, Math.round((to.getTime() - from.getTime()) / 1000));
  return s < 90 ? `${s} s` : `${Math.round(s / 60)} min`;
}

/** Slack's mrkdwn control characters, escaped as its documentation asks. */
const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
