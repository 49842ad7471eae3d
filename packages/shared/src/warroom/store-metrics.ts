import { addHistograms, histogramDelta, histogramQuantile, parseCounter, parseHistogram, type Histogram } from './prometheus.js';

/**
 * The war-room figures that exist only in the store API's in-process metrics, read from its `GET /metrics`.
 *
 * Why scrape rather than read the database: hold latency is measured in the store API's process (end to end
 * through the hold batcher) and no table records it; the sold-out propagation is observed at each fan's first
 * SOLD_OUT poll, which by design never touches the database. Everything else the war room shows comes from
 * PostgreSQL, which every instance writes, so it is the same whichever BFF asks. Both histograms are
 * platform-wide (the store API labels them by nothing), and the war room says so beside them.
 *
 * Every instance listed is scraped and the histograms added. Latency is a window: the difference between now and
 * the scrape nearest `windowMs` ago, so an old slow minute does not haunt the p99 for the life of the process.
 */
export interface StoreMetrics {
  /** Store-API /metrics URLs were given (STORE_API_URL); false means these figures are not measured here. */
  configured: boolean;
  instances: number;
  /** Instances that answered the last scrape. */
  reachable: number;
  /** p99 of hold_latency_seconds over the window, in ms; null with no hold in the window. */
  holdLatencyP99Ms: number | null;
  holdsObserved: number;
  /** p99 of soldout_propagation_seconds over the propagation window; null when no fan was told SOLD_OUT in it. */
  soldOutPropagationP99Seconds: number | null;
  soldOutPollsObserved: number;
  /** Gated requests refused for lack of an admission token, per minute over the window (the tell of the detection line "holds per admitted fan"). */
  gateRefusalsPerMin: number | null;
  /**
   * Requests answered 503 with Retry-After per minute over the window, all instances (a database outage, a statement
   * refused under load, load shed before it queued); null before two scrapes.
   */
  unavailablePerMin: number | null;
  /** Instances that report losing their database (database_up 0) at the last scrape. */
  databaseDownInstances: number;
  /**
   * Instances counting request limits in their own memory because Redis does not answer (request_limits_local > 0),
   * and the share each counts (1/N of every limit; 0 when none is).
   */
  limitsLocalInstances: number;
  limitsLocalDivisor: number;
  windowSeconds: number;
  scrapedAt: string | null;
}

export interface StoreMetricsOptions {
  /** Base URLs of the store-API instances (…/metrics is appended). */
  urls: readonly string[];
  /** Latency and refusal window (default 60 s). */
  windowMs?: number;
  /** Sold-out propagation window (default 10 min: sell-outs are rare, and each fan is observed once). */
  propagationWindowMs?: number;
  /** Per-request timeout (default 1 s: a slow store API must not hold up the war room's tick). */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

interface Sample {
  at: number;
  holdLatency: Histogram | null;
  propagation: Histogram | null;
  gateRefusals: number | null;
  unavailable: number | null;
}

export const UNMEASURED_STORE_METRICS: StoreMetrics = {
  configured: false,
  instances: 0,
  reachable: 0,
  holdLatencyP99Ms: null,
  holdsObserved: 0,
  soldOutPropagationP99Seconds: null,
  soldOutPollsObserved: 0,
  gateRefusalsPerMin: null,
  unavailablePerMin: null,
  databaseDownInstances: 0,
  limitsLocalInstances: 0,
  limitsLocalDivisor: 0,
  windowSeconds: 60,
  scrapedAt: null,
};

/** Scrapes the store API's /metrics and keeps enough history to answer windowed figures. */
export class StoreMetricsScraper {
  private readonly urls: string[];
  private readonly windowMs: number;
  private readonly propagationWindowMs: number;
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;
  private history: Sample[] = [];
  private last: StoreMetrics;

  constructor(opts: StoreMetricsOptions) {
    this.urls = opts.urls.map((u) => `${u.replace(/\/+$/, '')}/metrics`);
    this.windowMs = opts.windowMs ?? 60_000;
    this.propagationWindowMs = opts.propagationWindowMs ?? 600_000;
    this.timeoutMs = opts.timeoutMs ?? 1_000;
    this.fetch = opts.fetch ?? globalThis.fetch;
    this.last = {
      ...UNMEASURED_STORE_METRICS,
      configured: this.urls.length > 0,
      instances: this.urls.length,
      windowSeconds: this.windowMs / 1000,
    };
  }

