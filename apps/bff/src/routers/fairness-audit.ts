import { z } from 'zod';
import { fairnessAuditReport } from '@onsale/shared/admission';
import { getEvent } from '@onsale/shared/events';
import { listFairnessSignOffs } from '@onsale/shared/sale-setup';
import { can, PERMISSIONS, requireEventAccess } from '@onsale/shared/users';
import { roleProcedure, router } from '../trpc.js';
import { signOffView } from './event-config.js';

const readEvents = roleProcedure(...PERMISSIONS['events.read']);

export const fairnessAuditRouter = router({
  /**
   * The fairness audit of an event: the publishable summary as JSON and Markdown (the CLI's
   * audit:summary: nothing private), the public verification (audit:verify), the pre-open position distribution,
   * the sign-offs; and, for admins and operators only, the complete operator export (who, why, configuration details).
   */
  get: readEvents.input(z.object({ eventId: z.string().trim().min(1).max(100) })).query(async ({ ctx, input }) => {
    const event = await getEvent(ctx.db, input.eventId);
    requireEventAccess(ctx.user, event);
    const [report, signOffs] = await Promise.all([fairnessAuditReport(ctx.db, event.id), listFairnessSignOffs(ctx.db, event.id)]);
    const { summary, markdown, ...rest } = report;
    const operatorExport = can(ctx.user.role, 'warroom.control') ? { json: summary, markdown } : null;
    return {
      ...rest,
      summary: report.published.json,
      operatorExport,
      signOffs: signOffs.map(signOffView),
      listingId: event.listingId,
      timeZone: event.timeZone,
    };
  }),
});
