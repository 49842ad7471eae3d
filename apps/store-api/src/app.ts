import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import fastifyCookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { DatabaseHealth, databaseFaultOf, healthOf, logOutages, poolOf, type Db } from '@onsale/shared/db';
import { createMetrics, type Metrics } from '@onsale/shared/metrics';
import { EpisodeLog } from '@onsale/shared/overload';
import { CardFingerprints, CheckoutService, ProcessLease, SimulatedPaymentGateway, type PaymentProvider } from '@onsale/shared/checkout';
import { EventCache } from '@onsale/shared/events';
import { HoldService, SeatmapCache, SectionSeatsCache } from '@onsale/shared/inventory';
import { CachedTokenVerifier, createNodeTokenKey, lastMinuteAdmissions, QueueService, WatermarkStore } from '@onsale/shared/queue';
import { AccountTokens, IdentityProviderTokens, type FanIdentity } from '@onsale/shared/auth';
import type { StoreApiConfig } from './env.js';
import { installErrorHandling } from './errors.js';
import { serviceUnavailableSchema } from './routes/schemas.js';
import { authPlugin } from './plugins/auth.js';
import { admissionGate } from './plugins/admission-gate.js';
import { metricsPlugin } from './plugins/metrics.js';
import { healthRoutes } from './routes/health/index.js';
import { devAuthRoutes } from './routes/auth/index.js';
import { eventRoutes } from './routes/events/index.js';
import { holdRoutes } from './routes/holds/index.js';
import { queueRoutes } from './routes/queue/index.js';
import { waitlistRoutes } from './routes/waitlist/index.js';
import { ticketRoutes } from './routes/tickets/index.js';
import { lotteryRoutes } from './routes/lottery/index.js';
import { fanRoutes } from './routes/fan/index.js';
import { ClaimTokens, WaitlistService, waitlistSizes } from '@onsale/shared/waitlist';
import { TicketService } from '@onsale/shared/tickets';
import { createAbuseMetrics, DefaultBotScorer, JoinGate, ProofOfWork, type BotScorer } from '@onsale/shared/abuse';
import { createRedis, OutageLog, RedisUsedChallenges } from './plugins/redis.js';
import { rateLimitPlugin } from './plugins/rate-limit.js';
import { botGatePlugin } from './plugins/bot-gate.js';
import { loadSheddingPlugin } from './plugins/load-shedding.js';
import { requestBudgetPlugin } from './plugins/request-budget.js';

declare module 'fastify' {
  interface FastifyInstance {
    routeTable: { method: string; url: string }[];
    /**
     * Reads every queue's watermark now and flushes the admission claims counted since the last beat (the store
     * does both every 500 ms by itself). Tests that drive the admission controller's ticks call it instead of
     * waiting for the beat.
     */
    refreshWatermarks: () => Promise<void>;
  }
}

export interface StoreApiDeps {
  db: Db;
  config: StoreApiConfig;
  payments?: PaymentProvider;
  metrics?: Metrics;
  /** The bot-score hook's scorer (default: DefaultBotScorer over the request's signals). */
  botScorer?: BotScorer;
  /** Fan identity to use instead of the one the config names (tests). */
  identity?: FanIdentity;
  /** A store process of a cluster: merges every process's figures into GET /metrics (clusterMetricsGatherer). */
  clusterMetrics?: ((own: Metrics['registry']) => Promise<string>) | null;
  /**
   * The clock of the caches (event settings, seat maps), the hold rules and the bot gate, in epoch ms (default
   * Date.now), and the time admission claims are recorded at (default: the database's clock). Tests move an injected
   * clock instead of waiting for a cache to turn or a deferral to pass.
   */
  clock?: () => number;
}

/** The pool's health tracker (createDb makes one per pool; any other Db gets its own, fed by the error handler alone). */
function databaseHealthOf(db: Db): DatabaseHealth {
  try {
    return healthOf(db);
  } catch {
    return new DatabaseHealth();
  }
}

