import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import fastifyCookie from '@fastify/cookie';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { poolOf } from '@onsale/shared/db';
import { createMetrics } from '@onsale/shared/metrics';
import { SectionSeatsCache } from '@onsale/shared/inventory';
import { CachedTokenVerifier, createNodeTokenKey, QueueService, WatermarkStore } from '@onsale/shared/queue';
import { AccountTokens, IdentityProviderTokens } from '@onsale/shared/auth';
import { ClaimTokens, WaitlistService } from '@onsale/shared/waitlist';
import { TicketService } from '@onsale/shared/tickets';
import { createAbuseMetrics } from '@onsale/shared/abuse';
import type { StoreApiDeps } from './deps.js';
import { joinGate, queueGauges, sharedRedis, storeServices } from './services.js';
import { authPlugin } from './plugins/auth.js';
import { admissionGate } from './plugins/admission-gate.js';
import { metricsPlugin } from './plugins/metrics.js';
import { faultsPlugin } from './plugins/faults.js';
import { openApiPlugin } from './plugins/openapi.js';
import { backgroundPlugin } from './plugins/background.js';
import { OutageLog } from './plugins/redis.js';
import { rateLimitPlugin } from './plugins/rate-limit.js';
import { edgeJoinsRoutes } from './routes/queue/edge-joins.js';
import { botGatePlugin } from './plugins/bot-gate.js';
import { loadSheddingPlugin } from './plugins/load-shedding.js';
import { routeOf } from './plugins/route-of.js';
import { laneDb, poolLanesPlugin } from './plugins/pool-lanes.js';
import { healthRoutes } from './routes/health/index.js';
import { devAuthRoutes } from './routes/auth/index.js';
import { eventRoutes } from './routes/events/index.js';
import { holdRoutes } from './routes/holds/index.js';
import { queueRoutes } from './routes/queue/index.js';
import { waitlistRoutes } from './routes/waitlist/index.js';
import { ticketRoutes } from './routes/tickets/index.js';
import { lotteryRoutes } from './routes/lottery/index.js';
import { fanRoutes } from './routes/fan/index.js';

export type { StoreApiDeps } from './deps.js';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Reads every queue's watermark now and flushes the admission claims counted since the last beat (the store
     * does both every 500 ms by itself). Tests that drive the admission controller's ticks call it instead of
     * waiting for the beat.
     */
    refreshWatermarks: () => Promise<void>;
  }
}

/**
 * Builds the fan-facing store API. Tests import this; `server.ts` only adds listening and shutdown. The order is the
 * request's: fault handling and the docs first, then load shedding, request limits, sign-in and the admission gate,
 * then the routes (plugins/ and routes/; the domain services from services.ts), and the background beats last.
 */
