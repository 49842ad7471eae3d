import { EventEmitter } from 'node:events';
import { Logger, run, type Runner, type TaskList, type WorkerEvents } from 'graphile-worker';
import type pino from 'pino';
import { AdmissionController } from '../admission/controller.js';
import { createDb, healthOf, poolOf, type Db } from '../db/connect.js';
import { databaseFaultOf, DatabaseHealth, logOutages } from '../db/faults.js';
import { graphileLogFunction, quietDuringOutages } from './outage-logger.js';
import type { Metrics } from '../metrics/index.js';
import { deliverToChannels, inboxChannel, notifyTasks, webhookChannel, type OutboundPolicy } from '../notify/index.js';
import { ClaimTokens } from '../waitlist/claim-token.js';
import type { FanoutOptions } from '../waitlist/fanout.js';
import { renderNotifications } from '../waitlist/notifications.js';
import { waitlistTasks } from '../waitlist/tasks.js';
import { relayFanouts } from '../waitlist/availability.js';
import { DEAD_AFTER_MS, HEARTBEAT_MS, releaseDeadWorkers, WorkerHeartbeat } from './liveness.js';
import { reconcileInventory } from './reconcile.js';
import { ALLOCATION_ROLL_TASK, rollDueAllocations, rollForward } from '../allocations/allocations.service.js';
import { DomainError } from '../errors.js';
import { StatsKeeper } from '../db/stats-keeper.js';
import { alertTasks } from '../warroom/alert-delivery.js';
import { WarRoomMonitor } from '../warroom/monitor.js';
import { StoreMetricsScraper } from '../warroom/store-metrics.js';
import { QUEUE_SCHEDULE_TASK, queueScheduleTask } from '../admission/schedule.service.js';

export interface WorkerOptions {
  connectionString: string;
  db: Db;
  concurrency?: number;
  logger?: pino.Logger;
  /**
   * The admission controller loop that runs beside the jobs (a 1-2 s tick is not a job): one leader per event
   * across every worker process. `false` runs the jobs only.
   */
  admission?: { tickMs?: number; paymentTpsBudget?: number } | false;
  /** The secret claim tokens are derived from (the store API's QUEUE_TOKEN_SECRET): webhook bodies carry them. */
  claimTokenSecret: string;
  metrics?: Metrics;
  /** Fan-out tuning (page and chunk sizes, time budget) and test hooks. */
  fanout?: Omit<FanoutOptions, 'db' | 'onNotified' | 'metrics'>;
  /** Heartbeat period and the silence after which a worker counts as dead and its locked jobs are released. */
  liveness?: { heartbeatMs?: number; deadAfterMs?: number };
  /** How often deferred waitlist fan-outs (hold releases) are enqueued (ms); default RELAY_MS. */
  relayMs?: number;
  /**
   * The war-room monitor (alerts recorded and sent to the alert receivers, the sale's series by minute) beside the
   * jobs, one process at a time: `storeApiUrls` lets it read hold latency and sold-out propagation from the store
   * API's /metrics, `consoleUrl` links each alert message to the war room. `false`: off.
   */
  warRoomMonitor?: { everyMs?: number; resolveAfterMs?: number; storeApiUrls?: readonly string[]; consoleUrl?: string | null } | false;
  /**
   * Where webhook deliveries and alert messages may go: public addresses only by default; the install's
   * WEBHOOK_ALLOW_HOSTS (outboundPolicyOf) names internal receivers.
   */
  outbound?: OutboundPolicy;
}

/**
 * How often the job runner looks for jobs that became due (a job due now is fetched on its NOTIFY): a job with a
 * run_at starts at most this late.
 */
export const JOB_POLL_MS = 1000;

/** The relay's period: how long at most a released hold's seats wait before the waitlist's fan-out is queued. */
export const RELAY_MS = 200;

export interface BackgroundWorker {
  runner: Runner;
  /** The admission controller, unless `admission: false`. */
  admission: AdmissionController | undefined;
  stop(): Promise<void>;
}

/**
 * Background work on graphile-worker (Postgres-backed: jobs survive restarts, several workers may run at
 * once, and jobs can be enqueued in the same transaction as the change that causes them), and the admission
 * controller's loop beside them (see AdmissionController).
 */
