import cluster, { type Worker } from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { AggregatorRegistry, Gauge, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';

// The figures of every process of `npm start -- --store-instances N --workers M` in one scrape. The cluster's
// primary owns no registry and serves no HTTP: a store process answering GET /metrics asks it for the other
// processes' figures (IPC), and merges them with its own, fresh ones, with prom-client's cluster aggregation
// (counters and histograms summed; each gauge by its own `aggregator`). A scrape then reads the same whatever
// process the connection landed on.

type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

const GATHER = 'onsale:metrics-gather';
const GATHERED = 'onsale:metrics-gathered';
const COLLECT = 'onsale:metrics-collect';
const PART = 'onsale:metrics-part';

interface Message {
  type?: string;
  id?: string;
  metrics?: MetricsJson;
  parts?: MetricsJson[];
  missing?: number;
}

/** How long the primary waits for each process's figures; a process that does not answer in time is left out. */
const COLLECT_TIMEOUT_MS = 2000;

/**
 * In the cluster's primary: relays store processes' requests for every other process's figures. Call once, before
 * forking. Returns a function that stops relaying.
 */
export function relayClusterMetrics(): () => void {
  const pending = new Map<string, { parts: MetricsJson[]; waiting: Set<number>; done: () => void }>();
  const onMessage = (from: Worker, m: Message) => {
    if (m?.type === PART && m.id) {
      const p = pending.get(m.id);
      if (!p || !p.waiting.delete(from.id)) return;
      if (m.metrics) p.parts.push(m.metrics);
      if (p.waiting.size === 0) p.done();
      return;
    }
    if (m?.type !== GATHER || !m.id) return;
    const id = m.id;
    const others = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && w.id !== from.id && w.isConnected());
    const entry = { parts: [] as MetricsJson[], waiting: new Set(others.map((w) => w.id)), done: () => {} };
    const timer = setTimeout(() => entry.done(), COLLECT_TIMEOUT_MS);
    entry.done = () => {
      clearTimeout(timer);
      pending.delete(id);
      if (from.isConnected()) from.send({ type: GATHERED, id, parts: entry.parts, missing: entry.waiting.size } satisfies Message);
    };
    pending.set(id, entry);
    if (others.length === 0) return entry.done();
    for (const w of others) w.send({ type: COLLECT, id } satisfies Message);
  };
  cluster.on('message', onMessage);
  return () => void cluster.off('message', onMessage);
}

/** In every cluster process (store or worker): answers the primary's requests for this process's figures. */
export function answerClusterMetrics(registry: Registry): void {
  if (!cluster.isWorker) return;
  process.on('message', (m: Message) => {
    if (m?.type !== COLLECT || !m.id) return;
    const id = m.id;
    registry.getMetricsAsJSON().then(
      (metrics) => process.send?.({ type: PART, id, metrics } satisfies Message),
      () => process.send?.({ type: PART, id } satisfies Message),
    );
  });
}

/**
 * In a store process of a cluster: the whole cluster's figures in Prometheus text, this process's own first (its
 * gauges are the freshest: it has just read them for this scrape), then every other process's; the number of
 * processes that did not answer in time is exported as `cluster_metrics_missing_processes` (NaN when the primary did
 * not answer: the figures are then this process's alone). Null outside a cluster.
 */
export function clusterMetricsGatherer(): ((own: Registry) => Promise<string>) | null {
  if (!cluster.isWorker || !process.send) return null;
  const waiting = new Map<string, (m: Message) => void>();
  process.on('message', (m: Message) => {
    if (m?.type === GATHERED && m.id) waiting.get(m.id)?.(m);
  });
  return async (own) => {
    const id = randomUUID();
    const answer = await new Promise<Message | null>((resolve) => {
      const timer = setTimeout(() => {
        waiting.delete(id);
        resolve(null);
      }, COLLECT_TIMEOUT_MS + 1000);
      waiting.set(id, (m) => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve(m);
      });
      process.send!({ type: GATHER, id } satisfies Message);
    });
    const extra = new Registry();
    new Gauge({
      name: 'cluster_metrics_missing_processes',
      help: 'Processes of the cluster whose figures are not in this scrape (they did not answer in time); NaN: none but this one',
      registers: [extra],
    }).set(answer ? (answer.missing ?? 0) : Number.NaN);
    const mine = await own.getMetricsAsJSON();
    // Gauges read from the database for this scrape ('first') are this process's alone: another process's copy is
    // only as fresh as its own last scrape.
    const ownOnly = new Set(mine.filter((m) => m.aggregator === 'first').map((m) => m.name));
    const others = (answer?.parts ?? []).map((part) => part.filter((m) => !ownOnly.has(m.name)));
    const parts = [mine, ...others, await extra.getMetricsAsJSON()];
    return AggregatorRegistry.aggregate(parts).metrics();
  };
}
