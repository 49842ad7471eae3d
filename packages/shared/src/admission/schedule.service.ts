import type { Task } from 'graphile-worker';
import type pino from 'pino';
import type { Db, Trx } from '../db/connect.js';
import { conflict, DomainError, invalid, notFound } from '../errors.js';
import { insertAudit } from '../audit/index.js';
import { isUuid } from '../ids.js';
import { queueScheduleCancelSchema, queueScheduleInputSchema } from './controls.schema.js';
import { pauseQueue, resumeQueue, setRateOverride } from './operator.js';
import * as repo from './schedule.repository.js';
import type { ScheduledAction, ScheduleStatus } from './schedule.table.js';

export { QUEUE_SCHEDULE_TASK } from './schedule.repository.js';

// Queue controls set for a time: an operator schedules a pause, a resume or a rate change; a
// graphile-worker job runs it at its time through the same functions as the war room's buttons (pauseQueue,
// resumeQueue, setRateOverride), audited with who scheduled it and why. Cancelled before it runs, it never runs.

/** A scheduled control as the console shows it. */
export interface QueueSchedule {
  id: number;
  eventId: string;
  tier: string | null;
  action: ScheduledAction;
  perMinute: number | null;
  reason: string;
  runAt: Date;
  status: ScheduleStatus;
  createdBy: string;
  createdAt: Date;
  ranAt: Date | null;
  result: string | null;
  cancelledBy: string | null;
  cancelledAt: Date | null;
}

const toSchedule = (r: repo.QueueScheduleRow): QueueSchedule => ({
  id: r.id,
  eventId: r.event_id,
  tier: r.tier,
  action: r.action,
  perMinute: r.per_minute,
  reason: r.reason,
  runAt: r.run_at,
  status: r.status,
  createdBy: r.created_by,
  createdAt: r.created_at,
  ranAt: r.ran_at,
  result: r.result,
  cancelledBy: r.cancelled_by,
  cancelledAt: r.cancelled_at,
});

/** A schedule must be at least this far ahead (a control needed now is the war room's button). */
export const MIN_SCHEDULE_LEAD_SECONDS = 10;

function parse<T>(
  schema: {
    safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
  },
  input: unknown,
): T {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  throw invalid('INVALID_QUEUE_SCHEDULE', issue.message, String(issue.path[0] ?? 'runAt'));
}

/**
 * Schedules a pause, a resume or a rate change of an event's queues (a tier's with `tier`) for `runAt`, which
 * must be at least MIN_SCHEDULE_LEAD_SECONDS ahead by the database clock and before the event starts
 * (SCHEDULE_IN_PAST / SCHEDULE_AFTER_EVENT, field `runAt`). Audited `queue.control_scheduled`. Runs in the caller's
 * transaction; the job is enqueued in it.
 */
export async function scheduleQueueControl(trx: Trx, input: unknown, actor: string): Promise<QueueSchedule> {
  const i = parse(queueScheduleInputSchema, input);
  if (!isUuid(i.eventId)) throw notFound('EVENT_NOT_FOUND', `no event ${i.eventId}`, 'eventId');
  const window = await repo.scheduleWindow(trx, i.eventId);
  if (!window) throw notFound('EVENT_NOT_FOUND', `no event ${i.eventId}`, 'eventId');
  if (i.tier !== undefined && !(await repo.tierExists(trx, i.eventId, i.tier)))
    throw notFound('TIER_NOT_FOUND', `event ${i.eventId} has no tier ${i.tier}`, 'tier');
  const runAt = new Date(i.runAt);
  if (runAt.getTime() < window.now.getTime() + MIN_SCHEDULE_LEAD_SECONDS * 1000)
    throw invalid(
      'SCHEDULE_IN_PAST',
      `choose a time at least ${MIN_SCHEDULE_LEAD_SECONDS} seconds from now; for a control needed now, use the war room's buttons`,
      'runAt',
    );
  if (runAt.getTime() >= window.starts_at.getTime())
    throw invalid(
      'SCHEDULE_AFTER_EVENT',
      `choose a time before the event starts (${window.starts_at.toISOString()}): its queue closes then`,
      'runAt',
    );
  const row = await repo.insertSchedule(trx, {
    eventId: i.eventId,
    tier: i.tier ?? null,
    action: i.action,
    perMinute: i.action === 'RATE' ? (i.perMinute ?? null) : null,
    reason: i.reason,
    runAt,
    createdBy: actor,
  });
  await insertAudit(trx, {
    actor,
    action: 'queue.control_scheduled',
    eventId: i.eventId,
    details: {
      scheduleId: row.id,
      action: row.action,
      perMinute: row.per_minute,
      runAt: row.run_at.toISOString(),
      reason: row.reason,
      ...(row.tier ? { tier: row.tier } : {}),
    },
  });
  return toSchedule(row);
}

