import { readFileSync, writeFileSync } from 'node:fs';
import { createDb, sql, type Db } from '@onsale/shared/db';
import { createEvent, parseEventFile } from '@onsale/shared/events';
import { getInventoryCounts } from '@onsale/shared/inventory';
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
  readBackSales,
  reportMarkdown,
  setRehearsalEvent,
  slowPaymentsFault,
  spearman,
  judgeRehearsal,
  type FaultOutcome,
  type FaultSpec,
  type RehearsalReport,
} from '@onsale/shared/rehearsal';
import { readEventFile, withDatabase, type Io } from '../commands.js';
import { CliError } from '../errors.js';
import { Crowd, type Progress } from './driver.js';
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
  pollBudgetPerSecond: number;
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
      await running?.finish('ERROR', { error: `interrupted (${signal})` }).catch(() => {});
      await spawning?.catch(() => {});
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

async function runOn(
  db: Db,
  reportDb: Db,
  c: {
    o: RehearseOptions;
    file: Record<string, unknown> & { name: string; startsAt: string };
    fansUrl: string;
    originUrl: string;
    authSecret: string;
    target: string;
    product: SpawnedProduct | undefined;
    wallStart: number;
    cpuStart: NodeJS.CpuUsage;
  },
  io: Io,
): Promise<RehearsalReport> {
  const { o, file } = c;
  const K = o.timeScale;
  // The pre-open crowd must be in line before the open: it arrives at about 100 a second (what a 2-core machine
  // shared with other work took), over at least 8 s, and has a quarter of that again to be let in before the open.
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
    timeScale: K,
    botsShare: o.botsShare,
    abandon: o.abandon,
    slowPayers: o.slowPayers,
    failingPayers: o.failingPayers,
    faults: o.faults.map((f) => f.text),
    spawn: o.spawn ?? null,
    target: o.target ?? null,
    seed: o.seed,
    connections: o.connections,
    pollBudgetPerSecond: o.pollBudgetPerSecond,
    preOpenSeconds: preOpenMs / 1000,
  };
  const runId = await insertRehearsalRun(reportDb, {
    eventId: null,
    eventName: spec.name,
    target: c.target,
    fans: o.fans,
    timeScale: K,
    settings,
  });
  // Why the crowd stopped before its deadline, if it did: an operator's signal or --stop-after.
  let stopped: { by: string; atMs: number; joined: number } | null = null;
  const stopCrowd = (by: string) => {
    const crowd = running?.crowd;
    if (!crowd || stopped) return;
    // Stopped once (by --stop-after or a signal): the next signal quits at once.
    running!.stopping = true;
    stopped = { by, atMs: Date.now() - onsaleAt.getTime(), joined: crowd.progress().joined };
    crowd.stop();
  };
  running = { finish: (status, report) => finishRehearsalRun(reportDb, runId, status, report), stop: stopCrowd };
  // What the driver and the product it started use of the machine, sampled while the crowd runs.
  const sampler = new ResourceSampler(db);
  try {
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
      await markRehearsalEvent(trx, r.eventId, r.listingId, K, clock, onsaleAt);
      return { ...r, clock };
    });
    await setRehearsalEvent(reportDb, runId, created.eventId);
    io.err(
      `rehearse: event ${created.eventId} "${spec.name}": ${created.capacity} seats, opens in ${(preOpenMs / 1000).toFixed(0)} s; ${o.fans} fans against ${c.fansUrl}`,
    );
    const plannedSaleMs = created.clock.targetSaleMinutes * 60_000;
    const plan = planAdmission({
      seats: created.capacity,
      ticketsPerOrder: spec.pacing.ticketsPerOrder,
      targetSaleMinutes: created.clock.targetSaleMinutes,
      overbookFactor: spec.pacing.overbookFactor,
      checkoutMinutes: created.clock.checkoutMinutes,
      paymentTps: spec.pacing.paymentTps,
    });
    const sections = spec.sections.map((s) => ({ code: s.code, qualityRank: s.qualityRank ?? 1, capacity: 0 }));
    const crowd = new Crowd({
      fansUrl: c.fansUrl,
      eventId: created.eventId,
      listingId: created.listingId,
      onsaleAtMs: onsaleAt.getTime(),
      startAtMs: startAt,
      fans: o.fans,
      timeScale: K,
      botsShare: o.botsShare,
      abandon: o.abandon,
      slowPayers: o.slowPayers,
      failingPayers: o.failingPayers,
      authSecret: c.authSecret,
      sections,
      perAccountSeats: spec.limits.perAccountSeats,
      ticketsPerOrder: spec.pacing.ticketsPerOrder,
      holdTtlSeconds: created.clock.holdTtlSeconds,
      checkoutMinutes: created.clock.checkoutMinutes,
      preOpenMs,
      seatPickingOpensAtMs: onsaleAt.getTime() + created.clock.seatPickingOpensAfterMinutes * 60_000,
      pickers: 0.3,
      preOpenShare: 0.7,
      tailMeanMs: Math.max(2000, plannedSaleMs * 0.3),
      pollBudgetPerSecond: o.pollBudgetPerSecond,
      connections: o.connections,
      seed: o.seed,
      accountPrefix: `rh${o.seed}-${created.eventId.slice(0, 8)}-`,
      // A large crowd takes a while to join and to read its last answers on a small machine: 10 ms a fan at least.
      deadlineMs: Math.max(300_000, plannedSaleMs * 15, o.fans * 10),
    });

    running.crowd = crowd;
    const stopAfter =
      o.stopAfterSeconds === undefined
        ? undefined
        : setTimeout(() => {
            io.err(`rehearse: --stop-after ${o.stopAfterSeconds}: the fans stop here and the report follows`);
            stopCrowd(`--stop-after ${o.stopAfterSeconds}`);
          }, o.stopAfterSeconds * 1000);

    // Faults, each at its time; while one is open, what fans read is counted against it.
    const open: OpenFault[] = [];
    const outcomes: FaultOutcome[] = [];
    crowd.onAnswer = (key) => {
      for (const f of open) f.outcome.fansRead[key] = (f.outcome.fansRead[key] ?? 0) + 1;
    };
    const timers: NodeJS.Timeout[] = [];
    for (const spec of o.faults) {
      const at = onsaleAt.getTime() + faultOffsetMs(spec.at, plannedSaleMs);
      timers.push(
        setTimeout(
          () => {
            void strike(spec, c.product, db, c.originUrl, created.eventId, onsaleAt.getTime(), { plannedSaleMs, timeScale: K }, io).then(
              (f) => {
                open.push(f);
                outcomes.push(f.outcome);
              },
              (e: unknown) => {
                outcomes.push({
                  fault: spec.text,
                  kind: spec.kind,
                  action: `could not strike: ${(e as Error).message}`,
                  startedAtMs: Date.now() - onsaleAt.getTime(),
                  recoveredAtMs: null,
                  recoveryMs: null,
                  fansRead: {},
                });
              },
            );
          },
          Math.max(0, at - Date.now()),
        ),
      );
    }
    const recoveryProbe = setInterval(() => {
      for (const f of [...open]) {
        void f.recovered().then(
          (ok) => {
            if (!ok || !open.includes(f)) return;
            open.splice(open.indexOf(f), 1);
            f.outcome.recoveredAtMs = Date.now() - onsaleAt.getTime();
            f.outcome.recoveryMs = f.outcome.recoveredAtMs - f.outcome.startedAtMs;
            io.err(`rehearse: ${f.spec.text}: recovered after ${(f.outcome.recoveryMs / 1000).toFixed(1)} s`);
          },
          () => {},
        );
      }
    }, 250);
    let peakRss = process.memoryUsage.rss();
    // What the admission controller says sets its rate (its own words), read with each progress line.
    let controller = '';
    const progress = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage.rss());
      io.err(
        progressLine(
          crowd.progress(),
          created.capacity,
          open.map((f) => f.spec.text),
          controller,
        ),
      );
      void db
        .selectFrom('queue_state')
        .select('controller_reason')
        .where('event_id', '=', created.eventId)
        .executeTakeFirst()
        .then(
          (r) => (controller = r?.controller_reason ?? ''),
          () => (controller = 'unreadable (the database does not answer)'),
        );
    }, 2000);
    let result;
    try {
      result = await crowd.run();
    } finally {
      clearInterval(progress);
      clearTimeout(stopAfter);
      for (const t of timers) clearTimeout(t);
    }
    const resources = await sampler.finish(
      result.eventLoopDelayP99Ms,
      {
        // The pre-open crowd arrives over preOpenMs; the joins the product answered over the driver's run.
        arrivingPerSecond: (o.fans * 0.7) / (preOpenMs / 1000),
        joinedPerSecond: result.joined / Math.max(1, (Date.now() - startAt) / 1000),
        arrivalLagMaxMs: result.arrivalLagMaxMs,
      },
      { byKind: result.answeredByKind, unanswered: result.unansweredRequests, productMeasured: c.product !== undefined },
    );
    // A fault still open gets a last chance to show its recovery.
    const settleUntil = Date.now() + 30_000;
    while (open.length > 0 && Date.now() < settleUntil) await new Promise((r) => setTimeout(r, 250));
    clearInterval(recoveryProbe);
    // The gateway's condition ends at its own time anyway; lifted here too, so nothing outlives the run.
    if (o.faults.some((f) => f.kind === 'slow-payments')) await liftSimulatedGatewayCondition(db, created.eventId).catch(() => {});
    peakRss = Math.max(peakRss, process.memoryUsage.rss());

    // The database's word on the outcome.
    const counts = await getInventoryCounts(db, created.eventId, created.capacity);
    const soldOutRow = await db.selectFrom('queue_state').select('sold_out_at').where('event_id', '=', created.eventId).executeTakeFirst();
    const soldOutAt = soldOutRow?.sold_out_at ?? null;
    const sales = await readBackSales(db, created.eventId, created.listingId, `rh${o.seed}-${created.eventId.slice(0, 8)}-b`, soldOutAt);
    const candidates = [...new Set(result.holdConflicts.flatMap((h) => [h.first, h.second]))];
    const durable = await durableHolds(db, created.eventId, candidates);
    const liveDoubleHolds = result.holdConflicts.filter((h) => durable.has(h.first) && durable.has(h.second)).length;
    const soldBeyondOrders = Math.max(0, sales.orderSeats - counts.sold);
    const doubleSold = result.doubleSoldSeen + liveDoubleHolds + soldBeyondOrders;
    const duplicateOrders = sales.duplicateOrders + result.duplicateOrdersSeen;
    const lastSaleMs = sales.lastSaleAt ? sales.lastSaleAt.getTime() - onsaleAt.getTime() : null;
    const propagation =
      lastSaleMs === null
        ? []
        : Array.from(result.soldOutReadsAtMs)
            .filter((t) => t >= lastSaleMs)
            .map((t) => t - lastSaleMs);
    const prop = latencySummary(propagation);
    const hold = latencySummary(result.holdLatencies);
    const rankCorrelation = spearman(result.ranked.arrival, result.ranked.position);
    const admittedMinutes =
      result.firstAdmitAtMs !== null && result.lastAdmitAtMs !== null
        ? Math.max(1000, result.lastAdmitAtMs - Math.max(0, result.firstAdmitAtMs)) / 60_000
        : null;
    const faults = outcomes.sort((a, b) => a.startedAtMs - b.startedAtMs);
    const early = stopped as { by: string; atMs: number; joined: number } | null;
    const wallSeconds = (Date.now() - c.wallStart) / 1000;
    const cpu = process.cpuUsage(c.cpuStart);
    const report: RehearsalReport = {
      eventId: created.eventId,
      eventName: spec.name,
      target: c.target,
      startedAt: new Date(c.wallStart).toISOString(),
      finishedAt: new Date().toISOString(),
      timeScale: K,
      settings,
      fans: o.fans,
      humans: result.humans,
      bots: result.bots,
      seats: created.capacity,
      seatsSold: counts.sold,
      orders: sales.orders,
      soldOut: counts.available === 0 && counts.held === 0 && counts.sold === created.capacity,
      lastSaleMs,
      doubleSold,
      duplicateOrders,
      drift: counts.drift,
      soldOutPropagationMs: prop,
      holdLatencyMs: { p50: hold.p50, p99: hold.p99, count: hold.count },
      admittedPerMinute: {
        plan: Math.round(plan.admitsPerMinute * 10) / 10,
        actual: admittedMinutes === null ? null : Math.round((result.admitted / admittedMinutes) * 10) / 10,
      },
      strandedSeats: result.strandedSeats,
      rankCorrelation: rankCorrelation === null ? null : Math.round(rankCorrelation * 10_000) / 10_000,
      rankedFans: result.ranked.arrival.length,
      botSeatShare: counts.sold === 0 ? 0 : Math.round((sales.botSeats / counts.sold) * 10_000) / 10_000,
      unfinishedFans: result.unfinished,
      unfinishedBy: result.unfinishedBy,
      waitlistJoined: result.waitlistJoined,
      waitlistNotified: sales.waitlistNotified,
      faults,
      answers: Object.fromEntries([...result.answers.entries()].sort((a, b) => b[1] - a[1])),
      driver: {
        cpuSeconds: Math.round(((cpu.user + cpu.system) / 1e6) * 10) / 10,
        wallSeconds: Math.round(wallSeconds * 10) / 10,
        peakRssMb: Math.round(peakRss / 1e6),
        requests: result.requests,
        requestsPerSecond: Math.round(result.requests / Math.max(1, wallSeconds)),
        eventLoopDelayP99Ms: result.eventLoopDelayP99Ms,
        arrivalLagMaxMs: result.arrivalLagMaxMs,
        neverArrived: result.neverArrived,
      },
      stopped: early,
      resources,
      verdict: 'PASS',
      reasons: [],
      warnings: [],
    };
    // Every target the report shows, judged by the one rule the console shows it with (rehearsal/verdict.ts).
    const judged = judgeRehearsal(report);
    Object.assign(report, { verdict: judged.verdict, reasons: judged.reasons, warnings: judged.warnings });
    await finishRehearsalRun(reportDb, runId, report.verdict, report as unknown as Record<string, unknown>);
    if (o.reportFile) {
      writeFileSync(o.reportFile, `${JSON.stringify(report, null, 2)}\n`);
      writeFileSync(markdownPath(o.reportFile), `${reportMarkdown(report)}\n`);
    }
    return report;
  } catch (e) {
    await finishRehearsalRun(reportDb, runId, 'ERROR', { error: e instanceof Error ? e.message : String(e) }).catch(() => {});
    throw e;
  }
}

