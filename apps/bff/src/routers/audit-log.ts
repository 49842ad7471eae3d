import { auditLogCsv, auditLogFacets, getEvent, listAuditLog } from '@onsale/shared/events';
import { auditLogQuerySchema } from '@onsale/shared/sale-setup/schema';
import { eventScope, PERMISSIONS, requireEventAccess } from '@onsale/shared/users';
import { roleProcedure, router } from '../trpc.js';

// Everyone who reads events reads the audit log; a promoter only their organisation's part of it.
const readEvents = roleProcedure(...PERMISSIONS['events.read']);

export const auditLogRouter = router({
  /** Who changed what and when: filtered by event, actor, action and time, newest first, paged. */
  list: readEvents.input(auditLogQuerySchema).query(async ({ ctx, input }) => {
    // Asking for another organisation's event is refused outright, not answered with an empty page.
    if (input.eventId) requireEventAccess(ctx.user, await getEvent(ctx.db, input.eventId));
    const page = await listAuditLog(ctx.db, input, eventScope(ctx.user));
    return { ...page, entries: page.entries.map((e) => ({ ...e, at: e.at.toISOString() })) };
  }),

  /**
   * Every entry the filters select (all pages, newest first, up to AUDIT_EXPORT_MAX_ROWS) as CSV: words beside the
   * raw values. `truncated` says the export stopped at the cap (narrow the filters for the rest).
   */
  exportCsv: readEvents.input(auditLogQuerySchema).query(async ({ ctx, input }) => {
    if (input.eventId) requireEventAccess(ctx.user, await getEvent(ctx.db, input.eventId));
    const r = await auditLogCsv(ctx.db, input, eventScope(ctx.user));
    return { filename: `onsale-audit-log${input.eventId ? `-${input.eventId}` : ''}.csv`, ...r };
  }),

  /** The actions and actors that occur in the user's part of the log, for the filters. */
  facets: readEvents.query(({ ctx }) => auditLogFacets(ctx.db, eventScope(ctx.user))),
});
