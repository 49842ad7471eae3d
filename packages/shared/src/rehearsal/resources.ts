// What a rehearsal used of the machine it ran on, and the rule that names what bound it: the answer a run that did
// not finish (or finished slowly) owes its reader. Pure: the CLI samples the processes, this decides.

/** One kind of process (the driver, the store API processes, workerd, PostgreSQL...) over the run. */
export interface ProcessGroupUse {
  /** `driver`, `store`, `worker`, `edge (workerd)`, `edge (framing guard)`, `postgres`, `product (BFF, supervisor, tools)`. */
  name: string;
  /** Distinct processes seen (a killed store process and its replacement are two). */
  processes: number;
  cpuSeconds: number;
  /** CPU seconds / wall seconds: cores used on average by the whole group. */
  avgCores: number;
  /** Highest cores used by the whole group over one sampling interval. */
  peakCores: number;
  /** The busiest single process's cores on average over its life in the run (a Node process tops out at about 1). */
  busiestProcessCores: number;
  /** Whether one process of this kind can use more than one core (PostgreSQL's backends are many processes; workerd has threads). */
  multiCore: boolean;
}

export interface ResourceUse {
  /** Seconds between the first and the last sample. */
  wallSeconds: number;
  machine: {
    cores: number;
    /** Share of all cores' time that was busy (user, system, irq...) over the run, 0..1. */
    busyShare: number;
    /** Cores' worth used by processes that are neither the driver nor the product (other work on the machine). */
    otherCores: number;
    loadAveragePeak: number;
  } | null;
  groups: ProcessGroupUse[];
  /** The product database's commits (pg_stat_database.xact_commit): on average and at the busiest interval. */
  database: { commitsPerSecond: number; peakCommitsPerSecond: number } | null;
  /** The driver's event-loop delay p99, ms: its own lag, not the product's. */
  driverLoopDelayP99Ms: number | null;
  /**
   * The crowd against the product's pace at taking joins: how many arrived a second at the busiest (the pre-open
   * crowd), how many joins the product answered a second, how long a fan waited past its arrival to send its join.
   */
  joins?: { arrivingPerSecond: number; joinedPerSecond: number; arrivalLagMaxMs: number };
  /** Where each request's CPU went: requests answered by kind, and each kind of process's CPU per request. */
  perRequest?: PerRequestUse;
  /** What bound the run, most binding first; each a sentence with its figures. */
  bound: string[];
}

/**
 * The kinds of request a fan makes. A status poll answered by the edge alone (its `x-onsale-edge: hit`) is told apart
 * from one the origin answered; the seat list of a section counts with the seat map, a hold's extension with checkout.
 */
export const REQUEST_KINDS = ['join', 'status (edge)', 'status (origin)', 'seat map', 'hold', 'checkout', 'waitlist'] as const;
export type RequestKind = (typeof REQUEST_KINDS)[number];

/** One kind of process's CPU over the requests answered in the run. */
export interface ProcessCpuPerRequest {
  /** `driver`, `edge`, `store`, `database`, `worker`, `other of the product`. */
  name: string;
  cpuSeconds: number;
  /** CPU milliseconds per answered request (null: none answered). */
  cpuMsPerRequest: number | null;
}

export interface PerRequestUse {
  /** Requests that got an HTTP answer (any status), by kind. */
  answered: Record<RequestKind, number>;
  /** All of them. */
  requests: number;
  /** Requests that got no answer (a reset connection, a timeout): not in `requests`. */
  unanswered: number;
  /** Each kind of process, biggest first. */
  processes: ProcessCpuPerRequest[];
  /** Every process of the product together (all but the driver). */
  product: { cpuSeconds: number; cpuMsPerRequest: number | null };
  /**
   * Whether the product's processes were measured: only those the rehearsal started (`--spawn`) are the driver's to
   * read; against `--target` the product's figure is left out (other processes the driver starts count as other).
   */
  productMeasured: boolean;
  /** The crowd's driver alone. */
  driver: { cpuSeconds: number; cpuMsPerRequest: number | null };
}

/** The process kinds of a rehearsal's resource groups, as the per-request figures name them. */
const PROCESS_KIND: Record<string, string> = {
  driver: 'driver',
  'edge (workerd)': 'edge',
  // The edge's framing guard (in front of workerd, npm start -- --edge's default): the edge's CPU too.
  'edge (framing guard)': 'edge',
  store: 'store',
  postgres: 'database',
  worker: 'worker',
};

/** An empty count of answers by kind. */
export function answeredByKind(): Record<RequestKind, number> {
  return Object.fromEntries(REQUEST_KINDS.map((k) => [k, 0])) as Record<RequestKind, number>;
}

/**
 * CPU per request: each kind of process's CPU seconds over the requests the fans had answered in the same run (the
 * sampler counts the processes' CPU from its start to its end, the driver counts answers over the same span).
 */
