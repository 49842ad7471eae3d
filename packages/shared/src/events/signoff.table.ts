import type { ColumnType } from 'kysely';
import type { FairnessMode } from './events.table.js';

/** A promoter's sign-off of an event's fairness mode (see the 2026_11_29_2010 migration). */
export interface FairnessSignoffsTable {
  id: ColumnType<number, never, never>;
  event_id: string;
  fairness_mode: FairnessMode;
  /** The plain-words description of the mode as it read when signed: what was published. */
  description: string;
  signed_off_by: string;
  signed_off_at: ColumnType<Date, Date | string | undefined, never>;
  /** The event's version when it was signed. */
  event_version: number;
  superseded_at: ColumnType<Date | null, never, Date | string>;
  superseded_by: ColumnType<string | null, never, string>;
  superseded_reason: ColumnType<string | null, never, string>;
}
