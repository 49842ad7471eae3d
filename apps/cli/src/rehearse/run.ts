import { readFileSync, writeFileSync } from 'node:fs';
import { createDb, type Db } from '@onsale/shared/db';
import { controllerLastTick, controllerReason, soldOutAtOf, unsoldShape } from './run.repository.js';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { planAdmission } from '@onsale/shared/admission/plan';
import { liftSimulatedGatewayCondition, putSimulatedGatewayCondition } from '@onsale/shared/checkout';
import {
  compressClock,
  confirmedOrderSince,
  durableHolds,
  faultOffsetMs,
  finishRehearsalRun,
  insertRehearsalRun,
  latencySummary,
  listingOfferTtlSeconds,
  markRehearsalEvent,
  readSaleEnd,
  reportMarkdown,
  setRehearsalEvent,
  slowPaymentsFault,
  spearman,
  verdictOf,
  judgeRehearsal,
  type FaultOutcome,
  type FaultSpec,
  type RehearsalReport,
} from '@onsale/shared/rehearsal';
import { readEventFile, withDatabase, type Io } from '../commands.js';
import { CliError } from '../errors.js';
import { Crowd, defaultMaxConnections, type Progress } from './driver.js';
import { ResourceSampler } from './resources.js';
import type { SpawnedProduct } from './spawn.js';

export interface RehearseOptions {
  eventFile: string;
  fans: number;
  timeScale: number;
  botsShare: number;
  abandon: number;
  slowPayers: number;
  failingPayers: number;
  target: string | undefined;
  spawn: { storeInstances: number; workers: number; edge: boolean } | undefined;
  faults: FaultSpec[];
  reportFile: string | undefined;
  seed: number;
  connections: number;
  /** The most connections the crowd opens over all its pools (default 8x connections; see DriverOptions). */
  maxConnections?: number;
  pollBudgetPerSecond: number;
  /** Tracer fans polling exactly at their Retry-After outside the poll budget (DriverOptions.tracers). */
  tracers: number;
  preOpenSeconds: number | undefined;
  /** Stop the crowd this many seconds after the driver starts and report on what happened so far. */
  stopAfterSeconds?: number;
}

interface OpenFault {
  spec: FaultSpec;
  outcome: FaultOutcome;
  recovered: () => Promise<boolean>;
}

/**
 * Runs one rehearsal: starts (or finds) the product, creates the rehearsal's event with its clock compressed, lets
 * the crowd loose, strikes the faults, reads the outcome back from the database and writes the report. Resolves with
 * the report; the command's exit status is its verdict.
 */
export async function rehearse(databaseUrl: string | undefined, o: RehearseOptions, io: Io): Promise<RehearsalReport> {
  // Validated as an event file first (its errors named), then taken raw: the rehearsal changes its name and times.
  await readEventFile(o.eventFile);
  const file = JSON.parse(readFileSync(o.eventFile, 'utf8')) as Record<string, unknown> & { name: string; startsAt: string };
  const wallStart = Date.now();
  const cpuStart = process.cpuUsage();
  let product: SpawnedProduct | undefined;
  let spawning: Promise<unknown> | undefined;
  const startup = new AbortController();
  // Interrupted (Ctrl-C, a kill) while the crowd runs: the fans stop where they are and the report is written on what
  // happened so far, with what bound the run (a long run stopped by hand still tells its reader something). A second
  // signal, or one before the crowd started, stops at once: the product it started is stopped and its scratch database
  // removed, the run recorded as ERROR, rather than left running without its driver.
  // One Ctrl-C may arrive more than once (the terminal signals the whole process group, and `npm run` relays it): a
  // signal within two seconds of the first is the same press.
  let firstSignalAt = 0;
  const interrupted = (signal: NodeJS.Signals) => {
    if (running?.crowd && !running.stopping) {
      running.stopping = true;
      firstSignalAt = Date.now();
      running.stop(signal);
      io.err(`rehearse: ${signal}: the fans stop here and the report follows (again to quit at once)`);
      return;
    }
    if (Date.now() - firstSignalAt < 2000) return;
    io.err(`rehearse: ${signal}: stopping${product || spawning ? ' the product and' : ''} the rehearsal`);
    startup.abort();
    void (async () => {
      // Ignored on purpose: Interrupted: the run is marked as such if the database answers; the process exits either way.
      await running?.finish('ERROR', { error: `interrupted (${signal})` }).catch(() => {});
      // Ignored on purpose: Its failure is reported where it is awaited; here the interrupt only waits for it to end.
      await spawning?.catch(() => {});
      // Ignored on purpose: Stopping the product on an interrupt: what fails to stop is killed with the process group.
      await product?.stop().catch(() => {});
      process.exit(130);
    })();
  };
  process.on('SIGINT', interrupted);
  process.on('SIGTERM', interrupted);
  let fansUrl: string;
  let originUrl: string;
  let productUrl: string | undefined;
  let authSecret: string;
  let target: string;
  if (o.spawn) {
    const { spawnProduct } = await import('./spawn.js');
    io.err(
      `rehearse: starting the product (${o.spawn.storeInstances} store, ${o.spawn.workers} worker${o.spawn.edge ? ', edge' : ''}) on a scratch database...`,
    );
    const started = spawnProduct({ ...o.spawn, timeScale: o.timeScale, log: (line) => io.err(line), signal: startup.signal });
    spawning = started;
    product = await started;
    ({ fansUrl, originUrl } = product);
    productUrl = product.databaseUrl;
    authSecret = product.authSecret;
    target = product.describe;
  } else {
    fansUrl = originUrl = o.target!;
    const { cliSecrets } = await import('../env.js');
    authSecret = cliSecrets().authSecret;
    target = o.target!;
  }
  try {
    return await withDatabase(databaseUrl, async (reportDb) => {
      const productDb = productUrl ? createDb(productUrl, { max: 4, applicationName: 'onsale-rehearsal', onError: () => {} }) : reportDb;
      try {
        return await runOn(productDb, reportDb, { o, file, fansUrl, originUrl, authSecret, target, product, wallStart, cpuStart }, io);
      } finally {
        if (productDb !== reportDb) await productDb.destroy();
      }
    });
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    running = undefined;
    if (product) await product.stop();
  }
}

