import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Db } from '@onsale/shared/db';
import { fairnessModes } from '@onsale/shared/events';
import { EventCache } from '@onsale/shared/allocations';
import { ADMISSION_TOKEN_TTL_SECONDS, copyTimesOf, FAN_LANGUAGES, QUEUE_STATES, queueCopyByLanguage } from '@onsale/shared/queue';
import { SeatmapCache, SectionSeatsCache, type Seatmap, type SectionSeatMap } from '@onsale/shared/inventory';
import { notFound } from '@onsale/shared';
import { tierToJoin } from '@onsale/shared/allocations';
import { errorResponses, errorSchema } from '../schemas.js';
import { onceSerializer } from '../compiled-serializer.js';

const params = z.object({ id: z.string().max(64) });
/** RESERVED: seats (best available, or picked once seat picking opens); GA: general admission, counts only. */
const sectionKind = z.enum(['RESERVED', 'GA']);

const eventPage = z.object({
  id: z.string(),
  listingId: z.string(),
  name: z.string(),
  venueName: z.string(),
  startsAt: z.string(),
  onsaleAt: z.string(),
  seatPickingOpensAt: z.string(),
  fairnessMode: z.enum(fairnessModes),
  perAccountSeatLimit: z.number(),
  holdTtlSeconds: z.number(),
  holdExtensionSeconds: z.number(),
  /** How long an admitted fan's turn to choose seats lasts (the admission token's life). */
  turnSeconds: z.number(),
  capacity: z.number(),
  /** ISO 4217: every price of the event is in it (priceCents in its minor unit). */
  currency: z.string(),
  /** The venue's IANA time zone: the show's date and time are shown in it. */
  timeZone: z.string(),
  sections: z.array(
    z.object({
      code: z.string(),
      name: z.string(),
      kind: sectionKind,
      priceLevel: z.string(),
      priceLevelName: z.string(),
      priceCents: z.number(),
      capacity: z.number(),
    }),
  ),
  /** The promoter's look for the fans' page; null: the default look. */
  look: z
    .object({
      logoUrl: z.string().optional(),
      logoAlt: z.string().optional(),
      colors: z.object({ brand: z.string(), brandText: z.string(), background: z.string(), text: z.string() }).partial().optional(),
    })
    .nullable(),
  /** The event's words for each queue state, in every fan language (the promoter's, over the defaults). */
  copy: z.record(z.enum(FAN_LANGUAGES), z.record(z.enum(QUEUE_STATES), z.string())),
});

const seatmapSchema = z.object({
  eventId: z.string(),
  tier: z.string().optional(),
  generatedAt: z.string(),
  sections: z.array(
    z.object({
      code: z.string(),
      name: z.string(),
      kind: sectionKind,
      priceLevel: z.string(),
      priceCents: z.number(),
      capacity: z.number(),
      available: z.number(),
      held: z.number(),
      sold: z.number(),
    }),
  ),
});

/**
 * One answer object per cached view: the caches hand every fan the same Seatmap (or SectionSeatMap) until they build
 * the next, so its answer is built once and, with onceSerializer, written once, not for every fan who reads it.
 */
class AnswerOf<V extends object, A extends object> {
  private readonly answers = new WeakMap<V, A>();
  constructor(private readonly build: (view: V) => A) {}
  of(view: V): A {
    let answer = this.answers.get(view);
    if (answer === undefined) {
      answer = this.build(view);
      this.answers.set(view, answer);
    }
    return answer;
  }
}

