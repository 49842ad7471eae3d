export { startWorker, type BackgroundWorker, type WorkerOptions } from './worker.js';
export { reconcileInventory, sweepExpiredHolds, latestReconciliations, type ReconciliationResult } from './reconcile.js';
