import type { ColumnType, Generated } from 'kysely';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

/** The waitlist's kinds, and the registration lottery's (told at the draw: won, with the purchase window, or not drawn). */
export type NotificationKind = 'OFFER' | 'BROADCAST' | 'ON_SALE' | 'OFFER_EXPIRED' | 'LOTTERY_WON' | 'LOTTERY_NOT_DRAWN';
export type DeliveryStatus = 'PENDING' | 'RETRYING' | 'DELIVERED' | 'DEAD';

/** The in-app inbox (fan-out on read: a fan's inbox is a query over this table). bigint ids read as numbers (see db/connect). */
export interface NotificationsTable {
  id: ColumnType<number, never, never>;
  account_id: string;
  listing_id: string;
  availability_id: number | null;
  entry_id: number | null;
  /** The lottery's notifications: the event drawn (null for the waitlist's, which have their availability event). */
  event_id: ColumnType<string | null, string | null | undefined, never>;
  kind: NotificationKind;
  offer_id: string | null;
  created_at: CreatedAt;
  read_at: NullableTimestamp;
}

export interface WebhookEndpointsTable {
  id: Generated<string>;
  url: string;
  secret: string;
  /** null: every listing. */
  listing_id: string | null;
  active: Generated<boolean>;
  max_attempts: Generated<number>;
  timeout_ms: Generated<number>;
  consecutive_failures: Generated<number>;
  /** While set and in the future the endpoint is backing off: deliveries to it wait without a request. */
  open_until: NullableTimestamp;
  created_at: CreatedAt;
}

export interface WebhookDeliveriesTable {
  id: ColumnType<number, never, never>;
  endpoint_id: string;
  availability_id: number | null;
  notification_ids: ColumnType<number[], number[], never>;
  status: Generated<DeliveryStatus>;
  attempts: Generated<number>;
  last_status_code: number | null;
  last_error: string | null;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
  delivered_at: NullableTimestamp;
}
