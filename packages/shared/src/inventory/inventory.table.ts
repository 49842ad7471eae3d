import type { ColumnType, Generated, Selectable } from 'kysely';

export type SeatStatus = 'AVAILABLE' | 'HELD' | 'SOLD';
/** WAITLIST: seats set aside for the waitlist, owned by the system account '~waitlist'. */
export type HoldStatus = 'HELD' | 'PAYING' | 'PURCHASED' | 'RELEASED' | 'EXPIRED' | 'WAITLIST';

export interface SeatsTable {
  event_id: string;
  id: ColumnType<number, never, never>;
  section_code: string;
  row_label: string;
  row_index: number;
  seat_number: number;
  quality: number;
  status: Generated<SeatStatus>;
  hold_id: string | null;
  expires_at: Date | null;
  version: Generated<number>;
  /** The presale tier that owns the seat; null when the event has no tiers. */
  allocation: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface HoldsTable {
  id: Generated<string>;
  event_id: string;
  account_id: string;
  section_code: string | null;
  quantity: number;
  status: Generated<HoldStatus>;
  expires_at: Date;
  extended: Generated<boolean>;
  /** deviceFingerprint of the fan's device (abuse/device.ts); null for holds no fan's device made. */
  device_hash: ColumnType<string | null, string | null | undefined, never>;
  /** The tier whose admission made the hold (its seats are that tier's); null when the event has no tiers. */
  allocation: ColumnType<string | null, string | null | undefined, never>;
  /** The Idempotency-Key the fan's hold request carried, and a hash of that request (a retry with the key gets this hold). */
  idempotency_key: ColumnType<string | null, string | null | undefined, string | null>;
  request_hash: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: ColumnType<Date, never, never>;
  updated_at: ColumnType<Date, never, Date | string>;
}

export type SeatRow = Selectable<SeatsTable>;
export type HoldRow = Selectable<HoldsTable>;

export interface InventoryReconciliationsTable {
  event_id: string;
  checked_at: Date;
  capacity: number;
  available: number;
  held: number;
  sold: number;
  drift: number;
  order_drift: number;
  expired_swept: number;
}

/** A hold lost to a PostgreSQL crash under HOLD_COMMIT=async, recorded when its fan next touched it (see hold-loss.ts). */
export interface HoldLossesTable {
  hold_id: string;
  event_id: string;
  account_id: string;
  detected_at: ColumnType<Date, Date | undefined, never>;
}
