import { z } from 'zod';
import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  deviceIdHeaderSchema,
  EDGE_REPORT_MAX_LENGTH,
  isDeviceId,
  negotiateLanguage,
  publicWatermark,
  QUEUE_STATES,
  TokenError,
  WATERMARK_STATES,
  type QueueService,
  type StatusPoll,
  type FanLanguage,
} from '@onsale/shared/queue';
import { errorResponses, errorSchema, serviceUnavailableSchema } from '../schemas.js';
import { compiledSerializer } from '../compiled-serializer.js';
import { fastPathValidator } from '../fast-validator.js';
import { joinChecks } from './join-checks.js';

export const params = z.object({ id: z.string().max(64) });
export const statusHeaders = z.object({
  'x-device-id': deviceIdHeaderSchema,
  'x-queue-token': z.string().min(1, 'X-Queue-Token is required').max(4096),
});
/** A presale tier's queue, by the tier's code; left out: the general sale (the event's own queue). */
const tierQuery = z.object({
  tier: z
    .string()
    .min(1)
    .max(32)
    .optional()
    .describe("a presale tier's code (GET /events/:id/fairness lists them); default: the general sale"),
});
const states = z.enum(QUEUE_STATES);

const statusBody = z.object({
  state: states,
  message: z.string(),
  position: z.number().nullable(),
  admittedThrough: z.number(),
  estWaitSeconds: z.number().nullable(),
  admissionToken: z.string().optional(),
  /** When SOLD_OUT: the listing's waitlist (PUT the join link with criteria); seats that come back go there. */
  waitlist: z.object({ listingId: z.string(), join: z.string() }).optional(),
});

const watermarkState = z.object({
  eventId: z.string(),
  admittedThrough: z.number(),
  state: z.enum(WATERMARK_STATES),
  ratePerMin: z.number(),
  updatedAt: z.number(),
  heartbeatAt: z.number(),
  cohortSize: z.number().nullable(),
  seedHex: z.string().nullable(),
  history: z
    .array(z.tuple([z.number(), z.number()]).readonly())
    .readonly()
    .optional(),
  claimWindowMs: z.number().optional(),
});
const edgeStateBody = z.object({
  eventId: z.string(),
  tiers: z.array(z.object({ code: z.string(), queueId: z.string(), general: z.boolean() })),
  queues: z.array(
    z.object({
      queueId: z.string(),
      watermark: watermarkState,
      copy: z.record(states, z.string()),
      listingId: z.string(),
      tier: z.string().nullable(),
      tierName: z.string().nullable(),
      closesAt: z.number().nullable(),
    }),
  ),
  generatedAt: z.number(),
});

// The status poll's parts as its zod schemas (params, headers) accept them, checked without a parse.
const isText = (v: unknown, min: number, max: number) => typeof v === 'string' && v.length >= min && v.length <= max;
export const statusParamsAccepted = (data: unknown) => isText((data as { id?: unknown } | null)?.id, 0, 64);
export const statusHeadersAccepted = (data: unknown) => {
  const h = data as Record<string, unknown> | null;
  return h !== null && isDeviceId(h['x-device-id']) && isText(h['x-queue-token'], 1, 4096);
};

// The join's parts, the same way: its params are the status poll's; a presale tier's code; its headers.
const optionalText = (v: unknown, max: number) => v === undefined || isText(v, 0, max);
export const joinQueryAccepted = (data: unknown) => {
  const tier = (data as { tier?: unknown } | null)?.tier;
  return data !== null && typeof data === 'object' && (tier === undefined || isText(tier, 1, 32));
};
export const joinHeadersAccepted = (data: unknown) => {
  const h = data as Record<string, unknown> | null;
  return (
    h !== null &&
    isDeviceId(h['x-device-id']) &&
    optionalText(h['x-access-code'], 4096) &&
    optionalText(h['x-proof-of-work'], 4096) &&
    optionalText(h['x-join-deferral'], 4096) &&
    optionalText(h['x-client-attestation'], 8192)
  );
};

/** A status poll's headers and body (a function of its own: under tsx, a named closure made per poll costs a defineProperty). */
function statusAnswer(reply: FastifyReply, language: FanLanguage, s: StatusPoll) {
  reply
    .header('retry-after', String(s.retryAfterSeconds))
    .header('cache-control', 'no-store')
    .header('content-language', language)
    .header('vary', 'Accept-Language');
  return {
    state: s.state,
    message: s.message,
    position: s.position,
    admittedThrough: s.admittedThrough,
    estWaitSeconds: s.estWaitSeconds,
    admissionToken: s.admissionToken,
    waitlist: s.waitlist,
  };
}

