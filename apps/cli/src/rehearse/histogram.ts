// A latency histogram for the crowd's driver: a count per bucket, no array of samples (a 2,000,000-fan run answers
// millions of requests, and the driver's budget is 0.3 ms of CPU a request). Buckets are 10 µs wide below 1 ms and 2%
// wide above it, so a percentile read back is within 2% of the sample's (its bucket's upper bound).

const FINE = 100; // 10 µs buckets below 1 ms
const GROWTH = Math.log(1.02);
const BUCKETS = FINE + Math.ceil(Math.log(3_600_000) / GROWTH) + 1; // up to an hour

export class LatencyHistogram {
  private readonly counts = new Uint32Array(BUCKETS);
  count = 0;
  max = 0;

  add(ms: number) {
    const v = ms > 0 ? ms : 0;
    const b = v < 1 ? Math.floor(v * FINE) : Math.min(BUCKETS - 1, FINE + Math.floor(Math.log(v) / GROWTH));
    this.counts[b]!++;
    this.count++;
    if (v > this.max) this.max = v;
  }

  /** The q-quantile (0..1), ms, as its bucket's upper bound (the largest sample for the top one); null when empty. */
  quantile(q: number): number | null {
    if (this.count === 0) return null;
    const rank = Math.max(1, Math.ceil(q * this.count));
    let seen = 0;
    for (let b = 0; b < BUCKETS; b++) {
      seen += this.counts[b]!;
      if (seen >= rank) {
        // The top bucket holds everything past an hour: its bound is the largest sample.
        const upper = b === BUCKETS - 1 ? this.max : b < FINE ? (b + 1) / FINE : Math.exp((b - FINE + 1) * GROWTH);
        return Math.round(Math.min(upper, this.max) * 100) / 100;
      }
    }
    return Math.round(this.max * 100) / 100;
  }

  summary(): { count: number; p50: number | null; p99: number | null; max: number | null } {
    return {
      count: this.count,
      p50: this.quantile(0.5),
      p99: this.quantile(0.99),
      max: this.count === 0 ? null : Math.round(this.max * 100) / 100,
    };
  }
}
