import { z } from 'zod';
import { getEvent } from '@onsale/shared/events';
import {
  createConfiguredEvent,
  getEventConfiguration,
  listListings,
  setListingWaitlist,
  signOffFairness,
  updateEventConfiguration,
  type FairnessSignOff,
} from '@onsale/shared/sale-setup';
import {
  eventCreateInputSchema,
  eventUpdateInputSchema,
  fairnessSignOffInputSchema,
  listingWaitlistInputSchema,
} from '@onsale/shared/sale-setup/schema';
import { can, eventScope, PERMISSIONS, requireEventAccess, type SessionUser } from '@onsale/shared/users';
import { roleProcedure, router } from '../trpc.js';

// Event configuration: every role reads, admins and promoters change; a promoter only their
// organisation's events and listings. The rules, the validation and the audit are the domain's.
const readEvents = roleProcedure(...PERMISSIONS['events.read']);
const configureEvents = roleProcedure(...PERMISSIONS['events.configure']);

/** Whom the domain records and scopes: the e-mail, and a promoter's organisation (others act for the house). */
const actorOf = (u: SessionUser) => ({ actor: u.email, organisationId: u.role === 'promoter' ? u.organisationId : null });

export function signOffView(s: FairnessSignOff) {
  return {
    id: s.id,
    fairnessMode: s.fairnessMode,
    description: s.description,
    signedOffBy: s.signedOffBy,
    signedOffAt: s.signedOffAt.toISOString(),
    eventVersion: s.eventVersion,
    supersededAt: s.supersededAt?.toISOString() ?? null,
    supersededBy: s.supersededBy,
    supersededReason: s.supersededReason,
  };
}

/** FORBIDDEN (EVENT_FORBIDDEN) unless the user may see the event; NOT_FOUND for an unknown one. */
async function accessibleEvent(ctx: { db: Parameters<typeof getEvent>[0]; user: SessionUser }, eventId: string) {
  const event = await getEvent(ctx.db, eventId);
  requireEventAccess(ctx.user, event);
  return event;
}

export const eventConfigRouter = router({
  /** The event as its edit form needs it: the event file, version, what is locked now and why, the sign-off. */
  get: readEvents.input(z.object({ id: z.string().trim().min(1).max(100) })).query(async ({ ctx, input }) => {
    const event = await accessibleEvent(ctx, input.id);
    const c = await getEventConfiguration(ctx.db, event.id);
    return {
      eventId: c.eventId,
      version: c.version,
      updatedAt: c.updatedAt.toISOString(),
      listing: c.listing,
      file: c.file,
      capacity: c.capacity,
      phase: c.phase,
      queueHasFans: c.queueHasFans,
      seatsInUse: c.seatsInUse,
      locked: c.locked,
      fairness: {
        mode: c.fairness.mode,
        description: c.fairness.description,
        signOff: c.fairness.signOff && signOffView(c.fairness.signOff),
        history: c.fairness.history.map(signOffView),
        openedAt: c.fairness.openedAt?.toISOString() ?? null,
      },
      /** Whether this user may change it (the console shows a read-only page otherwise). */
      canConfigure: can(ctx.user.role, 'events.configure'),
    };
  }),

  /** Listings the user may see (a promoter: those all of whose events are their organisation's). */
  listings: readEvents.query(async ({ ctx }) =>
    (await listListings(ctx.db, eventScope(ctx.user))).map((l) => ({ ...l, createdAt: l.createdAt.toISOString() })),
  ),

  /** Creates an event from an event file (the CLI's), in the promoter's organisation; problems at their paths. */
  create: configureEvents
    .input(eventCreateInputSchema)
    .mutation(({ ctx, input }) => ctx.db.transaction().execute((trx) => createConfiguredEvent(trx, input, actorOf(ctx.user)))),

  /** Edits an event made from `expectedVersion`: CONFLICT for a stale version or a change the rules refuse now. */
  update: configureEvents.input(eventUpdateInputSchema).mutation(async ({ ctx, input }) => {
    const event = await accessibleEvent(ctx, input.eventId);
    return ctx.db.transaction().execute((trx) => updateEventConfiguration(trx, { ...input, eventId: event.id }, ctx.user.email));
  }),

  /** Signs off the fairness mode the user read (CONFLICT if the event's mode is another by now). */
  signOffFairness: configureEvents.input(fairnessSignOffInputSchema).mutation(async ({ ctx, input }) => {
    const event = await accessibleEvent(ctx, input.eventId);
    const { signOff, alreadySignedOff } = await ctx.db
      .transaction()
      .execute((trx) => signOffFairness(trx, { ...input, eventId: event.id }, ctx.user.email));
    return { signOff: signOffView(signOff), alreadySignedOff };
  }),

  /** Sets a listing's waitlist mode, entry lifetime and offer time. */
  setWaitlist: configureEvents
    .input(listingWaitlistInputSchema)
    .mutation(({ ctx, input }) => ctx.db.transaction().execute((trx) => setListingWaitlist(trx, input, actorOf(ctx.user)))),
});