export async function startWorker(opts: WorkerOptions): Promise<BackgroundWorker> {
  // One outage, logged twice (when it starts, when it ends, with the count of failed calls), as the store API does:
  // every beat, tick and job that meets it is counted in the pool's health rather than logged with its stack.
  const health = healthOfPool(opts.db);
  const stopLoggingOutages = opts.logger
    ? logOutages(health, opts.logger, 'jobs, heartbeats and admission ticks wait until it is back (queues fail closed)')
    : () => {};
  const log = opts.logger ? quietDuringOutages(opts.logger, health) : undefined;
  const claimTokens = new ClaimTokens(opts.claimTokenSecret);
  // Where waitlist notifications go: the inbox (the rows themselves) and the operator's webhooks.
  const channels = [inboxChannel(opts.metrics), webhookChannel()];
  const tasks: TaskList = {
    inventory_reconcile: async () => {
      const results = await reconcileInventory(opts.db);
      for (const r of results.filter((x) => x.drift !== 0 || x.orderDrift !== 0 || Object.keys(x.tierDrift).length > 0))
        log?.error({ reconciliation: r }, 'inventory invariant drift');
    },
    // Presale tiers roll forward at their time (a job queued at creation), and every minute any tier that is due
    // and still owns unsold seats (seats of holds that lapsed or were released after the roll) rolls again.
    [ALLOCATION_ROLL_TASK]: async (payload) => {
      const p = (payload ?? {}) as { eventId?: string; tier?: string };
      try {
        const results =
          p.eventId && p.tier ? [await rollForward(opts.db, p.eventId, p.tier, 'allocations-job')] : await rollDueAllocations(opts.db);
        for (const r of results.filter((x) => x.moved > 0)) log?.info({ roll: r }, 'presale tier rolled forward');
      } catch (e) {
        // Not due (its time was moved) or gone: the every-minute sweep rolls it when it is due.
        if (e instanceof DomainError && (e.code === 'ROLL_NOT_DUE' || e.code === 'TIER_NOT_FOUND')) return;
        throw e;
      }
    },
    ...waitlistTasks({
      db: opts.db,
      metrics: opts.metrics,
      logger: log,
      fanout: opts.fanout,
      onNotified: (trx, chunk) => deliverToChannels(trx, channels, chunk),
    }),
    ...notifyTasks({
      db: opts.db,
      metrics: opts.metrics,
      logger: log,
      render: (ids) => renderNotifications(opts.db, claimTokens, ids),
      outbound: opts.outbound,
    }),
    ...alertTasks({
      db: opts.db,
      logger: log,
      consoleUrl: opts.warRoomMonitor ? (opts.warRoomMonitor.consoleUrl ?? null) : null,
      outbound: opts.outbound,
    }),
    [QUEUE_SCHEDULE_TASK]: queueScheduleTask({ db: opts.db, logger: log }),
  };
  // A job that failed because the database cannot be reached fails (to be retried) once the database answers again:
  // graphile-worker records the failure in the database without waiting for it, and a record that cannot be written
  // during the outage would end the process with an unhandled rejection.
  const stopping = new AbortController();
  const taskList = afterOutages(tasks, health, stopping.signal);
  const events: WorkerEvents = new EventEmitter();
  const heartbeat = new WorkerHeartbeat(opts.db, opts.liveness?.heartbeatMs ?? HEARTBEAT_MS, (err) =>
    log?.warn({ err }, 'worker heartbeat failed'),
  );
  heartbeat.listen(events);
  // graphile-worker's own pool, made here so its errors are handled (a connection the server ends, as it does
  // when the database stops, must not crash the process) and so it ends after the runner, not before.
  // Made by createDb, it reports to the same health as the worker's queries (a connection it cannot obtain is an
  // outage, whatever the code), and listens to every client's errors (graphile-worker warns at start otherwise).
  const concurrency = opts.concurrency ?? 8;
  const jobsDb = createDb(opts.connectionString, { max: concurrency + 2, applicationName: 'onsale-worker', health });
  const pgPool = poolOf(jobsDb);
  const runner = await run({
    events,
    pgPool,
    concurrency,
    noHandleSignals: true,
    pollInterval: JOB_POLL_MS,
    // One fetch for the whole pool (graphile-worker's local queue), not one per idle worker: idle, the runner asks
    // the database for due jobs once every JOB_POLL_MS where its `concurrency` workers each asked (8 a second, the
    // worker's and its backends' largest per-second cost). A job added now is fetched at once all the same (its
    // NOTIFY wakes the pool); the poll finds jobs that become due later (run_at: offers' expiry, schedules, retries).
    // The batch is the concurrency, so no fetched job waits for a worker; the pool's id locks them, and it beats
    // (WorkerHeartbeat), so a pool that dies has its jobs released as a dead worker's are.
    preset: { worker: { localQueue: { size: concurrency } } },
    taskList,
    // Every minute, as rule 7 in docs/architecture.md says of the invariant check; also once at start.
    crontab: [
      '* * * * * inventory_reconcile ?max=1',
      '* * * * * waitlist_maintain ?max=1',
      `* * * * * ${ALLOCATION_ROLL_TASK} ?max=1`,
    ].join('\n'),
    logger: new Logger(() => graphileLogFunction(opts.logger, health)),
  });
  await runner.addJob('inventory_reconcile', {}, { jobKey: 'inventory_reconcile_startup', maxAttempts: 1 });
  // A worker that starts resumes any fan-out left mid-way (its old job may be locked by a worker that died).
  await runner.addJob('waitlist_maintain', { staleAfterMs: 0 }, { jobKey: 'waitlist_maintain_startup', maxAttempts: 1 });
  // Jobs locked by a worker that died are released once its heartbeat is stale, and interrupted fan-outs resume.
  const deadAfterMs = opts.liveness?.deadAfterMs ?? DEAD_AFTER_MS;
  const reaper = setInterval(
    () => {
      releaseDeadWorkers(opts.db, deadAfterMs)
        .then(async (dead) => {
          if (dead.length === 0) return;
          log?.warn({ workers: dead }, 'released the jobs of workers that stopped beating');
          await runner.addJob('waitlist_maintain', { staleAfterMs: 0 }, { jobKey: 'waitlist_maintain_after_reap', maxAttempts: 1 });
        })
        .catch((err: unknown) => log?.warn({ err }, 'releasing dead workers failed'));
    },
    Math.max(250, Math.floor(deadAfterMs / 3)),
  );
  reaper.unref();
  // Deferred fan-outs (hold releases) enqueued in batches, one commit each (see relayFanouts).
  let relaying = false;
  const relay = setInterval(() => {
    if (relaying) return;
    relaying = true;
    relayFanouts(opts.db)
      .catch((err: unknown) => log?.warn({ err }, 'relaying waitlist fan-outs failed'))
      .finally(() => (relaying = false));
  }, opts.relayMs ?? RELAY_MS);
  relay.unref();
  // The planner's statistics of the hot tables kept current while a sale fills them (see StatsKeeper).
  const stats = new StatsKeeper(opts.db, { onError: (err) => log?.warn({ err }, 'analyzing the hot tables failed') });
  stats.start();
  // Alerts and the sale's series are recorded whether or not anyone has the war room open.
  const monitor =
    opts.warRoomMonitor === false
      ? undefined
      : new WarRoomMonitor({
          db: opts.db,
          everyMs: opts.warRoomMonitor?.everyMs,
          resolveAfterMs: opts.warRoomMonitor?.resolveAfterMs,
          storeMetrics: opts.warRoomMonitor?.storeApiUrls?.length
            ? new StoreMetricsScraper({ urls: opts.warRoomMonitor.storeApiUrls })
            : undefined,
          logger: log,
        });
  monitor?.start();
  let admission: AdmissionController | undefined;
  if (opts.admission !== false) {
    try {
      admission = new AdmissionController({
        db: opts.db,
        connectionString: opts.connectionString,
        tickMs: opts.admission?.tickMs,
        paymentTpsBudget: opts.admission?.paymentTpsBudget,
        logger: log,
      });
      await admission.start();
    } catch (e) {
      stopping.abort();
      clearInterval(reaper);
      clearInterval(relay);
      await monitor?.stop();
      await stats.stop();
      await runner.stop();
      await heartbeat.stop();
      await jobsDb.destroy();
      stopLoggingOutages();
      throw e;
    }
  }
  return {
    runner,
    admission,
    async stop() {
      // The controller first: its leads go to another process at once, and its ticks use the pool.
      stopping.abort();
      clearInterval(reaper);
      clearInterval(relay);
      await monitor?.stop();
      await stats.stop();
      await admission?.stop();
      await runner.stop();
      await heartbeat.stop();
      await jobsDb.destroy();
      stopLoggingOutages();
    },
  };
}

/** The health tracker of the worker's pool (createDb makes one per pool; any other Db gets one of its own). */
function healthOfPool(db: Db): DatabaseHealth {
  try {
    return healthOf(db);
  } catch {
    return new DatabaseHealth();
  }
}

/** The longest a job that met an outage waits for the database before it fails anyway, ms. */
export const OUTAGE_TASK_WAIT_MS = 15_000;

/**
 * Every task of `tasks`, except that one failing because the database cannot be reached waits, before it fails,
 * until `health` sees the database answer again (at most OUTAGE_TASK_WAIT_MS, or until `stop` aborts).
 */
function afterOutages(tasks: TaskList, health: DatabaseHealth, stop: AbortSignal): TaskList {
  return Object.fromEntries(
    Object.entries(tasks).map(([name, task]) => [
      name,
      async (payload: unknown, helpers: Parameters<NonNullable<TaskList[string]>>[1]) => {
        try {
          return await task!(payload, helpers);
        } catch (err) {
          if (databaseFaultOf(err) === 'unavailable') {
            health.noteError(err);
            await health.whenUp(OUTAGE_TASK_WAIT_MS, stop);
          }
          throw err;
        }
      },
    ]),
  );
}