/** The run under way in this process, for an interruption to stop or record. */
let running:
  | {
      finish(status: 'ERROR', report: Record<string, unknown>): Promise<unknown>;
      /** Set once the crowd runs: an interruption then stops the fans and lets the report be written. */
      crowd?: Crowd;
      stop(by: string): void;
      stopping?: boolean;
    }
  | undefined;

/** What runOn is given: the options, the event file, where the product is, and the run's start. */
interface RunContext {
  o: RehearseOptions;
  file: Record<string, unknown> & { name: string; startsAt: string };
  fansUrl: string;
  originUrl: string;
  authSecret: string;
  target: string;
  product: SpawnedProduct | undefined;
  wallStart: number;
  cpuStart: NodeJS.CpuUsage;
}

/** The rehearsal's sale on the clock: when the crowd starts, when the sale opens, the event's spec and the run's settings. */
interface SaleTimes {
  preOpenMs: number;
  startAt: number;
  onsaleAt: Date;
  spec: ReturnType<typeof parseEventFile>;
  settings: Record<string, unknown>;
}

/** The rehearsal's event as created, with its compressed clock and admission plan. */
interface CreatedSale {
  eventId: string;
  listingId: string;
  capacity: number;
  clock: ReturnType<typeof compressClock>;
  plannedSaleMs: number;
  plan: ReturnType<typeof planAdmission>;
}

type DriverRun = Awaited<ReturnType<Crowd['run']>>;
type Stopped = { by: string; atMs: number; joined: number };

