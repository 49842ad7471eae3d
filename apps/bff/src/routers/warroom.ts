import { TRPCError } from '@trpc/server';
import { DomainError } from '@onsale/shared';
import {
  cancelQueueSchedule,
  listQueueSchedules,
  pauseQueue,
  readQueueControls,
  resumeQueue,
  scheduleQueueControl,
  setRateOverride,
  type QueueControlState,
  type QueueSchedule,
} from '@onsale/shared/admission';
import { getEvent } from '@onsale/shared/events';
import { eventScope, PERMISSIONS, requireEventAccess, verifySession, type SessionUser } from '@onsale/shared/users';
import { insertAudit } from '@onsale/shared/events';
import { z } from 'zod';
import {
  addAlertEndpoint,
  alertEndpointActiveSchema,
  alertEndpointInputSchema,
  findSaleMinutes,
  saleMinutesCsv,
  listAlertDeliveries,
  listAlertEndpoints,
  listAlertHistory,
  queueCopyEditSchema,
  queueScheduleCancelSchema,
  queueScheduleInputSchema,
  setAlertEndpointActive,
  type AlertEndpoint,
  type AlertHistoryEntry,
  pauseQueueSchema,
  rateOverrideSchema,
  readWarRoomSnapshot,
  resumeQueueSchema,
  warRoomBoardSchema,
  warRoomEventSchema,
  WarRoomHub,
} from '@onsale/shared/warroom';
import { getQueueCopy, setQueueCopy, type QueueCopyView } from '@onsale/shared/sale-setup';
import type { Context } from '../context.js';
import { roleProcedure, router } from '../trpc.js';

// The war room. Every role watches (a promoter only their organisation's events); admins and operators control.
// The figures are read in packages/shared/src/warroom; this router authorizes, streams and shapes.
const watchers = roleProcedure(...PERMISSIONS['events.read']);
const controllers = roleProcedure(...PERMISSIONS['warroom.control']);

/** How often a long-lived stream checks that its session still exists (signed out elsewhere, expired, revoked). */
const SESSION_RECHECK_MS = 30_000;

type Authed = Context & { user: SessionUser };

/** The event, if this user may see it: EVENT_NOT_FOUND for an unknown or malformed id, EVENT_FORBIDDEN for another organisation's. */
async function visibleEvent(ctx: Authed, eventId: string) {
  const event = await getEvent(ctx.db, eventId);
  requireEventAccess(ctx.user, event);
  return event;
}

/**
 * Re-checks the session now and then while a stream is open, so signing out (or an admin revoking a session) ends
 * the stream instead of leaving figures flowing to a closed session. Contexts without a token (createCaller
 * tests) have nothing to re-check.
 */
function sessionGuard(ctx: Authed): () => Promise<void> {
  let checkedAt = Date.now();
  return async () => {
    if (ctx.sessionToken === null || Date.now() - checkedAt < SESSION_RECHECK_MS) return;
    checkedAt = Date.now();
    const user = await verifySession(ctx.db, ctx.sessionToken);
    if (!user || user.id !== ctx.user.id || user.role !== ctx.user.role)
      throw new DomainError('unauthenticated', 'SESSION_ENDED', 'the session ended; sign in again', { field: 'session' });
  };
}

/** The process's hub, or a private one for this stream (createCaller contexts have none); `done` closes a private one. */
function hubOf(ctx: Context): { hub: WarRoomHub; done: () => Promise<void> } {
  if (ctx.warRoom) return { hub: ctx.warRoom, done: async () => {} };
  const hub = new WarRoomHub({ db: ctx.db });
  return { hub, done: () => hub.close() };
}

/**
 * Relays a hub stream to the client, re-checking the session as it goes. Errors raised inside a running stream
 * do not pass the procedure's middleware, so they leave as TRPCErrors already.
 */
async function* stream<T>(ctx: Authed, open: (hub: WarRoomHub) => AsyncGenerator<T>): AsyncGenerator<T> {
  const recheck = sessionGuard(ctx);
  const { hub, done } = hubOf(ctx);
  try {
    for await (const message of open(hub)) {
      try {
        await recheck();
      } catch (err) {
        throw new TRPCError({ code: 'UNAUTHORIZED', message: (err as Error).message, cause: err });
      }
      yield message;
    }
  } finally {
    await done();
  }
}

function controlView(s: QueueControlState) {
  return {
    eventId: s.eventId,
    ...(s.tier ? { tier: s.tier } : {}),
    paused: s.paused,
    pausedReason: s.pausedReason,
    pausedBy: s.pausedBy,
    pausedAt: s.pausedAt?.toISOString() ?? null,
    rateOverridePerMin: s.rateOverridePerMin,
    admittedThrough: s.admittedThrough,
    updatedAt: s.updatedAt.toISOString(),
  };
}

/** A control took effect: the war room's streams show it now rather than at the next tick. */
function controlled(ctx: Context, s: QueueControlState) {
  ctx.warRoom?.refresh();
  return controlView(s);
}

