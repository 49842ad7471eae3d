import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { deviceIdHeaderSchema } from '@onsale/shared/queue';
import type { TicketService } from '@onsale/shared/tickets';
import {
  manifestSchema,
  resaleBodySchema,
  scanAnswerSchema,
  scanBodySchema,
  ticketCodeSchema,
  ticketSchema,
  transferBodySchema,
  uploadAnswerSchema,
  uploadBodySchema,
} from '@onsale/shared/tickets/schema';
import { errorResponses, errorSchema } from '../schemas.js';

const ticketParams = z.object({ id: z.string().max(64) });
const bearer = z.object({ authorization: z.string().max(512).optional().describe('Bearer <scanner token>') });

export interface TicketRouteDeps {
  tickets: TicketService;
}

function bearerToken(header: string | undefined): string | undefined {
  const m = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  return m?.[1];
}

/**
 * Tickets (docs/tickets.md): a fan's tickets and their rotating codes, moving one to a new device, transfer,
 * the face-value exchange; and the door: scans, the offline manifest and an offline gate's upload, with a scanner
 * token (`npm run onsale -- scanner:create --event ID`) instead of an account token. None needs an admission token.
 */
export const ticketRoutes: FastifyPluginAsyncZod<TicketRouteDeps> = async (app, { tickets }) => {
  app.get(
    '/me/tickets',
    {
      schema: {
        tags: ['tickets'],
        summary: 'Your tickets, by show and seat (those you passed on too, with what became of them)',
        response: { 200: z.object({ tickets: z.array(ticketSchema) }), ...errorResponses },
      },
    },
    async (req, reply) => {
      reply.header('cache-control', 'no-store');
      return { tickets: await tickets.mine(req.accountId) };
    },
  );

  app.get(
    '/tickets/:id/code',
    {
      schema: {
        tags: ['tickets'],
        summary:
          'The current rotating code of your ticket (a new one every 15 s; the first fetch after delivery binds the ticket to this device)',
        params: ticketParams,
        headers: z.object({ 'x-device-id': deviceIdHeaderSchema }),
        response: { 200: ticketCodeSchema, ...errorResponses },
      },
    },
    async (req, reply) => {
      reply.header('cache-control', 'no-store');
      return tickets.code(req.accountId, req.params.id, req.headers['x-device-id']);
    },
  );

  app.post(
    '/tickets/:id/device',
    {
      schema: {
        tags: ['tickets'],
        summary: 'Move your ticket to this device (at most 3 moves a ticket); the old device’s codes stop at once',
        params: ticketParams,
        headers: z.object({ 'x-device-id': deviceIdHeaderSchema }),
        response: { 200: ticketSchema, ...errorResponses },
      },
    },
    async (req) => tickets.moveToDevice(req.accountId, req.params.id, req.headers['x-device-id']),
  );

  app.post(
    '/tickets/:id/transfer',
    {
      schema: {
        tags: ['tickets'],
        summary: 'Transfer your ticket to another account (within the event’s transfer limit and their seat limit); your codes stop',
        params: ticketParams,
        body: transferBodySchema,
        response: { 200: z.object({ fromTicketId: z.string(), ticket: ticketSchema }), ...errorResponses },
      },
    },
    async (req) => {
      const r = await tickets.transfer(req.accountId, req.params.id, req.body.toAccountId);
      // The receiver's ticket: the sender sees its seat and status, not the receiver's device state.
      return r;
    },
  );

  app.post(
    '/tickets/:id/resale',
    {
      schema: {
        tags: ['tickets'],
        summary:
          'List your ticket on the face-value exchange (at most face value plus the event’s fee cap): offered to the waitlist first, then on sale',
        params: ticketParams,
        body: resaleBodySchema,
        response: { 200: ticketSchema, ...errorResponses },
      },
    },
    async (req) => tickets.listForResale(req.accountId, req.params.id, req.body.priceCents),
  );

  app.delete(
    '/tickets/:id/resale',
    {
      schema: {
        tags: ['tickets'],
        summary: 'Withdraw your listing (refused while a buyer is paying for it): the ticket is yours to use again',
        params: ticketParams,
        response: { 200: ticketSchema, ...errorResponses },
      },
    },
    async (req) => tickets.withdrawResale(req.accountId, req.params.id),
  );

  app.post(
    '/scan',
    {
      config: { public: true },
      schema: {
        tags: ['tickets'],
        summary: 'Scan a ticket code at the door (scanner token): ADMIT once per ticket, whatever the number of gates',
        security: [],
        headers: bearer,
        body: scanBodySchema,
        response: { 200: scanAnswerSchema, 400: errorSchema, 401: errorSchema },
      },
    },
    async (req, reply) => {
      const scanner = await tickets.scanner(bearerToken(req.headers.authorization));
      reply.header('cache-control', 'no-store');
      return tickets.scan(scanner, req.body.code, req.body.gate ?? 'main');
    },
  );

  app.get(
    '/scan/manifest',
    {
      config: { public: true },
      schema: {
        tags: ['tickets'],
        summary: 'The offline manifest (scanner token): the event’s public key and every ticket’s id, generation and status',
        security: [],
        headers: bearer,
        response: { 200: manifestSchema, 401: errorSchema },
      },
    },
    async (req, reply) => {
      const scanner = await tickets.scanner(bearerToken(req.headers.authorization));
      reply.header('cache-control', 'no-store');
      return tickets.manifest(scanner);
    },
  );

  app.post(
    '/scan/uploads',
    {
      config: { public: true },
      schema: {
        tags: ['tickets'],
        summary: 'An offline gate’s scans, uploaded when it is back (scanner token): judged at their scan time, double entries reported',
        security: [],
        headers: bearer,
        body: uploadBodySchema,
        response: { 200: uploadAnswerSchema, 400: errorSchema, 401: errorSchema },
      },
    },
    async (req) => {
      const scanner = await tickets.scanner(bearerToken(req.headers.authorization));
      return tickets.upload(scanner, req.body.gate, req.body.scans);
    },
  );
};