async function runOn(db: Db, reportDb: Db, c: RunContext, io: Io): Promise<RehearsalReport> {
  const { o } = c;
  const sale = saleTimes(o, c.file);
  const runId = await insertRehearsalRun(reportDb, {
    eventId: null,
    eventName: sale.spec.name,
    target: c.target,
    fans: o.fans,
    timeScale: o.timeScale,
    settings: sale.settings,
  });
  // Why the crowd stopped before its deadline, if it did: an operator's signal or --stop-after.
  let stopped: Stopped | null = null;
  const stopCrowd = (by: string) => {
    const crowd = running?.crowd;
    if (!crowd || stopped) return;
    // Stopped once (by --stop-after or a signal): the next signal quits at once.
    running!.stopping = true;
    stopped = { by, atMs: Date.now() - sale.onsaleAt.getTime(), joined: crowd.progress().joined };
    crowd.stop();
  };
  running = { finish: (status, report) => finishRehearsalRun(reportDb, runId, status, report), stop: stopCrowd };
  // What the driver and the product it started use of the machine, sampled while the crowd runs.
  const sampler = new ResourceSampler(db);
  try {
    const created = await createSale(db, sale, o.timeScale);
    await setRehearsalEvent(reportDb, runId, created.eventId);
    io.err(
      `rehearse: event ${created.eventId} "${sale.spec.name}": ${created.capacity} seats, opens in ${(sale.preOpenMs / 1000).toFixed(0)} s; ${o.fans} fans against ${c.fansUrl}`,
    );
    const crowd = new Crowd(crowdOptions(c, sale, created));
    running.crowd = crowd;
    const stopAfter =
      o.stopAfterSeconds === undefined
        ? undefined
        : setTimeout(() => {
            io.err(`rehearse: --stop-after ${o.stopAfterSeconds}: the fans stop here and the report follows`);
            stopCrowd(`--stop-after ${o.stopAfterSeconds}`);
          }, o.stopAfterSeconds * 1000);
    const faults = scheduleFaults(crowd, c, db, created, sale.onsaleAt.getTime(), io);
    const progress = watchProgress(crowd, db, created, faults, io);
    let result: DriverRun;
    try {
      result = await crowd.run();
    } finally {
      progress.stop();
      clearTimeout(stopAfter);
      faults.stopStriking();
    }
    const resources = await sampler.finish(
      result.eventLoopDelayP99Ms,
      {
        // The pre-open crowd arrives over preOpenMs; the joins the product answered over the driver's run.
        arrivingPerSecond: (o.fans * 0.7) / (sale.preOpenMs / 1000),
        joinedPerSecond: result.joined / Math.max(1, (Date.now() - sale.startAt) / 1000),
        arrivalLagMaxMs: result.arrivalLagMaxMs,
      },
      { byKind: result.answeredByKind, unanswered: result.unansweredRequests, productMeasured: c.product !== undefined },
    );
    const outcomes = await faults.settle();
    const report = await buildReport(db, c, sale, created, {
      result,
      resources,
      faults: outcomes,
      stopped,
      peakRss: Math.max(progress.peakRss(), process.memoryUsage.rss()),
    });
    await finishRehearsalRun(reportDb, runId, report.verdict, report as unknown as Record<string, unknown>);
    if (o.reportFile) {
      writeFileSync(o.reportFile, `${JSON.stringify(report, null, 2)}\n`);
      writeFileSync(markdownPath(o.reportFile), `${reportMarkdown(report)}\n`);
    }
    return report;
  } catch (e) {
    // Ignored on purpose: The error itself is rethrown and printed; a run the database could not mark stays RUNNING until abandoned.
    await finishRehearsalRun(reportDb, runId, 'ERROR', { error: e instanceof Error ? e.message : String(e) }).catch(() => {});
    throw e;
  }
}

/**
 * The sale's times and the event's spec: the pre-open crowd must be in line before the open. It arrives at about 100
 * a second (what a 2-core machine shared with other work took), over at least 8 s, and has a quarter of that again to
 * be let in before the open.
 */
function saleTimes(o: RehearseOptions, file: RunContext['file']): SaleTimes {
  const preOpenMs = Math.round((o.preOpenSeconds ?? Math.max(8, (o.fans * 0.7) / 100)) * 1000);
  const startAt = Date.now() + 1000;
  const onsaleAt = new Date(startAt + Math.round(preOpenMs * 1.25));
  const startsAt = new Date(Math.max(Date.parse(file.startsAt), onsaleAt.getTime() + 30 * 24 * 3600_000));
  const stamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const spec = parseEventFile({
    ...file,
    name: `${file.name} (rehearsal ${stamp})`.slice(0, 200),
    onsaleAt: onsaleAt.toISOString(),
    startsAt: startsAt.toISOString(),
  });
  const settings = {
    eventFile: o.eventFile,
    fans: o.fans,
    timeScale: o.timeScale,
    botsShare: o.botsShare,
    abandon: o.abandon,
    slowPayers: o.slowPayers,
    failingPayers: o.failingPayers,
    faults: o.faults.map((f) => f.text),
    spawn: o.spawn ?? null,
    target: o.target ?? null,
    seed: o.seed,
    connections: o.connections,
    maxConnections: o.maxConnections ?? defaultMaxConnections(o.connections),
    pollBudgetPerSecond: o.pollBudgetPerSecond,
    tracers: o.tracers,
    preOpenSeconds: preOpenMs / 1000,
  };
  return { preOpenMs, startAt, onsaleAt, spec, settings };
}

