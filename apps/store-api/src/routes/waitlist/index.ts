import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Db } from '@onsale/shared/db';
import type { TokenKey } from '@onsale/shared/queue/edge';
import { deviceIdHeaderSchema, type CachedTokenVerifier } from '@onsale/shared/queue';
import {
  declineOffer,
  inbox,
  markRead,
  type ClaimTokens,
  type NotificationView,
  type WaitlistEntry,
  type WaitlistService,
} from '@onsale/shared/waitlist';
import { claimOfferWithAdmission } from '@onsale/shared/claims';
import { waitlistClaimSchema } from '@onsale/shared/inventory/schema';
import { errorResponses, errorSchema } from '../schemas.js';

const listingParams = z.object({ id: z.string().max(64) });

const criteriaOut = z.object({
  dateFrom: z.string().nullable(),
  dateTo: z.string().nullable(),
  maxPriceCents: z.number().nullable(),
  quantity: z.number(),
  sections: z.array(z.string()).nullable(),
  priceLevels: z.array(z.string()).nullable(),
});
const entryOut = z.object({
  listingId: z.string(),
  listingName: z.string(),
  entryId: z.number(),
  criteria: criteriaOut,
  joinedAt: z.string(),
  expiresAt: z.string(),
});
const criteriaIn = z
  .object({
    dateFrom: z.string().optional().describe('first performance date, YYYY-MM-DD (UTC); absent = any'),
    dateTo: z.string().optional().describe('last performance date, YYYY-MM-DD (UTC), inclusive; absent = any'),
    maxPriceCents: z.number().optional().describe('highest price per ticket; absent = any'),
    quantity: z.number().optional().describe('seats together (default 1), at most the per-account limit'),
    sections: z.array(z.string()).optional().describe('acceptable section codes; absent = any'),
    priceLevels: z.array(z.string()).optional().describe('acceptable price levels; absent = any'),
  })
  .passthrough();

const notificationOut = z.object({
  id: z.number(),
  kind: z.enum(['OFFER', 'BROADCAST', 'ON_SALE', 'OFFER_EXPIRED', 'LOTTERY_WON', 'LOTTERY_NOT_DRAWN']),
  createdAt: z.string(),
  readAt: z.string().nullable(),
  listingId: z.string(),
  listingName: z.string(),
  eventId: z.string().nullable(),
  eventName: z.string().nullable(),
  startsAt: z.string().nullable(),
  message: z.string(),
  release: z
    .object({
      availabilityId: z.number(),
      /** The event's currency (ISO 4217); priceCents are its minor units. */
      currency: z.string(),
      sections: z.array(
        z.object({ section: z.string(), priceLevel: z.string(), priceCents: z.number(), seats: z.number(), longestRun: z.number() }),
      ),
    })
    .nullable(),
  claim: z
    .object({
      offerId: z.string().nullable(),
      status: z.string(),
      quantity: z.number().nullable(),
      expiresAt: z.string(),
      claimToken: z.string().nullable(),
    })
    .nullable(),
  /** A registration lottery's outcome: a winner's rank, cohort and purchase window (the invitation code is at links.lottery). */
  lottery: z
    .object({
      won: z.boolean(),
      rank: z.number().nullable(),
      cohort: z.number().nullable(),
      windowOpensAt: z.string().nullable(),
      windowClosesAt: z.string().nullable(),
    })
    .nullable(),
  links: z.object({
    claim: z.string().nullable(),
    decline: z.string().nullable(),
    event: z.string().nullable(),
    waitlist: z.string(),
    lottery: z.string().nullable(),
  }),
});

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const entryBody = (e: WaitlistEntry) => ({ ...e, joinedAt: e.joinedAt.toISOString(), expiresAt: e.expiresAt.toISOString() });
const notificationBody = (n: NotificationView) => ({
  ...n,
  createdAt: n.createdAt.toISOString(),
  readAt: iso(n.readAt),
  startsAt: iso(n.startsAt),
  claim: n.claim ? { ...n.claim, expiresAt: n.claim.expiresAt.toISOString() } : null,
  lottery: n.lottery ? { ...n.lottery, windowOpensAt: iso(n.lottery.windowOpensAt), windowClosesAt: iso(n.lottery.windowClosesAt) } : null,
});

export interface WaitlistRouteDeps {
  db: Db;
  waitlist: WaitlistService;
  claimTokens: ClaimTokens;
  tokenKey: TokenKey;
  verifier: CachedTokenVerifier;
}

/**
 * Waitlists: join (idempotent), leave, mine with place, matches now (fan-out on read), the inbox, and
 * offers (claim, decline). None of these needs an admission token: a claim is itself the admission.
 */
