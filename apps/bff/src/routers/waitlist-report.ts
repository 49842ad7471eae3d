import { z } from 'zod';
import { requireListingInScope } from '@onsale/shared/sale-setup';
import { waitlistReport } from '@onsale/shared/waitlist/report';
import { PERMISSIONS } from '@onsale/shared/users';
import { roleProcedure, router } from '../trpc.js';

const readEvents = roleProcedure(...PERMISSIONS['events.read']);
const iso = (d: Date | null) => d?.toISOString() ?? null;

export const waitlistReportRouter = router({
  /**
   * The waitlist of a listing: entries by criteria, matches, offers out and their expiry,
   * deliveries by status, notification latency. A promoter only for a listing all of whose events are theirs.
   */
  get: readEvents.input(z.object({ listingId: z.string().trim().min(1).max(100) })).query(async ({ ctx, input }) => {
    await requireListingInScope(ctx.db, input.listingId, ctx.user.role === 'promoter' ? ctx.user.organisationId : null);
    const r = await waitlistReport(ctx.db, input.listingId);
    return {
      ...r,
      generatedAt: r.generatedAt.toISOString(),
      entries: { ...r.entries, oldestLiveAt: iso(r.entries.oldestLiveAt), newestAt: iso(r.entries.newestAt) },
      matches: {
        ...r.matches,
        recent: r.matches.recent.map((a) => ({ ...a, createdAt: a.createdAt.toISOString(), completedAt: iso(a.completedAt) })),
      },
      offers: {
        ...r.offers,
        open: r.offers.open.map((o) => ({ ...o, createdAt: o.createdAt.toISOString(), expiresAt: o.expiresAt.toISOString() })),
      },
      deliveries: { ...r.deliveries, failing: r.deliveries.failing.map((d) => ({ ...d, updatedAt: d.updatedAt.toISOString() })) },
    };
  }),
});
