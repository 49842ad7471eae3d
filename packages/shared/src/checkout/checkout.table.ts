import type { ColumnType, Generated, Selectable } from 'kysely';

export type AttemptStatus = 'PENDING' | 'SUCCEEDED' | 'FAILED';

export interface CheckoutAttemptsTable {
  account_id: string;
  idempotency_key: string;
  hold_id: string;
  request_hash: string;
  instrument_fingerprint: string;
  seat_count: number;
  status: Generated<AttemptStatus>;
  order_id: string | null;
  error_code: string | null;
  created_at: ColumnType<Date, never, never>;
  updated_at: ColumnType<Date, never, Date | string>;
}

export interface OrdersTable {
  id: Generated<string>;
  hold_id: string;
  event_id: string;
  account_id: string;
  idempotency_key: string;
  seat_count: number;
  amount_cents: number;
  instrument_fingerprint: string;
  payment_reference: string;
  status: Generated<'CONFIRMED' | 'CANCELLED'>;
  created_at: ColumnType<Date, never, never>;
}

export type CheckoutAttemptRow = Selectable<CheckoutAttemptsTable>;
export type OrderRow = Selectable<OrdersTable>;
