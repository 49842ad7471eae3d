import type { ColumnType, Generated, Selectable } from 'kysely';

export type RehearsalStatus = 'RUNNING' | 'PASS' | 'FAIL' | 'ERROR';

/** One rehearsal run: its settings, when it ran, its status and its report (see RehearsalReport). */
export interface RehearsalReportsTable {
  id: Generated<string>;
  /** The rehearsal's event (no foreign key: a `--spawn` rehearsal's event lived in its scratch database). */
  event_id: string | null;
  event_name: string;
  /** What was rehearsed: `spawn (2 store, 1 worker, edge)` or the target URL. */
  target: string;
  fans: number;
  time_scale: number;
  settings: ColumnType<Record<string, unknown>, string, string>;
  status: Generated<RehearsalStatus>;
  started_at: ColumnType<Date, Date | string | undefined, never>;
  finished_at: ColumnType<Date | null, never, Date | string>;
  report: ColumnType<Record<string, unknown> | null, never, string>;
}

export type RehearsalReportRow = Selectable<RehearsalReportsTable>;