/** Cancels a schedule that has not run (SCHEDULE_NOT_PENDING otherwise), with a reason; audited `queue.schedule_cancelled`. */
export async function cancelQueueSchedule(trx: Trx, input: unknown, actor: string): Promise<QueueSchedule> {
  const i = parse(queueScheduleCancelSchema, input);
  const row = await repo.lockSchedule(trx, i.id);
  if (!row || row.event_id !== i.eventId) throw notFound('SCHEDULE_NOT_FOUND', `no scheduled control ${i.id} for this event`, 'id');
  if (row.status !== 'PENDING')
    throw conflict('SCHEDULE_NOT_PENDING', `this control is ${row.status.toLowerCase()} already and cannot be cancelled`, {
      field: 'id',
      status: row.status,
    });
  const cancelled = await repo.cancelSchedule(trx, row.id, actor);
  await insertAudit(trx, {
    actor,
    action: 'queue.schedule_cancelled',
    eventId: row.event_id,
    details: { scheduleId: row.id, action: row.action, runAt: row.run_at.toISOString(), reason: i.reason },
  });
  return toSchedule(cancelled);
}

export async function listQueueSchedules(db: Db | Trx, eventId: string): Promise<QueueSchedule[]> {
  if (!isUuid(eventId)) throw notFound('EVENT_NOT_FOUND', `no event ${eventId}`, 'eventId');
  return (await repo.findSchedules(db, eventId)).map(toSchedule);
}

/**
 * Runs a scheduled control now, once: under the schedule's lock, only while PENDING (a duplicate job, a cancel
 * that won the race: nothing). The control is applied as its scheduler, with the reason saying it was scheduled;
 * a refusal the domain gives (the tier gone, say) marks it FAILED with the message instead of retrying forever.
 */
export async function runScheduledControl(db: Db, scheduleId: number): Promise<QueueSchedule | null> {
  return db.transaction().execute(async (trx) => {
    const s = await repo.lockSchedule(trx, scheduleId);
    if (!s || s.status !== 'PENDING') return null;
    const reason = `${s.reason} (scheduled by ${s.created_by} for ${s.run_at.toISOString()})`;
    const opts = { actor: s.created_by, reason, ...(s.tier ? { tier: s.tier } : {}) };
    try {
      if (s.action === 'PAUSE') await pauseQueue(trx, s.event_id, opts);
      else if (s.action === 'RESUME') await resumeQueue(trx, s.event_id, opts);
      else await setRateOverride(trx, s.event_id, s.per_minute, opts);
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      await repo.finishSchedule(trx, s.id, 'FAILED', e.message);
      return toSchedule({ ...s, status: 'FAILED', result: e.message });
    }
    const result =
      s.action === 'PAUSE'
        ? 'admissions paused'
        : s.action === 'RESUME'
          ? 'admissions resumed'
          : s.per_minute === null
            ? 'rate back to the plan'
            : `rate set to ${s.per_minute}/min`;
    await repo.finishSchedule(trx, s.id, 'DONE', result);
    return toSchedule({ ...s, status: 'DONE', result });
  });
}

/** The `queue_schedule_run` task: runs the schedule named in its payload (see runScheduledControl). */
export function queueScheduleTask(deps: { db: Db; logger?: pino.Logger }): Task {
  return async (payload) => {
    const id = Number((payload as { scheduleId?: unknown } | null)?.scheduleId);
    if (!Number.isSafeInteger(id) || id <= 0) throw new Error(`queue_schedule_run: bad payload ${JSON.stringify(payload)}`);
    const done = await runScheduledControl(deps.db, id);
    if (done)
      deps.logger?.info(
        { schedule: { id: done.id, eventId: done.eventId, action: done.action, status: done.status, result: done.result } },
        'scheduled queue control ran',
      );
  };
}