/** Creates the rehearsal's event, its clock compressed K times and marked as a rehearsal's, and plans its admission. */
async function createSale(db: Db, sale: SaleTimes, K: number): Promise<CreatedSale> {
  const { spec } = sale;
  const created = await db.transaction().execute(async (trx) => {
    const r = await createEvent(trx, spec, 'rehearsal', { signOff: true });
    const clock = compressClock(
      {
        holdTtlSeconds: spec.holds.ttlSeconds,
        holdExtensionSeconds: spec.holds.extensionSeconds,
        targetSaleMinutes: spec.pacing.targetSaleMinutes,
        checkoutMinutes: spec.pacing.checkoutMinutes,
        seatPickingOpensAfterMinutes: spec.seatPickingOpensAfterMinutes,
        offerTtlSeconds: await listingOfferTtlSeconds(trx, r.listingId),
      },
      K,
    );
    await markRehearsalEvent(trx, r.eventId, r.listingId, K, clock, sale.onsaleAt);
    return { ...r, clock };
  });
  const plan = planAdmission({
    seats: created.capacity,
    ticketsPerOrder: spec.pacing.ticketsPerOrder,
    targetSaleMinutes: created.clock.targetSaleMinutes,
    overbookFactor: spec.pacing.overbookFactor,
    checkoutMinutes: created.clock.checkoutMinutes,
    paymentTps: spec.pacing.paymentTps,
  });
  return {
    eventId: created.eventId,
    listingId: created.listingId,
    capacity: created.capacity,
    clock: created.clock,
    plannedSaleMs: created.clock.targetSaleMinutes * 60_000,
    plan,
  };
}

/** The crowd's options: the fans, their behaviour and the event's compressed clock. */
function crowdOptions(c: RunContext, sale: SaleTimes, created: CreatedSale): ConstructorParameters<typeof Crowd>[0] {
  const { o } = c;
  const { spec } = sale;
  return {
    fansUrl: c.fansUrl,
    eventId: created.eventId,
    listingId: created.listingId,
    onsaleAtMs: sale.onsaleAt.getTime(),
    startAtMs: sale.startAt,
    fans: o.fans,
    timeScale: o.timeScale,
    botsShare: o.botsShare,
    abandon: o.abandon,
    slowPayers: o.slowPayers,
    failingPayers: o.failingPayers,
    authSecret: c.authSecret,
    sections: spec.sections.map((s) => ({ code: s.code, qualityRank: s.qualityRank ?? 1, capacity: 0 })),
    perAccountSeats: spec.limits.perAccountSeats,
    ticketsPerOrder: spec.pacing.ticketsPerOrder,
    holdTtlSeconds: created.clock.holdTtlSeconds,
    checkoutMinutes: created.clock.checkoutMinutes,
    preOpenMs: sale.preOpenMs,
    seatPickingOpensAtMs: sale.onsaleAt.getTime() + created.clock.seatPickingOpensAfterMinutes * 60_000,
    pickers: 0.3,
    preOpenShare: 0.7,
    tailMeanMs: Math.max(2000, created.plannedSaleMs * 0.3),
    pollBudgetPerSecond: o.pollBudgetPerSecond,
    tracers: o.tracers,
    connections: o.connections,
    ...(o.maxConnections !== undefined ? { maxConnections: o.maxConnections } : {}),
    seed: o.seed,
    accountPrefix: `rh${o.seed}-${created.eventId.slice(0, 8)}-`,
    // A large crowd takes a while to join and to read its last answers on a small machine: 10 ms a fan at least.
    deadlineMs: Math.max(300_000, created.plannedSaleMs * 15, o.fans * 10),
  };
}

