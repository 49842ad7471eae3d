import { cancelCluster, reviewEvent } from '@onsale/shared/abuse';
import { cancelOrder, refundOrder, SimulatedPaymentGateway } from '@onsale/shared/checkout';
import { getEvent } from '@onsale/shared/events';
import { addSeats } from '@onsale/shared/inventory';
import { clusterCancelSchema, inventoryAddSchema, orderCancelSchema, reviewOptionsSchema } from '@onsale/shared/support/schema';
import { PERMISSIONS, requireEventAccess } from '@onsale/shared/users';
import { roleProcedure, router } from '../trpc.js';

// What the CLI's order:cancel, inventory:add and review do, from the console, through the same
// domain functions; each audited with the user's e-mail (and the reason where there is one).
const cancellers = roleProcedure(...PERMISSIONS['orders.cancel']);
const adders = roleProcedure(...PERMISSIONS['inventory.add']);
const reviewers = roleProcedure(...PERMISSIONS['review.read']);
const clusterCancellers = roleProcedure(...PERMISSIONS['review.cancel']);

const reviewOpts = (i: { createdWithinSeconds?: number | null | undefined; minAccounts?: number | undefined }) => ({
  createdWithinSeconds: i.createdWithinSeconds ?? null,
  ...(i.minAccounts !== undefined ? { minAccounts: i.minAccounts } : {}),
});

export const operationsRouter = router({
  /** Cancels a confirmed order: its seats come back (to the waitlist after a sell-out). ORDER_ALREADY_CANCELLED. */
  cancelOrder: cancellers.input(orderCancelSchema).mutation(async ({ ctx, input }) => {
    const r = await cancelOrder(ctx.db, input.orderId, { actor: ctx.user.email, reason: input.reason });
    ctx.warRoom?.refresh();
    return { orderId: r.orderId, eventId: r.eventId, status: r.status, seatsReturned: r.seatsReturned, toWaitlist: r.toWaitlist };
  }),

  /**
   * Refunds an order in full through the payment provider, cancelling it first if it is still confirmed (seats before
   * money). ORDER_ALREADY_REFUNDED; 503 PAYMENT_PROVIDER_UNAVAILABLE with Retry-After when the provider fails.
   */
  refundOrder: cancellers.input(orderCancelSchema).mutation(async ({ ctx, input }) => {
    // The simulated gateway the store API charges with, over its table, unless the BFF was given a provider.
    const payments = ctx.payments ?? new SimulatedPaymentGateway({ db: ctx.db, tps: 1000, latencyMs: 0, failureRate: 0 });
    const r = await refundOrder(ctx.db, payments, input.orderId, { actor: ctx.user.email, reason: input.reason });
    ctx.warRoom?.refresh();
    return { ...r, refundedAt: r.refundedAt.toISOString() };
  }),

  /** Appends rows of new seats to a section; capacity rises and the waitlist hears of them. A promoter: their events. */
  addSeats: adders.input(inventoryAddSchema).mutation(async ({ ctx, input }) => {
    requireEventAccess(ctx.user, await getEvent(ctx.db, input.eventId));
    const r = await addSeats(
      ctx.db,
      input.eventId,
      { section: input.section, rows: input.rows, seatsPerRow: input.seatsPerRow },
      ctx.user.email,
    );
    ctx.warRoom?.refresh();
    return r;
  }),

  /** The post-sale review: confirmed orders clustered by shared card, device and account signals, with the evidence. */
  review: reviewers.input(reviewOptionsSchema).query(async ({ ctx, input }) => {
    const event = await getEvent(ctx.db, input.eventId);
    requireEventAccess(ctx.user, event);
    const r = await reviewEvent(ctx.db, event.id, reviewOpts(input));
    return { ...r, currency: event.currency, timeZone: event.timeZone };
  }),

  /** Cancels every order of a cluster as the review shows it now (the same options); reason required, each audited. */
  cancelCluster: clusterCancellers.input(clusterCancelSchema).mutation(async ({ ctx, input }) => {
    const event = await getEvent(ctx.db, input.eventId);
    requireEventAccess(ctx.user, event);
    const r = await cancelCluster(ctx.db, event.id, input.clusterId, { actor: ctx.user.email, reason: input.reason }, reviewOpts(input));
    ctx.warRoom?.refresh();
    return r;
  }),
});
