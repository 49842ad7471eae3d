import type { ColumnType, Generated } from 'kysely';

// The war room's own tables (migrations 2026_12_02_0610 and 0630): alert history, alert webhooks, and the sale's
// series by minute.

export type AlertSeverityColumn = 'critical' | 'warning';
export type AlertDeliveryKind = 'FIRING' | 'ESCALATED' | 'RESOLVED';
export type AlertDeliveryStatus = 'PENDING' | 'RETRYING' | 'DELIVERED' | 'DEAD';

/** One firing of (event, code, scope), from when it fired until it resolved. */
export interface EventAlertsTable {
  id: Generated<number>;
  event_id: string;
  code: string;
  scope: Generated<string>;
  severity: AlertSeverityColumn;
  peak_severity: AlertSeverityColumn;
  metric: string;
  title: string;
  action: string;
  detail: string;
  source: string;
  value: number | null;
  threshold: number | null;
  fired_at: ColumnType<Date, Date | string | undefined, Date | string>;
  last_seen_at: ColumnType<Date, Date | string | undefined, Date | string>;
  resolved_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

/** An operator's receiver of alert messages (a Slack-compatible incoming webhook). */
export interface AlertEndpointsTable {
  id: Generated<string>;
  url: string;
  /** null: every event's alerts. */
  event_id: string | null;
  min_severity: Generated<AlertSeverityColumn>;
  secret: string;
  active: Generated<boolean>;
  created_by: string;
  created_at: ColumnType<Date, never, never>;
}

/** One message of one alert to one endpoint. */
export interface AlertDeliveriesTable {
  id: Generated<number>;
  endpoint_id: string;
  alert_id: number;
  kind: AlertDeliveryKind;
  status: Generated<AlertDeliveryStatus>;
  attempts: Generated<number>;
  last_status_code: number | null;
  last_error: string | null;
  created_at: ColumnType<Date, never, never>;
  updated_at: ColumnType<Date, never, Date | string>;
  delivered_at: Date | null;
}

/** The war room's figures of one minute of an event's sale (the last reading of the minute). */
export interface SaleMinutesTable {
  event_id: string;
  minute: Date;
  state: string;
  capacity: number;
  available: number;
  held: number;
  sold: number;
  joined: number;
  waiting: number;
  admitted_through: ColumnType<number, number, number>;
  admitted: number;
  controller_rate_per_min: number;
  plan_admits_per_min: number | null;
  rate_override_per_min: number | null;
  checkout_attempts: number;
  checkout_failed: number;
  checkout_declined: number;
  payment_attempts_per_second: number;
  hold_latency_p99_ms: number | null;
  alerts_critical: number;
  alerts_warning: number;
  recorded_at: ColumnType<Date, never, Date | string>;
}