/** The faults, each struck at its time; while one is open, what fans read is counted against it. */
function scheduleFaults(crowd: Crowd, c: RunContext, db: Db, created: CreatedSale, onsaleAtMs: number, io: Io) {
  const { o } = c;
  const open: OpenFault[] = [];
  const outcomes: FaultOutcome[] = [];
  crowd.onAnswer = (key) => {
    for (const f of open) f.outcome.fansRead[key] = (f.outcome.fansRead[key] ?? 0) + 1;
  };
  const timers: NodeJS.Timeout[] = [];
  const sale = { plannedSaleMs: created.plannedSaleMs, timeScale: o.timeScale };
  for (const spec of o.faults) {
    const at = onsaleAtMs + faultOffsetMs(spec.at, created.plannedSaleMs);
    const fire = () =>
      void strike(spec, c.product, db, c.originUrl, created.eventId, onsaleAtMs, sale, io).then(
        (f) => {
          open.push(f);
          outcomes.push(f.outcome);
        },
        (e: unknown) => {
          outcomes.push({
            fault: spec.text,
            kind: spec.kind,
            action: `could not strike: ${(e as Error).message}`,
            startedAtMs: Date.now() - onsaleAtMs,
            recoveredAtMs: null,
            recoveryMs: null,
            fansRead: {},
          });
        },
      );
    timers.push(setTimeout(fire, Math.max(0, at - Date.now())));
  }
  const recoveryProbe = setInterval(() => {
    for (const f of [...open]) {
      void f.recovered().then(
        (ok) => {
          if (!ok || !open.includes(f)) return;
          open.splice(open.indexOf(f), 1);
          f.outcome.recoveredAtMs = Date.now() - onsaleAtMs;
          f.outcome.recoveryMs = f.outcome.recoveredAtMs - f.outcome.startedAtMs;
          io.err(`rehearse: ${f.spec.text}: recovered after ${(f.outcome.recoveryMs / 1000).toFixed(1)} s`);
        },
        () => {},
      );
    }
  }, 250);
  return {
    /** The faults under way, by name. */
    openNames: () => open.map((f) => f.spec.text),
    /** No fault is struck after the crowd stopped. */
    stopStriking: () => {
      for (const t of timers) clearTimeout(t);
    },
    /** A fault still open gets a last chance (30 s) to show its recovery; the outcomes, in the order they struck. */
    async settle(): Promise<FaultOutcome[]> {
      const settleUntil = Date.now() + 30_000;
      while (open.length > 0 && Date.now() < settleUntil) await new Promise((r) => setTimeout(r, 250));
      clearInterval(recoveryProbe);
      // The gateway's condition ends at its own time anyway; lifted here too, so nothing outlives the run.
      // Ignored on purpose: The rehearsal's own event: a slow-payments condition left behind affects nothing else.
      if (o.faults.some((f) => f.kind === 'slow-payments')) await liftSimulatedGatewayCondition(db, created.eventId).catch(() => {});
      return outcomes.sort((a, b) => a.startedAtMs - b.startedAtMs);
    },
  };
}

/** A progress line on stderr every 2 s, with what the admission controller says sets its rate; the driver's peak memory. */
function watchProgress(crowd: Crowd, db: Db, created: CreatedSale, faults: { openNames(): string[] }, io: Io) {
  let peakRss = process.memoryUsage.rss();
  let controller = '';
  const timer = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
    io.err(progressLine(crowd.progress(), created.capacity, faults.openNames(), controller));
    void controllerReason(db, created.eventId).then(
      (reason) => (controller = reason ?? ''),
      () => (controller = 'unreadable (the database does not answer)'),
    );
  }, 2000);
  return { stop: () => clearInterval(timer), peakRss: () => peakRss };
}

/**
 * About how many seats the crowd would buy: its fans who pay (not the abandoners) times their parties' mean size.
 * Bots are left out (an operator's accounts share two cards, so its seats are few whatever it asks for).
 */
export function seatsWanted(humans: number, abandon: number, ticketsPerOrder: number, perAccountSeats: number): number {
  return humans * (1 - abandon) * Math.min(perAccountSeats, ticketsPerOrder);
}

/** Of the fans let in who did not buy, those the run's end caught mid-purchase or back in line (the driver's reasons). */
export function admittedUnfinished(notBought: Record<string, number>): number {
  let n = 0;
  for (const [why, count] of Object.entries(notBought)) if (why.endsWith('the run ended')) n += count;
  return n;
}

