import { z } from 'zod';
import { getEvent, listEvents } from '@onsale/shared/events';
import { TicketService } from '@onsale/shared/tickets';
import { scanBodySchema } from '@onsale/shared/tickets/schema';
import { PERMISSIONS, requireEventAccess } from '@onsale/shared/users';
import { roleProcedure, router } from '../trpc.js';

// Tickets in the console (docs/tickets.md): counts for the war room and the post-sale review, fan support (an
// order's tickets, a reissue to a new device) and the scanner page (a scanner token for a signed-in user, scans and
// the offline manifest with it). The rules are the domain's; every change is audited with the user's e-mail.
const readers = roleProcedure(...PERMISSIONS['tickets.read']);
const support = roleProcedure(...PERMISSIONS['tickets.support']);
const door = roleProcedure(...PERMISSIONS['tickets.scan']);

const eventInput = z.object({ eventId: z.string().trim().min(1).max(100) });
const tokenInput = z.object({ scannerToken: z.string().trim().min(1, 'make a scanner token first').max(512) });
const iso = (d: Date) => d.toISOString();

export const ticketsRouter = router({
  /**
   * Ticket counts of one event: issued, delivered, pendingDelivery, transferred, listed, resold, revoked, admitted,
   * scanned and refusedScans (the war room and the post-sale review). A promoter: their organisation's events only.
   */
  counts: readers.input(eventInput).query(async ({ ctx, input }) => {
    const event = await getEvent(ctx.db, input.eventId);
    requireEventAccess(ctx.user, event);
    return new TicketService({ db: ctx.db }).counts(event.id);
  }),

  /**
   * Fan support: the tickets of an order, found by its id or payment reference, each with its holder, status,
   * device binding and what the fan may still do. ORDER_NOT_FOUND when none matches.
   */
  byOrder: support
    .input(z.object({ reference: z.string().trim().min(1, 'enter an order id or payment reference').max(200) }))
    .query(({ ctx, input }) => new TicketService({ db: ctx.db }).findByOrderReference(input.reference)),

  /**
   * Fan support: reissues a ticket to a new device (clears the binding, the old codes stop; the fan's next code
   * binds the device they use). REASON_REQUIRED, TICKET_NOT_FOUND, TICKET_NOT_ACTIVE.
   */
  reissue: support
    .input(z.object({ ticketId: z.string().trim().min(1).max(100), reason: z.string().trim().max(500) }))
    .mutation(({ ctx, input }) =>
      new TicketService({ db: ctx.db }).reissue(input.ticketId, { actor: ctx.user.email, reason: input.reason }),
    ),

  /** The events a door can be set up for (the scanner page's picker), soonest show first. */
  doorEvents: door.query(async ({ ctx }) =>
    (await listEvents(ctx.db))
      .map((e) => ({ id: e.id, name: e.name, venueName: e.venueName, startsAt: iso(e.startsAt), timeZone: e.timeZone }))
      .sort((a, b) => a.startsAt.localeCompare(b.startsAt)),
  ),

  /**
   * A scanner token for one event, made for the signed-in user (audited); shown once. The scanner page keeps it in
   * the browser and sends it with each scan (and uses it for the offline manifest).
   */
  createScanner: door.input(eventInput.extend({ name: z.string().trim().max(64).optional() })).mutation(async ({ ctx, input }) => {
    const s = await new TicketService({ db: ctx.db }).createScanner(input.eventId, {
      name: input.name || `${ctx.user.email} (console)`,
      createdBy: ctx.user.email,
    });
    return { scannerId: s.id, eventId: s.eventId, name: s.name, token: s.token };
  }),

  /** A scan with the page's scanner token: the same answer as the store API's POST /scan. SCANNER_TOKEN_INVALID. */
  scan: door.input(tokenInput.extend(scanBodySchema.shape)).mutation(async ({ ctx, input }) => {
    const service = new TicketService({ db: ctx.db });
    return service.scan(await service.scanner(input.scannerToken), input.code, input.gate ?? 'console');
  }),

  /** The offline manifest for the page's scanner token (public key, step, every ticket's id, generation, status). */
  manifest: door.input(tokenInput).query(async ({ ctx, input }) => {
    const service = new TicketService({ db: ctx.db });
    return service.manifest(await service.scanner(input.scannerToken));
  }),

  /** An offline page's scans, uploaded when it is back: judged at their scan time, double entries reported. */
  upload: door
    .input(
      tokenInput.extend({
        gate: z.string().trim().min(1).max(64),
        scans: z
          .array(
            z.object({
              scanId: z.string().trim().min(1).max(64),
              code: z.string().trim().min(1).max(512),
              scannedAt: z.iso.datetime({ offset: true }),
            }),
          )
          .min(1)
          .max(5000),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const service = new TicketService({ db: ctx.db });
      return service.upload(await service.scanner(input.scannerToken), input.gate, input.scans);
    }),
});
