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
  /** The store-API process that started the attempt (store_processes.id); null for attempts made before owners. */
  owner: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: ColumnType<Date, never, never>;
  updated_at: ColumnType<Date, never, Date | string>;
}

/**
 * A store-API process's lease: renewed every second while it runs, stopped_at set on a clean stop; the backend of
 * the connection it is renewed over (gone when the process dies).
 */
export interface StoreProcessesTable {
  id: string;
  started_at: ColumnType<Date, never, never>;
  seen_at: ColumnType<Date, Date | string | undefined, Date | string>;
  stopped_at: Date | null;
  backend_pid: number | null;
  backend_start: Date | null;
}

/** The simulated payment gateway's own record of what it charged (a real provider keeps one on its side). */
export interface SimulatedGatewayChargesTable {
  idempotency_key: string;
  request_fingerprint: string;
  status: 'succeeded' | 'declined';
  reference: string | null;
  reason: string | null;
  amount_cents: number;
  currency: string;
  created_at: ColumnType<Date, never, never>;
  refunded_at: Date | null;
}

/**
 * A condition the simulated payment gateway is in for one rehearsal's event until `until` (the rehearsal's
 * `slow-payments` fault): a share of its charges refused for load, the rest answered late.
 */
export interface SimulatedGatewayConditionsTable {
  event_id: string;
  busy_share: number;
  retry_after_seconds: number;
  delay_ms: number;
  started_at: ColumnType<Date, Date | undefined, Date>;
  until: Date;
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
  /** When the order's money went back through the payment provider (only ever a cancelled order's). */
  refunded_at: ColumnType<Date | null, never, Date | string>;
  created_at: ColumnType<Date, never, never>;
}

export type CheckoutAttemptRow = Selectable<CheckoutAttemptsTable>;
export type OrderRow = Selectable<OrdersTable>;
