// The rehearsal's report: its shape (what the JSON file, the database row and the console read) and its Markdown.

import { REQUEST_KINDS, type PerRequestUse, type ResourceUse } from './resources.js';
import type { SaleCheck } from './verdict.js';
import type { RefusalCount } from './refusals.js';

/** A fault as it happened: when it struck, when the product was serving fans again, and what fans read meanwhile. */
export interface FaultOutcome {
  /** As given: `kill-store@30%`. */
  fault: string;
  kind: string;
  /** What was done: `killed store-1 (pid 4242) with SIGKILL`. */
  action: string;
  /** Milliseconds after the open. */
  startedAtMs: number;
  /** Milliseconds after the open when the product answered again (see the driver's recovery probe); null: never. */
  recoveredAtMs: number | null;
  recoveryMs: number | null;
  /** Answers fans got between the fault and its recovery, by status and code (`200`, `503 DATABASE_UNAVAILABLE`, `network`). */
  fansRead: Record<string, number>;
}

export interface RehearsalReport {
  eventId: string;
  eventName: string;
  target: string;
  startedAt: string;
  finishedAt: string;
  timeScale: number;
  settings: Record<string, unknown>;
  fans: number;
  humans: number;
  bots: number;
  seats: number;
  seatsSold: number;
  orders: number;
  soldOut: boolean;
  /** Milliseconds after the open of the last confirmed order (null: nothing sold). */
  lastSaleMs: number | null;
  doubleSold: number;
  /**
   * Where `doubleSold` came from (absent in reports before 2026-12-07): seats the driver saw in two different orders,
   * seats two holds both kept in the database held while the driver took the first for live, and seats in confirmed
   * orders beyond the seats sold; with the first 20 hold conflicts, to look up.
   */
  doubleSoldParts?: {
    seenInTwoOrders: number;
    liveDoubleHolds: number;
    ordersBeyondSold: number;
    holdConflicts: { seat: number; first: string; second: string }[];
  };
  duplicateOrders: number;
  drift: number;
  soldOutPropagationMs: { p50: number | null; p99: number | null; max: number | null; count: number };
  /** The same over the fans who read SOLD_OUT on a poll sent as told (the goal's figure). */
  soldOutPropagationAsToldMs?: { p50: number | null; p99: number | null; max: number | null; count: number };
  /**
   * The same over the tracer fans alone (`tracers` of the fans polled exactly at their Retry-After, outside the
   * driver's poll budget; `count` of them read SOLD_OUT): they are among the fans who polled as told.
   */
  soldOutPropagationTracersMs?: { p50: number | null; p99: number | null; max: number | null; count: number; tracers: number };
  /** Holds as their fans timed them: from the first request for a hold to its 201, retries (503, 429, a reset) included. */
  holdLatencyMs: { p50: number | null; p99: number | null; count: number };
  /**
   * The same less the time each hold's requests waited inside the driver for one of its connections: the product's part
   * (its answers, its refusals' Retry-After, the retries), what a fan with a connection of its own would time. The
   * hold goal is weighed on it (verdict.ts).
   */
  holdLatencyProductMs?: { p50: number | null; p99: number | null; count: number };
  /** That wait inside the driver, per hold (the driver's lag, not the product's). */
  holdDriverLagMs?: { p50: number | null; p99: number | null; max: number | null };
  /** About how many seats the crowd would buy (fans who pay, their parties' size): the sold share is weighed when >= seats. */
  seatsWanted?: number;
  /** Fans who read ADMITTED (collected an admission), once each; fans who bought (an order each). */
  admittedFans?: number;
  buyers?: number;
  /**
   * The admitted fans who did not buy, by who (`fan` or `bot`) and why: still holding or paying or back in line when
   * the run ended, sold out, left their hold, refused at their limits or for seats (absent in older reports).
   */
  admittedNotBought?: Record<string, number>;
  /**
   * The seats not sold at the end as the rows leave them (absent when all sold, or in older reports): runs of seats
   * side by side, how many are one seat alone, the longest run, the sections they are in.
   */
  unsoldSeats?: { seats: number; runs: number; singles: number; longest: number; sections: number };
  /** POSITION_EXPIRED answers to fans who polled as told (within their Retry-After on the event's clock) and later. */
  /** asToldBackInLine (absent in older reports): of asTold, fans back in line on their own after their admission lapsed. */
  positionExpired?: { asTold: number; late: number; asToldBackInLine?: number };
  /** The verdict's checks: each figure beside its limit, met, missed or not weighed (and why). */
  checks?: SaleCheck[];
  /** Per real minute of the rehearsal (the event's minutes are timeScale times longer). */
  admittedPerMinute: { plan: number; actual: number | null };
  /** Seats in holds their fans abandoned and that had not yet expired, sampled over the run ([ms after the open, seats]). */
  strandedSeats: [number, number][];
  rankCorrelation: number | null;
  /** Pre-open fans whose place was compared with their arrival. */
  rankedFans: number;
  botSeatShare: number;
  /** Fans still between join and done when the driver's deadline came (the driver gave up on them, not the product). */
  unfinishedFans: number;
  unfinishedBy: Record<string, number>;
  waitlistJoined: number;
  waitlistNotified: number;
  faults: FaultOutcome[];
  /** Every answer the fans got, by status and code. */
  answers: Record<string, number>;
  /**
   * Every answer that was not a 2xx (and every request that got none), by kind of request, status and code, and for
   * a 503 the rule that answered it (its body's `reason`), most first. Absent in older reports.
   */
  refusals?: RefusalCount[];
  /** What the driver itself used: its CPU, memory and request rate (to tell a bound driver from a bound product). */
  driver: {
    cpuSeconds: number;
    wallSeconds: number;
    peakRssMb: number;
    requests: number;
    requestsPerSecond: number;
    eventLoopDelayP99Ms: number | null;
    /** The longest a fan waited past its arrival to send its join, the join connections being full (ms). */
    arrivalLagMaxMs?: number;
    /** Fans who never sent a join (the run ended first). */
    neverArrived?: number;
    /** Seat-map reads the edge answered from its cache (the store API never saw them). Absent in older reports. */
    seatMapsFromEdgeCache?: number;
    /**
     * Per kind of request (a status poll whoever answered it), ms: the product's time, from when the request went on
     * the wire to its answer, and the driver's wait before that for one of its connections.
     */
    requestTimings?: Record<string, { product: LatencySummary; driverWait: LatencySummary }>;
    /** The most connections each kind of request could use (each pool opened as its fans needed it). */
    connections?: Record<string, number>;
    /** Every answer by kind of request and answer (`join 503 SERVICE_UNAVAILABLE`; absent in older reports). */
    answersOfKind?: Record<string, number>;
    /** The time the polls that told fans SOLD_OUT waited inside the driver, ms (left out of the propagation figure). */
    soldOutDriverWaitMs?: { p50: number | null; p99: number | null; max: number | null };
  };
  /** Set when the crowd was stopped before its deadline (an operator's signal, `--stop-after`): by what, when (ms after the open), how many fans had joined. */
  stopped?: { by: string; atMs: number; joined: number } | null;
  /** What the driver and the product it started used of the machine, and what bound the run. */
  resources?: ResourceUse;
  verdict: 'PASS' | 'FAIL';
  reasons: string[];
  /** Targets the run could not be judged on or fell short of without failing, with why (rehearsal/verdict.ts). */
  warnings?: string[];
}

