import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Db } from '@onsale/shared/db';
import type { TokenKey } from '@onsale/shared/queue/edge';
import { deviceIdHeaderSchema } from '@onsale/shared/queue';
import {
  MAX_REGISTRATION_PAGE,
  lotteryFacts,
  myLottery,
  redeemInvitation,
  registerForLottery,
  type LotteryRegistration,
} from '@onsale/shared/lottery';
import { errorResponses } from '../schemas.js';

const params = z.object({ id: z.string().max(64) });

const registrationOut = z.object({ eventId: z.string(), sequence: z.number(), quantity: z.number(), registeredAt: z.string() });
const registrationBody = (r: LotteryRegistration) => ({ ...r, registeredAt: r.registeredAt.toISOString() });

const mineOut = z.object({
  state: z.enum(['REGISTERED', 'WON', 'NOT_DRAWN']),
  registration: registrationOut,
  /** REGISTERED: the draw runs after registration closes. */
  drawAfter: z.string().optional(),
  /** WON: the signed invitation, good in the cohort's window only; redeem it for an admission token. */
  invitation: z
    .object({
      code: z.string(),
      rank: z.number(),
      cohort: z.number(),
      windowOpensAt: z.string(),
      windowClosesAt: z.string(),
      redeem: z.string(),
    })
    .optional(),
  /** NOT_DRAWN: you are on the listing's waitlist for this performance with your quantity. */
  waitlist: z.object({ listingId: z.string(), join: z.string() }).optional(),
});

const factsOut = z.object({
  eventId: z.string(),
  mode: z.literal('REGISTRATION_LOTTERY'),
  description: z.string(),
  onsaleAt: z.string(),
  registrationOpensAt: z.string(),
  registrationClosesAt: z.string(),
  expectedConversion: z.number(),
  cohorts: z.number(),
  cohortMinutes: z.number(),
  seatsOffered: z.number(),
  targetRequestedSeats: z.number(),
  seedCommitment: z.string(),
  seed: z.string().nullable(),
  drawnAt: z.string().nullable(),
  registrationCount: z.number(),
  winnersCount: z.number().nullable(),
  invitedSeats: z.number().nullable(),
  cohortWindows: z.array(z.object({ cohort: z.number(), opensAt: z.string(), closesAt: z.string() })),
  registrations: z.array(
    z.object({
      account: z.string(),
      sequence: z.number(),
      quantity: z.number(),
      won: z.boolean().nullable(),
      rank: z.number().nullable(),
      cohort: z.number().nullable(),
    }),
  ),
  nextFrom: z.number().nullable(),
  verificationRecipe: z.string(),
});

/**
 * Registration + lottery (fairness mode REGISTRATION_LOTTERY): register in the window, read your state, redeem a
 * winner's invitation for an admission token in your cohort's window, and the public facts anyone can audit.
 */
