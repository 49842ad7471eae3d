import type { ColumnType, Generated, Selectable } from 'kysely';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type UpdatedAt = ColumnType<Date, Date | string | undefined, Date | string>;

export type FairnessMode = 'RANDOMIZED_PREOPEN_THEN_FIFO' | 'FIFO' | 'REGISTRATION_LOTTERY';

export interface AccountsTable {
  id: string;
  /** The fan's name as their identity provider's token states it (the OIDC `name` claim); null until one is seen. */
  display_name: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
}

export interface ListingsTable {
  id: Generated<string>;
  name: string;
  /** OFFER: returned seats are reserved for the first matching fans in turn; BROADCAST: every match is told. */
  waitlist_mode: Generated<'OFFER' | 'BROADCAST'>;
  /** How long a waitlist entry lives (default four weeks). */
  waitlist_ttl_seconds: Generated<number>;
  /** How long a fan has to claim an offer (default 15 minutes). */
  offer_ttl_seconds: Generated<number>;
  /** Above this many matches a fan-out pages through the listing in batch jobs. */
  fanout_inline_threshold: Generated<number>;
  created_at: CreatedAt;
}

export interface EventsTable {
  id: Generated<string>;
  listing_id: string;
  name: string;
  venue_name: string;
  starts_at: ColumnType<Date, Date | string, Date | string>;
  onsale_at: ColumnType<Date, Date | string, Date | string>;
  seat_picking_opens_at: ColumnType<Date, Date | string, Date | string>;
  fairness_mode: FairnessMode;
  per_account_seat_limit: number;
  per_instrument_seat_limit: number;
  /** Seats per device for the event; null: the per-account limit. */
  per_device_seat_limit: ColumnType<number | null, number | null | undefined, number | null>;
  hold_ttl_seconds: number;
  hold_extension_seconds: number;
  target_sale_minutes: number;
  tickets_per_order: number;
  checkout_minutes: number;
  payment_tps: number;
  overbook_factor: number;
  capacity: number;
  /** Fan-facing words per queue state (partial; defaults elsewhere). */
  queue_copy: ColumnType<Record<string, string> | null, string | null | undefined, string | null>;
  /** The fans' page look (the event file's `look`); null: the default look. */
  look: ColumnType<EventLookColumn | null, string | null | undefined, string | null>;
  /** The promoter's organisation that owns the event; null: a house event, which promoters do not see. */
  organisation_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The venue's IANA time zone: the console shows the event's times in it. */
  time_zone: ColumnType<string, string | undefined, string>;
  /** ISO 4217 code of the prices' currency. */
  currency: ColumnType<string, string | undefined, string>;
  /** A rehearsal's event: the factor its clock was compressed by; null for a real event. */
  rehearsal_time_scale: ColumnType<number | null, number | null | undefined, number | null>;
  /** Holds may not leave one seat alone between taken seats (unless it cannot be helped); false: the rule is off. */
  no_single_seats: ColumnType<boolean, boolean | undefined, boolean>;
  /** Tickets are delivered at this time; null: see ticket_delivery_hours_before, else at once. */
  ticket_delivery_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** Tickets are delivered this many hours before the show; null: see ticket_delivery_at. */
  ticket_delivery_hours_before: ColumnType<number | null, number | null | undefined, number | null>;
  /** How many times one seat's ticket may be transferred. */
  ticket_transfer_limit: ColumnType<number, number | undefined, number>;
  /** Fans may list tickets on the face-value exchange. */
  resale_enabled: ColumnType<boolean, boolean | undefined, boolean>;
  /** A resale's price is at most face value plus this percentage of it. */
  resale_fee_cap_percent: ColumnType<number, number | undefined, number>;
  version: Generated<number>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

/** What the `look` column holds (the event file's `look`, checked by lookSchema on the way in). */
export interface EventLookColumn {
  logoUrl?: string;
  logoAlt?: string;
  colors?: { brand?: string; brandText?: string; background?: string; text?: string };
  copy?: Partial<Record<string, Partial<Record<string, string>>>>;
}

export interface PriceLevelsTable {
  event_id: string;
  code: string;
  name: string;
  price_cents: number;
}

export interface SectionsTable {
  event_id: string;
  code: string;
  name: string;
  /** RESERVED: seat rows; GA: general admission, a counter in ga_shards. */
  kind: 'RESERVED' | 'GA';
  price_level: string;
  quality_rank: number;
  capacity: number;
}

export interface AuditLogTable {
  id: Generated<number>;
  at: CreatedAt;
  actor: string;
  action: string;
  event_id: string | null;
  details: ColumnType<unknown, string | undefined, never>;
}

export type EventRow = Selectable<EventsTable>;
export type SectionRow = Selectable<SectionsTable>;
export type PriceLevelRow = Selectable<PriceLevelsTable>;