/** The database's word on the outcome, the driver's figures beside it, and the verdict. */
async function buildReport(
  db: Db,
  c: RunContext,
  sale: SaleTimes,
  created: CreatedSale,
  r: { result: DriverRun; resources: RehearsalReport['resources']; faults: FaultOutcome[]; stopped: Stopped | null; peakRss: number },
): Promise<RehearsalReport> {
  const { o } = c;
  const { result } = r;
  const onsaleAtMs = sale.onsaleAt.getTime();
  // Every seat row counted, the counts the database keeps held to them (a kept count that differs is drift too) and the
  // orders, in one snapshot (readSaleEnd): a run stopped early leaves checkouts finishing.
  const soldOutAt = await soldOutAtOf(db, created.eventId);
  const {
    counts,
    sales,
    drift,
    ordersBeyondSold: soldBeyondOrders,
  } = await readSaleEnd(db, {
    eventId: created.eventId,
    capacity: created.capacity,
    listingId: created.listingId,
    botPrefix: `rh${o.seed}-${created.eventId.slice(0, 8)}-b`,
    notifiedSince: soldOutAt,
  });
  // General admission has no rows: its unsold seats have no shape.
  const unsold = counts.sold < created.capacity && sale.spec.sections.length > 0 ? await unsoldShape(db, created.eventId) : null;
  const candidates = [...new Set(result.holdConflicts.flatMap((h) => [h.first, h.second]))];
  const durable = await durableHolds(db, created.eventId, candidates);
  const liveConflicts = result.holdConflicts.filter((h) => durable.has(h.first) && durable.has(h.second));
  const liveDoubleHolds = liveConflicts.length;
  const doubleSold = result.doubleSoldSeen + liveDoubleHolds + soldBeyondOrders;
  const duplicateOrders = sales.duplicateOrders + result.duplicateOrdersSeen;
  const lastSaleMs = sales.lastSaleAt ? sales.lastSaleAt.getTime() - onsaleAtMs : null;
  // From the sell-out (the last sale) to each polling fan's SOLD_OUT, less the time that poll waited inside the driver
  // for a connection (a fan with its own would have sent it then): the product's part, the driver's wait reported apart.
  const since = (reads: Float64Array, waits: Float64Array) => {
    if (lastSaleMs === null) return [];
    const out: number[] = [];
    for (let k = 0; k < reads.length; k++) {
      const t = reads[k]! - waits[k]!;
      if (t >= lastSaleMs) out.push(t - lastSaleMs);
    }
    return out;
  };
  const prop = latencySummary(since(result.soldOutReadsAtMs, result.soldOutDriverWait));
  // The goal's figure: fans who polled as told (a fan the poll budget held back learns later whatever the product does).
  const propAsTold = latencySummary(since(result.soldOutReadsAsToldAtMs, result.soldOutAsToldDriverWait));
  // Of them, the tracer fans (polling exactly at their Retry-After outside the poll budget), reported apart.
  const propTracers = latencySummary(since(result.soldOutReadsTracerAtMs, result.soldOutTracerDriverWait));
  const soldOutWait = latencySummary(result.soldOutDriverWait);
  // Holds as fans timed them; the same less each hold's wait inside the driver (the product's part); that wait.
  const hold = latencySummary(result.holdLatencies);
  const holdProduct = latencySummary(result.holdLatencies.map((v, k) => v - result.holdDriverLag[k]!));
  const holdLag = latencySummary(result.holdDriverLag);
  const rankCorrelation = spearman(result.ranked.arrival, result.ranked.position);
  const admittedMinutes =
    result.firstAdmitAtMs !== null && result.lastAdmitAtMs !== null
      ? Math.max(1000, result.lastAdmitAtMs - Math.max(0, result.firstAdmitAtMs)) / 60_000
      : null;
  const soldOut = counts.available === 0 && counts.held === 0 && counts.sold === created.capacity;
  const botSeatShare = counts.sold === 0 ? 0 : Math.round((sales.botSeats / counts.sold) * 10_000) / 10_000;
  const wanted = Math.round(seatsWanted(result.humans, o.abandon, sale.spec.pacing.ticketsPerOrder, sale.spec.limits.perAccountSeats));
  const verdict = verdictOf({
    doubleSold,
    duplicateOrders,
    drift,
    faults: r.faults,
    seats: created.capacity,
    seatsSold: counts.sold,
    seatsWanted: wanted,
    soldOut,
    // The crowd's size: without it the report's checks weighed fans let in per buyer on a crowd smaller than the seats
    // (every fan let in, the ratio the crowd's), while judgeRehearsal, which has it, did not: the 20,000-fan run's 1.58.
    fans: o.fans,
    admittedFans: result.admitted,
    buyers: result.bought,
    admittedUnfinished: admittedUnfinished(result.admittedNotBought),
    holdLatencyMs: hold,
    holdLatencyProductMs: holdProduct,
    holdDriverLagMs: holdLag,
    soldOutPropagationMs: propAsTold,
    soldOutPolling: prop.count,
    positionExpired: result.positionExpired,
    botSeatShare,
    productMeasured: c.product !== undefined,
    machine: r.resources?.machine ?? null,
  });
  const early = r.stopped;
  const wallSeconds = (Date.now() - c.wallStart) / 1000;
  const cpu = process.cpuUsage(c.cpuStart);
  const report: RehearsalReport = {
    eventId: created.eventId,
    eventName: sale.spec.name,
    target: c.target,
    startedAt: new Date(c.wallStart).toISOString(),
    finishedAt: new Date().toISOString(),
    timeScale: o.timeScale,
    settings: sale.settings,
    fans: o.fans,
    humans: result.humans,
    bots: result.bots,
    seats: created.capacity,
    seatsSold: counts.sold,
    orders: sales.orders,
    soldOut,
    lastSaleMs,
    doubleSold,
    doubleSoldParts: {
      seenInTwoOrders: result.doubleSoldSeen,
      liveDoubleHolds,
      ordersBeyondSold: soldBeyondOrders,
      holdConflicts: liveConflicts.slice(0, 20),
    },
    duplicateOrders,
    drift,
    soldOutPropagationMs: prop,
    soldOutPropagationAsToldMs: propAsTold,
    soldOutPropagationTracersMs: { ...propTracers, tracers: result.tracers },
    holdLatencyMs: { p50: hold.p50, p99: hold.p99, count: hold.count },
    holdLatencyProductMs: { p50: holdProduct.p50, p99: holdProduct.p99, count: holdProduct.count },
    holdDriverLagMs: { p50: holdLag.p50, p99: holdLag.p99, max: holdLag.max },
    seatsWanted: wanted,
    admittedFans: result.admitted,
    buyers: result.bought,
    admittedNotBought: result.admittedNotBought,
    ...(unsold && unsold.seats > 0 ? { unsoldSeats: unsold } : {}),
    positionExpired: result.positionExpired,
    admittedPerMinute: {
      plan: Math.round(created.plan.admitsPerMinute * 10) / 10,
      actual: admittedMinutes === null ? null : Math.round((result.admitted / admittedMinutes) * 10) / 10,
    },
    strandedSeats: result.strandedSeats,
    rankCorrelation: rankCorrelation === null ? null : Math.round(rankCorrelation * 10_000) / 10_000,
    rankedFans: result.ranked.arrival.length,
    botSeatShare,
    unfinishedFans: result.unfinished,
    unfinishedBy: result.unfinishedBy,
    waitlistJoined: result.waitlistJoined,
    waitlistNotified: sales.waitlistNotified,
    faults: r.faults,
    answers: Object.fromEntries([...result.answers.entries()].sort((a, b) => b[1] - a[1])),
    refusals: result.refusals,
    driver: {
      cpuSeconds: Math.round(((cpu.user + cpu.system) / 1e6) * 10) / 10,
      wallSeconds: Math.round(wallSeconds * 10) / 10,
      peakRssMb: Math.round(r.peakRss / 1e6),
      requests: result.requests,
      requestsPerSecond: Math.round(result.requests / Math.max(1, wallSeconds)),
      eventLoopDelayP99Ms: result.eventLoopDelayP99Ms,
      arrivalLagMaxMs: result.arrivalLagMaxMs,
      neverArrived: result.neverArrived,
      seatMapsFromEdgeCache: result.seatMapsFromEdgeCache,
      requestTimings: result.requestTimings,
      answersOfKind: result.answersOfKind,
      connections: result.connections,
      ...(soldOutWait.count > 0 ? { soldOutDriverWaitMs: { p50: soldOutWait.p50, p99: soldOutWait.p99, max: soldOutWait.max } } : {}),
    },
    stopped: early,
    resources: r.resources,
    checks: verdict.checks,
    verdict: 'PASS',
    reasons: [],
    warnings: [],
  };
  // Every target the report shows, judged by the one rule the console shows it with (rehearsal/judge.ts, which weighs
  // the sale's goals through verdictOf and adds the war room's detection lines and the warnings).
  const judged = judgeRehearsal(report);
  return { ...report, verdict: judged.verdict, reasons: judged.reasons, warnings: judged.warnings };
}

