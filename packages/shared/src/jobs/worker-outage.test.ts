import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { sql } from 'kysely';
import { createDb, healthOf, type Db } from '../db/connect.js';
import { createTestDatabase, DatabaseProxy, type TestDatabase } from '../testing/index.js';
import { startWorker, type BackgroundWorker } from './worker.js';

// During a database outage the worker logged every failed call: about 9,000 warnings with stacks in 118 s (its
// heartbeat, the fan-out relay, the dead-worker reaper, graphile-worker's job fetches, the admission controller's
// ticks). Here the worker reaches its database through a proxy the test cuts (the shared server is never stopped),
// as the store API's outage test does: the outage is logged once when it starts and once when it ends, with the
// count of the calls that failed meanwhile, and nothing else.

let t: TestDatabase;
let proxy: DatabaseProxy;
let db: Db;
let worker: BackgroundWorker | undefined;
/** The worker's heartbeats, read past the proxy. */
const heartbeats = async () =>
  (await sql<{ worker_id: string; seen_at: Date }>`SELECT worker_id, seen_at FROM worker_heartbeats`.execute(t.db)).rows;
const lines: { level: number; msg: string; failures?: number; error?: string }[] = [];

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 2 });
  proxy = await DatabaseProxy.start(t.url);
  db = createDb(proxy.url(t.url), { max: 4, connectionTimeoutMillis: 1500, applicationName: 'worker-outage-test' });
});
afterAll(async () => {
  await worker?.stop();
  await db?.destroy();
  await proxy?.close();
  await t?.drop();
});

describe('the worker during a database outage', () => {
  it('logs it once when it starts and once when it ends, with the count of failed calls; no warning per failed call', async () => {
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk, _enc, done) {
          for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
          done();
        },
      }),
    );
    worker = await startWorker({
      connectionString: proxy.url(t.url),
      db,
      logger,
      concurrency: 2,
      claimTokenSecret: 'test-claim-secret',
      // Every loop beating fast, so the outage meets many calls of each kind.
      admission: { tickMs: 200 },
      // Heartbeats every 200 ms; a silence taken for a death only after 2 minutes (longer than any outage here).
      liveness: { heartbeatMs: 200, deadAfterMs: 120_000 },
      relayMs: 100,
      warRoomMonitor: { everyMs: 200 },
    });
    const health = healthOf(db);
    // Serving: the worker's heartbeat is written.
    await vi.waitFor(async () => expect((await heartbeats()).length).toBeGreaterThan(0), {
      timeout: 60_000,
    });
    // No job in flight when the outage begins, nor due during it (the crontab's jobs start at each minute): a job that
    // succeeds just as the database goes away cannot record its completion, and graphile-worker 0.18 does not wait
    // for that record (its rejection is unhandled). That case is not what this test is about.
    await vi.waitFor(
      async () => {
        const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM graphile_worker.jobs`.execute(t.db);
        expect(rows[0]!.n).toBe(0);
        const second = new Date().getSeconds();
        expect(second >= 3 && second <= 30).toBe(true);
      },
      { timeout: 120_000, interval: 100 },
    );
    const before = lines.length;

    // The database goes away under the worker's connections, and refuses new ones, until the worker's loops have
    // met it many times; then connections reset; then the server is "starting up".
    proxy.cut();
    await proxy.setMode('refuse');
    await vi.waitFor(() => expect(health.failures).toBeGreaterThanOrEqual(40), { timeout: 60_000, interval: 20 });
    const accepted = proxy.accepted;
    await proxy.setMode('reset');
    await vi.waitFor(() => expect(proxy.accepted - accepted).toBeGreaterThanOrEqual(5), { timeout: 60_000, interval: 20 });
    await proxy.setMode('starting');
    await vi.waitFor(() => expect(proxy.accepted - accepted).toBeGreaterThanOrEqual(10), { timeout: 60_000, interval: 20 });
    const failedCalls = health.failures;
    await proxy.setMode('pass');

    // Back: the end of the outage is logged once its calls have succeeded for a while.
    await vi.waitFor(() => expect(lines.some((l) => l.msg.startsWith('database back after'))).toBe(true), {
      timeout: 60_000,
      interval: 50,
    });
    const during = lines.slice(before);
    const downs = during.filter((l) => l.msg.startsWith('database unavailable'));
    const ups = during.filter((l) => l.msg.startsWith('database back after'));
    expect(downs, JSON.stringify(during.filter((l) => l.level >= 40).map((l) => [l.level, l.msg, l.error, l.failures]))).toHaveLength(1);
    expect(downs[0]!.level).toBe(50);
    expect(ups).toHaveLength(1);
    expect(ups[0]!.failures).toBeGreaterThanOrEqual(failedCalls);
    expect(ups[0]!.msg).toMatch(new RegExp(`^database back after \\d+\\.\\d s \\(${ups[0]!.failures} failed database calls meanwhile\\)$`));
    // Nothing else at warning level or above: no warning per failed beat, tick or job fetch.
    const loud = during.filter((l) => l.level >= 40 && !downs.includes(l) && !ups.includes(l));
    expect(loud.map((l) => l.msg)).toEqual([]);

    // And the worker works again: its heartbeat is renewed after the outage.
    const renewedAfter = new Date();
    await vi.waitFor(
      async () => {
        const rows = await heartbeats();
        expect(rows.some((r) => new Date(r.seen_at) > renewedAfter)).toBe(true);
      },
      { timeout: 60_000 },
    );
  });
});
