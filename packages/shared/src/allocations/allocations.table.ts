import type { ColumnType, Generated, Selectable } from 'kysely';

export type AllocationAccess = 'OPEN' | 'ACCESS_CODE' | 'CARD_BIN';

export interface AllocationsTable {
  id: Generated<string>;
  event_id: string;
  code: string;
  name: string;
  /** Sale order, 0 first; the general tier is last. */
  position: number;
  general: boolean;
  /** The queue the tier sells through: the event's own for the general tier, the tier's id for a presale. */
  queue_id: string;
  share: number | null;
  access: AllocationAccess;
  bin_ranges: ColumnType<{ from: string; to: string }[] | null, string | null | undefined, never>;
  fairness_mode: 'RANDOMIZED_PREOPEN_THEN_FIFO' | 'FIFO';
  opens_at: Date;
  closes_at: Date | null;
  rolls_forward_at: Date | null;
  rolls_into: string | null;
  rolled_at: Date | null;
  capacity: number;
}

export interface AccessCodeRedemptionsTable {
  event_id: string;
  code_id: string;
  allocation: string;
  account_id: string;
  redeemed_at: ColumnType<Date, never, never>;
}

export type AllocationRow = Selectable<AllocationsTable>;
