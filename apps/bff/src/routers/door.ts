import { z } from 'zod';
import { getEvent } from '@onsale/shared/events';
import { TicketService } from '@onsale/shared/tickets';
import { scanBodySchema, uploadBodySchema } from '@onsale/shared/tickets/schema';
import { PERMISSIONS, requireEventAccess } from '@onsale/shared/users';
import { roleProcedure, router } from '../trpc.js';

const doorKeepers = roleProcedure(...PERMISSIONS['warroom.control']);
const scannerToken = z.string({ error: 'start the gate first' }).min(1, 'start the gate first').max(512);

/**
 * The console's door scanner (apps/console .../events/$eventId/scanner). A signed-in operator starts a gate, which
 * makes a scanner credential for one event (as `onsale scanner:create` does); the gate's scans, its offline manifest
 * and its uploads then go through the store's own door rules (TicketService: scan, manifest, upload) with that
 * credential, exactly as POST /scan, GET /scan/manifest and POST /scan/uploads take it: same-origin for the console,
 * no store API URL or CORS in the browser, and the audit names the gate.
 */
export const doorRouter = router({
  /** A scanner credential for this event, named after the gate; the page keeps it on the device. */
  startGate: doorKeepers
    .input(z.object({ eventId: z.string().min(1).max(64), name: z.string().trim().min(1, 'name the gate').max(64, 'at most 64 characters') }))
    .mutation(async ({ ctx, input }) => {
      const event = await getEvent(ctx.db, input.eventId);
      requireEventAccess(ctx.user, event);
      const s = await new TicketService({ db: ctx.db }).createScanner(event.id, { name: input.name, createdBy: ctx.user.email });
      return { scannerId: s.id, eventId: s.eventId, name: s.name, token: s.token };
    }),
  /** One code at this gate: ADMIT once per ticket whatever the number of gates (POST /scan's rule). */
  scan: doorKeepers.input(scanBodySchema.extend({ token: scannerToken })).mutation(async ({ ctx, input }) => {
    const tickets = new TicketService({ db: ctx.db });
    return tickets.scan(await tickets.scanner(input.token), input.code, input.gate ?? 'main');
  }),
  /** The offline manifest: the event's public key and every ticket's id, generation and status. */
  manifest: doorKeepers.input(z.object({ token: scannerToken })).mutation(async ({ ctx, input }) => {
    const tickets = new TicketService({ db: ctx.db });
    return tickets.manifest(await tickets.scanner(input.token));
  }),
  /** The scans a gate made offline: judged at their scan time, a scan sent twice counted once, double entries reported. */
  upload: doorKeepers.input(uploadBodySchema.extend({ token: scannerToken })).mutation(async ({ ctx, input }) => {
    const tickets = new TicketService({ db: ctx.db });
    return tickets.upload(await tickets.scanner(input.token), input.gate, input.scans);
  }),
});