  /** The figures of the latest scrape. */
  get current(): StoreMetrics {
    return this.last;
  }

  /** Scrapes every instance once (never throws: an instance that does not answer counts as unreachable). */
  async scrape(now = Date.now()): Promise<StoreMetrics> {
    if (this.urls.length === 0) return this.last;
    const texts = await Promise.all(
      this.urls.map(async (url) => {
        try {
          const res = await this.fetch(url, { signal: AbortSignal.timeout(this.timeoutMs) });
          return res.ok ? await res.text() : null;
        } catch {
          return null;
        }
      }),
    );
    const ok = texts.filter((t): t is string => t !== null);
    const sample: Sample = {
      at: now,
      holdLatency: addHistograms(ok.map((t) => parseHistogram(t, 'hold_latency_seconds')).filter((h): h is Histogram => h !== null)),
      propagation: addHistograms(ok.map((t) => parseHistogram(t, 'soldout_propagation_seconds')).filter((h): h is Histogram => h !== null)),
      gateRefusals: ok.length === 0 ? null : ok.reduce((sum, t) => sum + (parseCounter(t, 'requests_without_admission_token') ?? 0), 0),
      unavailable: ok.length === 0 ? null : ok.reduce((sum, t) => sum + (parseCounter(t, 'service_unavailable_responses') ?? 0), 0),
    };
    // A scrape where some instance did not answer would look like a counter reset; keep it out of the history.
    const complete = ok.length === this.urls.length;
    const horizon = now - Math.max(this.windowMs, this.propagationWindowMs) - 5_000;
    if (complete) this.history = [...this.history.filter((s) => s.at >= horizon), sample];
    const base = (windowMs: number) => {
      // The newest sample at least windowMs old, else the oldest kept: the window is as long as we have.
      let pick: Sample | undefined;
      for (const s of this.history) if (s.at <= now - windowMs && s !== sample) pick = s;
      return pick ?? this.history.find((s) => s !== sample);
    };
    const latencyBase = base(this.windowMs);
    const propagationBase = base(this.propagationWindowMs);
    const latency = sample.holdLatency ? histogramDelta(sample.holdLatency, latencyBase?.holdLatency ?? null) : null;
    const propagation = sample.propagation ? histogramDelta(sample.propagation, propagationBase?.propagation ?? null) : null;
    const latencyP99 = latency ? histogramQuantile(0.99, latency) : null;
    const propagationP99 = propagation ? histogramQuantile(0.99, propagation) : null;
    const perMin = (latest: number | null, earlier: number | null | undefined): number | null => {
      if (latest === null || !latencyBase || earlier === null || earlier === undefined || !(now > latencyBase.at)) return null;
      const d = latest - earlier;
      return Math.round(((d >= 0 ? d : latest) * 60_000) / (now - latencyBase.at));
    };
    const gateRefusalsPerMin = perMin(sample.gateRefusals, latencyBase?.gateRefusals);
    const unavailablePerMin = perMin(sample.unavailable, latencyBase?.unavailable);
    this.last = {
      configured: true,
      instances: this.urls.length,
      reachable: ok.length,
      holdLatencyP99Ms: latencyP99 === null ? null : Math.round(latencyP99 * 1000 * 10) / 10,
      holdsObserved: latency?.count ?? 0,
      soldOutPropagationP99Seconds: propagationP99 === null ? null : Math.round(propagationP99 * 10) / 10,
      soldOutPollsObserved: propagation?.count ?? 0,
      gateRefusalsPerMin,
      unavailablePerMin,
      databaseDownInstances: ok.filter((t) => parseCounter(t, 'database_up') === 0).length,
      limitsLocalInstances: ok.filter((t) => (parseCounter(t, 'request_limits_local') ?? 0) > 0).length,
      limitsLocalDivisor: Math.max(0, ...ok.map((t) => parseCounter(t, 'request_limits_local') ?? 0)),
      windowSeconds: this.windowMs / 1000,
      scrapedAt: new Date(now).toISOString(),
    };
    return this.last;
  }
}
