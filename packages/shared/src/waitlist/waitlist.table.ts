import type { ColumnType, Generated } from 'kysely';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
/** A `date` column: read as 'YYYY-MM-DD' (the pg date parser is left at text for dates, see db/connect). */
type DateColumn = ColumnType<string | null, string | null | undefined, string | null>;

export type WaitlistMode = 'OFFER' | 'BROADCAST';
/** How an availability event reaches fans: OFFER reserves seats per fan; BROADCAST tells every match; ON_SALE
 * (seats back while the event is still on open sale) tells every match to go to the store. */
export type AvailabilityMode = WaitlistMode | 'ON_SALE';
export type AvailabilityCause =
  'HOLD_RELEASED' | 'HOLD_EXPIRED' | 'ORDER_CANCELLED' | 'INVENTORY_ADDED' | 'ALLOCATION_ROLLED' | 'OFFER_RETURNED' | 'RESALE';
export type OfferStatus = 'OPEN' | 'CLAIMED' | 'DECLINED' | 'EXPIRED' | 'GONE';

export interface WaitlistEntriesTable {
  listing_id: string;
  created_at: CreatedAt;
  id: ColumnType<number, never, never>;
  expires_at: Timestamp;
  account_id: string;
  date_from: DateColumn;
  date_to: DateColumn;
  max_price_cents: number | null;
  quantity: number;
  sections: string[] | null;
  price_levels: string[] | null;
}

/** One section's share of an availability event. */
export interface AvailableSection {
  section: string;
  priceLevel: string;
  priceCents: number;
  /** Seat ids that came back in this section. */
  seatIds: number[];
  /** The longest run of adjacent seats (same row, consecutive numbers) among them. */
  longestRun: number;
}

export interface AvailabilityEventsTable {
  id: ColumnType<number, never, never>;
  listing_id: string;
  event_id: string;
  cause: AvailabilityCause;
  performance_date: ColumnType<string, string, never>;
  sections: ColumnType<AvailableSection[], string, string>;
  seat_count: number;
  pool_hold_id: string | null;
  mode: AvailabilityMode;
  status: Generated<'PENDING' | 'FANNING_OUT' | 'DONE'>;
  matched: Generated<number>;
  notified: Generated<number>;
  cursor_created_at: NullableTimestamp;
  cursor_id: number | null;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
  completed_at: NullableTimestamp;
  /** False while a deferred fan-out (a release's) waits for the relay to enqueue its job. */
  fanout_enqueued: Generated<boolean>;
}

export interface WaitlistOffersTable {
  id: Generated<string>;
  availability_id: number;
  listing_id: string;
  event_id: string;
  entry_id: number;
  account_id: string;
  quantity: number;
  reserve_hold_id: string | null;
  status: Generated<OfferStatus>;
  claimed_hold_id: string | null;
  expires_at: Timestamp;
  created_at: CreatedAt;
  decided_at: NullableTimestamp;
}