export function perRequestOf(
  groups: ProcessGroupUse[],
  answered: Record<RequestKind, number>,
  unanswered = 0,
  productMeasured = true,
): PerRequestUse {
  const requests = REQUEST_KINDS.reduce((a, k) => a + answered[k], 0);
  const perRequest = (cpuSeconds: number) => (requests === 0 ? null : Math.round(((cpuSeconds * 1000) / requests) * 1000) / 1000);
  const byName = new Map<string, number>();
  for (const g of groups) {
    const name = PROCESS_KIND[g.name] ?? 'other of the product';
    byName.set(name, (byName.get(name) ?? 0) + g.cpuSeconds);
  }
  const processes = [...byName.entries()]
    .map(([name, cpuSeconds]) => ({ name, cpuSeconds: Math.round(cpuSeconds * 10) / 10, cpuMsPerRequest: perRequest(cpuSeconds) }))
    .sort((a, b) => b.cpuSeconds - a.cpuSeconds);
  const driverCpu = byName.get('driver') ?? 0;
  const productCpu = [...byName.entries()].reduce((a, [name, cpu]) => a + (name === 'driver' ? 0 : cpu), 0);
  return {
    answered: { ...answered },
    requests,
    unanswered,
    processes,
    product: { cpuSeconds: Math.round(productCpu * 10) / 10, cpuMsPerRequest: perRequest(productCpu) },
    driver: { cpuSeconds: Math.round(driverCpu * 10) / 10, cpuMsPerRequest: perRequest(driverCpu) },
    productMeasured,
  };
}

/** A machine busier than this share was CPU-bound as a whole. */
export const MACHINE_BOUND_SHARE = 0.85;
/** A single-threaded process above this many cores on average was bound by its own core. */
export const PROCESS_BOUND_CORES = 0.85;
/** The driver's event loop lagging more than this (p99) means the driver, not the product, set the pace. */
export const DRIVER_LAG_BOUND_MS = 1000;
/** Fans waiting longer than this past their arrival to send a join: the product's join pace bound the run. */
export const JOIN_LAG_BOUND_MS = 10_000;
/** CPU a request may cost the crowd's driver before the report says the driver took a share of the product's machine. */
export const DRIVER_CPU_BUDGET_MS = 0.3;

const f = (v: number, digits = 2) => v.toFixed(digits);

/**
 * Names what bound a run from its resource use, most binding first. A single-threaded process near a full core is
 * bound by its core (more processes of it would help); a machine whose cores were nearly all busy is bound as a whole
 * (the biggest consumers named, so the reader knows where more cores go); a driver whose event loop lagged set the
 * pace itself. With none of these, the run was not CPU-bound and the figures say where the time went.
 */
export function boundOf(u: Omit<ResourceUse, 'bound'>): string[] {
  const out: string[] = [];
  const groups = [...u.groups].sort((a, b) => b.avgCores - a.avgCores);
  if (u.joins && u.joins.arrivalLagMaxMs >= JOIN_LAG_BOUND_MS)
    out.push(
      `the product's pace at taking joins: ${Math.round(u.joins.joinedPerSecond)} a second against ${Math.round(u.joins.arrivingPerSecond)} arriving a second, so fans waited up to ${Math.round(u.joins.arrivalLagMaxMs / 1000)} s to send theirs (the causes follow)`,
    );
  for (const g of groups) {
    if (!g.multiCore && g.busiestProcessCores >= PROCESS_BOUND_CORES)
      out.push(
        `CPU of one ${g.name} process: ${f(g.busiestProcessCores)} of its one core on average${g.processes > 1 ? ` (${g.processes} ${g.name} processes, ${f(g.avgCores)} cores together)` : ''}`,
      );
  }
  const driverMs = u.perRequest?.driver.cpuMsPerRequest ?? null;
  if (driverMs !== null && driverMs > DRIVER_CPU_BUDGET_MS)
    out.push(
      `the crowd's driver: ${f(driverMs, 3)} ms of CPU per request (its budget ${DRIVER_CPU_BUDGET_MS} ms)${u.perRequest!.productMeasured && u.perRequest!.product.cpuMsPerRequest !== null ? ` against the product's ${f(u.perRequest!.product.cpuMsPerRequest, 3)} ms, on the same cores` : ''}`,
    );
  if (u.driverLoopDelayP99Ms !== null && u.driverLoopDelayP99Ms >= DRIVER_LAG_BOUND_MS)
    out.push(`the driver itself: its event loop lagged ${u.driverLoopDelayP99Ms} ms at p99, so fans' steps ran late`);
  if (u.machine && u.machine.busyShare >= MACHINE_BOUND_SHARE) {
    const top = groups
      .filter((g) => g.avgCores >= 0.05)
      .map((g) => `${g.name} ${f(g.avgCores)}`)
      .concat(u.machine.otherCores >= 0.05 ? [`other work on the machine ${f(u.machine.otherCores)}`] : []);
    out.push(
      `the machine's CPU: its ${u.machine.cores} cores were ${Math.round(u.machine.busyShare * 100)}% busy (cores used on average: ${top.join(', ')}); no single process was the limit, more cores were`,
    );
  }
  if (out.length === 0) {
    const top = groups[0];
    out.push(
      `not CPU: the machine's cores were ${u.machine ? `${Math.round(u.machine.busyShare * 100)}%` : 'an unknown share'} busy, the busiest process kind ${top ? `${top.name} at ${f(top.avgCores)} cores` : 'unmeasured'}${u.database ? `; the database committed ${Math.round(u.database.commitsPerSecond)} transactions a second (peak ${Math.round(u.database.peakCommitsPerSecond)})` : ''}: the crowd's own pace (arrivals, polls honouring Retry-After, the sale's clock) set the run's length`,
    );
  }
  return out;
}
