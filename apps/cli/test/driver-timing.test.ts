import { describe, expect, it } from 'vitest';
import { connectionBounds } from '../src/rehearse/driver.js';
import { LatencyHistogram } from '../src/rehearse/histogram.js';

describe('LatencyHistogram', () => {
  it('reads back percentiles within 2% of the samples, from 10 µs to an hour', () => {
    const h = new LatencyHistogram();
    expect(h.summary()).toEqual({ count: 0, p50: null, p99: null, max: null });
    // 1..10,000 ms, one each: p50 5,000, p99 9,900.
    for (let v = 1; v <= 10_000; v++) h.add(v);
    const s = h.summary();
    expect(s.count).toBe(10_000);
    expect(s.p50!).toBeGreaterThanOrEqual(5000);
    expect(s.p50!).toBeLessThanOrEqual(5000 * 1.02);
    expect(s.p99!).toBeGreaterThanOrEqual(9900);
    expect(s.p99!).toBeLessThanOrEqual(9900 * 1.02);
    expect(s.max).toBe(10_000);
    const fine = new LatencyHistogram();
    for (const v of [0.05, 0.05, 0.3, 0.31, -1]) fine.add(v);
    expect(fine.quantile(0.5)).toBeCloseTo(0.06, 5);
    expect(fine.quantile(1)).toBeCloseTo(0.31, 5);
    const long = new LatencyHistogram();
    long.add(5 * 3_600_000);
    expect(long.quantile(0.99)).toBe(5 * 3_600_000);
  });
});

describe('connectionBounds', () => {
  it('gives the purchase path what polls, joins and the waitlist leave of the bound, at least one a pool', () => {
    const b = connectionBounds(64, 512);
    expect(b).toMatchObject({ status: 32, join: 64, waitlist: 16 });
    expect(b.hold).toBeGreaterThan(b.status);
    expect(Object.values(b).reduce((a, x) => a + x, 0)).toBe(512);
    const tiny = connectionBounds(1, 4);
    for (const v of Object.values(tiny)) expect(v).toBeGreaterThanOrEqual(1);
  });
});
