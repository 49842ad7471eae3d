import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from '../testing/index.js';
import { JOB_POLL_MS, startWorker, type BackgroundWorker } from './worker.js';

// The job runner idle asked the database for jobs once a second per worker (8 fetches a second, the worker's largest
// per-second cost): it now fetches for the whole pool (graphile-worker's local queue), once every JOB_POLL_MS, and
// still starts a job added now at once (its NOTIFY) and a job due later within a poll of its time.

let t: TestDatabase;
let worker: BackgroundWorker | undefined;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 4 });
});
afterAll(async () => {
  await worker?.stop();
  await t?.drop();
});

describe("the worker's job fetch", () => {
  it('idle, one fetch a poll for the whole pool; a job added now runs, one due later within a poll of its time', async () => {
    worker = await startWorker({
      connectionString: t.url,
      db: t.db,
      concurrency: 8,
      claimTokenSecret: 'test-claim-secret',
      admission: false,
      warRoomMonitor: false,
    });
    const events = worker.runner.events;
    // Idle: the start-up jobs done (and no crontab job due in the next seconds).
    await vi.waitFor(
      async () => {
        const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM graphile_worker.jobs`.execute(t.db);
        expect(rows[0]!.n).toBe(0);
        const second = new Date().getSeconds();
        expect(second >= 2 && second <= 45).toBe(true);
      },
      { timeout: 120_000, interval: 100 },
    );
    let poolFetches = 0;
    let workerFetches = 0;
    const onPoolFetch = () => poolFetches++;
    const onWorkerEmpty = () => workerFetches++;
    events.on('localQueue:getJobs:complete', onPoolFetch);
    events.on('worker:getJob:empty', onWorkerEmpty);
    // Polled for, not slept on: at least three pool fetches seen, then how many there were against the time taken
    // (a loaded machine fetches less often, never more).
    const idleFrom = Date.now();
    await vi.waitFor(() => expect(poolFetches).toBeGreaterThanOrEqual(3), { timeout: 60_000, interval: 50 });
    const idleMs = Date.now() - idleFrom;
    events.off('localQueue:getJobs:complete', onPoolFetch);
    events.off('worker:getJob:empty', onWorkerEmpty);
    // Eight workers polling each on its own would have asked about eight times a poll.
    expect(poolFetches).toBeLessThanOrEqual(Math.ceil(idleMs / JOB_POLL_MS) + 2);
    expect(workerFetches).toBe(0);

    const done = new Map<string, number>();
    events.on('job:success', ({ job }) => {
      if (job.key) done.set(job.key, Date.now());
    });
    // A job added now runs (its NOTIFY wakes the pool).
    const addedAt = Date.now();
    await worker.runner.addJob('inventory_reconcile', {}, { jobKey: 'job-fetch-now', maxAttempts: 1 });
    await vi.waitFor(() => expect(done.has('job-fetch-now')).toBe(true), { timeout: 10_000, interval: 20 });
    // A job due in 1.5 s: not before its time, and not left behind (a poll, and wide slack for a loaded machine).
    const dueAt = Date.now() + 1500;
    await worker.runner.addJob('inventory_reconcile', {}, { jobKey: 'job-fetch-later', maxAttempts: 1, runAt: new Date(dueAt) });
    await vi.waitFor(() => expect(done.has('job-fetch-later')).toBe(true), { timeout: 15_000, interval: 20 });
    expect(done.get('job-fetch-later')!).toBeGreaterThanOrEqual(dueAt - 50);
    expect(done.get('job-fetch-later')! - dueAt).toBeLessThan(JOB_POLL_MS + 10_000);
    expect(done.get('job-fetch-now')! - addedAt).toBeLessThan(10_000);
  });
});
