import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
type DefaultNow = ColumnType<Date, Date | string | undefined, Date | string>;

/** A REGISTRATION_LOTTERY event's lottery: settings, seed and commitment, and the draw once run (2026_11_29_2110). */
export interface LotteriesTable {
  event_id: string;
  registration_opens_at: Timestamp;
  registration_closes_at: Timestamp;
  expected_conversion: number;
  cohorts: number;
  cohort_minutes: number;
  /** Secret until the draw; published with the draw. */
  seed_hex: string;
  /** SHA-256 of the seed's 32 bytes, public from the event's creation. */
  seed_commitment: string;
  committed_at: DefaultNow;
  /** Registrations so far: the next registration's 0-based sequence number. */
  registration_count: Generated<number>;
  drawn_at: NullableTimestamp;
  drawn_by: string | null;
  seats_offered: number | null;
  target_requested_seats: number | null;
  winners_count: number | null;
  invited_seats: number | null;
}

/** One account's registration for one event's lottery. */
export interface LotteryRegistrationsTable {
  event_id: string;
  account_id: string;
  /** Dense, 0-based, in registration order: what the draw permutes. */
  sequence: number;
  quantity: number;
  registered_at: DefaultNow;
  updated_at: DefaultNow;
}

/** A winner of the draw, with their purchase window (cohort). */
export interface LotteryWinnersTable {
  event_id: string;
  account_id: string;
  /** 1-based place in the draw order. */
  rank: number;
  sequence: number;
  quantity: number;
  /** 0-based cohort: window = [onsaleAt + cohort x cohortMinutes, + cohortMinutes). */
  cohort: number;
  window_opens_at: Timestamp;
  window_closes_at: Timestamp;
}
