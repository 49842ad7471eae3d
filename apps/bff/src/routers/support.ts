import {
  accountBlockSchema,
  accountLookupSchema,
  accountUnblockSchema,
  blockAccount,
  getSupportOrder,
  holdReleaseSchema,
  lookupAccount,
  searchSupport,
  supportOrderSchema,
  supportSearchSchema,
  releaseFanHold,
  unblockAccount,
} from '@onsale/shared/support';
import { PERMISSIONS } from '@onsale/shared/users';
import { roleProcedure, router } from '../trpc.js';

// Fan support: an account's whole picture, a hold released for a fan, an account blocked from an
// event. Admins and operators; every change audited with the user's e-mail and the reason.
const readers = roleProcedure(...PERMISSIONS['support.read']);
const actors = roleProcedure(...PERMISSIONS['support.act']);
const iso = (d: Date | null) => d?.toISOString() ?? null;

export const supportRouter = router({
  /** Queue places (with their state), holds, orders, waitlist entries, notifications and blocks of one account. */
  lookup: readers.input(accountLookupSchema).query(async ({ ctx, input }) => {
    const r = await lookupAccount(ctx.db, input);
    return {
      accountId: r.accountId,
      displayName: r.displayName,
      createdAt: iso(r.createdAt),
      queues: r.queues.map((q) => ({ ...q, joinedAt: q.joinedAt.toISOString(), claimedAt: iso(q.claimedAt) })),
      holds: r.holds.map((h) => ({ ...h, expiresAt: h.expiresAt.toISOString(), createdAt: h.createdAt.toISOString() })),
      orders: r.orders.map((o) => ({ ...o, createdAt: o.createdAt.toISOString() })),
      waitlist: r.waitlist.map((w) => ({ ...w, createdAt: w.createdAt.toISOString(), expiresAt: w.expiresAt.toISOString() })),
      notifications: r.notifications.map((n) => ({ ...n, createdAt: n.createdAt.toISOString(), readAt: iso(n.readAt) })),
      blocks: r.blocks.map((b) => ({ ...b, blockedAt: b.blockedAt.toISOString() })),
    };
  }),

  /** Finds orders by the reference the fan reads (or a whole order id), and accounts whose id or name contains the text. */
  search: readers.input(supportSearchSchema).query(async ({ ctx, input }) => {
    const r = await searchSupport(ctx.db, input);
    return {
      query: r.query,
      orders: r.orders.map((o) => ({ ...o, createdAt: o.createdAt.toISOString(), refundedAt: iso(o.refundedAt) })),
      accounts: r.accounts.map((a) => ({ accountId: a.accountId, displayName: a.displayName, createdAt: a.createdAt.toISOString() })),
    };
  }),

  /** One order: its reference, account, event, amount in the event's currency, status and seats. ORDER_NOT_FOUND. */
  order: readers.input(supportOrderSchema).query(async ({ ctx, input }) => {
    const o = await getSupportOrder(ctx.db, input);
    return { ...o, createdAt: o.createdAt.toISOString(), refundedAt: iso(o.refundedAt) };
  }),

  /** Releases a fan's live hold (seats back now; to the waitlist after a sell-out). HOLD_NOT_LIVE, CHECKOUT_IN_PROGRESS. */
  releaseHold: actors.input(holdReleaseSchema).mutation(({ ctx, input }) => releaseFanHold(ctx.db, input, ctx.user.email)),

  /** Blocks the account from the event (store API: ACCOUNT_BLOCKED on join, holds, checkout); its live holds go back. */
  block: actors.input(accountBlockSchema).mutation(({ ctx, input }) => blockAccount(ctx.db, input, ctx.user.email)),

  /** Lifts a block. NOT_BLOCKED when there is none. */
  unblock: actors.input(accountUnblockSchema).mutation(({ ctx, input }) => unblockAccount(ctx.db, input, ctx.user.email)),
});
