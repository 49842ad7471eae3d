import { z } from 'zod';
import {
  boardFacts,
  boardState,
  boardStateWords,
  compareBoard,
  getEvent,
  getSections,
  listEvents,
  type OnsaleEvent,
} from '@onsale/shared/events';
import { getInventoryCounts, sectionAvailability } from '@onsale/shared/inventory';
import { tierInventory, toTierView } from '@onsale/shared/allocations';
import { eventScope, PERMISSIONS, requireEventAccess } from '@onsale/shared/users';
import { roleProcedure, router } from '../trpc.js';

// Every role reads events; a promoter only their organisation's (listed by scope, refused by id).
const readEvents = roleProcedure(...PERMISSIONS['events.read']);

// Dates leave as ISO strings: without a transformer JSON would turn them into strings anyway, and the
// types should say what the client receives.
function eventSummary(e: OnsaleEvent) {
  return {
    id: e.id,
    listingId: e.listingId,
    name: e.name,
    venueName: e.venueName,
    startsAt: e.startsAt.toISOString(),
    onsaleAt: e.onsaleAt.toISOString(),
    seatPickingOpensAt: e.seatPickingOpensAt.toISOString(),
    fairnessMode: e.fairnessMode,
    capacity: e.capacity,
    organisationId: e.organisationId,
    timeZone: e.timeZone,
    currency: e.currency,
    rehearsalTimeScale: e.rehearsalTimeScale,
    fairnessSignedOff: e.fairnessSignedOff,
    /** Not signed off and not opened: the sale will not open at its time (the console says so). */
    awaitingSignOff: e.awaitingSignOff,
  };
}

export const eventsRouter = router({
  /**
   * The events board: the events the user may see (a promoter: their organisation's), each with its state (live,
   * paused, opening in N min, scheduled, draft, sold out, ended), its organisation and live inventory totals, in the
   * order that needs attention first (board.ts).
   */
  list: readEvents.query(async ({ ctx }) => {
    const events = await listEvents(ctx.db, eventScope(ctx.user));
    const facts = await boardFacts(
      ctx.db,
      events.map((e) => e.id),
    );
    const now = Date.now();
    const rows = await Promise.all(
      events.map(async (e) => {
        const { available, held, sold, drift } = await getInventoryCounts(ctx.db, e.id, e.capacity);
        const f = facts.get(e.id) ?? { organisationName: null, paused: false, soldOut: false, signedOff: false };
        const state = boardState({ onsaleAt: e.onsaleAt, startsAt: e.startsAt, ...f }, now);
        return {
          ...eventSummary(e),
          organisationName: f.organisationName,
          signedOff: f.signedOff,
          state,
          stateWords: boardStateWords(state, e.onsaleAt, now),
          counts: { available, held, sold, drift },
        };
      }),
    );
    return rows.sort(compareBoard);
  }),

  /**
   * One event with its settings, sections, presale tiers and live inventory (totals, per section, per tier).
   * FORBIDDEN for another organisation's promoter.
   */
  byId: readEvents
    // Any string: a malformed id is reported by the domain as EVENT_NOT_FOUND, like an unknown one.
    .input(z.object({ id: z.string().trim().min(1).max(100) }))
    .query(async ({ ctx, input }) => {
      const event = await getEvent(ctx.db, input.id);
      requireEventAccess(ctx.user, event);
      const [sections, inventory, tiers] = await Promise.all([
        getSections(ctx.db, event.id),
        getInventoryCounts(ctx.db, event.id, event.capacity),
        tierInventory(ctx.db, event.id),
      ]);
      const now = new Date();
      return {
        ...eventSummary(event),
        perAccountSeatLimit: event.perAccountSeatLimit,
        holdTtlSeconds: event.holdTtlSeconds,
        holdExtensionSeconds: event.holdExtensionSeconds,
        counts: {
          capacity: inventory.capacity,
          available: inventory.available,
          held: inventory.held,
          sold: inventory.sold,
          drift: inventory.drift,
        },
        sections: sectionAvailability(sections, inventory.sections).map((s, i) => ({ ...s, priceLevelName: sections[i]!.priceLevelName })),
        /** Presale tiers in sale order (the general sale last) with their live counts; empty without tiers. */
        tiers: tiers.map((t) => toTierView(t, now)),
      };
    }),
});
