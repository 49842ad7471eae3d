import { TRPCError } from '@trpc/server';
import { DomainError } from '@onsale/shared';
import { pauseQueue, readQueueControls, resumeQueue, setRateOverride, type QueueControlState } from '@onsale/shared/admission';
import { getEvent } from '@onsale/shared/events';
import { eventScope, PERMISSIONS, requireEventAccess, verifySession, type SessionUser } from '@onsale/shared/users';
import {
  pauseQueueSchema,
  rateOverrideSchema,
  readWarRoomSnapshot,
  resumeQueueSchema,
  warRoomBoardSchema,
  warRoomEventSchema,
  WarRoomHub,
} from '@onsale/shared/warroom';
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
   * every 2 s: the same read as the event pages, batched (drill 9: 40 on-sales at 10:00 on a Saturday). A
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
    return controlled(ctx, await pauseQueue(ctx.db, input.eventId, { actor: ctx.user.email, reason: input.reason, tier: input.tier }));
  }),

  /** Resumes admissions; the war room asks for a reason here too. Audited with the user's e-mail. */
  resume: controllers.input(resumeQueueSchema).mutation(async ({ ctx, input }) => {
    await visibleEvent(ctx, input.eventId);
    return controlled(ctx, await resumeQueue(ctx.db, input.eventId, { actor: ctx.user.email, reason: input.reason, tier: input.tier }));
  }),

  /** Sets the operator's admission rate (0..100,000 admits per minute), or null to follow the plan again. Audited. */
  setRate: controllers.input(rateOverrideSchema).mutation(async ({ ctx, input }) => {
    await visibleEvent(ctx, input.eventId);
    return controlled(ctx, await setRateOverride(ctx.db, input.eventId, input.perMinute, { actor: ctx.user.email, reason: input.reason, tier: input.tier }));
  }),
});
