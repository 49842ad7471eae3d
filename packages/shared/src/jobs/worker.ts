import { Logger, run, type Runner, type TaskList } from 'graphile-worker';
import type pino from 'pino';
import type { Db } from '../db/connect.js';
import { reconcileInventory } from './reconcile.js';

export interface WorkerOptions {
  connectionString: string;
  db: Db;
  concurrency?: number;
  logger?: pino.Logger;
}

export interface BackgroundWorker {
  runner: Runner;
  stop(): Promise<void>;
}

/**
 * Background work on graphile-worker (Postgres-backed: jobs survive restarts, several workers may run at
 * once, and jobs can be enqueued in the same transaction as the change that causes them).
 */
export async function startWorker(opts: WorkerOptions): Promise<BackgroundWorker> {
  const taskList: TaskList = {
    inventory_reconcile: async () => {
      const results = await reconcileInventory(opts.db);
      for (const r of results.filter((x) => x.drift !== 0 || x.orderDrift !== 0))
        opts.logger?.error({ reconciliation: r }, 'inventory invariant drift');
    },
  };
  const log = opts.logger;
  const runner = await run({
    connectionString: opts.connectionString,
    concurrency: opts.concurrency ?? 4,
    noHandleSignals: true,
    pollInterval: 1000,
    taskList,
    // Every minute, as the source document asks of the invariant check; also once at start.
    crontab: '* * * * * inventory_reconcile ?max=1',
    logger: new Logger(() => (level, message) => {
      if (!log) return;
      if (level === 'error') log.error(message);
      else if (level === 'warning') log.warn(message);
    }),
  });
  await runner.addJob('inventory_reconcile', {}, { jobKey: 'inventory_reconcile_startup', maxAttempts: 1 });
  return {
    runner,
    async stop() {
      await runner.stop();
    },
  };
}
