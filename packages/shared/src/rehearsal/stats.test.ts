import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { fractionalRanks, latencySummary, percentile, spearman } from './stats.js';

describe('spearman', () => {
  it('is 1 for the same order, -1 for the reverse, and exact on a worked example with ties', () => {
    expect(spearman([1, 2, 3, 4], [10, 20, 30, 40])).toBe(1);
    expect(spearman([1, 2, 3, 4], [9, 7, 5, 1])).toBe(-1);
    // Ranks x: 1, 2.5, 2.5, 4; y: 1, 2, 3, 4. Centred: x -1.5, 0, 0, 1.5; y -1.5, -0.5, 0.5, 1.5: 4.5 / sqrt(4.5 * 5).
    expect(spearman([1, 2, 2, 3], [1, 2, 3, 4])).toBeCloseTo(4.5 / Math.sqrt(4.5 * 5), 12);
  });

  it('is undefined for fewer than two pairs or a constant series, and refuses series of different lengths', () => {
    expect(spearman([], [])).toBeNull();
    expect(spearman([1], [1])).toBeNull();
    expect(spearman([1, 1, 1], [1, 2, 3])).toBeNull();
    expect(() => spearman([1, 2], [1])).toThrow(/different lengths/);
  });

  it('stays in [-1, 1], is symmetric, and ignores any increasing transformation of either series', () => {
    const pairs = fc.array(fc.tuple(fc.integer({ min: -50, max: 50 }), fc.integer({ min: -50, max: 50 })), { minLength: 2, maxLength: 60 });
    fc.assert(
      fc.property(pairs, (ps) => {
        const x = ps.map((p) => p[0]);
        const y = ps.map((p) => p[1]);
        const r = spearman(x, y);
        if (r === null) return;
        expect(r).toBeGreaterThanOrEqual(-1);
        expect(r).toBeLessThanOrEqual(1);
        expect(spearman(y, x)).toBeCloseTo(r, 12);
        expect(
          spearman(
            x.map((v) => v * 3 + 1000),
            y.map((v) => Math.exp(v / 50)),
          ),
        ).toBeCloseTo(r, 9);
        expect(
          spearman(
            x,
            y.map((v) => -v),
          ),
        ).toBeCloseTo(-r, 12);
      }),
    );
  });

  it('is near 0 for a random permutation of many positions (what a fair pre-open shuffle gives)', () => {
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const n = 5000;
    const positions = Array.from({ length: n }, (_, i) => i + 1);
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [positions[i], positions[j]] = [positions[j]!, positions[i]!];
    }
    expect(
      Math.abs(
        spearman(
          Array.from({ length: n }, (_, i) => i),
          positions,
        )!,
      ),
    ).toBeLessThan(0.05);
  });
});

describe('fractionalRanks', () => {
  it('gives ties the mean of their ranks, and the ranks always sum to n(n+1)/2', () => {
    expect(Array.from(fractionalRanks([30, 10, 20, 10]))).toEqual([4, 1.5, 3, 1.5]);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 40 }), (v) => {
        const sum = fractionalRanks(v).reduce((a, b) => a + b, 0);
        expect(sum).toBeCloseTo((v.length * (v.length + 1)) / 2, 9);
      }),
    );
  });
});

describe('percentile', () => {
  it('answers a measured value by the nearest rank', () => {
    const v = [15, 20, 35, 40, 50];
    expect(percentile(v, 0)).toBe(15);
    expect(percentile(v, 30)).toBe(20);
    expect(percentile(v, 40)).toBe(20);
    expect(percentile(v, 50)).toBe(35);
    expect(percentile(v, 100)).toBe(50);
    expect(
      percentile(
        Array.from({ length: 10 }, (_, i) => i + 1),
        99,
      ),
    ).toBe(10);
    expect(percentile([], 50)).toBeNull();
    expect(() => percentile([1], 101)).toThrow();
  });

  it('is monotone in p and always one of the values', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 80 }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        (v, a, b) => {
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          expect(percentile(v, lo)!).toBeLessThanOrEqual(percentile(v, hi)!);
          expect(v).toContain(percentile(v, a));
        },
      ),
    );
  });

  it('summarises latencies as whole milliseconds', () => {
    expect(latencySummary([1.4, 2.6, 100.2])).toEqual({ p50: 3, p99: 100, max: 100, count: 3 });
    expect(latencySummary([])).toEqual({ p50: null, p99: null, max: null, count: 0 });
  });
});
