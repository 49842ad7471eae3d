import { DEFAULT_ABANDONMENT_RATE, DEFAULT_PAYMENT_ATTEMPTS_PER_BUYER } from '@onsale/shared/admission';
import { getEvent } from '@onsale/shared/events';
import { getInventoryCounts } from '@onsale/shared/inventory';
import { PERMISSIONS, requireEventAccess } from '@onsale/shared/users';
import { warRoomEventSchema } from '@onsale/shared/warroom';
import { roleProcedure, router } from '../trpc.js';

const readers = roleProcedure(...PERMISSIONS['events.read']);

/**
 * The admission plan preview's inputs. The plan itself is computed in the console from the same pure module the
 * controller and `onsale plan` use (@onsale/shared/admission/plan), so it follows every keystroke without a round
 * trip and the rule has one home. Saving edited inputs is the event configuration's (eventConfig), not this.
 */
export const admissionPlanRouter = router({
  /** An event's pacing inputs, seats and hold TTL as stored, with the live unsold seats for a mid-sale re-plan. */
  inputs: readers.input(warRoomEventSchema).query(async ({ ctx, input }) => {
    const event = await getEvent(ctx.db, input.eventId);
    requireEventAccess(ctx.user, event);
    const counts = await getInventoryCounts(ctx.db, event.id, event.capacity);
    return {
      eventId: event.id,
      listingId: event.listingId,
      name: event.name,
      venueName: event.venueName,
      onsaleAt: event.onsaleAt.toISOString(),
      version: event.version,
      seats: event.capacity,
      remainingSeats: Math.min(event.capacity, counts.available + counts.held),
      holdTtlSeconds: event.holdTtlSeconds,
      holdExtensionSeconds: event.holdExtensionSeconds,
      pacing: event.pacing,
      defaults: { abandonmentRate: DEFAULT_ABANDONMENT_RATE, paymentAttemptsPerBuyer: DEFAULT_PAYMENT_ATTEMPTS_PER_BUYER },
    };
  }),
});
