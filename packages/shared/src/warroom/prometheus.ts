// Reading the store API's Prometheus text exposition: just enough to sum a histogram or a counter across label
// sets and instances, take the difference between two scrapes, and estimate a quantile as Prometheus's
// histogram_quantile does. Pure, no I/O.

/** A histogram's cumulative buckets (upper bound -> observations at or below it), its count and sum. */
export interface Histogram {
  /** Ascending upper bounds; the last one is Infinity. Counts are cumulative. */
  buckets: { le: number; count: number }[];
  count: number;
  sum: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)(?:\s+\S+)?$/;
const LE = /(?:^|[{,])\s*le="([^"]*)"/;

function parseValue(v: string): number {
  if (v === '+Inf') return Infinity;
  if (v === '-Inf') return -Infinity;
  return Number(v);
}

/** Samples of the exposition as [name, labels text, value], comments and blank lines skipped. */
function* samples(text: string): Generator<[string, string, number]> {
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) continue;
    yield [m[1]!, m[2] ?? '', parseValue(m[3]!)];
  }
}

/**
 * The histogram `name` from one exposition, summed over every label set (e.g. every event or route), or null when
 * the exposition has no such histogram.
 */
export function parseHistogram(text: string, name: string): Histogram | null {
  const byLe = new Map<number, number>();
  let count = 0;
  let sum = 0;
  let seen = false;
  for (const [metric, labels, value] of samples(text)) {
    if (!Number.isFinite(value) && metric !== `${name}_bucket`) continue;
    if (metric === `${name}_bucket`) {
      const le = LE.exec(labels);
      if (!le) continue;
      const bound = parseValue(le[1]!);
      if (Number.isNaN(bound)) continue;
      byLe.set(bound, (byLe.get(bound) ?? 0) + value);
      seen = true;
    } else if (metric === `${name}_count`) {
      count += value;
      seen = true;
    } else if (metric === `${name}_sum`) {
      sum += value;
    }
  }
  if (!seen) return null;
  const buckets = [...byLe.entries()].sort((a, b) => a[0] - b[0]).map(([le, c]) => ({ le, count: c }));
  if (buckets.length === 0 || buckets[buckets.length - 1]!.le !== Infinity) buckets.push({ le: Infinity, count });
  return { buckets, count, sum };
}

/** The counter `name` from one exposition, summed over every label set; null when absent. */
export function parseCounter(text: string, name: string): number | null {
  let total: number | null = null;
  for (const [metric, , value] of samples(text)) {
    if (metric === name || metric === `${name}_total`) total = (total ?? 0) + value;
  }
  return total;
}

/** Adds histograms with the same buckets (several store-API instances). Buckets missing from one count as 0. */
export function addHistograms(hs: readonly Histogram[]): Histogram | null {
  if (hs.length === 0) return null;
  const byLe = new Map<number, number>();
  let count = 0;
  let sum = 0;
  for (const h of hs) {
    for (const b of h.buckets) byLe.set(b.le, (byLe.get(b.le) ?? 0) + b.count);
    count += h.count;
    sum += h.sum;
  }
  return { buckets: [...byLe.entries()].sort((a, b) => a[0] - b[0]).map(([le, c]) => ({ le, count: c })), count, sum };
}

/**
 * Observations made between two scrapes: `later - earlier` per bucket. A counter that went down (the process
 * restarted) means everything in `later` is new, as Prometheus's rate() assumes.
 */
export function histogramDelta(later: Histogram, earlier: Histogram | null): Histogram {
  if (!earlier || later.count < earlier.count) return later;
  const before = new Map(earlier.buckets.map((b) => [b.le, b.count]));
  let reset = false;
  const buckets = later.buckets.map((b) => {
    const d = b.count - (before.get(b.le) ?? 0);
    if (d < 0) reset = true;
    return { le: b.le, count: d };
  });
  if (reset) return later;
  return { buckets, count: later.count - earlier.count, sum: later.sum - earlier.sum };
}

/**
 * The q-quantile (0..1) of a histogram, interpolated linearly inside the bucket it falls in (Prometheus's
 * histogram_quantile). A quantile in the +Inf bucket answers the highest finite bound. Null with no observations.
 */
export function histogramQuantile(q: number, h: Histogram): number | null {
  if (!(q >= 0 && q <= 1)) throw new RangeError('q must be between 0 and 1');
  const total = h.buckets.length > 0 ? h.buckets[h.buckets.length - 1]!.count : 0;
  if (!(total > 0)) return null;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const b of h.buckets) {
    if (b.count >= rank) {
      if (b.le === Infinity) return prevLe;
      const inBucket = b.count - prevCount;
      if (inBucket <= 0) return b.le;
      // The first bucket's lower bound is 0 (latencies are never negative), as in Prometheus.
      return prevLe + (b.le - prevLe) * ((rank - prevCount) / inBucket);
    }
    prevLe = b.le;
    prevCount = b.count;
  }
  return prevLe;
}
