import { z } from 'zod';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Db } from '@onsale/shared/db';
import {
  holdExtensionSchema,
  holdLost,
  holdRequestSchema,
  isLostHold,
  toHoldRequest,
  type Hold,
  type HoldService,
} from '@onsale/shared/inventory';
import { checkoutRequestSchema, idempotencyKeySchema, orderConfirmationSchema, type CheckoutService } from '@onsale/shared/checkout';
import { deviceFingerprint } from '@onsale/shared/abuse';
import { holdAdmissionClaims, MAX_HOLD_EXTENSION_SECONDS, signToken, type TokenKey } from '@onsale/shared/queue';
import { errorResponses, errorSchema, holdSchema, serviceUnavailableSchema } from '../schemas.js';
import { compiledSerializer } from '../compiled-serializer.js';
import { laneDb, requestLaneDb } from '../../plugins/pool-lanes.js';

const toBody = (h: Hold) => ({ ...h, expiresAt: h.expiresAt.toISOString() });
const holdParams = z.object({ id: z.string().max(64) });

/** Holds and checkout. Every route here needs the fan's account token (the auth hook). */
export const holdRoutes: FastifyPluginAsyncZod<{
  db: Db;
  holds: HoldService;
  checkout: CheckoutService;
  tokenKey: TokenKey;
  onHoldLost?: (eventId: string) => void;
  /**
   * Counts a hold or checkout of an event in flight (the store's load the admission controller follows); returns
   * the function to call once it is answered. `admittedWaitMs`: how long the fan waited between collecting its
   * admission (its token's issue time) and its hold reaching the store.
   */
  track?: (eventId: string, kind: 'hold' | 'checkout', admittedWaitMs?: number) => () => void;
}> = async (app, { db: base, holds, checkout, tokenKey, onHoldLost, track }) => {
  // A hold's other routes (read, extend, release) on the purchase lane (plugins/pool-lanes.ts).
  const db = laneDb(base, 'GET /holds/:id');
  /** Runs `work` counted as in flight for the admitted event (a signed token's event: never an id from the URL alone). */
  const tracked = async <T>(
    eventId: string | undefined,
    kind: 'hold' | 'checkout',
    work: () => Promise<T>,
    admittedWaitMs?: number,
  ): Promise<T> => {
    const done = eventId && track ? track(eventId, kind, admittedWaitMs) : undefined;
    try {
      return await work();
    } finally {
      done?.();
    }
  };
  /**
   * A route on one hold, answering `410 HOLD_LOST` (see holdLost) when the hold is missing and the request's token
   * was signed for it: the hold was answered but lost to a database crash (HOLD_COMMIT=async). The answer carries
   * an admission token for the event, no longer tied to the lost hold, so the fan can hold again at once.
   */
  const onHold = async <T>(
    req: Pick<FastifyRequest, 'admission' | 'accountId'> & { params: { id: string } },
    work: () => Promise<T>,
  ): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      const a = req.admission;
      const proof = a && { holdId: req.params.id, tokenHoldId: a.holdId, eventId: a.eventId, accountId: req.accountId };
      if (!a || !proof || !isLostHold(err, proof)) throw err;
      const { holdId: _lost, ...eventClaims } = a;
      const admissionToken = await signToken(tokenKey, eventClaims);
      throw await holdLost(db, proof, { admissionToken }, () => onHoldLost?.(a.eventId));
    }
  };
  app.post(
    '/events/:id/holds',
    {
      // Its answers (the hold, and its refusals) written by a serializer compiled from the JSON Schema of its zod
      // schemas, as the join's and the status poll's: a zod encode of every answer cost more than the writing.
      serializerCompiler: compiledSerializer,
      schema: {
        tags: ['holds'],
        summary: 'Hold seats: best available in a section, or exact seats once seat picking is open',
        description:
          "Idempotent. With an `Idempotency-Key`, a retry (its first answer lost to a timeout or a reset connection) gets the hold that key made, with `Idempotent-Replayed: true`, whatever became of it since (its `status` says); the key with a different request is `400 IDEMPOTENCY_KEY_REUSED`. Without one, the same request within 30 s of a live hold it made gets that hold back (also `Idempotent-Replayed: true`) rather than a second one. A retry is never refused for the fan's own limit. Under the event's no-single-seats rule (on by default) no hold leaves one seat alone that another placement would not: an exact-seat pick that would is `409 SINGLE_SEAT_LEFT` with `seats` (left alone) and `instead` (the seat ids to pick instead). A party that cannot sit together is `409 SECTION_NEARLY_FULL` with `alternatives` (other sections), `together` (the most seats together here) and `split` (the best split of the party here, `[{ row, seats }]`); `split: true` in the request takes that split in one hold.",
        params: z.object({ id: z.string().max(64) }),
        headers: z.object({
          'idempotency-key': idempotencyKeySchema
            .optional()
            .describe('one per hold request, chosen by the client (a UUID is typical): a retry with it gets the same hold back'),
        }),
        body: holdRequestSchema,
        response: {
          201: holdSchema.extend({
            admissionToken: z
              .string()
              .describe(
                "X-Admission-Token for this hold's routes (pay, extend, release, read) until the hold can live no longer; it opens no new hold",
              ),
          }),
          ...errorResponses,
        },
      },
    },
    async (req, reply) => {
      // The admission gate has matched X-Device-Id with the token's binding; limits count the device across accounts.
      const admitted = req.admission?.eventId === req.params.id ? req.params.id : undefined;
      const { hold, replayed } = await tracked(
        admitted,
        'hold',
        () =>
          holds.hold(
            req.accountId,
            req.params.id,
            toHoldRequest(req.body),
            {
              deviceHash: deviceFingerprint(req.headers['x-device-id'] as string),
              // A presale's admission holds that tier's seats.
              tier: req.admission?.tier,
            },
            req.headers['idempotency-key'],
          ),
        // The wait since the fan collected its admission: a line in front of the store shows there (window.ts).
        req.admission ? Date.now() - req.admission.iat * 1000 : undefined,
      );
      if (replayed) reply.header('idempotent-replayed', 'true');
      // The admission token is checked for expiry on every route; the hold comes with its own, so paying at minute
      // 12 for seats held at minute 9 works while no new hold can be made past minute 10.
      const admissionToken = await signToken(
        tokenKey,
        holdAdmissionClaims(req.admission!, hold.holdId, hold.expiresAt.getTime(), MAX_HOLD_EXTENSION_SECONDS, Date.now()),
      );
      return reply.status(201).send({ ...toBody(hold), admissionToken });
    },
  );

  app.get(
    '/holds/:id',
    {
      schema: {
        tags: ['holds'],
        summary: 'A hold of yours, with read-time expiry applied',
        params: holdParams,
        response: { 200: holdSchema, ...errorResponses },
      },
    },
    async (req) => onHold(req, async () => toBody(await holds.get(db, req.accountId, req.params.id, req.admission?.eventId))),
  );

  app.post(
    '/holds/:id/extend',
    {
      schema: {
        tags: ['holds'],
        summary: 'The single extension, when payment starts',
        params: holdParams,
        response: { 200: holdExtensionSchema, ...errorResponses },
      },
    },
    async (req) =>
      onHold(req, async () => {
        const hold = await db.transaction().execute((trx) => holds.extend(trx, req.accountId, req.params.id, req.admission?.eventId));
        return { holdId: hold.holdId, expiresAt: hold.expiresAt.toISOString() };
      }),
  );

  app.delete(
    '/holds/:id',
    {
      schema: {
        tags: ['holds'],
        summary: 'Release a hold (its seats go back on sale at once)',
        params: holdParams,
        response: {
          200: z.object({ holdId: z.string(), status: z.enum(['HELD', 'PAYING', 'PURCHASED', 'RELEASED', 'EXPIRED']) }),
          ...errorResponses,
        },
      },
    },
    async (req) =>
      onHold(req, async () => {
        const hold = await holds.releaseQueued(req.accountId, req.params.id, req.admission?.eventId);
        return { holdId: hold.holdId, status: hold.status };
      }),
  );

  app.post(
    '/holds/:id/checkout',
    {
      serializerCompiler: compiledSerializer,
      schema: {
        tags: ['checkout'],
        summary: 'Pay for a hold. Idempotent per Idempotency-Key: retries return the same order, never a second charge',
        description:
          '`410 HOLD_LOST` (also on reading, extending and releasing a hold): the hold was answered but lost to a brief database failure (HOLD_COMMIT=async), so its seats went back on sale and nothing was charged; hold again, with the `admissionToken` the answer carries (a token for the event, no longer for the lost hold). Sent only to the fan whose token was signed for that hold; any other missing hold is `404 HOLD_NOT_FOUND`.',
        params: holdParams,
        headers: z.object({ 'idempotency-key': idempotencyKeySchema }),
        body: checkoutRequestSchema,
        response: {
          200: orderConfirmationSchema,
          ...errorResponses,
          402: errorSchema,
          422: errorSchema,
          503: serviceUnavailableSchema,
        },
      },
    },
    async (req, reply) => {
      // A retry waiting on the first request with its key stops waiting when its client goes. Every answer closes
      // its response too, after it was written: aborting then would tell nobody anything, and each abort builds a
      // DOMException (a stack trace) and dispatches an event, for every checkout the store answers.
      const gone = new AbortController();
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) gone.abort();
      });
      const r = await tracked(req.admission?.eventId, 'checkout', () =>
        onHold(req, () =>
          checkout.checkout(
            req.accountId,
            req.params.id,
            req.headers['idempotency-key'],
            req.body,
            req.admission?.eventId,
            gone.signal,
            // A tag of the request's own: its second transaction, after the payment, waits ahead of new checkouts.
            requestLaneDb(base, 'POST /holds/:id/checkout'),
          ),
        ),
      );
      if (r.replayed) reply.header('idempotent-replayed', 'true');
      return { orderId: r.orderId, holdId: r.holdId, status: r.status, amountCents: r.amountCents, seatCount: r.seatCount };
    },
  );
};
