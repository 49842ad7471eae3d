import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '@onsale/shared/db';
import type { Metrics } from '@onsale/shared/metrics';
import { CardFingerprints, CheckoutService, ProcessLease, SimulatedPaymentGateway } from '@onsale/shared/checkout';
import { EventCache } from '@onsale/shared/allocations';
import { HoldService, SeatmapCache } from '@onsale/shared/inventory';
import { lastMinuteAdmissions, type WatermarkStore } from '@onsale/shared/queue';
import { waitlistSizes } from '@onsale/shared/waitlist';
import { DefaultBotScorer, JoinGate, ProofOfWork } from '@onsale/shared/abuse';
import type { StoreApiDeps } from './deps.js';
import { createRedis, OutageLog, RedisUsedChallenges } from './plugins/redis.js';
import { laneDb } from './plugins/pool-lanes.js';

/**
 * The domain services one store process serves from, over its caches (event settings, seat maps) on `clock`: holds
 * tell the watermark store of every hold made or refused and checkouts of every gateway failure (the admission
 * controller's signals). The checkout lease is started: if this process dies mid-payment, another settles its
 * checkouts within seconds (recoverOrphanedPayments); `backgroundPlugin` ends it on close.
 */
export async function storeServices(deps: StoreApiDeps, metrics: Metrics, watermarks: WatermarkStore, clock: () => number) {
  const payments =
    deps.payments ??
    new SimulatedPaymentGateway({
      tps: deps.config.payment.tps,
      latencyMs: deps.config.payment.latencyMs,
      failureRate: deps.config.payment.failureRate,
      // The simulator remembers its charges in its own table, as a real provider does (crash recovery asks it); the
      // checkout's lane.
      db: laneDb(deps.db, 'POST /holds/:id/checkout'),
    });
  const events = new EventCache(deps.db, undefined, clock);
  // The whole event's map from the admission controller's count of each tick, as this process keeps it in memory.
  const seatmap = new SeatmapCache(deps.db, undefined, clock, (eventId) => watermarks.peek(eventId)?.sectionCounts);
  // Holds (and their batched statements) on the hold's pool lane (plugins/pool-lanes.ts); its warming reads run
  // in the standard lane (BestAvailableHolds.warmOpening). Checkouts get a Db a request (routes/holds).
  const holds = new HoldService({
    db: laneDb(deps.db, 'POST /events/:id/holds'),
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
  return { events, seatmap, holds, lease, checkout };
}

/**
 * Queue gauges at scrape time (GET /metrics): the watermark from memory, last minute's admissions and holds and the
 * waitlists' sizes from the database.
 */
export function queueGauges(db: Db, metrics: Metrics, watermarks: WatermarkStore): () => Promise<void> {
  return async () => {
    metrics.admissionWatermark.reset();
    for (const info of watermarks.all()) metrics.admissionWatermark.set({ event: info.watermark.eventId }, info.watermark.admittedThrough);
    metrics.admittedPerMin.reset();
    metrics.holdsPerAdmitted.reset();
    for (const r of await lastMinuteAdmissions(db)) {
      metrics.admittedPerMin.set({ event: r.event_id }, r.admitted);
      if (r.admitted > 0) metrics.holdsPerAdmitted.set({ event: r.event_id }, r.holds / r.admitted);
    }
    metrics.waitlistEntries.reset();
    for (const w of await waitlistSizes(db)) metrics.waitlistEntries.set({ listing: w.listingId }, w.entries);
  };
}

/**
 * What every store-API process shares when REDIS_URL is set: request-limit counters and used proof-of-work
 * challenges. Connected before the first request; if Redis does not answer, each falls back to this process's memory.
 * Null without REDIS_URL. The caller disconnects it on close.
 */
export async function sharedRedis(deps: StoreApiDeps, log: FastifyBaseLogger) {
  const redisConfig = deps.config.redis;
  if (!redisConfig) return null;
  const client = createRedis(redisConfig.url);
  client.on('error', () => {}); // reported through the outage logs (OutageLog, in each user), once per outage
  await client
    .connect()
    .catch((err: unknown) =>
      log.warn(
        { err },
        `Redis at ${redisConfig.url} does not answer: proof-of-work replay stays per process, and each process counts 1/${deps.config.rateLimit.processes} of every request limit, until it does`,
      ),
    );
  return { client, keyPrefix: redisConfig.keyPrefix };
}

/** The bot gate in front of joining a queue: a score per join, a proof-of-work challenge or a low-priority place. */
export function joinGate(deps: StoreApiDeps, clock: () => number, redis: Awaited<ReturnType<typeof sharedRedis>>, log: FastifyBaseLogger) {
  const g = deps.config.botGate;
  const pow = new ProofOfWork({
    secret: deps.config.queueTokenSecret,
    difficulty: g.powDifficultyBits,
    ttlSeconds: g.powTtlSeconds,
    now: clock,
    ...(redis ? { used: new RedisUsedChallenges(redis.client, redis.keyPrefix, new OutageLog(log, 'used proof-of-work challenges')) } : {}),
  });
  return new JoinGate({
    scorer: deps.botScorer ?? new DefaultBotScorer(),
    pow,
    secret: deps.config.queueTokenSecret,
    thresholds: { challenge: g.challengeScore, lowPriority: g.lowPriorityScore },
    lowPriorityDelaySeconds: g.lowPriorityDelaySeconds,
    now: clock,
  });
}
