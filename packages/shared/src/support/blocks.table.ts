import type { ColumnType } from 'kysely';

/** A fan account blocked from one event by an operator: join, holds and checkout of that event refuse it. */
export interface AccountBlocksTable {
  event_id: string;
  account_id: string;
  reason: string;
  blocked_by: string;
  blocked_at: ColumnType<Date, Date | string | undefined, never>;
}