export const lotteryRoutes: FastifyPluginAsyncZod<{ db: Db; tokenKey: TokenKey; now?: () => number }> = async (
  app,
  { db, tokenKey, now = Date.now },
) => {
  app.post(
    '/events/:id/lottery/registrations',
    {
      schema: {
        tags: ['lottery'],
        summary: 'Register for the lottery (one registration per account: a repeat answers 200 with the same registration)',
        description:
          '201 when the registration is new, 200 when the account had registered (a different quantity replaces the old one, keeping the place). ' +
          '409 REGISTRATION_NOT_OPEN / REGISTRATION_CLOSED outside the window, 409 NOT_A_LOTTERY_EVENT, 400 QUANTITY_ABOVE_LIMIT (field quantity).',
        params,
        body: z.object({ quantity: z.number().int().min(1).max(100).describe('seats wanted, at most the per-account limit') }).strict(),
        response: { 200: registrationOut, 201: registrationOut, ...errorResponses },
      },
    },
    async (req, reply) => {
      const { registration, created } = await db
        .transaction()
        .execute((trx) =>
          registerForLottery(trx, { eventId: req.params.id, accountId: req.accountId, quantity: req.body.quantity, now: new Date(now()) }),
        );
      return reply.status(created ? 201 : 200).send(registrationBody(registration));
    },
  );

  app.get(
    '/events/:id/lottery/registration',
    {
      schema: {
        tags: ['lottery'],
        summary:
          'Your registration: REGISTERED (drawn after registration closes), WON (with your invitation), or NOT_DRAWN (on the waitlist)',
        params,
        response: { 200: mineOut, ...errorResponses },
      },
    },
    async (req, reply) => {
      const m = await myLottery(db, tokenKey, req.params.id, req.accountId);
      reply.header('cache-control', 'private, no-store');
      const registration = registrationBody(m.registration);
      if (m.state === 'REGISTERED') return { state: m.state, registration, drawAfter: m.drawAfter.toISOString() };
      if (m.state === 'NOT_DRAWN') return { state: m.state, registration, waitlist: m.waitlist };
      const i = m.invitation;
      return {
        state: m.state,
        registration,
        invitation: { ...i, windowOpensAt: i.windowOpensAt.toISOString(), windowClosesAt: i.windowClosesAt.toISOString() },
      };
    },
  );

  app.get(
    '/events/:id/lottery',
    {
      config: { public: true },
      schema: {
        tags: ['lottery'],
        summary:
          "The lottery's public facts: windows, seed commitment (the seed after the draw), counts, and the registration list to re-derive the draw",
        description: `The registration list comes in pages of up to ${MAX_REGISTRATION_PAGE} by sequence: pass the answer's nextFrom as ?from= until it is null.`,
        security: [],
        params,
        querystring: z.object({
          from: z.coerce.number().int().min(0).default(0),
          limit: z.coerce.number().int().min(1).max(MAX_REGISTRATION_PAGE).default(1000),
        }),
        response: { 200: factsOut, 400: errorResponses[400], 404: errorResponses[404], 409: errorResponses[409] },
      },
    },
    async (req, reply) => {
      const f = await lotteryFacts(db, req.params.id, { from: req.query.from, limit: req.query.limit });
      reply.header('cache-control', 'public, max-age=5');
      const iso = (d: Date) => d.toISOString();
      return {
        ...f,
        onsaleAt: iso(f.onsaleAt),
        registrationOpensAt: iso(f.registrationOpensAt),
        registrationClosesAt: iso(f.registrationClosesAt),
        drawnAt: f.drawnAt ? iso(f.drawnAt) : null,
        cohortWindows: f.cohortWindows.map((w) => ({ cohort: w.cohort, opensAt: iso(w.opensAt), closesAt: iso(w.closesAt) })),
      };
    },
  );

  app.post(
    '/events/:id/lottery/admission',
    {
      schema: {
        tags: ['lottery'],
        summary:
          "Redeem a winner's invitation code for an admission token (X-Admission-Token for holds and checkout), in the cohort's window",
        description:
          'The token is bound to the account and X-Device-Id and lives 10 minutes or until the window closes; redeem again for a fresh one. ' +
          'Refusals write nothing: 400 INVITATION_MALFORMED, 403 INVITATION_FORGED | INVITATION_WRONG_EVENT | INVITATION_WRONG_ACCOUNT | INVITATION_REVOKED, ' +
          '409 INVITATION_NOT_YET_VALID (with opensAt), 410 INVITATION_EXPIRED (with closesAt).',
        params,
        headers: z.object({ 'x-device-id': deviceIdHeaderSchema }),
        body: z.object({ invitationCode: z.string().min(1).max(2048) }).strict(),
        response: {
          200: z.object({
            admissionToken: z.string(),
            expiresAt: z.string(),
            position: z.number(),
            cohort: z.number(),
            windowClosesAt: z.string(),
          }),
          ...errorResponses,
        },
      },
    },
    async (req, reply) => {
      const r = await redeemInvitation(db, tokenKey, {
        eventId: req.params.id,
        accountId: req.accountId,
        deviceId: req.headers['x-device-id'],
        invitationCode: req.body.invitationCode,
        now: now(),
      });
      reply.header('cache-control', 'no-store');
      return { ...r, expiresAt: r.expiresAt.toISOString(), windowClosesAt: r.windowClosesAt.toISOString() };
    },
  );
};
