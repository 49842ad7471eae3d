import type { Histogram } from 'prom-client';

/** What prom-client 15 keeps per label set of a histogram (its `hashMap` values). */
interface Entry {
  labels: Record<string, string | number>;
  bucketValues: Record<string, number>;
  sum: number;
  count: number;
}
interface Internals {
  hashMap: Record<string, Entry>;
  upperBounds: readonly number[];
  enableExemplars: boolean;
}

/**
 * `histogram.observe({ method, route, status }, seconds)` for the HTTP request histogram, once per answer, at a
 * fraction of the cost. prom-client's observe builds a closure and a label-string key (`method:GET,route:...`) and
 * validates the labels on every call; every request of a route pays it. Here the first observation of a label set
 * goes through prom-client's observe, which creates its entry; the entry is then kept, found by the route's key
 * (the same string every request of a route: see routeOf) and the status, and later observations add to it exactly
 * as prom-client's observe does (sum, count, the first bucket whose bound holds the value). After a reset (a new
 * map of entries) the entries are found again; a prom-client whose histograms keep their figures otherwise, or
 * exemplars, take prom-client's own observe every time. (Entries are never removed one by one: nothing calls
 * `remove` on this histogram.)
 */
export function requestTimer(histogram: Histogram<'method' | 'route' | 'status'>) {
  const h = histogram as unknown as Partial<Internals>;
  const exact = typeof h.hashMap === 'object' && Array.isArray(h.upperBounds) && h.enableExemplars === false;
  const bounds = exact ? h.upperBounds! : [];
  // The buckets' property names, made once: indexing by the number would turn it into its string every time.
  const names = bounds.map(String);
  let entriesOf = h.hashMap;
  const known = new Map<string, Map<number, Entry>>();
  return (routeKey: string, method: string, route: string, status: number, seconds: number) => {
    if (h.hashMap !== entriesOf) {
      known.clear();
      entriesOf = h.hashMap;
    }
    const entry = exact && Number.isFinite(seconds) ? known.get(routeKey)?.get(status) : undefined;
    if (entry === undefined) {
      histogram.observe({ method, route, status: String(status) }, seconds);
      if (exact) remember(known, entriesOf!, routeKey, method, route, status);
      return;
    }
    entry.sum += seconds;
    entry.count += 1;
    for (let i = 0; i < bounds.length; i++)
      if (seconds <= bounds[i]!) {
        entry.bucketValues[names[i]!]! += 1;
        return;
      }
  };
}

function remember(
  known: Map<string, Map<number, Entry>>,
  entries: Record<string, Entry>,
  routeKey: string,
  method: string,
  route: string,
  status: number,
) {
  // prom-client's key for the label set: each label name and value, in the order of the label names.
  const entry = entries[`method:${method},route:${route},status:${status},`];
  if (!entry) return;
  let byStatus = known.get(routeKey);
  if (!byStatus) known.set(routeKey, (byStatus = new Map<number, Entry>()));
  byStatus.set(status, entry);
}
