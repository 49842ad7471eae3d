import type { Db, Trx } from '../db/connect.js';
import { invalid, notFound, type ErrorCode } from '../errors.js';
import { insertAudit } from '../audit/index.js';
import {
  findQueueControl,
  findQueuesOfEvent,
  lockQueueControls,
  pauseQueues,
  resumeQueues,
  setQueueRateOverride,
  type ControlRow,
} from './operator.repository.js';

// Operator controls of the waiting room: what the CLI and the console call. Each writes queue_state and its
// audit row in one transaction (the caller's, when given one).

/** Largest operator rate, admits per minute. */
export const MAX_RATE_OVERRIDE_PER_MIN = 100_000;
const MAX_TEXT = 500;

/** The queue's operator-facing state after a control was applied. */
export interface QueueControlState {
  eventId: string;
  /** The presale tier whose queue this is; absent: the event's own queue (the general sale). */
  tier?: string;
  paused: boolean;
  pausedReason: string | null;
  pausedBy: string | null;
  pausedAt: Date | null;
  rateOverridePerMin: number | null;
  admittedThrough: number;
  updatedAt: Date;
}

const toState = (r: ControlRow, eventId: string = r.event_id, tier: string | null = null): QueueControlState => ({
  eventId,
  ...(tier ? { tier } : {}),
  paused: r.paused,
  pausedReason: r.paused_reason,
  pausedBy: r.paused_by,
  pausedAt: r.paused_at,
  rateOverridePerMin: r.rate_override_per_min,
  admittedThrough: Number(r.admitted_through),
  updatedAt: r.updated_at,
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function text(value: unknown, field: string, code: ErrorCode, what: string): string {
  const v = typeof value === 'string' ? value.trim() : '';
  if (v === '') throw invalid(code, `${what} is required`, field);
  if (v.length > MAX_TEXT) throw invalid(code, `${what} must be at most ${MAX_TEXT} characters`, field);
  return v;
}

/** Runs fn in the caller's transaction, or in a new one. */
function inTransaction<T>(db: Db | Trx, fn: (trx: Trx) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db as Trx) : db.transaction().execute(fn);
}

/** Which of an event's queues a control applies to: one presale tier's (by code), or every queue of the event. */
export interface QueueScope {
  /** A presale tier's code: that tier's queue only (the general sale's code: the event's own queue). */
  tier?: string;
}

/**
 * The queues a control applies to: the event's own queue first, then, with no tier named and `all`, each presale
 * tier's queue; with a tier, that tier's queue only. EVENT_NOT_FOUND (field `eventId`), TIER_NOT_FOUND (field `tier`).
 */
async function queuesOf(trx: Trx, eventId: string, scope: QueueScope, all: boolean): Promise<{ queueId: string; tier: string | null }[]> {
  if (typeof eventId !== 'string' || !UUID.test(eventId)) throw notFound('EVENT_NOT_FOUND', `no event ${eventId}`, 'eventId');
  const tiers = await findQueuesOfEvent(trx, eventId);
  if (scope.tier !== undefined) {
    const t = tiers.find((x) => x.code === scope.tier);
    if (!t) throw notFound('TIER_NOT_FOUND', `event ${eventId} has no tier ${scope.tier}`, 'tier');
    return [{ queueId: t.queue_id, tier: t.general ? null : t.code }];
  }
  return [
    { queueId: eventId, tier: null },
    ...(all ? tiers.filter((t) => !t.general).map((t) => ({ queueId: t.queue_id, tier: t.code })) : []),
  ];
}

/** Locks the queues' rows (in id order, so two controls never wait on each other); EVENT_NOT_FOUND when one is missing. */
async function lockControls(trx: Trx, eventId: string, queueIds: string[]): Promise<Map<string, ControlRow>> {
  const rows = await lockQueueControls(trx, queueIds);
  if (rows.length !== queueIds.length) throw notFound('EVENT_NOT_FOUND', `no event ${eventId}`, 'eventId');
  return new Map(rows.map((r) => [r.event_id, r]));
}

/**
 * The operator-facing state of an event's own queue (or one tier's) as the server has it now, with the database
 * clock: what the war room reads back after a control to confirm it took effect. EVENT_NOT_FOUND, TIER_NOT_FOUND.
 */
export async function readQueueControls(db: Db | Trx, eventId: string, scope: QueueScope = {}): Promise<QueueControlState & { at: Date }> {
  return inTransaction(db, async (trx) => {
    const [queue] = await queuesOf(trx, eventId, scope, false);
    const rows = await findQueueControl(trx, queue!.queueId);
    const row = rows[0];
    if (!row) throw notFound('EVENT_NOT_FOUND', `no event ${eventId}`, 'eventId');
    return { ...toState(row, eventId, queue!.tier), at: row.now };
  });
}

/**
 * Pauses admissions (rule 3 in docs/architecture.md): nobody new is admitted, every status not yet admitted reads PAUSED,
 * positions are kept. The reason is required and is audited (`queue.paused`) with the actor. Pausing a paused
 * queue records the new reason and who gave it. Without a tier every queue of the event stops (the general sale's
 * and each presale's); with `tier`, that tier's queue only. Returns the state of the first queue paused (the
 * event's own, or the tier's).
 */
export async function pauseQueue(
  db: Db | Trx,
  eventId: string,
  opts: { actor: string; reason: string; publicNote?: string | undefined } & QueueScope,
): Promise<QueueControlState> {
  const actor = text(opts?.actor, 'actor', 'ACTOR_REQUIRED', 'the actor');
  const reason = text(opts?.reason, 'reason', 'REASON_REQUIRED', 'a reason for the pause');
  // What the public summary says about this pause; the reason stays internal.
  const publicNote =
    opts?.publicNote === undefined || opts.publicNote.trim() === ''
      ? null
      : text(opts.publicNote, 'publicNote', 'INVALID_PUBLIC_NOTE', 'the public note');
  return inTransaction(db, async (trx) => {
    const queues = await queuesOf(trx, eventId, opts, true);
    const before = await lockControls(
      trx,
      eventId,
      queues.map((q) => q.queueId),
    );
    const rows = await pauseQueues(
      trx,
      queues.map((q) => q.queueId),
      reason,
      actor,
    );
    const first = before.get(queues[0]!.queueId)!;
    await insertAudit(trx, {
      actor,
      action: 'queue.paused',
      eventId,
      details: {
        reason,
        ...(publicNote ? { publicNote } : {}),
        wasPaused: first.paused,
        admittedThrough: Number(first.admitted_through),
        ...scopeDetails(queues),
      },
    });
    return toState(
      rows.find((r) => r.event_id === queues[0]!.queueId)!,
      eventId,
      queues[0]!.tier,
    );
  });
}

/** The audit's words for which queues a control touched (nothing extra for an event without presale tiers). */
function scopeDetails(queues: { tier: string | null }[]) {
  const tiers = queues.flatMap((q) => (q.tier ? [q.tier] : []));
  if (queues.length === 1 && tiers.length === 1) return { tier: tiers[0] };
  return tiers.length > 0 ? { presales: tiers } : {};
}

/** Resumes admissions (every queue of the event, or one tier's); audited (`queue.resumed`) with how long it was paused. */
export async function resumeQueue(
  db: Db | Trx,
  eventId: string,
  opts: { actor: string; reason?: string } & QueueScope,
): Promise<QueueControlState> {
  const actor = text(opts?.actor, 'actor', 'ACTOR_REQUIRED', 'the actor');
  const reason =
    opts?.reason === undefined || opts.reason.trim() === '' ? null : text(opts.reason, 'reason', 'INVALID_REASON', 'the reason');
  return inTransaction(db, async (trx) => {
    const queues = await queuesOf(trx, eventId, opts, true);
    const locked = await lockControls(
      trx,
      eventId,
      queues.map((q) => q.queueId),
    );
    const before = locked.get(queues[0]!.queueId)!;
    const rows = await resumeQueues(
      trx,
      queues.map((q) => q.queueId),
    );
    const row = rows.find((r) => r.event_id === queues[0]!.queueId)!;
    await insertAudit(trx, {
      actor,
      action: 'queue.resumed',
      eventId,
      details: {
        wasPaused: before.paused,
        ...(reason ? { reason } : {}),
        ...(before.paused
          ? {
              pausedAt: before.paused_at?.toISOString() ?? null,
              pausedBy: before.paused_by,
              pauseReason: before.paused_reason,
              pausedSeconds: before.paused_at ? Math.round((row.now.getTime() - before.paused_at.getTime()) / 1000) : null,
            }
          : {}),
        ...scopeDetails(queues),
      },
    });
    return toState(row, eventId, queues[0]!.tier);
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
  opts: { actor: string; reason?: string } & QueueScope,
): Promise<QueueControlState> {
  const actor = text(opts?.actor, 'actor', 'ACTOR_REQUIRED', 'the actor');
  if (perMinute !== null && !(Number.isInteger(perMinute) && perMinute >= 0 && perMinute <= MAX_RATE_OVERRIDE_PER_MIN))
    throw invalid(
      'INVALID_RATE_OVERRIDE',
      `the rate must be a whole number of admits per minute from 0 to ${MAX_RATE_OVERRIDE_PER_MIN}, or off`,
      'perMinute',
      { value: perMinute },
    );
  const reason =
    opts?.reason === undefined || opts.reason.trim() === '' ? null : text(opts.reason, 'reason', 'INVALID_REASON', 'the reason');
  return inTransaction(db, async (trx) => {
    // One queue: the event's own (the general sale), or the named tier's; each queue has its own rate.
    const queues = await queuesOf(trx, eventId, opts, false);
    const queueId = queues[0]!.queueId;
    const before = (await lockControls(trx, eventId, [queueId])).get(queueId)!;
    const rows = await setQueueRateOverride(trx, queueId, perMinute);
    await insertAudit(trx, {
      actor,
      action: 'queue.rate_override',
      eventId,
      details: { perMinute, previousPerMinute: before.rate_override_per_min, ...(reason ? { reason } : {}), ...scopeDetails(queues) },
    });
    return toState(rows[0]!, eventId, queues[0]!.tier);
  });
}
