import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import type { ScheduledAction, ScheduleStatus } from './schedule.table.js';

// SQL of scheduled queue controls, including the graphile-worker job that runs each at its time (enqueued in the
// transaction that records it, removed in the one that cancels it).

/** The graphile-worker task that runs a scheduled control. */
export const QUEUE_SCHEDULE_TASK = 'queue_schedule_run';
const jobKey = (id: number) => `queue_schedule:${id}`;

export interface QueueScheduleRow {
  id: number;
  event_id: string;
  tier: string | null;
  action: ScheduledAction;
  per_minute: number | null;
  reason: string;
  run_at: Date;
  status: ScheduleStatus;
  created_by: string;
  created_at: Date;
  ran_at: Date | null;
  result: string | null;
  cancelled_by: string | null;
  cancelled_at: Date | null;
}

const num = (r: QueueScheduleRow): QueueScheduleRow => ({ ...r, id: Number(r.id) });

/** Records the schedule and its job (due at its time, keyed by the schedule, so it exists once). */
export async function insertSchedule(
  trx: Trx,
  s: {
    eventId: string;
    tier: string | null;
    action: ScheduledAction;
    perMinute: number | null;
    reason: string;
    runAt: Date;
    createdBy: string;
  },
): Promise<QueueScheduleRow> {
  const { rows } = await sql<QueueScheduleRow>`
    INSERT INTO queue_schedules (event_id, tier, action, per_minute, reason, run_at, created_by)
    VALUES (${s.eventId}, ${s.tier}, ${s.action}, ${s.perMinute}, ${s.reason}, ${s.runAt}, ${s.createdBy})
    RETURNING *`.execute(trx);
  const row = num(rows[0]!);
  await sql`
    SELECT graphile_worker.add_job(${QUEUE_SCHEDULE_TASK}, json_build_object('scheduleId', ${row.id}::bigint),
                                   run_at := ${s.runAt}::timestamptz, job_key := ${jobKey(row.id)}, max_attempts := 5)`.execute(trx);
  return row;
}

/** The event's schedules, soonest first (pending ones), then the rest newest first. */
export async function findSchedules(db: Db | Trx, eventId: string): Promise<QueueScheduleRow[]> {
  const { rows } = await sql<QueueScheduleRow>`
    SELECT * FROM queue_schedules WHERE event_id = ${eventId}
    ORDER BY (status = 'PENDING') DESC, CASE WHEN status = 'PENDING' THEN run_at END ASC, run_at DESC, id DESC
    LIMIT 200`.execute(db);
  return rows.map(num);
}

/** The schedule, locked until the caller's transaction ends (a run and a cancel serialize on it). */
export async function lockSchedule(trx: Trx, id: number): Promise<QueueScheduleRow | undefined> {
  const { rows } = await sql<QueueScheduleRow>`SELECT * FROM queue_schedules WHERE id = ${id} FOR UPDATE`.execute(trx);
  return rows[0] ? num(rows[0]) : undefined;
}

export async function finishSchedule(trx: Trx, id: number, status: 'DONE' | 'FAILED', result: string): Promise<void> {
  await sql`UPDATE queue_schedules SET status = ${status}, ran_at = now(), result = ${result} WHERE id = ${id}`.execute(trx);
}

/** Cancels a pending schedule and removes its job. */
export async function cancelSchedule(trx: Trx, id: number, by: string): Promise<QueueScheduleRow> {
  const { rows } = await sql<QueueScheduleRow>`
    UPDATE queue_schedules SET status = 'CANCELLED', cancelled_by = ${by}, cancelled_at = now() WHERE id = ${id} RETURNING *`.execute(trx);
  await sql`SELECT graphile_worker.remove_job(${jobKey(id)})`.execute(trx);
  return num(rows[0]!);
}

/** The database clock and the event's start (a control is scheduled between the two). */
export async function scheduleWindow(db: Db | Trx, eventId: string): Promise<{ now: Date; starts_at: Date } | undefined> {
  const { rows } = await sql<{ now: Date; starts_at: Date }>`SELECT now() AS now, starts_at FROM events WHERE id = ${eventId}`.execute(db);
  return rows[0];
}

/** Whether the event has a presale tier (or its general sale) with this code. */
export async function tierExists(db: Db | Trx, eventId: string, code: string): Promise<boolean> {
  const r = await db.selectFrom('allocations').select('code').where('event_id', '=', eventId).where('code', '=', code).executeTakeFirst();
  return r !== undefined;
}