function scheduleView(s: QueueSchedule) {
  return {
    ...s,
    runAt: s.runAt.toISOString(),
    createdAt: s.createdAt.toISOString(),
    ranAt: s.ranAt?.toISOString() ?? null,
    cancelledAt: s.cancelledAt?.toISOString() ?? null,
  };
}

function alertView(a: AlertHistoryEntry) {
  return {
    ...a,
    firedAt: a.firedAt.toISOString(),
    lastSeenAt: a.lastSeenAt.toISOString(),
    resolvedAt: a.resolvedAt?.toISOString() ?? null,
  };
}

function endpointView(e: AlertEndpoint) {
  return { ...e, createdAt: e.createdAt.toISOString() };
}

const copyView = (v: QueueCopyView) => v;

/** Who may change the words fans read: the war room's controllers, and the event's promoters (their configuration). */
const copyEditors = roleProcedure(...new Set([...PERMISSIONS['warroom.control'], ...PERMISSIONS['events.configure']]));

export const warRoomRouter = router({
  /** One event's war-room figures now (the page's first paint; the stream below keeps them moving). */
  snapshot: watchers.input(warRoomEventSchema).query(async ({ ctx, input }) => {
    await visibleEvent(ctx, input.eventId);
    return readWarRoomSnapshot(ctx.db, input.eventId, ctx.warRoom?.storeMetrics);
  }),

  /**
   * One event's figures, streamed over SSE every tick (1 s): a `snapshot` message (the first with the series this
   * process kept), or `unavailable` when they cannot be read (never the last figures again as if they were new).
   */
  watch: watchers.input(warRoomEventSchema).subscription(async ({ ctx, input, signal }) => {
    // Checked before the stream starts, so a refusal is an ordinary FORBIDDEN / NOT_FOUND, not a broken stream.
    await visibleEvent(ctx, input.eventId);
    return stream(ctx, (hub) => hub.watchEvent(input.eventId, signal));
  }),

  /**
   * The board of every event on sale today (in the operator's time zone) or on sale now, one compact tile each,
   * every 2 s: the same read as the event pages, batched (a busy Saturday opens 40 on-sales at 10:00). A
   * promoter's board has only their organisation's events.
   */
  board: watchers.input(warRoomBoardSchema).subscription(({ ctx, input, signal }) => {
    const scope = eventScope(ctx.user);
    return stream(ctx, (hub) => hub.watchBoard({ timeZone: input.timeZone, organisationId: scope?.organisationId ?? null }, signal));
  }),

  /**
   * The queue's controls as the server has them now (paused, by whom, the rate override) with the database clock:
   * a plain request the console makes to confirm a control took effect, and to learn whether the server answers
   * while the stream is down.
   */
  controls: watchers.input(warRoomEventSchema).query(async ({ ctx, input }) => {
    await visibleEvent(ctx, input.eventId);
    const s = await readQueueControls(ctx.db, input.eventId);
    return { ...controlView(s), at: s.at.toISOString() };
  }),

  /** Pauses admissions (fails closed: everyone not yet admitted reads PAUSED). The reason is required; audited with the user's e-mail. */
  pause: controllers.input(pauseQueueSchema).mutation(async ({ ctx, input }) => {
    await visibleEvent(ctx, input.eventId);
    return controlled(
      ctx,
      await pauseQueue(ctx.db, input.eventId, {
        actor: ctx.user.email,
        reason: input.reason,
        publicNote: input.publicNote,
        tier: input.tier,
      }),
    );
  }),

  /** Resumes admissions; the war room asks for a reason here too. Audited with the user's e-mail. */
  resume: controllers.input(resumeQueueSchema).mutation(async ({ ctx, input }) => {
    await visibleEvent(ctx, input.eventId);
    return controlled(ctx, await resumeQueue(ctx.db, input.eventId, { actor: ctx.user.email, reason: input.reason, tier: input.tier }));
  }),

  /**
   * The event's alerts, newest first: what fired, when, for how long, and how many messages went out. Recorded by
   * the worker's monitor whether or not anyone has the war room open.
   */
  alertHistory: watchers.input(warRoomEventSchema).query(async ({ ctx, input }) => {
    await visibleEvent(ctx, input.eventId);
    return (await listAlertHistory(ctx.db, input.eventId)).map(alertView);
  }),

  /** The alert receivers (Slack-compatible webhooks) with their delivery counts. Admins and operators. */
  alertReceivers: controllers.query(async ({ ctx }) => (await listAlertEndpoints(ctx.db)).map(endpointView)),

  /** Adds an alert receiver; its signing secret is shown this once. Audited `alerts.receiver_added`. */
  addAlertReceiver: controllers.input(alertEndpointInputSchema).mutation(async ({ ctx, input }) => {
    if (input.eventId !== undefined) await visibleEvent(ctx, input.eventId);
    return ctx.db.transaction().execute(async (trx) => {
      const e = await addAlertEndpoint(trx, input, ctx.user.email, { outbound: ctx.outbound });
      await insertAudit(trx, {
        actor: ctx.user.email,
        action: 'alerts.receiver_added',
        eventId: e.eventId,
        details: { receiverId: e.id, url: e.url, minSeverity: e.minSeverity },
      });
      // The signing secret, this once: the receiver needs it to check X-Onsale-Signature.
      return { ...endpointView(e), secret: e.secret };
    });
  }),

  /** Turns an alert receiver off or on. Audited. */
  setAlertReceiverActive: controllers.input(alertEndpointActiveSchema).mutation(async ({ ctx, input }) =>
    ctx.db.transaction().execute(async (trx) => {
      const e = await setAlertEndpointActive(trx, input.id, input.active);
      await insertAudit(trx, {
        actor: ctx.user.email,
        action: input.active ? 'alerts.receiver_enabled' : 'alerts.receiver_disabled',
        eventId: e.eventId,
        details: { receiverId: e.id, url: e.url },
      });
      return endpointView(e);
    }),
  ),

  /** A receiver's latest messages and their outcome. */
  alertDeliveries: controllers.input(z.object({ id: z.string().uuid('an alert receiver id') })).query(async ({ ctx, input }) =>
    (await listAlertDeliveries(ctx.db, input.id)).map((d) => ({
      ...d,
      createdAt: d.createdAt.toISOString(),
      deliveredAt: d.deliveredAt?.toISOString() ?? null,
    })),
  ),

  /** The words waiting fans read per state and language, with the event's version to save against. */
  queueCopy: watchers.input(warRoomEventSchema).query(async ({ ctx, input }) => {
    await visibleEvent(ctx, input.eventId);
    return copyView(await getQueueCopy(ctx.db, input.eventId));
  }),

  /**
   * Saves the words waiting fans read (fans read them on their next poll), against the version they were edited
   * from; audited with the reason. Admins, operators and the event's promoters.
   */
  setQueueCopy: copyEditors.input(queueCopyEditSchema).mutation(async ({ ctx, input }) => {
    await visibleEvent(ctx, input.eventId);
    return ctx.db.transaction().execute((trx) => setQueueCopy(trx, input, ctx.user.email));
  }),

  /** The event's scheduled controls: pending ones soonest first, then the rest. */
  schedules: watchers.input(warRoomEventSchema).query(async ({ ctx, input }) => {
    await visibleEvent(ctx, input.eventId);
    return (await listQueueSchedules(ctx.db, input.eventId)).map(scheduleView);
  }),

  /** Schedules a pause, a resume or a rate change for a time (a worker job runs it). Audited with the reason. */
  schedule: controllers.input(queueScheduleInputSchema).mutation(async ({ ctx, input }) => {
    await visibleEvent(ctx, input.eventId);
    return scheduleView(await ctx.db.transaction().execute((trx) => scheduleQueueControl(trx, input, ctx.user.email)));
  }),

  /** Cancels a scheduled control that has not run. Audited with the reason. */
  cancelSchedule: controllers.input(queueScheduleCancelSchema).mutation(async ({ ctx, input }) => {
    await visibleEvent(ctx, input.eventId);
    return scheduleView(await ctx.db.transaction().execute((trx) => cancelQueueSchedule(trx, input, ctx.user.email)));
  }),

  /**
   * The war room's series for the whole sale, one point a minute (recorded by the worker's monitor while the event
   * is on sale), with the admissions of each minute as the store API counted them.
   */
  series: watchers.input(warRoomEventSchema).query(async ({ ctx, input }) => {
    await visibleEvent(ctx, input.eventId);
    return (await findSaleMinutes(ctx.db, input.eventId)).map((m) => ({
      ...m,
      minute: m.minute.toISOString(),
      recorded_at: m.recorded_at.toISOString(),
    }));
  }),

  /** The whole sale's series as CSV (one row a minute, UTC and the venue's wall clock), for the operator's records. */
  seriesCsv: watchers.input(warRoomEventSchema).query(async ({ ctx, input }) => {
    const event = await visibleEvent(ctx, input.eventId);
    const minutes = await findSaleMinutes(ctx.db, input.eventId);
    return { filename: `onsale-series-${input.eventId}.csv`, csv: saleMinutesCsv(minutes, event.timeZone), rows: minutes.length };
  }),

  /** Sets the operator's admission rate (0..100,000 admits per minute), or null to follow the plan again. Audited. */
  setRate: controllers.input(rateOverrideSchema).mutation(async ({ ctx, input }) => {
    await visibleEvent(ctx, input.eventId);
    return controlled(
      ctx,
      await setRateOverride(ctx.db, input.eventId, input.perMinute, { actor: ctx.user.email, reason: input.reason, tier: input.tier }),
    );
  }),
});
