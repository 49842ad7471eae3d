import type { ColumnType, Generated, Selectable } from 'kysely';

/** What a ticket row stores; PENDING_DELIVERY is an ACTIVE ticket before its event's delivery time (never stored). */
export type StoredTicketStatus = 'ACTIVE' | 'LISTED' | 'ADMITTED' | 'TRANSFERRED' | 'RESOLD' | 'REVOKED';

export interface TicketsTable {
  id: Generated<string>;
  event_id: string;
  order_id: string;
  /** `seat:<seat id>` or `ga:<order id>:<unit>`: one live ticket per slot (a partial unique index). */
  slot: string;
  seat_id: ColumnType<number | null, number | null | undefined, never>;
  section_code: string;
  row_label: string | null;
  seat_number: number | null;
  face_value_cents: number;
  holder_account_id: string;
  status: ColumnType<StoredTicketStatus, StoredTicketStatus | undefined, StoredTicketStatus>;
  /** Bumped on every move to a new device: codes of an older generation read REVOKED. */
  generation: Generated<number>;
  /** The device the ticket is bound to (hashDevice of X-Device-Id); null until the first code is fetched. */
  device_hash: string | null;
  device_moves: Generated<number>;
  transfer_count: Generated<number>;
  parent_ticket_id: string | null;
  created_at: ColumnType<Date, never, never>;
  updated_at: ColumnType<Date, never, Date | string>;
  admitted_at: Date | null;
  admitted_by: string | null;
  ended_at: Date | null;
  end_reason: string | null;
}

export interface TicketKeysTable {
  event_id: string;
  /** Raw 32-byte Ed25519 public key, base64url. */
  public_key: string;
  /** PKCS#8 DER, base64url. */
  private_key: string;
  created_at: ColumnType<Date, never, never>;
}

export interface TicketResalesTable {
  id: Generated<string>;
  ticket_id: string;
  event_id: string;
  seat_id: number | null;
  seller_account_id: string;
  price_cents: number;
  face_value_cents: number;
  cap_cents: number;
  status: ColumnType<'LISTED' | 'SOLD' | 'WITHDRAWN', 'LISTED' | undefined, 'SOLD' | 'WITHDRAWN'>;
  buyer_order_id: string | null;
  buyer_ticket_id: string | null;
  created_at: ColumnType<Date, never, never>;
  ended_at: Date | null;
}

export interface TicketPayoutsTable {
  resale_id: string;
  account_id: string;
  amount_cents: number;
  currency: string;
  reference: string;
  created_at: ColumnType<Date, never, never>;
}

export interface TicketScannersTable {
  id: Generated<string>;
  event_id: string;
  name: string;
  token_hash: string;
  created_by: string;
  created_at: ColumnType<Date, never, never>;
  revoked_at: Date | null;
}

export type ScanResult = 'ADMIT' | 'ALREADY_ADMITTED' | 'EXPIRED_CODE' | 'INVALID' | 'REVOKED';

export interface TicketScansTable {
  id: Generated<number>;
  event_id: string;
  scanner_id: string;
  gate: string;
  ticket_id: string | null;
  result: ScanResult;
  scanned_at: Date;
  recorded_at: ColumnType<Date, never, never>;
  offline: Generated<boolean>;
  client_scan_id: string | null;
}

export type TicketRow = Selectable<TicketsTable>;