export async function buildStoreApi(deps: StoreApiDeps, serverOptions: FastifyServerOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, trustProxy: deps.config.trustProxy, ...serverOptions }).withTypeProvider<ZodTypeProvider>();
  // The route as the hooks read it, once per request (plugins/route-of.ts); declared here so every request has the field.
  app.decorateRequest('onsaleRoute', null);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  const metrics = deps.metrics ?? createMetrics({ defaultMetrics: true });
  await app.register(faultsPlugin, { db: deps.db, metrics, requestBudgetMs: deps.config.requestBudgetMs });
  // Holds and checkouts wait for a pooled connection ahead of seat maps and joins; every wait is timed by route kind.
  await app.register(poolLanesPlugin, { db: deps.db, metrics });
  // Cookies (the admission_token a browser may carry): parsed by the Fastify plugin's parser where one is read (the
  // admission gate), not on every request (a status poll reads none). The plugin is registered in a context of its
  // own: registered on the app it adds an onSend hook to every route (for reply.setCookie, which the store API never
  // calls), and every answer, status polls first, would pay a hook run for it.
  let parseCookie!: (header: string) => Record<string, string | undefined>;
  await app.register(async (cookies) => {
    await cookies.register(fastifyCookie, { hook: false });
    parseCookie = cookies.parseCookie.bind(cookies);
  });
  await app.register(openApiPlugin);

  // Each instance keeps every event's watermark in memory (refreshed every 500 ms): polls never read the database.
  const watermarks = new WatermarkStore(deps.db, undefined, deps.clock, `store:${deps.config.instance}:${process.pid}`);
  await app.register(metricsPlugin, {
    metrics,
    db: deps.db,
    beforeScrape: queueGauges(deps.db, metrics, watermarks),
    cluster: deps.clusterMetrics ?? null,
  });
  const redis = await sharedRedis(deps, app.log);
  if (redis) app.addHook('onClose', async () => void redis.client.disconnect());
  // First of all: an overloaded process answers 503 + Retry-After at once (expensive routes first, status polls last)
  // rather than queueing requests until a socket timeout closes them unanswered.
  if (deps.config.loadShedding) {
    let pool: { waitingCount: number } | null = null;
    try {
      pool = poolOf(deps.db);
    } catch {
      pool = null; // a Db not made by createDb: the event-loop delay alone
    }
    await app.register(loadSheddingPlugin, {
      ...deps.config.loadShedding,
      poolWaiting: () => (pool ? pool.waitingCount : null),
      countShed: (reason) => metrics.unavailableResponses.inc({ reason }),
      // A poll of a sold-out event: SOLD_OUT from memory ends the fan's polling (issue 28: under npm start's one
      // process, status polls shed at the sell-out told 2,600 fans of it 11 s late at the median, 23 s at p99).
      servedAnyway: (req) =>
        routeOf(req).key === 'GET /events/:id/queue/status' &&
        watermarks.peek((req.params as { id?: string }).id ?? '')?.watermark.state === 'SOLD_OUT',
      // A hold shed is a fan let in that the store could not take: the controller halves its window on it (issue 28).
      onShedRequest: (req) => {
        if (routeOf(req).key !== 'POST /events/:id/holds') return;
        const eventId = (req.params as { id?: string }).id ?? '';
        if (watermarks.peek(eventId)) watermarks.load.shed(eventId);
      },
    });
  }
  // A hold whose client gave up before the store answered it (an edge's origin timeout: the fan read 503
  // ORIGIN_UNAVAILABLE) is a fan let in that the store could not take in time, as a shed hold is: counted for the
  // admission controller, which halves its window on it. In a 20,000-fan stadium with a connection a fan (2026-12-07)
  // 16,195 holds met the edge's 5 s timeout and 68 were shed: the store's own load shedding never saw the line.
  // (Its response closes unfinished: Fastify's onRequestAbort sees only a request whose body never came whole.)
  // A callback hook: every other request (joins, status polls) passes it without a promise of its own.
  app.addHook('onRequest', (req, reply, done) => {
    if (routeOf(req).key === 'POST /events/:id/holds')
      reply.raw.once('close', () => {
        if (reply.raw.writableFinished) return;
        const eventId = (req.params as { id?: string } | undefined)?.id ?? '';
        if (watermarks.peek(eventId)) watermarks.load.shed(eventId);
      });
    done();
  });
  // Before auth: a flood from one address is refused before any token is verified.
  const abuseMetrics = createAbuseMetrics(metrics.registry);
  await app.register(rateLimitPlugin, {
    config: deps.config.rateLimit,
    metrics: abuseMetrics,
    ...(redis
      ? { redis: { client: redis.client, keyPrefix: redis.keyPrefix, outage: new OutageLog(app.log, 'request-limit counters') } }
      : {}),
  });
  const devTokens = deps.config.identity.kind === 'dev' ? new AccountTokens(deps.config.authSecret) : null;
  const identity =
    deps.identity ?? (deps.config.identity.kind === 'jwks' ? new IdentityProviderTokens({ ...deps.config.identity }) : devTokens!);
  await app.register(authPlugin, { identity, devTokens, db: deps.db });
  const tokenKey = await createNodeTokenKey(deps.config.queueTokenSecret);
  const tokens = new CachedTokenVerifier(tokenKey);
  await app.register(admissionGate, { tokens, metrics, parseCookie });
  // Each route's queries on its pool lane's Db (plugins/pool-lanes.ts); `other`: the routes no lane names.
  const other = laneDb(deps.db, undefined);
  await app.register(healthRoutes, { db: other, instance: deps.config.instance });
  if (deps.config.devAuth && devTokens) await app.register(devAuthRoutes, { db: other, tokens: devTokens });
  const clock = deps.clock ?? Date.now;
  const { events, seatmap, holds, lease, checkout } = await storeServices(deps, metrics, watermarks, clock);
  const seatmapDb = laneDb(deps.db, 'GET /events/:id/seatmap');
  await app.register(eventRoutes, { db: seatmapDb, events, seatmap, sectionSeats: new SectionSeatsCache(seatmapDb, undefined, clock) });
  await app.register(fanRoutes, { config: deps.config });
  await app.register(holdRoutes, {
    db: deps.db,
    holds,
    checkout,
    tokenKey,
    onHoldLost: (eventId) => metrics.holdsLost.inc({ event: eventId }),
    track: (eventId, kind, admittedWaitMs) => watermarks.load.begin(eventId, kind, admittedWaitMs),
  });
  await app.register(backgroundPlugin, { checkout, holds, lease });

  await watermarks.start();
  app.addHook('onClose', () => watermarks.stop());
  app.decorate('refreshWatermarks', () => watermarks.refresh());
  const joinDb = laneDb(deps.db, 'POST /events/:id/queue');
  const queue = new QueueService({ db: joinDb, events, watermarks, tokenKey, verifier: tokens, metrics });
  if (deps.config.botGate.enabled)
    await app.register(botGatePlugin, {
      gate: joinGate(deps, clock, redis, app.log),
      db: joinDb,
      events,
      metrics: abuseMetrics,
      now: clock,
    });
  await app.register(queueRoutes, { queue });
  // Joins an edge sends many to a request, each run through the join route's checks and answered as it would be alone.
  await app.register(edgeJoinsRoutes, {
    tokenKey,
    now: clock,
    queue,
    trustProxy: deps.config.trustProxy,
    requestBudgetMs: deps.config.requestBudgetMs,
  });
  const waitlist = new WaitlistService(other);
  const claimTokens = new ClaimTokens(deps.config.queueTokenSecret);
  await app.register(waitlistRoutes, { db: other, waitlist, claimTokens, tokenKey, verifier: tokens });
  await app.register(lotteryRoutes, { db: other, tokenKey });
  await app.register(ticketRoutes, { tickets: new TicketService({ db: other, now: clock }) });
  return app;
}