/** Public, cacheable reads: the event page (ETag) and the seat map (1-2 s stale by design). */
export const eventRoutes: FastifyPluginAsyncZod<{
  db: Db;
  events: EventCache;
  seatmap: SeatmapCache;
  sectionSeats: SectionSeatsCache;
}> = async (app, { events, seatmap, sectionSeats }) => {
  const seatmapAnswers = new AnswerOf((map: Seatmap) => ({
    eventId: map.eventId,
    ...(map.tier ? { tier: map.tier } : {}),
    generatedAt: map.generatedAt.toISOString(),
    sections: map.sections,
  }));
  const sectionAnswers = new AnswerOf((map: SectionSeatMap) => ({ ...map, generatedAt: map.generatedAt.toISOString() }));
  app.get(
    '/events/:id',
    {
      config: { public: true },
      schema: {
        tags: ['events'],
        summary: 'Event page',
        security: [],
        params,
        response: { 200: eventPage, 304: z.null(), 404: errorSchema },
      },
    },
    async (req, reply) => {
      const { event, sections } = await events.get(req.params.id);
      const etag = `"${createHash('sha1').update(`${event.id}:${event.version}:${event.updatedAt.getTime()}`).digest('hex').slice(0, 20)}"`;
      reply.header('cache-control', 'public, max-age=5, stale-while-revalidate=30').header('etag', etag);
      if (req.headers['if-none-match'] === etag) return reply.status(304).send(null);
      return {
        id: event.id,
        listingId: event.listingId,
        name: event.name,
        venueName: event.venueName,
        startsAt: event.startsAt.toISOString(),
        onsaleAt: event.onsaleAt.toISOString(),
        seatPickingOpensAt: event.seatPickingOpensAt.toISOString(),
        fairnessMode: event.fairnessMode,
        perAccountSeatLimit: event.perAccountSeatLimit,
        holdTtlSeconds: event.holdTtlSeconds,
        holdExtensionSeconds: event.holdExtensionSeconds,
        turnSeconds: ADMISSION_TOKEN_TTL_SECONDS,
        capacity: event.capacity,
        currency: event.currency,
        timeZone: event.timeZone,
        sections: [...sections.values()].map((s) => ({
          code: s.code,
          name: s.name,
          kind: s.kind,
          priceLevel: s.priceLevel,
          priceLevelName: s.priceLevelName,
          priceCents: s.priceCents,
          capacity: s.capacity,
        })),
        look: event.look ? { logoUrl: event.look.logoUrl, logoAlt: event.look.logoAlt, colors: event.look.colors } : null,
        copy: queueCopyByLanguage(event.queueCopy, event.look?.copy, copyTimesOf(event.holdTtlSeconds)),
      };
    },
  );

  app.get(
    '/events/:id/seatmap',
    {
      config: { public: true },
      // Every admitted fan reads it before holding: its answer (a stadium's 150 sections) written by a serializer
      // compiled from its JSON Schema rather than a zod parse of every answer, and once per cached map (answerOf):
      // every fan reading the same map gets the text written for the first.
      serializerCompiler: onceSerializer,
      schema: {
        tags: ['events'],
        summary: "Section availability (served from a 1-2 s cache); with ?tier=, one presale tier's seats and units only",
        security: [],
        params,
        querystring: z.object({ tier: z.string().min(1).max(32).optional().describe("a presale tier's code; default: the whole event") }),
        response: { 200: seatmapSchema, 404: errorSchema },
      },
    },
    async (req, reply) => {
      const { sections, tiers } = await events.get(req.params.id);
      const tier = req.query.tier === undefined ? undefined : (tierToJoin(tiers, req.query.tier) ?? undefined);
      const map = await seatmap.get(req.params.id, sections, tier);
      reply.header('cache-control', 'public, max-age=1');
      return seatmapAnswers.of(map);
    },
  );

  app.get(
    '/events/:id/sections/:code/seats',
    {
      // A section's every seat (400 in a stadium's): compiled, as the seat map (a zod parse of 400 seats cost 0.2-0.35
      // ms), and written once per cached section (answerOf).
      serializerCompiler: onceSerializer,
      schema: {
        tags: ['events'],
        summary: "A reserved section's seats for the seat map, each available or not (1 s cache); needs the admission token",
        description:
          "For picking exact seats (POST /events/:id/holds {seatIds}) once seat picking opens. A presale admission sees only its tier's seats as available.",
        params: z.object({ id: z.string().max(64), code: z.string().min(1).max(32) }),
        response: {
          200: z.object({
            eventId: z.string(),
            section: z.string(),
            generatedAt: z.string(),
            seats: z.array(z.object({ id: z.number(), row: z.string(), number: z.number(), available: z.boolean() })),
          }),
          ...errorResponses,
        },
      },
    },
    async (req, reply) => {
      const { sections } = await events.get(req.params.id);
      const section = sections.get(req.params.code);
      if (!section) throw notFound('SECTION_NOT_FOUND', `event has no section ${req.params.code}`, 'code');
      const map = await sectionSeats.get(req.params.id, section, req.admission?.tier);
      reply.header('cache-control', 'private, max-age=1');
      return sectionAnswers.of(map);
    },
  );
};
