// The rehearsal report's arithmetic: pure, no I/O, tested exhaustively in stats.test.ts.

/** Ranks of `values` from 1, ties sharing the mean of the ranks they span (the "fractional" ranking Spearman needs). */
export function fractionalRanks(values: ArrayLike<number>): Float64Array {
  const n = values.length;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => values[a]! - values[b]!);
  const ranks = new Float64Array(n);
  let i = 0;
  while (i < n) {
    let j = i;
    while (j + 1 < n && values[order[j + 1]!] === values[order[i]!]) j++;
    const rank = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) ranks[order[k]!] = rank;
    i = j + 1;
  }
  return ranks;
}

/**
 * Spearman's rank correlation of two equally long series: the Pearson correlation of their fractional ranks, so ties
 * are handled exactly. In [-1, 1]; null when it is undefined (fewer than two pairs, or a series of one value).
 */
export function spearman(x: ArrayLike<number>, y: ArrayLike<number>): number | null {
  if (x.length !== y.length) throw new Error(`spearman: series of different lengths (${x.length} and ${y.length})`);
  const n = x.length;
  if (n < 2) return null;
  const rx = fractionalRanks(x);
  const ry = fractionalRanks(y);
  const mean = (n + 1) / 2;
  let sxy = 0,
    sxx = 0,
    syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = rx[i]! - mean;
    const dy = ry[i]! - mean;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx === 0 || syy === 0) return null;
  return Math.max(-1, Math.min(1, sxy / Math.sqrt(sxx * syy)));
}

/**
 * The p-th percentile (0-100) of `values` by the nearest-rank method: the smallest value with at least p% of the
 * values at or below it (so p99 of 10 values is the largest, and every answer is a value that was measured). Null
 * for no values.
 */
export function percentile(values: ArrayLike<number>, p: number): number | null {
  if (!(p >= 0 && p <= 100)) throw new Error(`percentile: p must be 0-100; got ${p}`);
  const n = values.length;
  if (n === 0) return null;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.max(1, Math.ceil((p / 100) * n));
  return sorted[rank - 1]!;
}

/** p50, p99 and max of a latency series in whole milliseconds (nulls when nothing was measured). */
export function latencySummary(values: ArrayLike<number>): { p50: number | null; p99: number | null; max: number | null; count: number } {
  const round = (v: number | null) => (v === null ? null : Math.round(v));
  return {
    p50: round(percentile(values, 50)),
    p99: round(percentile(values, 99)),
    max: round(percentile(values, 100)),
    count: values.length,
  };
}
