import fp from 'fastify-plugin';
import { DatabaseHealth, healthOf, logOutages, type Db } from '@onsale/shared/db';
import type { Metrics } from '@onsale/shared/metrics';
import { EpisodeLog } from '@onsale/shared/overload';
import { installErrorHandling } from '../errors.js';
import { requestBudgetPlugin } from './request-budget.js';

/** The pool's health tracker (createDb makes one per pool; any other Db gets its own, fed by the error handler alone). */
function databaseHealthOf(db: Db): DatabaseHealth {
  try {
    return healthOf(db);
  } catch {
    return new DatabaseHealth();
  }
}

/**
 * How the store answers faults: a database outage is 503 + Retry-After on every route, a request past its budget
 * (REQUEST_BUDGET_MS, 0: none) is 503 at once, and every other error is shaped by the one error handler (errors.ts).
 */
export const faultsPlugin = fp<{ db: Db; metrics: Metrics; requestBudgetMs: number }>(
  async (app, { db, metrics, requestBudgetMs }) => {
    // A database outage is answered 503 + Retry-After on every route and logged twice (when it starts, when it ends),
    // never once per request.
    const health = databaseHealthOf(db);
    metrics.databaseUp.set(health.up ? 1 : 0);
    const onDown = () => {
      metrics.databaseUp.set(0);
      metrics.databaseOutages.inc();
    };
    const onUp = () => metrics.databaseUp.set(1);
    health.on('down', onDown);
    health.on('up', onUp);
    const stopLogging = logOutages(health, app.log, 'answering 503 with Retry-After until it is back');
    app.addHook('onClose', async () => {
      health.off('down', onDown);
      health.off('up', onUp);
      stopLogging();
    });
    // A request past its budget (REQUEST_BUDGET_MS) is answered 503 at once, before anything else can hold it up;
    // logged as episodes, not per request.
    const overBudget = new EpisodeLog({
      log: app.log,
      started:
        'requests past their budget: answering them 503 with Retry-After (reason request_budget) before a socket timeout could close them',
      ended: (count, seconds) => `requests past their budget: ${count} answered 503 over ${seconds} s`,
    });
    app.addHook('onClose', async () => overBudget.stop());
    const faults = {
      health,
      count503: (reason: 'database' | 'database_busy' | 'overload_pool' | 'request_budget') => metrics.unavailableResponses.inc({ reason }),
      overBudget: () => overBudget.note(),
    };
    installErrorHandling(app, faults);
    if (requestBudgetMs > 0) await app.register(requestBudgetPlugin, { budgetMs: requestBudgetMs, faults });
  },
  { name: 'store-faults' },
);
