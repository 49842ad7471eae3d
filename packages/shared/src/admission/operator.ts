import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import { invalid, notFound } from '../errors.js';
import { insertAudit } from '../events/events.repository.js';

// Operator controls of the waiting room: what the CLI and the console call. Each writes queue_state and its
// audit row in one transaction (the caller's, when given one).

/** Largest operator rate, admits per minute. */
export const MAX_RATE_OVERRIDE_PER_MIN = 100_000;
const MAX_TEXT = 500;

/** The queue's operator-facing state after a control was applied. */
export interface QueueControlState {
  eventId: string;
  paused: boolean;
  pausedReason: string | null;
  pausedBy: string | null;
  pausedAt: Date | null;
  rateOverridePerMin: number | null;
  admittedThrough: number;
  updatedAt: Date;
}

interface ControlRow {
  event_id: string;
  paused: boolean;
  paused_reason: string | null;
  paused_by: string | null;
  paused_at: Date | null;
  rate_override_per_min: number | null;
  admitted_through: number;
  updated_at: Date;
}

const toState = (r: ControlRow): QueueControlState => ({
  eventId: r.event_id,
  paused: r.paused,
  pausedReason: r.paused_reason,
  pausedBy: r.paused_by,
  pausedAt: r.paused_at,
  rateOverridePerMin: r.rate_override_per_min,
  admittedThrough: Number(r.admitted_through),
  updatedAt: r.updated_at,
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function text(value: unknown, field: string, code: string, what: string): string {
  const v = typeof value === 'string' ? value.trim() : '';
  if (v === '') throw invalid(code, `${what} is required`, field);
  if (v.length > MAX_TEXT) throw invalid(code, `${what} must be at most ${MAX_TEXT} characters`, field);
  return v;
}

/** Runs fn in the caller's transaction, or in a new one. */
function inTransaction<T>(db: Db | Trx, fn: (trx: Trx) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db as Trx) : (db as Db).transaction().execute(fn);
}

/** Locks the event's queue row; EVENT_NOT_FOUND (field `eventId`) when there is no such event. */
async function lockControl(trx: Trx, eventId: string): Promise<ControlRow> {
  if (typeof eventId !== 'string' || !UUID.test(eventId)) throw notFound('EVENT_NOT_FOUND', `no event ${eventId}`, 'eventId');
  const { rows } = await sql<ControlRow>`
    SELECT event_id, paused, paused_reason, paused_by, paused_at, rate_override_per_min, admitted_through, updated_at
    FROM queue_state WHERE event_id = ${eventId} FOR UPDATE`.execute(trx);
  if (!rows[0]) throw notFound('EVENT_NOT_FOUND', `no event ${eventId}`, 'eventId');
  return rows[0];
}

/**
 * Pauses admissions (ARCHITECTURE rule 3): nobody new is admitted, every status not yet admitted reads PAUSED,
 * positions are kept. The reason is required and is audited (`queue.paused`) with the actor. Pausing a paused
 * queue records the new reason and who gave it.
 */
export async function pauseQueue(db: Db | Trx, eventId: string, opts: { actor: string; reason: string }): Promise<QueueControlState> {
  const actor = text(opts?.actor, 'actor', 'ACTOR_REQUIRED', 'the actor');
  const reason = text(opts?.reason, 'reason', 'REASON_REQUIRED', 'a reason for the pause');
  return inTransaction(db, async (trx) => {
    const before = await lockControl(trx, eventId);
    const { rows } = await sql<ControlRow>`
      UPDATE queue_state SET paused = true, paused_reason = ${reason}, paused_by = ${actor}, paused_at = now(), updated_at = now()
      WHERE event_id = ${eventId}
      RETURNING event_id, paused, paused_reason, paused_by, paused_at, rate_override_per_min, admitted_through, updated_at`.execute(trx);
    await insertAudit(trx, {
      actor,
      action: 'queue.paused',
      eventId,
      details: { reason, wasPaused: before.paused, admittedThrough: Number(before.admitted_through) },
    });
    return toState(rows[0]!);
  });
}

/** Resumes admissions; audited (`queue.resumed`) with how long the queue was paused. */
export async function resumeQueue(db: Db | Trx, eventId: string, opts: { actor: string; reason?: string }): Promise<QueueControlState> {
  const actor = text(opts?.actor, 'actor', 'ACTOR_REQUIRED', 'the actor');
  const reason = opts?.reason === undefined || opts.reason.trim() === '' ? null : text(opts.reason, 'reason', 'INVALID_REASON', 'the reason');
  return inTransaction(db, async (trx) => {
    const before = await lockControl(trx, eventId);
    const { rows } = await sql<ControlRow & { now: Date }>`
      UPDATE queue_state SET paused = false, paused_reason = NULL, paused_by = NULL, paused_at = NULL, updated_at = now()
      WHERE event_id = ${eventId}
      RETURNING event_id, paused, paused_reason, paused_by, paused_at, rate_override_per_min, admitted_through, updated_at, now() AS now`.execute(trx);
    const row = rows[0]!;
    await insertAudit(trx, {
      actor,
      action: 'queue.resumed',
      eventId,
      details: {
        wasPaused: before.paused,
        ...(reason ? { reason } : {}),
        ...(before.paused
          ? { pausedAt: before.paused_at?.toISOString() ?? null, pausedBy: before.paused_by, pauseReason: before.paused_reason, pausedSeconds: before.paused_at ? Math.round((row.now.getTime() - before.paused_at.getTime()) / 1000) : null }
          : {}),
      },
    });
    return toState(row);
  });
}

/**
 * Sets the operator's admission rate (admits per minute, an integer 0..100,000; 0 stops admissions while the
 * heartbeat keeps statuses live), or clears it with null so the controller follows its plan again. The live
 * rule still slows an override when checkouts fail and never admits past the plausible seats. Audited as
 * `queue.rate_override` with the previous value.
 */
export async function setRateOverride(
  db: Db | Trx,
  eventId: string,
  perMinute: number | null,
  opts: { actor: string; reason?: string },
): Promise<QueueControlState> {
  const actor = text(opts?.actor, 'actor', 'ACTOR_REQUIRED', 'the actor');
  if (perMinute !== null && !(Number.isInteger(perMinute) && perMinute >= 0 && perMinute <= MAX_RATE_OVERRIDE_PER_MIN))
    throw invalid('INVALID_RATE_OVERRIDE', `the rate must be a whole number of admits per minute from 0 to ${MAX_RATE_OVERRIDE_PER_MIN}, or off`, 'perMinute', { value: perMinute });
  const reason = opts?.reason === undefined || opts.reason.trim() === '' ? null : text(opts.reason, 'reason', 'INVALID_REASON', 'the reason');
  return inTransaction(db, async (trx) => {
    const before = await lockControl(trx, eventId);
    const { rows } = await sql<ControlRow>`
      UPDATE queue_state SET rate_override_per_min = ${perMinute}, updated_at = now()
      WHERE event_id = ${eventId}
      RETURNING event_id, paused, paused_reason, paused_by, paused_at, rate_override_per_min, admitted_through, updated_at`.execute(trx);
    await insertAudit(trx, {
      actor,
      action: 'queue.rate_override',
      eventId,
      details: { perMinute, previousPerMinute: before.rate_override_per_min, ...(reason ? { reason } : {}) },
    });
    return toState(rows[0]!);
  });
}