/** The Markdown report beside the JSON one: `r.json` -> `r.md`. */
export function markdownPath(reportFile: string): string {
  return /\.json$/i.test(reportFile) ? reportFile.replace(/\.json$/i, '.md') : `${reportFile}.md`;
}

function progressLine(p: Progress, seats: number, faults: string[], controller: string): string {
  const t = p.tMs < 0 ? `opens in ${(-p.tMs / 1000).toFixed(0)} s` : `t+${(p.tMs / 1000).toFixed(0)} s`;
  return `rehearse: ${t}  joined ${p.joined}  waiting ${p.waiting}  admitted ${p.admitted}  holding/paying ${p.shopping}  orders ${p.bought} (${p.seatsBought}/${seats} seats)  done ${p.done}  errors ${p.errors}  requests ${p.requests}${p.backlog > 0 ? `  not yet let join ${p.backlog}` : ''}  lines ${linesOf(p)}${faults.length ? `  fault: ${faults.join(', ')}` : ''}${controller ? `  controller: ${controller}` : ''}`;
}

/** Where the crowd's requests are: per kind, waiting in the driver for a connection / on the wire (joins: in flight). */
function linesOf(p: Progress): string {
  const short: Record<string, string> = { join: 'join', status: 'poll', 'seat map': 'map', hold: 'hold', checkout: 'pay', waitlist: 'wl' };
  return Object.entries(p.lines)
    .filter(([, l]) => l.queued + l.running > 0)
    .map(([k, l]) => `${short[k] ?? k} ${l.queued}/${l.running}`)
    .join(' ')
    .concat(` (joins in flight ${p.joinsInFlight})`);
}

