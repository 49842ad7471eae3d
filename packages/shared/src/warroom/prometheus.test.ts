import { describe, expect, it } from 'vitest';
import { createMetrics } from '../metrics/index.js';
import { addHistograms, histogramDelta, histogramQuantile, parseCounter, parseHistogram } from './prometheus.js';
import { StoreMetricsScraper } from './store-metrics.js';

describe('Prometheus histograms', () => {
  it("parses the store API's own exposition (prom-client), summing label sets", async () => {
    const m = createMetrics();
    for (const s of [0.004, 0.02, 0.02, 0.3, 0.7]) m.holdLatency.observe(s);
    m.requestsWithoutAdmission.inc({ route: '/events/:id/holds' }, 3);
    m.requestsWithoutAdmission.inc({ route: '/holds/:id/checkout' }, 2);
    const text = await m.registry.metrics();

    const h = parseHistogram(text, 'hold_latency_seconds')!;
    expect(h.count).toBe(5);
    expect(h.sum).toBeCloseTo(1.044);
    expect(h.buckets.find((b) => b.le === 0.025)!.count).toBe(3);
    expect(h.buckets.at(-1)).toEqual({ le: Infinity, count: 5 });
    expect(parseCounter(text, 'requests_without_admission_token')).toBe(5);
    expect(parseHistogram(text, 'no_such_metric')).toBeNull();
    expect(parseCounter(text, 'no_such_metric')).toBeNull();
  });

  it('quantiles interpolate inside a bucket like histogram_quantile, and cap at the highest finite bound', () => {
    const h = {
      buckets: [
        { le: 0.1, count: 50 },
        { le: 0.5, count: 99 },
        { le: 1, count: 100 },
        { le: Infinity, count: 100 },
      ],
      count: 100,
      sum: 0,
    };
    expect(histogramQuantile(0.5, h)).toBeCloseTo(0.1);
    expect(histogramQuantile(0.99, h)).toBeCloseTo(0.5);
    expect(histogramQuantile(0.995, h)).toBeCloseTo(0.75);
    expect(histogramQuantile(0.25, h)).toBeCloseTo(0.05);
    const tail = {
      buckets: [
        { le: 1, count: 1 },
        { le: Infinity, count: 10 },
      ],
      count: 10,
      sum: 0,
    };
    expect(histogramQuantile(0.99, tail)).toBe(1);
    expect(histogramQuantile(0.99, { buckets: [{ le: Infinity, count: 0 }], count: 0, sum: 0 })).toBeNull();
    expect(() => histogramQuantile(1.5, h)).toThrow(RangeError);
  });

  it('the 500 ms SLO is a bucket bound: p99 passes it exactly when more than 1% of holds took longer', () => {
    const under = {
      buckets: [
        { le: 0.25, count: 990 },
        { le: 0.5, count: 1000 },
        { le: 1, count: 1000 },
        { le: Infinity, count: 1000 },
      ],
      count: 1000,
      sum: 0,
    };
    const over = {
      buckets: [
        { le: 0.25, count: 970 },
        { le: 0.5, count: 980 },
        { le: 1, count: 1000 },
        { le: Infinity, count: 1000 },
      ],
      count: 1000,
      sum: 0,
    };
    expect(histogramQuantile(0.99, under)!).toBeLessThanOrEqual(0.5);
    expect(histogramQuantile(0.99, over)!).toBeGreaterThan(0.5);
  });

  it('a delta is what happened between two scrapes; a restarted process counts from zero', () => {
    const a = {
      buckets: [
        { le: 0.1, count: 10 },
        { le: Infinity, count: 12 },
      ],
      count: 12,
      sum: 1,
    };
    const b = {
      buckets: [
        { le: 0.1, count: 15 },
        { le: Infinity, count: 20 },
      ],
      count: 20,
      sum: 3,
    };
    expect(histogramDelta(b, a)).toEqual({
      buckets: [
        { le: 0.1, count: 5 },
        { le: Infinity, count: 8 },
      ],
      count: 8,
      sum: 2,
    });
    const restarted = {
      buckets: [
        { le: 0.1, count: 1 },
        { le: Infinity, count: 2 },
      ],
      count: 2,
      sum: 0.1,
    };
    expect(histogramDelta(restarted, b)).toBe(restarted);
    expect(histogramDelta(b, null)).toBe(b);
    expect(addHistograms([a, b])).toEqual({
      buckets: [
        { le: 0.1, count: 25 },
        { le: Infinity, count: 32 },
      ],
      count: 32,
      sum: 4,
    });
    expect(addHistograms([])).toBeNull();
  });
});

describe('StoreMetricsScraper', () => {
  it('adds every instance, answers p99 over the window, and reports an instance that does not answer', async () => {
    const one = createMetrics();
    const two = createMetrics();
    let twoUp = true;
    const fake: typeof fetch = async (url) => {
      const u = url instanceof Request ? url.url : String(url);
      if (u.startsWith('http://two') && !twoUp) throw new Error('connection refused');
      const m = u.startsWith('http://one') ? one : two;
      return new Response(await m.registry.metrics());
    };
    const scraper = new StoreMetricsScraper({ urls: ['http://one/', 'http://two'], windowMs: 60_000, fetch: fake });
    expect(scraper.current).toMatchObject({ configured: true, instances: 2, holdLatencyP99Ms: null });

    for (let i = 0; i < 99; i++) one.holdLatency.observe(0.01);
    two.holdLatency.observe(2); // a long time ago: one slow hold
    const t0 = 1_000_000;
    const first = await scraper.scrape(t0);
    expect(first).toMatchObject({ reachable: 2, holdsObserved: 100 });
    expect(first.holdLatencyP99Ms!).toBeLessThanOrEqual(10);

    // A minute later, 100 fast holds: the slow one has left the window.
    for (let i = 0; i < 100; i++) two.holdLatency.observe(0.004);
    one.requestsWithoutAdmission.inc({ route: '/events/:id/holds' }, 30);
    const later = await scraper.scrape(t0 + 60_000);
    expect(later.holdsObserved).toBe(100);
    expect(later.holdLatencyP99Ms!).toBeLessThanOrEqual(5);
    expect(later.gateRefusalsPerMin).toBe(30);
    expect(later).toMatchObject({ unavailablePerMin: 0, databaseDownInstances: 0 });

    // An outage on one instance: it says database_up 0 and counts its 503s.
    one.databaseUp.set(0);
    one.unavailableResponses.inc({ reason: 'database' }, 45);
    two.unavailableResponses.inc({ reason: 'overload_event_loop' }, 15);
    const outage = await scraper.scrape(t0 + 90_000);
    expect(outage).toMatchObject({ databaseDownInstances: 1, unavailablePerMin: 40 }); // 60 over the 90 s since the window's base scrape
    one.databaseUp.set(1);

    // Slow holds now: p99 crosses 500 ms.
    for (let i = 0; i < 10; i++) one.holdLatency.observe(0.9);
    const slow = await scraper.scrape(t0 + 150_000);
    expect(slow.holdLatencyP99Ms!).toBeGreaterThan(500);

    twoUp = false;
    expect((await scraper.scrape(t0 + 151_000)).reachable).toBe(1);
  });

  it('without URLs nothing is measured, and says so', async () => {
    const s = new StoreMetricsScraper({ urls: [] });
    expect(await s.scrape()).toMatchObject({ configured: false, holdLatencyP99Ms: null, soldOutPropagationP99Seconds: null });
  });
});