/** The join route's answers by status (the edge's joins, run without a request of their own, are written by them too). */
export const joinResponses = {
  200: z.object({
    queueToken: z.string(),
    position: z.number().nullable(),
    state: states,
    message: z.string(),
    estWaitSeconds: z.number().nullable(),
    cohort: z.enum(['PREOPEN', 'FIFO']),
    waitlist: statusBody.shape.waitlist,
  }),
  ...errorResponses,
  503: serviceUnavailableSchema,
};

/** A join's headers, as the join route reads them (checked: joinHeadersAccepted). */
interface JoinHeaders {
  'x-device-id': string;
  'x-access-code'?: string | undefined;
  'accept-language'?: string | string[] | undefined;
}

/**
 * A join's 200 answer (its headers and body) once the request limits, the account and the bot gate have let it
 * through: the join route's handler, and the same for each join of an edge's batch (POST /edge/joins).
 */
export async function joinAnswer(queue: QueueService, accountId: string, eventId: string, tier: string | undefined, headers: JoinHeaders) {
  const language = negotiateLanguage(headers['accept-language']);
  const r = await queue.join(accountId, eventId, headers['x-device-id'], { tier, accessCode: headers['x-access-code'], language });
  return {
    headers: { 'retry-after': String(r.retryAfterSeconds), 'content-language': language, vary: 'Accept-Language' },
    body: {
      queueToken: r.queueToken,
      position: r.position,
      state: r.state,
      message: r.message,
      estWaitSeconds: r.estWaitSeconds,
      cohort: r.cohort,
      waitlist: r.waitlist,
    },
  };
}