/** The Markdown report beside the JSON one: `r.json` -> `r.md`. */
export function markdownPath(reportFile: string): string {
  return /\.json$/i.test(reportFile) ? reportFile.replace(/\.json$/i, '.md') : `${reportFile}.md`;
}

function progressLine(p: Progress, seats: number, faults: string[], controller: string): string {
  const t = p.tMs < 0 ? `opens in ${(-p.tMs / 1000).toFixed(0)} s` : `t+${(p.tMs / 1000).toFixed(0)} s`;
  return `rehearse: ${t}  joined ${p.joined}  waiting ${p.waiting}  admitted ${p.admitted}  holding/paying ${p.shopping}  orders ${p.bought} (${p.seatsBought}/${seats} seats)  done ${p.done}  errors ${p.errors}  requests ${p.requests}${p.backlog > 0 ? `  not yet let join ${p.backlog}` : ''}${faults.length ? `  fault: ${faults.join(', ')}` : ''}${controller ? `  controller: ${controller}` : ''}`;
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
      const r = await db
        .selectFrom('queue_state')
        .select(sql<Date | null>`greatest(heartbeat_at, sold_out_at)`.as('t'))
        .where('event_id', '=', eventId)
        .executeTakeFirst();
      return !!r?.t && r.t.getTime() >= since;
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