export const waitlistRoutes: FastifyPluginAsyncZod<WaitlistRouteDeps> = async (app, { db, waitlist, claimTokens, tokenKey, verifier }) => {
  app.get(
    '/listings/:id',
    {
      config: { public: true },
      schema: {
        tags: ['waitlist'],
        summary: 'A listing: its performances, sections and price levels (what waitlist criteria can name)',
        security: [],
        params: listingParams,
        response: {
          200: z.object({
            id: z.string(),
            name: z.string(),
            waitlistMode: z.enum(['OFFER', 'BROADCAST']),
            performances: z.array(
              z.object({ eventId: z.string(), name: z.string(), startsAt: z.string(), date: z.string(), soldOut: z.boolean() }),
            ),
            sections: z.array(z.string()),
            priceLevels: z.array(z.string()),
          }),
          404: errorSchema,
        },
      },
    },
    async (req, reply) => {
      const l = await waitlist.listings.get(req.params.id);
      reply.header('cache-control', 'public, max-age=5');
      return {
        id: l.id,
        name: l.name,
        waitlistMode: l.mode,
        performances: l.performances.map((p) => ({
          eventId: p.eventId,
          name: p.name,
          startsAt: p.startsAt.toISOString(),
          date: p.date,
          soldOut: p.soldOut,
        })),
        sections: [...l.sections].sort(),
        priceLevels: [...l.priceLevels].sort(),
      };
    },
  );

  app.put(
    '/listings/:id/waitlist',
    {
      schema: {
        tags: ['waitlist'],
        summary: 'Join (or update) your place on a listing’s waitlist; idempotent per (account, listing), your place is kept',
        params: listingParams,
        body: z.object({ criteria: criteriaIn.optional() }).strict(),
        response: { 200: entryOut, 201: entryOut, ...errorResponses },
      },
    },
    async (req, reply) => {
      const { entry, created } = await waitlist.join(req.accountId, req.params.id, req.body.criteria ?? {});
      return reply.status(created ? 201 : 200).send(entryBody(entry));
    },
  );

  app.delete(
    '/listings/:id/waitlist',
    {
      schema: {
        tags: ['waitlist'],
        summary: 'Leave a listing’s waitlist (open offers you hold there are declined, so the next fan gets them)',
        params: listingParams,
        response: { 200: z.object({ listingId: z.string(), left: z.boolean() }), ...errorResponses },
      },
    },
    async (req) => ({ listingId: req.params.id, ...(await waitlist.leave(req.accountId, req.params.id)) }),
  );

  app.get(
    '/me/waitlist',
    {
      schema: {
        tags: ['waitlist'],
        summary: 'Your waitlist entries: criteria, expiry, and your place among the entries that compete for the same seats',
        response: {
          200: z.object({ entries: z.array(entryOut.extend({ place: z.number(), listingEntries: z.number() })) }),
          ...errorResponses,
        },
      },
    },
    async (req) => ({
      entries: (await waitlist.mine(req.accountId)).map((e) => ({ ...entryBody(e), place: e.place, listingEntries: e.listingEntries })),
    }),
  );

  app.get(
    '/me/waitlist/matches',
    {
      schema: {
        tags: ['waitlist'],
        summary: 'Fan-out on read: which of your entries match seats on sale right now (computed when you ask)',
        response: {
          200: z.object({
            matches: z.array(
              z.object({
                listingId: z.string(),
                entryId: z.number(),
                eventId: z.string(),
                eventName: z.string(),
                startsAt: z.string(),
                sections: z.array(
                  z.object({
                    section: z.string(),
                    priceLevel: z.string(),
                    priceCents: z.number(),
                    available: z.number(),
                    longestRun: z.number(),
                  }),
                ),
              }),
            ),
          }),
          ...errorResponses,
        },
      },
    },
    async (req, reply) => {
      reply.header('cache-control', 'no-store');
      return { matches: (await waitlist.matchesNow(req.accountId)).map((m) => ({ ...m, startsAt: m.startsAt.toISOString() })) };
    },
  );

  app.get(
    '/me/notifications',
    {
      schema: {
        tags: ['waitlist'],
        summary:
          'Your in-app inbox, newest first (offers carry their claim token while open; a lottery draw tells each registered fan whether they won)',
        querystring: z.object({
          before: z.coerce.number().int().positive().optional(),
          limit: z.coerce.number().int().min(1).max(200).default(50),
        }),
        response: { 200: z.object({ notifications: z.array(notificationOut) }), ...errorResponses },
      },
    },
    async (req, reply) => {
      reply.header('cache-control', 'no-store');
      const list = await inbox(db, claimTokens, req.accountId, { beforeId: req.query.before, limit: req.query.limit });
      return { notifications: list.map(notificationBody) };
    },
  );

  app.post(
    '/me/notifications/read',
    {
      schema: {
        tags: ['waitlist'],
        summary: 'Mark your notifications read, up to and including an id',
        body: z.object({ upToId: z.number().int().positive() }).strict(),
        response: { 200: z.object({ marked: z.number() }), ...errorResponses },
      },
    },
    async (req) => ({ marked: await markRead(db, req.accountId, req.body.upToId) }),
  );

  app.post(
    '/waitlist/claims',
    {
      schema: {
        tags: ['waitlist'],
        summary:
          'Claim an offer (or a share of a broadcast release) with its claim token: the seats become your hold, with an admission token for that hold (pay, extend, release)',
        headers: z.object({ 'x-device-id': deviceIdHeaderSchema }),
        body: z.object({ claimToken: z.string().min(1).max(1024) }).strict(),
        response: {
          201: waitlistClaimSchema,
          ...errorResponses,
        },
      },
    },
    async (req, reply) => {
      const deviceHash = await verifier.deviceHash(req.headers['x-device-id'], req.accountId);
      const { place: _place, ...body } = await claimOfferWithAdmission(db, claimTokens, tokenKey, {
        accountId: req.accountId,
        deviceHash,
        claimToken: req.body.claimToken,
      });
      return reply.status(201).send({ ...body, expiresAt: body.expiresAt.toISOString() });
    },
  );

  app.post(
    '/waitlist/offers/:id/decline',
    {
      schema: {
        tags: ['waitlist'],
        summary: 'Decline an offer: its seats go to the next fan at once; you stay on the waitlist',
        params: z.object({ id: z.string().max(64) }),
        response: { 200: z.object({ offerId: z.string(), status: z.string() }), ...errorResponses },
      },
    },
    async (req) => declineOffer(db, req.accountId, req.params.id),
  );
};