/** The waiting room: join, status polls (answered from memory), the public watermark and fairness facts. */
export const queueRoutes: FastifyPluginAsyncZod<{ queue: QueueService }> = async (app, { queue }) => {
  // The join's checks in their order (join-checks.ts: the edge's batches run the same): limits by address, account,
  // limits by account on the request; the bot gate after validation.
  const checks = joinChecks(app).hooks;
  app.post(
    '/events/:id/queue',
    {
      onRequest: checks.onRequest,
      preHandler: checks.preHandler,
      // Every join through the edge and at the origin: its answers written by a compiled serializer and its parts
      // checked by plain code before zod, as the status poll's (the zod schemas below say the same).
      serializerCompiler: compiledSerializer,
      validatorCompiler: fastPathValidator({ params: statusParamsAccepted, querystring: joinQueryAccepted, headers: joinHeadersAccepted }),
      schema: {
        tags: ['queue'],
        summary: 'Join the waiting room (idempotent per account: a repeat returns the same position)',
        description:
          'A join the bot score flags may be refused with 403 CHALLENGE_REQUIRED (solve the proof-of-work in the body, send X-Proof-Of-Work) ' +
          'or 409 JOIN_DEFERRED (join again with X-Join-Deferral after Retry-After: a later place in line).',
        params,
        querystring: tierQuery,
        headers: z.object({
          'x-device-id': deviceIdHeaderSchema,
          'x-access-code': z
            .string()
            .max(4096)
            .optional()
            .describe("an ACCESS_CODE presale tier's signed access code (single-account: its first use binds it)"),
          'x-proof-of-work': z.string().max(4096).optional().describe('<challenge token>:<suffix> answering a CHALLENGE_REQUIRED'),
          'x-join-deferral': z.string().max(4096).optional().describe('the deferral ticket of a JOIN_DEFERRED, once due'),
          'x-client-attestation': z.string().max(8192).optional().describe('an optional client attestation for the bot scorer'),
        }),
        response: joinResponses,
      },
    },
    async (req, reply) => {
      const a = await joinAnswer(queue, req.accountId, req.params.id, req.query.tier, req.headers);
      reply.headers(a.headers);
      return a.body;
    },
  );

  app.get(
    '/events/:id/queue/status',
    {
      // The hottest route: its answers are written by a serializer compiled from the JSON Schema of its zod schemas.
      serializerCompiler: compiledSerializer,
      // and its requests checked by plain code before zod (see fastPathValidator; the zod schemas below say the same).
      validatorCompiler: fastPathValidator({ params: statusParamsAccepted, headers: statusHeadersAccepted }),
      schema: {
        tags: ['queue'],
        summary: 'Poll your place (no database read); carries an admission token once admitted. Honour Retry-After.',
        description:
          "`message` is the event's words for the state in the fan's language (Accept-Language: English or Spanish; Content-Language says which). `Retry-After` (and `retryAfterSeconds`): 15-30 s while waiting, or the estimated turn when sooner (at least 5 s), 5 s in `LAST_CHANCE`, 30 s while paused; never more than 30 s, and a turn that comes is kept for the fan for 40 s (the position for 10 minutes), so a client that polls as told never reads `410 POSITION_EXPIRED`. Polling sooner gains nothing and meets the per-account limit (`429 RATE_LIMITED`).",
        params,
        headers: statusHeaders,
        response: { 200: statusBody, ...errorResponses },
      },
    },
    // Not an async handler: a poll answered from memory (most of them) is sent in the same turn, without a promise.
    (req, reply) => {
      const headers = req.headers;
      const language = negotiateLanguage(headers['accept-language']);
      const s = queue.statusNow(req.params.id, headers['x-queue-token'], req.accountId, headers['x-device-id'], language);
      return s instanceof Promise ? s.then((x) => statusAnswer(reply, language, x)) : statusAnswer(reply, language, s);
    },
  );

  app.get(
    '/events/:id/watermark',
    {
      config: { public: true },
      schema: {
        tags: ['queue'],
        summary: 'The admitted-through watermark, public and cacheable for edges',
        security: [],
        params,
        querystring: tierQuery,
        response: {
          200: z.object({ admittedThrough: z.number(), state: z.string(), ratePerMin: z.number(), updatedAt: z.string() }),
          404: errorSchema,
        },
      },
    },
    async (req, reply) => {
      const w = await queue.watermark(req.params.id, req.query.tier);
      reply.header('cache-control', 'public, max-age=2');
      return publicWatermark(w);
    },
  );

  app.get(
    '/events/:id/edge-state',
    {
      config: { public: true },
      schema: {
        tags: ['edge'],
        summary:
          "What an edge worker needs to answer the event's status polls and watermark reads itself (apps/edge fetches it once per event per EDGE_WATERMARK_TTL_SECONDS)",
        description:
          "Every queue of the event (its own and each presale tier's): the watermark with the controller heartbeat and position history, " +
          'the words per state, the listing, the tier. Public: nothing in it is secret (the seed appears only after its reveal at the open).',
        security: [],
        params,
        response: { 200: edgeStateBody, 404: errorSchema },
      },
    },
    async (req, reply) => {
      reply.header('cache-control', 'public, max-age=1');
      return queue.edgeState(req.params.id);
    },
  );

  app.post(
    '/edge/claims',
    {
      config: { public: true },
      schema: {
        tags: ['edge'],
        summary: 'Admission tokens an edge worker issued, reported in batches so the admission controller counts them',
        description:
          'The body is a report signed with the queue token secret (signClaimsReport); each report counts once. Refusals: 401 TOKEN_FORGED | TOKEN_MALFORMED | TOKEN_EXPIRED (field report).',
        security: [],
        body: z.object({ report: z.string().min(1).max(EDGE_REPORT_MAX_LENGTH) }),
        response: { 202: z.object({ counted: z.number() }), ...errorResponses },
      },
    },
    async (req, reply) => {
      try {
        const counted = await queue.recordEdgeClaims(req.body.report);
        return reply.status(202).send({ counted });
      } catch (e) {
        if (e instanceof TokenError) return reply.status(401).send({ error: e.code, message: e.message, field: 'report' });
        throw e;
      }
    },
  );

  app.get(
    '/events/:id/fairness',
    {
      config: { public: true },
      schema: {
        tags: ['queue'],
        summary: "The event's fairness mode in plain words, the seed commitment before the open, the seed after",
        security: [],
        params,
        querystring: tierQuery,
        response: {
          200: z.object({
            eventId: z.string(),
            tier: z.string().optional(),
            mode: z.string(),
            description: z.string(),
            onsaleAt: z.string(),
            seedCommitment: z.string(),
            seed: z.string().nullable(),
            cohortSize: z.number().nullable(),
            verificationRecipe: z.string(),
            tiers: z
              .array(
                z.object({
                  code: z.string(),
                  name: z.string(),
                  general: z.boolean(),
                  queueId: z.string(),
                  access: z.enum(['OPEN', 'ACCESS_CODE', 'CARD_BIN']),
                  fairnessMode: z.string(),
                  opensAt: z.string(),
                  closesAt: z.string().nullable(),
                  rollsForwardAt: z.string().nullable(),
                  rollsInto: z.string().nullable(),
                }),
              )
              .optional(),
          }),
          404: errorSchema,
        },
      },
    },
    async (req, reply) => {
      reply.header('cache-control', 'public, max-age=5');
      return queue.fairness(req.params.id, req.query.tier);
    },
  );
};
