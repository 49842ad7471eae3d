import type { ColumnType, Generated } from 'kysely';

export type ScheduledAction = 'PAUSE' | 'RESUME' | 'RATE';
export type ScheduleStatus = 'PENDING' | 'DONE' | 'FAILED' | 'CANCELLED';

/** A queue control set for a time (migration 2026_12_02_0620). */
export interface QueueSchedulesTable {
  id: Generated<number>;
  event_id: string;
  /** A presale tier's code: that tier's queue; null: the event's (pause/resume every queue, rate the general sale's). */
  tier: string | null;
  action: ScheduledAction;
  /** RATE: admits per minute, or null to follow the plan again. */
  per_minute: number | null;
  reason: string;
  run_at: ColumnType<Date, Date | string, Date | string>;
  status: Generated<ScheduleStatus>;
  created_by: string;
  created_at: ColumnType<Date, never, never>;
  ran_at: Date | null;
  result: string | null;
  cancelled_by: string | null;
  cancelled_at: Date | null;
}