/** Builds the fan-facing store API. Tests import this; `server.ts` only adds listening and shutdown. */
export async function buildStoreApi(deps: StoreApiDeps, serverOptions: FastifyServerOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, trustProxy: deps.config.trustProxy, ...serverOptions }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  const metrics = deps.metrics ?? createMetrics({ defaultMetrics: true });
  // A database outage is answered 503 + Retry-After on every route and logged twice (when it starts, when it ends),
  // never once per request.
  const health = databaseHealthOf(deps.db);
  metrics.databaseUp.set(health.up ? 1 : 0);
  const onDown = () => {
    metrics.databaseUp.set(0);
    metrics.databaseOutages.inc();
  };
  const onUp = () => metrics.databaseUp.set(1);
  health.on('down', onDown);
  health.on('up', onUp);
  const stopLogging = logOutages(health, app.log, 'answering 503 with Retry-After until it is back');
  app.addHook('onClose', async () => {
    health.off('down', onDown);
    health.off('up', onUp);
    stopLogging();
  });
  // A request past its budget (REQUEST_BUDGET_MS) is answered 503 at once, before anything else can hold it up;
  // logged as episodes, not per request.
  const overBudget = new EpisodeLog({
    log: app.log,
    started:
      'requests past their budget: answering them 503 with Retry-After (reason request_budget) before a socket timeout could close them',
    ended: (count, seconds) => `requests past their budget: ${count} answered 503 over ${seconds} s`,
  });
  app.addHook('onClose', async () => overBudget.stop());
  const faults = {
    health,
    count503: (reason: 'database' | 'database_busy' | 'overload_pool' | 'request_budget') => metrics.unavailableResponses.inc({ reason }),
    overBudget: () => overBudget.note(),
  };
  installErrorHandling(app, faults);
  if (deps.config.requestBudgetMs > 0) await app.register(requestBudgetPlugin, { budgetMs: deps.config.requestBudgetMs, faults });
  // Cookies (the admission_token a browser may carry): parsed by the Fastify plugin's parser where one is read (the
  // admission gate), not on every request (a status poll reads none).
  await app.register(fastifyCookie, { hook: false });

  const payments =
    deps.payments ??
    new SimulatedPaymentGateway({
      tps: deps.config.payment.tps,
      latencyMs: deps.config.payment.latencyMs,
      failureRate: deps.config.payment.failureRate,
      // The simulator remembers its charges in its own table, as a real provider does (crash recovery asks it).
      db: deps.db,
    });

  // The server's own route table (method + path), for the admission gate's deny-by-default test.
  const routeTable: { method: string; url: string }[] = [];
  app.decorate('routeTable', routeTable);
  app.addHook('onRoute', (route) => {
    // The docs are public pages; everything else is decided by the route's own config.
    if (route.url.startsWith('/docs') || route.url.startsWith('/e/')) route.config = { ...(route.config ?? {}), public: true };
    for (const method of [route.method].flat()) if (method !== 'HEAD') routeTable.push({ method, url: route.url });
    // Every route may answer 503 with Retry-After (a database outage, load shed): the OpenAPI document says so.
    const response = route.schema?.response as Record<string, unknown> | undefined;
    if (response && !('503' in response)) route.schema!.response = { ...response, 503: serviceUnavailableSchema };
  });
  await app.register(swagger, {
    openapi: {
      info: { title: 'Onsale store API', version: '0.1.0', description: 'Fan-facing API: events, holds, checkout.' },
      components: { securitySchemes: { account: { type: 'http', scheme: 'bearer' } } },
      security: [{ account: [] }],
    },
    transform: jsonSchemaTransform,
    // The components: schemas with an id in zod's registry (the error codes).
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' } });

  // Queue gauges at scrape time: the watermark from memory, last minute's admissions and holds from the database.
  // Each instance keeps every event's watermark in memory (refreshed every 500 ms): polls never read the database.
  const watermarks = new WatermarkStore(deps.db, undefined, deps.clock, `store:${deps.config.instance}:${process.pid}`);
  const beforeScrape = async () => {
    metrics.admissionWatermark.reset();
    for (const info of watermarks.all()) metrics.admissionWatermark.set({ event: info.watermark.eventId }, info.watermark.admittedThrough);
    metrics.admittedPerMin.reset();
    metrics.holdsPerAdmitted.reset();
    for (const r of await lastMinuteAdmissions(deps.db)) {
      metrics.admittedPerMin.set({ event: r.event_id }, r.admitted);
      if (r.admitted > 0) metrics.holdsPerAdmitted.set({ event: r.event_id }, r.holds / r.admitted);
    }
    metrics.waitlistEntries.reset();
    for (const w of await waitlistSizes(deps.db)) metrics.waitlistEntries.set({ listing: w.listingId }, w.entries);
  };
  await app.register(metricsPlugin, { metrics, db: deps.db, beforeScrape, cluster: deps.clusterMetrics ?? null });
  // What every store-API process shares when REDIS_URL is set: request-limit counters and used proof-of-work
  // challenges. Connected before the first request; if Redis does not answer, each falls back to this process's memory.
  const redisConfig = deps.config.redis;
  const redis = redisConfig ? createRedis(redisConfig.url) : null;
  if (redis) {
    redis.on('error', () => {}); // reported through the outage logs below, once per outage
    await redis
      .connect()
      .catch((err: unknown) =>
        app.log.warn(
          { err },
          `Redis at ${redisConfig!.url} does not answer: proof-of-work replay stays per process, and each process counts 1/${deps.config.rateLimit.processes} of every request limit, until it does`,
        ),
      );
    app.addHook('onClose', async () => void redis.disconnect());
  }
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
    });
  }
  // Before auth: a flood from one address is refused before any token is verified.
  const abuseMetrics = createAbuseMetrics(metrics.registry);
  await app.register(rateLimitPlugin, {
    config: deps.config.rateLimit,
    metrics: abuseMetrics,
    ...(redis
      ? { redis: { client: redis, keyPrefix: redisConfig!.keyPrefix, outage: new OutageLog(app.log, 'request-limit counters') } }
      : {}),
  });
  const devTokens = deps.config.identity.kind === 'dev' ? new AccountTokens(deps.config.authSecret) : null;
  const identity =
    deps.identity ?? (deps.config.identity.kind === 'jwks' ? new IdentityProviderTokens({ ...deps.config.identity }) : devTokens!);
  await app.register(authPlugin, { identity, devTokens, db: deps.db });
  const tokenKey = await createNodeTokenKey(deps.config.queueTokenSecret);
  const tokens = new CachedTokenVerifier(tokenKey);
  await app.register(admissionGate, { tokens, metrics });
  await app.register(healthRoutes, { db: deps.db, instance: deps.config.instance });
  if (deps.config.devAuth && devTokens) await app.register(devAuthRoutes, { db: deps.db, tokens: devTokens });
  const clock = deps.clock ?? Date.now;
  const events = new EventCache(deps.db, undefined, clock);
  const seatmap = new SeatmapCache(deps.db, undefined, clock);
  const holds = new HoldService({
    db: deps.db,
    events,
    seatmap,
    metrics,
    now: clock,
    holdCommit: deps.config.holdCommit,
    repeatWindowSeconds: deps.config.holdRepeatWindowSeconds,
    onOutcome: (eventId, created) => watermarks.countHold(eventId, created),
  });
  // This process's lease on the checkouts it starts: if it dies mid-payment, another process settles them within
  // seconds (recoverOrphanedPayments); a clean stop ends the lease at once.
  const lease = new ProcessLease(deps.db);
  await lease.start();
  const checkout = new CheckoutService({
    db: deps.db,
    payments,
    metrics,
    lease,
    cards: new CardFingerprints(deps.config.cardFingerprintSecret),
    onGatewayFailure: (eventId) => watermarks.countGatewayFailure(eventId),
  });
  let settling: Promise<unknown> | undefined;
  const orphans = setInterval(() => {
    settling ??= checkout
      .recoverOrphanedPayments()
      .catch((err: unknown) => databaseFaultOf(err) || app.log.error({ err }, 'settling unfinished payments failed'))
      .finally(() => (settling = undefined));
  }, 1_000);
  orphans.unref();
  app.addHook('onClose', async () => {
    clearInterval(orphans);
    await settling;
    await lease.stop();
  });
  await app.register(eventRoutes, { db: deps.db, events, seatmap, sectionSeats: new SectionSeatsCache(deps.db, undefined, clock) });
  await app.register(fanRoutes, { config: deps.config });
  await app.register(holdRoutes, {
    db: deps.db,
    holds,
    checkout,
    tokenKey,
    onHoldLost: (eventId) => metrics.holdsLost.inc({ event: eventId }),
    track: (eventId, kind) => watermarks.load.begin(eventId, kind),
  });
  // Settles checkouts whose process died mid-payment (asks the provider, writes the order or gives the hold back).
  const recovery = setInterval(() => {
    checkout.recoverStalePayments().catch((err: unknown) => databaseFaultOf(err) || app.log.error({ err }, 'payment recovery failed'));
  }, 30_000);
  recovery.unref();
  app.addHook('onClose', async () => clearInterval(recovery));
  // Best-available views of the events in their on-sale rush are read before their fans ask (see warmOpening).
  const warming = setInterval(() => {
    // A database outage is logged once by the health listener, not by every background beat.
    holds.warmOpening().catch((err: unknown) => databaseFaultOf(err) || app.log.warn({ err }, 'warming seat views failed'));
  }, 2_000);
  warming.unref();
  app.addHook('onClose', async () => clearInterval(warming));

  await watermarks.start();
  app.addHook('onClose', () => watermarks.stop());
  app.decorate('refreshWatermarks', () => watermarks.refresh());
  const queue = new QueueService({ db: deps.db, events, watermarks, tokenKey, verifier: tokens, metrics });
  if (deps.config.botGate.enabled) {
    const g = deps.config.botGate;
    const pow = new ProofOfWork({
      secret: deps.config.queueTokenSecret,
      difficulty: g.powDifficultyBits,
      ttlSeconds: g.powTtlSeconds,
      now: clock,
      ...(redis
        ? { used: new RedisUsedChallenges(redis, redisConfig!.keyPrefix, new OutageLog(app.log, 'used proof-of-work challenges')) }
        : {}),
    });
    const gate = new JoinGate({
      scorer: deps.botScorer ?? new DefaultBotScorer(),
      pow,
      secret: deps.config.queueTokenSecret,
      thresholds: { challenge: g.challengeScore, lowPriority: g.lowPriorityScore },
      lowPriorityDelaySeconds: g.lowPriorityDelaySeconds,
      now: clock,
    });
    await app.register(botGatePlugin, { gate, db: deps.db, events, metrics: abuseMetrics, now: clock });
  }
  await app.register(queueRoutes, { queue });
  const waitlist = new WaitlistService(deps.db);
  const claimTokens = new ClaimTokens(deps.config.queueTokenSecret);
  await app.register(waitlistRoutes, { db: deps.db, waitlist, claimTokens, tokenKey, verifier: tokens });
  await app.register(lotteryRoutes, { db: deps.db, tokenKey });
  await app.register(ticketRoutes, { tickets: new TicketService({ db: deps.db, now: clock }) });
  return app;
}
