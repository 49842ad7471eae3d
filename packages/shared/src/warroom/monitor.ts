import type pino from 'pino';
import type { Db } from '../db/connect.js';
import { recordAlerts, type RecordedAlerts } from './alerts.service.js';
import { findMonitoredEventIds, tryMonitorLock } from './alerts.repository.js';
import { upsertSaleMinutes } from './series.repository.js';
import type { StoreMetricsScraper } from './store-metrics.js';
import { readWarRoomSnapshots, type WarRoomSnapshot } from './warroom.service.js';

/** How often the monitor reads the events on sale (default). */
export const MONITOR_EVERY_MS = 5_000;

export interface WarRoomMonitorOptions {
  db: Db;
  /** The store API's metrics (hold latency, sold-out propagation); absent: those alerts cannot fire. */
  storeMetrics?: StoreMetricsScraper;
  everyMs?: number;
  /** How long an alert must stay quiet to resolve (default ALERT_RESOLVE_AFTER_MS). */
  resolveAfterMs?: number;
  /** Most events read per pass (default 500). */
  limit?: number;
  logger?: pino.Logger;
}

/** What one pass did. */
export interface MonitorPass {
  /** Another process held the monitor's lock: it did the pass. */
  skipped: boolean;
  events: number;
  alerts: RecordedAlerts;
}

/** The figures of a snapshot as its minute's row of the sale's series. */
export function saleMinuteOf(s: WarRoomSnapshot) {
  const at = Date.parse(s.at);
  return {
    event_id: s.eventId,
    minute: new Date(Math.floor(at / 60_000) * 60_000),
    state: s.state,
    capacity: s.inventory.capacity,
    available: s.inventory.available,
    held: s.inventory.held,
    sold: s.inventory.sold,
    joined: s.queue.joined,
    waiting: s.queue.waiting,
    admitted_through: s.queue.admittedThrough,
    admitted: s.admission.admittedThisMinute,
    controller_rate_per_min: s.admission.controllerRatePerMin,
    plan_admits_per_min: s.admission.plan?.admitsPerMinute ?? null,
    rate_override_per_min: s.queue.rateOverridePerMin,
    checkout_attempts: s.checkout.attempts2m,
    checkout_failed: s.checkout.failed2m,
    checkout_declined: s.checkout.declined2m,
    payment_attempts_per_second: s.payment.attemptsPerSecond,
    hold_latency_p99_ms: s.holdLatency.p99Ms,
    alerts_critical: s.alerts.filter((a) => a.severity === 'critical').length,
    alerts_warning: s.alerts.filter((a) => a.severity === 'warning').length,
  };
}

/**
 * Watches every event on sale whether or not anyone has the war room open: every few seconds it reads their
 * figures (the war room's own read), records each event's alerts (history and messages to the alert receivers,
 * see recordAlerts) and the minute of the sale's series. One process at a time does it (a transaction-scoped
 * advisory lock, not waited for), however many workers run; a pass that fails is logged and the next one tries.
 */
export class WarRoomMonitor {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;
  readonly everyMs: number;

  constructor(private readonly opts: WarRoomMonitorOptions) {
    this.everyMs = opts.everyMs ?? MONITOR_EVERY_MS;
    if (!(this.everyMs >= 50)) throw new RangeError('everyMs must be at least 50');
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    // Ignored on purpose: Stopping only waits for the pass in flight to end; that pass reports its own errors.
    await this.running?.catch(() => {});
  }

  /** One pass now (tests drive it directly). */
  async runOnce(): Promise<MonitorPass> {
    const { db } = this.opts;
    const ids = await findMonitoredEventIds(db, this.opts.limit ?? 500);
    const none: RecordedAlerts = { fired: 0, escalated: 0, resolved: 0, messages: 0 };
    if (ids.length === 0) return { skipped: false, events: 0, alerts: none };
    const store = this.opts.storeMetrics ? await this.opts.storeMetrics.scrape() : undefined;
    const snapshots = await readWarRoomSnapshots(db, ids, store);
    return db.transaction().execute(async (trx) => {
      if (!(await tryMonitorLock(trx))) return { skipped: true, events: snapshots.length, alerts: none };
      const alerts = await recordAlerts(trx, snapshots, { resolveAfterMs: this.opts.resolveAfterMs });
      await upsertSaleMinutes(trx, snapshots.map(saleMinuteOf));
      return { skipped: false, events: snapshots.length, alerts };
    });
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      const started = Date.now();
      this.running = this.runOnce()
        .then((pass) => {
          const a = pass.alerts;
          if (a.fired + a.escalated + a.resolved > 0) this.opts.logger?.info({ alerts: a }, 'war-room alerts changed');
        })
        .catch((err: unknown) => this.opts.logger?.warn({ err }, 'war-room monitor pass failed; the next one tries again'))
        .finally(() => this.schedule(Math.max(0, this.everyMs - (Date.now() - started))));
    }, ms);
    this.timer.unref();
  }
}
