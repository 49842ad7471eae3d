import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The Prometheus metrics of one process. A registry per instance (not the global one), so tests and
 * several apps in one process never collide. Under a cluster (`npm start -- --store-instances N`) a scrape merges
 * every process's (metrics/cluster.ts): counters and histograms are summed; the gauges read from the database at
 * scrape time are the scraping process's own (`aggregator: 'first'`); `database_up` is the lowest (0 when any
 * process cannot reach the database).
 */
export function createMetrics(opts: { defaultMetrics?: boolean } = {}) {
  const registry = new Registry();
  if (opts.defaultMetrics) collectDefaultMetrics({ register: registry });
  const m = {
    registry,
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by route and status',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    holdsCreated: new Counter({
      name: 'holds_created_total',
      help: 'Holds created',
      labelNames: ['event'] as const,
      registers: [registry],
    }),
    holdAttempts: new Counter({
      name: 'hold_attempts_total',
      help: 'Conditional-write attempts by outcome (hit: all seats taken; miss: a concurrent writer won a seat)',
      labelNames: ['event', 'section', 'outcome'] as const,
      registers: [registry],
    }),
    holdFailures: new Counter({
      name: 'hold_failures_total',
      help: 'Hold requests refused, by code',
      labelNames: ['event', 'code'] as const,
      registers: [registry],
    }),
    holdsLost: new Counter({
      name: 'holds_lost_total',
      help: 'Holds answered but lost to a database crash (HOLD_COMMIT=async), found when their fan next touched them (410 HOLD_LOST)',
      labelNames: ['event'] as const,
      registers: [registry],
    }),
    holdLatency: new Histogram({
      name: 'hold_latency_seconds',
      help: 'Time to create a hold, end to end in the domain',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    poolWait: new Histogram({
      name: 'db_pool_wait_seconds',
      help: "Time a query waited for a pooled database connection, by route kind (hold, checkout, holds: a hold's other routes, seatmap, join, other, section_view: a view's background refresh, background: no request) and lane (purchase is served first)",
      labelNames: ['kind', 'lane'] as const,
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5],
      registers: [registry],
    }),
    checkouts: new Counter({
      name: 'checkouts_total',
      help: 'Checkout outcomes',
      labelNames: ['event', 'result'] as const,
      registers: [registry],
    }),
    paymentAttempts: new Counter({
      name: 'payment_attempts_total',
      help: 'Calls to the payment provider by result',
      labelNames: ['result'] as const,
      registers: [registry],
    }),
    holdExpiredDuringPayment: new Counter({
      name: 'hold_expired_during_payment_total',
      help: 'Payments that succeeded after the hold could no longer be converted (refunded)',
      registers: [registry],
    }),
    requestsWithoutAdmission: new Counter({
      name: 'requests_without_admission_token_total',
      help: 'Gated store requests refused for lack of an admission token',
      labelNames: ['route'] as const,
      registers: [registry],
    }),
    admissionDeviceMismatch: new Counter({
      name: 'admission_token_device_mismatch_total',
      help: 'Admission tokens presented from another account or device (shared or resold positions)',
      registers: [registry],
    }),
    queueJoined: new Counter({
      name: 'queue_joined_total',
      help: 'Fans who took a position in the waiting room (repeat joins excluded)',
      labelNames: ['event'] as const,
      registers: [registry],
    }),
    admissionWatermark: new Gauge({
      name: 'admission_watermark',
      help: 'The admitted-through watermark each event publishes',
      labelNames: ['event'] as const,
      aggregator: 'first',
      registers: [registry],
    }),
    admittedPerMin: new Gauge({
      name: 'admitted_per_min',
      help: 'Admission tokens issued in the last full minute',
      labelNames: ['event'] as const,
      aggregator: 'first',
      registers: [registry],
    }),
    holdsPerAdmitted: new Gauge({
      name: 'holds_created_per_min_per_admitted_per_min',
      help: 'holds_created_per_min / admitted_per_min over the last full minute (should stay at or below ~1.2)',
      labelNames: ['event'] as const,
      aggregator: 'first',
      registers: [registry],
    }),
    soldoutPropagation: new Histogram({
      name: 'soldout_propagation_seconds',
      help: 'From the sell-out to a polling fan being told SOLD_OUT (first time per fan)',
      buckets: [0.5, 1, 2, 5, 10, 30, 60, 120],
      registers: [registry],
    }),
    inventorySeats: new Gauge({
      name: 'inventory_seats',
      help: 'Seats by effective status (read-time expiry), per event',
      labelNames: ['event', 'status'] as const,
      aggregator: 'first',
      registers: [registry],
    }),
    invariantDrift: new Gauge({
      name: 'inventory_invariant_drift',
      help: 'available + held + sold - capacity, and sold seats - seats in confirmed orders; must be 0',
      labelNames: ['event', 'check'] as const,
      aggregator: 'first',
      registers: [registry],
    }),
    waitlistEntries: new Gauge({
      name: 'waitlist_entries',
      help: 'Live waitlist entries per listing (listings with a performance still to come, the largest first)',
      labelNames: ['listing'] as const,
      aggregator: 'first',
      registers: [registry],
    }),
    waitlistMatches: new Counter({
      name: 'waitlist_matches_total',
      help: 'Waitlist entries matched by availability events, by mode (OFFER counts offers made)',
      labelNames: ['mode'] as const,
      registers: [registry],
    }),
    waitlistNotifications: new Counter({
      name: 'waitlist_notifications_total',
      help: 'Waitlist notifications handed to a channel, by channel and outcome (delivered, retrying, dead, deferred)',
      labelNames: ['channel', 'status'] as const,
      registers: [registry],
    }),
    unavailableResponses: new Counter({
      name: 'service_unavailable_responses_total',
      help: 'Requests answered 503 with Retry-After, by reason (database: unreachable; database_busy: a statement refused under load; overload_*: shed before it queued)',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    databaseUp: new Gauge({
      name: 'database_up',
      help: "1 while this process reaches its database, 0 during an outage (learnt from the pool's own traffic)",
      aggregator: 'min',
      registers: [registry],
    }),
    databaseOutages: new Counter({
      name: 'database_outages_total',
      help: 'Database outages this process has seen (each logged once when it starts and once when it ends)',
      registers: [registry],
    }),
    waitlistNotifyLatency: new Histogram({
      name: 'waitlist_notify_latency_seconds',
      help: 'From the availability event to the notification delivered, by channel (rule 8 of docs/architecture.md: under a minute)',
      labelNames: ['channel'] as const,
      buckets: [0.1, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300],
      registers: [registry],
    }),
  };
  // Up until the process learns otherwise (a gauge nobody set would read 0: "no database").
  m.databaseUp.set(1);
  return m;
}

export type Metrics = ReturnType<typeof createMetrics>;

/** Copies the latest reconciliation per event into the inventory gauges (called before each scrape). */
export function recordReconciliations(
  m: Metrics,
  rows: { event_id: string; available: number; held: number; sold: number; drift: number; order_drift: number }[],
): void {
  m.inventorySeats.reset();
  m.invariantDrift.reset();
  for (const r of rows) {
    m.inventorySeats.set({ event: r.event_id, status: 'available' }, r.available);
    m.inventorySeats.set({ event: r.event_id, status: 'held' }, r.held);
    m.inventorySeats.set({ event: r.event_id, status: 'sold' }, r.sold);
    m.invariantDrift.set({ event: r.event_id, check: 'capacity' }, r.drift);
    m.invariantDrift.set({ event: r.event_id, check: 'orders' }, r.order_drift);
  }
}

export { answerClusterMetrics, clusterMetricsGatherer, relayClusterMetrics } from './cluster.js';
export { requestTimer } from './request-timer.js';