interface LatencySummary {
  count: number;
  p50: number | null;
  p99: number | null;
  max: number | null;
}

const n = (v: number | null | undefined, digits = 0) =>
  v === null || v === undefined ? 'n/a' : v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The report as Markdown: the figures that decide the verdict first, then the rest. */
export function reportMarkdown(r: RehearsalReport): string {
  const lines: string[] = [];
  lines.push(`# Rehearsal of ${r.eventName}: ${r.verdict}`, '');
  lines.push(
    `${n(r.fans)} virtual fans (${n(r.humans)} fans, ${n(r.bots)} bot accounts) for ${n(r.seats)} seats, time scale ${r.timeScale} (the event's clock ran ${r.timeScale} times fast), against ${r.target}; ${r.startedAt} to ${r.finishedAt}.`,
    '',
  );
  if (r.reasons.length > 0) lines.push(`Why not PASS: ${r.reasons.join('; ')}.`, '');
  if (r.warnings && r.warnings.length > 0) lines.push(`Warnings: ${r.warnings.join('; ')}.`, '');
  if (r.checks && r.checks.length > 0) {
    lines.push('| goal | value | limit | met |', '| --- | --- | --- | --- |');
    for (const c of r.checks)
      lines.push(
        `| ${c.label} | ${c.value} | ${c.limit} | ${c.ok === null ? `not weighed${c.note ? `: ${c.note}` : ''}` : `${c.ok ? 'yes' : '**no**'}${c.note ? ` (${c.note})` : ''}`} |`,
      );
    lines.push('');
  }
  lines.push('| check | value |', '| --- | --- |');
  lines.push(`| seats sold | ${n(r.seatsSold)} of ${n(r.seats)}${r.soldOut ? ' (sold out)' : ''} |`);
  lines.push(`| orders | ${n(r.orders)} |`);
  const parts = r.doubleSoldParts;
  lines.push(
    `| double-sold seats | ${n(r.doubleSold)}${r.doubleSold > 0 && parts ? ` (seen in two orders ${n(parts.seenInTwoOrders)}, held by two kept holds ${n(parts.liveDoubleHolds)}, in orders beyond the seats sold ${n(parts.ordersBeyondSold)})` : ''} |`,
  );
  lines.push(`| duplicate orders | ${n(r.duplicateOrders)} |`);
  lines.push(`| drift (available + held + sold - capacity) | ${n(r.drift)} |`);
  lines.push(
    `| sold-out propagation p50 / p99 / max | ${n(r.soldOutPropagationMs.p50)} / ${n(r.soldOutPropagationMs.p99)} / ${n(r.soldOutPropagationMs.max)} ms (${n(r.soldOutPropagationMs.count)} polling fans) |`,
  );
  if (r.soldOutPropagationAsToldMs)
    lines.push(
      `| of which to fans who polled as told, p50 / p99 / max | ${n(r.soldOutPropagationAsToldMs.p50)} / ${n(r.soldOutPropagationAsToldMs.p99)} / ${n(r.soldOutPropagationAsToldMs.max)} ms (${n(r.soldOutPropagationAsToldMs.count)} fans) |`,
    );
  const tr = r.soldOutPropagationTracersMs;
  if (tr && tr.tracers > 0)
    lines.push(
      `| of which to the tracer fans (polling exactly at their Retry-After, outside the poll budget), p50 / p99 / max | ${n(tr.p50)} / ${n(tr.p99)} / ${n(tr.max)} ms (${n(tr.count)} of ${n(tr.tracers)} tracers read it) |`,
    );
  lines.push(
    `| hold latency p50 / p99, as fans time it | ${n(r.holdLatencyMs.p50)} / ${n(r.holdLatencyMs.p99)} ms (${n(r.holdLatencyMs.count)} holds) |`,
  );
  if (r.holdLatencyProductMs && r.holdDriverLagMs)
    lines.push(
      `| of which the product's, p50 / p99 | ${n(r.holdLatencyProductMs.p50)} / ${n(r.holdLatencyProductMs.p99)} ms |`,
      `| of which waiting inside the driver for a connection, p50 / p99 / max | ${n(r.holdDriverLagMs.p50)} / ${n(r.holdDriverLagMs.p99)} / ${n(r.holdDriverLagMs.max)} ms |`,
    );
  lines.push(`| admitted per minute, plan / actual | ${n(r.admittedPerMinute.plan, 1)} / ${n(r.admittedPerMinute.actual, 1)} |`);
  lines.push(`| most seats stranded in abandoned holds | ${n(Math.max(0, ...r.strandedSeats.map((s) => s[1])))} |`);
  lines.push(`| rank correlation, pre-open arrival vs place (Spearman) | ${n(r.rankCorrelation, 4)} (${n(r.rankedFans)} fans) |`);
  lines.push(`| bot seat share | ${n(r.botSeatShare * 100, 1)}% |`);
  lines.push(`| waitlist joined / notified after the sell-out | ${n(r.waitlistJoined)} / ${n(r.waitlistNotified)} |`);
  lines.push(
    `| fans unfinished at the driver's deadline | ${n(r.unfinishedFans)}${
      r.unfinishedFans > 0
        ? ` (${Object.entries(r.unfinishedBy)
            .map(([k, v]) => `${k}: ${v}`)
            .join('; ')})`
        : ''
    } |`,
  );
  if (r.unsoldSeats)
    lines.push(
      `| seats not sold at the end, as the rows leave them | ${n(r.unsoldSeats.seats)} in ${n(r.unsoldSeats.runs)} runs side by side across ${n(r.unsoldSeats.sections)} sections: ${n(r.unsoldSeats.singles)} single seats alone, the longest run ${n(r.unsoldSeats.longest)} |`,
    );
  if (r.admittedNotBought && Object.keys(r.admittedNotBought).length > 0)
    lines.push(
      `| fans let in who did not buy | ${n(Object.values(r.admittedNotBought).reduce((a, b) => a + b, 0))} (${Object.entries(
        r.admittedNotBought,
      )
        .map(([k, v]) => `${k}: ${n(v)}`)
        .join('; ')}) |`,
    );
  lines.push('');
  if (r.faults.length > 0) {
    lines.push(
      '## Faults',
      '',
      '| fault | what was done | at | recovered after | what fans read meanwhile |',
      '| --- | --- | --- | --- | --- |',
    );
    for (const f of r.faults) {
      const read = Object.entries(f.fansRead)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k}: ${n(v)}`)
        .join(', ');
      lines.push(
        `| ${f.fault} | ${f.action} | ${n(f.startedAtMs / 1000, 1)} s after the open | ${f.recoveryMs === null ? 'never' : `${n(f.recoveryMs / 1000, 1)} s`} | ${read || 'nothing'} |`,
      );
    }
    lines.push('');
  }
  lines.push('## Answers fans got', '', '| answer | count |', '| --- | --- |');
  for (const [k, v] of Object.entries(r.answers).sort((a, b) => b[1] - a[1])) lines.push(`| ${k} | ${n(v)} |`);
  lines.push('');
  const refused = Object.entries(r.driver.answersOfKind ?? {}).filter(([k]) => !/ 20[01]$/.test(k));
  if (refused.length > 0)
    lines.push(
      `By kind of request (all but 200 and 201): ${refused
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${n(v)}`)
        .join('; ')}.`,
      '',
    );
  if (r.refusals && r.refusals.length > 0) lines.push(...refusalsMarkdown(r.refusals));
  const d = r.driver;
  lines.push(
    '## The driver',
    '',
    `${n(d.requests)} requests in ${n(d.wallSeconds, 1)} s (${n(d.requestsPerSecond)} a second); the driver's own CPU ${n(d.cpuSeconds, 1)} s, peak memory ${n(d.peakRssMb)} MB, event-loop delay p99 ${n(d.eventLoopDelayP99Ms)} ms.${d.arrivalLagMaxMs ? ` Fans waited up to ${n(d.arrivalLagMaxMs / 1000, 1)} s past their arrival to send their join (${n(d.neverArrived ?? 0)} never did), the product answering joins slower than they came.` : ''}${d.seatMapsFromEdgeCache ? ` ${n(d.seatMapsFromEdgeCache)} seat-map reads were answered from the edge's cache.` : ''}`,
    '',
  );
  if (d.requestTimings) lines.push(...timingsMarkdown(d));
  if (r.resources?.perRequest) lines.push(...perRequestMarkdown(r.resources.perRequest, r.resources.driverLoopDelayP99Ms, d));
  if (r.resources) lines.push(...resourcesMarkdown(r.resources));
  return lines.join('\n');
}

/** The answers that were not a 2xx, by kind of request and why (for a 503, the rule that answered it). */
function refusalsMarkdown(rows: readonly RefusalCount[]): string[] {
  const lines = [
    '### Refusals by request and reason',
    '',
    "Every answer that was not a 2xx, by the kind of request it answered; for a 503 the rule that answered it (the body's `reason`: `overload_event_loop` and `overload_pool` are the store's load shedding, `request_budget` a request past REQUEST_BUDGET_MS, `database` and `database_busy` the database; the edge's own 503s name themselves in their code).",
    '',
    '| request | answer | reason | count |',
    '| --- | --- | --- | --- |',
  ];
  for (const r of rows) lines.push(`| ${r.kind} | ${r.answer} | ${r.reason ?? ''} | ${n(r.count)} |`);
  lines.push('');
  return lines;
}

/** Where each kind of request's time went: the product's (on the wire to its answer), the driver's wait before it. */
function timingsMarkdown(d: RehearsalReport['driver']): string[] {
  const lines = [
    "### The product's time and the driver's lag",
    '',
    "Each request timed from when it went on the wire to its answer (the product's), and apart the time it waited inside the driver for one of its connections (the driver's lag; a real crowd has a connection a fan).",
    '',
    "| request | timed | the product's p50 / p99 / max, ms | waiting in the driver p50 / p99 / max, ms | connections at most |",
    '| --- | --- | --- | --- | --- |',
  ];
  for (const [k, t] of Object.entries(d.requestTimings ?? {}))
    lines.push(
      `| ${k} | ${n(t.product.count)} | ${n(t.product.p50, 1)} / ${n(t.product.p99, 1)} / ${n(t.product.max, 1)} | ${n(t.driverWait.p50, 1)} / ${n(t.driverWait.p99, 1)} / ${n(t.driverWait.max, 1)} | ${n(d.connections?.[k])} |`,
    );
  lines.push('');
  if (d.soldOutDriverWaitMs)
    lines.push(
      `The polls that told fans SOLD_OUT waited p50 / p99 / max ${n(d.soldOutDriverWaitMs.p50)} / ${n(d.soldOutDriverWaitMs.p99)} / ${n(d.soldOutDriverWaitMs.max)} ms inside the driver (left out of the sold-out propagation the goal weighs).`,
      '',
    );
  return lines;
}

/** Where each request's CPU went: the answers by kind, then each kind of process's CPU per request, the driver's lag beside. */
function perRequestMarkdown(p: PerRequestUse, loopDelayP99Ms: number | null, d: RehearsalReport['driver']): string[] {
  const lines = ['## CPU per request', ''];
  lines.push(`| request | answered |`, '| --- | --- |');
  for (const k of REQUEST_KINDS) lines.push(`| ${k} | ${n(p.answered[k])} |`);
  lines.push(`| all | ${n(p.requests)}${p.unanswered > 0 ? ` (and ${n(p.unanswered)} never answered)` : ''} |`, '');
  lines.push('| processes | CPU seconds | CPU ms per request |', '| --- | --- | --- |');
  for (const g of p.processes) lines.push(`| ${g.name} | ${n(g.cpuSeconds, 1)} | ${n(g.cpuMsPerRequest, 3)} |`);
  if (p.productMeasured)
    lines.push(`| the product (all but the driver) | ${n(p.product.cpuSeconds, 1)} | ${n(p.product.cpuMsPerRequest, 3)} |`, '');
  // Against --target the product's processes are not the driver's children: /proc tells the driver nothing of them.
  else lines.push('', "The product's processes were not started by this rehearsal (`--target`): their CPU was not measured.", '');
  const lag = [`event-loop delay p99 ${n(loopDelayP99Ms)} ms`];
  if (d.arrivalLagMaxMs) lag.push(`fans sent their join up to ${n(d.arrivalLagMaxMs / 1000, 1)} s after they arrived`);
  lines.push(
    `The crowd: ${n(p.driver.cpuMsPerRequest, 3)} ms of the driver's CPU per request${p.productMeasured ? ` against the product's ${n(p.product.cpuMsPerRequest, 3)} ms` : ''}; its own lag: ${lag.join(', ')}.`,
    '',
  );
  return lines;
}

function resourcesMarkdown(u: ResourceUse): string[] {
  const lines = ['## What bound it', '', ...u.bound.map((b) => `- ${b}`), ''];
  lines.push(
    '| processes | count | CPU seconds | cores on average | cores at the busiest 5 s | busiest process, cores |',
    '| --- | --- | --- | --- | --- | --- |',
  );
  for (const g of u.groups)
    lines.push(
      `| ${g.name} | ${n(g.processes)} | ${n(g.cpuSeconds, 1)} | ${n(g.avgCores, 2)} | ${n(g.peakCores, 2)} | ${n(g.busiestProcessCores, 2)} |`,
    );
  lines.push('');
  const facts: string[] = [`over ${n(u.wallSeconds)} s`];
  if (u.machine)
    facts.push(
      `the machine's ${u.machine.cores} cores ${n(u.machine.busyShare * 100)}% busy, ${n(u.machine.otherCores, 2)} cores of it other work, load average up to ${n(u.machine.loadAveragePeak, 1)}`,
    );
  if (u.database)
    facts.push(
      `the database server committed ${n(u.database.commitsPerSecond)} transactions a second (${n(u.database.peakCommitsPerSecond)} at the busiest)`,
    );
  lines.push(`${facts.join('; ')}.`, '');
  return lines;
}