/** Strikes one fault; the outcome's recovery is filled in when `recovered` first answers true. */
async function strike(
  spec: FaultSpec,
  product: SpawnedProduct | undefined,
  db: Db,
  originUrl: string,
  eventId: string,
  onsaleAtMs: number,
  sale: { plannedSaleMs: number; timeScale: number },
  io: Io,
): Promise<OpenFault> {
  const t0 = Date.now();
  const outcome: FaultOutcome = {
    fault: spec.text,
    kind: spec.kind,
    action: '',
    startedAtMs: t0 - onsaleAtMs,
    recoveredAtMs: null,
    recoveryMs: null,
    fansRead: {},
  };
  if (spec.kind === 'slow-payments') {
    // The simulated gateway's condition for this event only (every store process reads it within a second); it
    // ends by itself at its time, and is lifted here when that time comes. Recovered: lifted, and a payment went
    // through after it.
    const f = slowPaymentsFault(sale.plannedSaleMs, sale.timeScale);
    await putSimulatedGatewayCondition(db, eventId, { ...f, forSeconds: f.durationMs / 1000 });
    outcome.action =
      `the simulated gateway refuses ${Math.round(f.busyShare * 100)}% of the event's charges for load (429, Retry-After ` +
      `${f.retryAfterSeconds} s) and answers the rest ${(f.delayMs / 1000).toFixed(1)} s late, for ${(f.durationMs / 1000).toFixed(0)} s`;
    let lifted: Promise<Date> | undefined;
    const recovered = async () => {
      if (Date.now() < t0 + f.durationMs) return false;
      lifted ??= liftSimulatedGatewayCondition(db, eventId).catch((e: unknown) => {
        lifted = undefined; // the database did not answer: lifted on the next probe
        throw e;
      });
      return confirmedOrderSince(db, eventId, await lifted);
    };
    io.err(`rehearse: ${spec.text}: ${outcome.action}`);
    return { spec, outcome, recovered };
  }
  if (!product)
    throw new CliError('FAULT_NEEDS_SPAWN', `${spec.text}: this fault needs --spawn (the rehearsal must own the processes it strikes)`);
  const healthy = async () => {
    try {
      const r = await fetch(`${originUrl}/healthz`, { signal: AbortSignal.timeout(2000) });
      return r.status === 200;
    } catch {
      return false;
    }
  };
  // The admission controller ticked after `since`: the worker side is back.
  const ticked = async (since: number) => {
    try {
      const t = await controllerLastTick(db, eventId);
      return !!t && t.getTime() >= since;
    } catch {
      return false;
    }
  };
  let recovered: () => Promise<boolean>;
  switch (spec.kind) {
    case 'kill-store':
      outcome.action = product.kill('store-1');
      recovered = async () => product.restartedSince('store-1', t0) && (await healthy());
      break;
    case 'kill-worker':
      outcome.action = product.kill('worker-1');
      recovered = async () => product.restartedSince('worker-1', t0) && (await ticked(Date.now() - 1500));
      break;
    case 'restart-db': {
      outcome.action = await product.restartDatabase();
      const back = Date.now();
      recovered = async () => (await healthy()) && (await ticked(back));
      break;
    }
  }
  io.err(`rehearse: ${spec.text}: ${outcome.action}`);
  return { spec, outcome, recovered };
}
