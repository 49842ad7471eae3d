import type { ColumnType, Generated } from 'kysely';

export interface QueueStateTable {
  event_id: string;
  admitted_through: Generated<number>;
  rate_per_min: Generated<number>;
  rate_override_per_min: number | null;
  paused: Generated<boolean>;
  paused_reason: string | null;
  paused_by: string | null;
  paused_at: Date | null;
  seed_hex: string;
  seed_commitment: string;
  seed_revealed_at: Date | null;
  cohort_size: number | null;
  sealed_at: Date | null;
  inventory_state: Generated<'AVAILABLE' | 'LAST_CHANCE' | 'SOLD_OUT'>;
  sold_out_at: Date | null;
  heartbeat_at: Date | null;
  watermark_history: ColumnType<[number, number][], string | undefined, string>;
  controller_id: string | null;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
  /** [[epoch ms, positions advanced]] over the controller's arrival window: positions whose fans may still be on their way. */
  recent_advances: ColumnType<[number, number][], string | undefined, string>;
  /** The stable code of what set the last tick's admission (admission/rate.ts AdmissionConstraint). */
  controller_constraint: string | null;
  /** The last tick's reason in words, starting with its code. */
  controller_reason: string | null;
  /** Fans the last tick counted as inside (able to buy): holding, shopping, or on their way. */
  fans_inside: number | null;
  /** The last tick's cap: most more fans it would let in. */
  admit_cap: number | null;
  /** The congestion window: most fans inside the store follows (null until the first tick after the open sets it). */
  admit_window: number | null;
  /** When the window was last halved for a store that lagged (it is halved at most once per interval). */
  admit_window_cut_at: Date | null;
  /** When the watermark last moved. */
  last_advance_at: Date | null;
  /** The last tick's count of the event's seats by section, [code, available, held, sold] each (an event's own queue without presale tiers only). */
  section_counts: ColumnType<[string, number, number, number][] | null, string | null | undefined, string | null>;
  /** When that count was taken (the tick's time). */
  counted_at: Date | null;
}

export interface QueueEntriesTable {
  event_id: string;
  account_id: string;
  device_hash: string;
  join_index: number;
  cohort: 'PREOPEN' | 'FIFO';
  joined_at: ColumnType<Date, never, never>;
  claimed_at: Date | null;
  /** How often the place moved to another of its account's devices (queue tokens carry the count they were issued at). */
  device_moves: Generated<number>;
  moved_at: Date | null;
}

export interface AdmissionMinutesTable {
  event_id: string;
  minute: Date;
  watermark_advanced: Generated<number>;
  admission_tokens_issued: Generated<number>;
  rate_per_min: Generated<number>;
  holds_created: Generated<number>;
  holds_refused: Generated<number>;
  /** Checkouts the payment gateway failed (load refusal, error, timeout) in the minute, counted by the store-API instances. */
  checkout_gateway_failures: Generated<number>;
}

/** What one store-API process is doing for one event now, reported every half second (see WatermarkStore). */
export interface StoreLoadTable {
  event_id: string;
  /** The reporting process. */
  instance: string;
  reported_at: Date;
  holds_in_flight: number;
  checkouts_in_flight: number;
  /** Holds answered (made or refused) over the last seconds. */
  holds_answered: number;
  /** How long those holds took at the 90th percentile, as the process measured them. */
  hold_latency_p90_ms: number;
  /** How long the oldest hold or checkout still in flight has waited. */
  oldest_in_flight_ms: Generated<number>;
  /** How long the fans whose holds reached it had waited since they collected their admission, 90th percentile over 30 s. */
  admitted_wait_p90_ms: Generated<number>;
  holds_shed: Generated<number>;
}
