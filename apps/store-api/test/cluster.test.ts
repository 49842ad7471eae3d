import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, freePort, type TestDatabase, userShellEnv, waitForOutput } from '@onsale/shared/testing';
import { sql } from '@onsale/shared/db';
import { admissionClaimsFor, createTokenKey, hashDevice, signToken } from '@onsale/shared/queue';
import { checkInvariants, makeEvent } from './helper.js';

// `npm start -- --store-instances 2 --workers 2` with Redis, as an operator runs it (scripts/start.ts in a process of
// its own, a fresh database, free ports, a Redis key prefix of this run's own): requests land on both store
// processes, the per-account status limit holds across them (not doubled), and `kill -9` of one store process under
// load loses no confirmed order and sells nothing twice, while the other keeps serving and the killed one comes back.

const root = join(import.meta.dirname, '..', '..', '..');
const QUEUE_SECRET = `cluster-test-queue-secret-${randomBytes(8).toString('hex')}`;
const STATUS_LIMIT = 20;
const prefix = `onsale-test-${randomBytes(4).toString('hex')}:`;
let tdb: TestDatabase;
let product: ChildProcess;
let exited: Promise<unknown>;
let output = '';
let workDir: string;
let base: string;
let redis: Redis;
/** A connection per request (pipelining 0: no keep-alive), so the cluster's round robin spreads them over the processes. */
const fresh = new Agent({ pipelining: 0 });

const userEnv = (extra: Record<string, string> = {}) => userShellEnv(root, extra);
const printed = (pattern: RegExp, ms: number) => waitForOutput(product, () => output, pattern, ms);

const get = async (path: string, headers: Record<string, string> = {}) => {
  const r = await fetch(`${base}${path}`, { headers, dispatcher: fresh, signal: AbortSignal.timeout(30_000) });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
};
const post = async (path: string, headers: Record<string, string>, body?: unknown) => {
  const r = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    dispatcher: fresh,
    signal: AbortSignal.timeout(30_000),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
};

beforeAll(async () => {
  tdb = await createTestDatabase(inject('templateDatabaseUrl'), { max: 4 });
  redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true });
  await redis.connect();
  workDir = mkdtempSync(join(tmpdir(), 'onsale-cluster-'));
  writeFileSync(join(workDir, 'index.html'), '<!doctype html><title>stand-in</title>');
  mkdirSync(join(workDir, 'assets'));
  const [storePort, bffPort] = [await freePort(), await freePort()];
  product = spawn(process.execPath, ['--import', 'tsx', join(root, 'scripts', 'start.ts'), '--store-instances', '2', '--workers', '2'], {
    cwd: root,
    env: userEnv({
      DATABASE_URL: tdb.url,
      STORE_API_PORT: String(storePort),
      BFF_PORT: String(bffPort),
      CONSOLE_DIR: workDir,
      FAN_DIR: workDir,
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: prefix,
      QUEUE_TOKEN_SECRET: QUEUE_SECRET,
      RATE_LIMIT_STATUS_PER_ACCOUNT: String(STATUS_LIMIT),
      BOT_GATE_ENABLED: 'false',
      PAYMENT_LATENCY_MS: '20',
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  exited = new Promise((resolve) => product.once('exit', resolve));
  product.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  product.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  // Five processes each loading the code base: minutes on a busy 2-core machine.
  await printed(/Ctrl-C to stop\./, 420_000);
  base = (await printed(/^store API\s+(http:\/\/\S+)/m, 0))[1]!;
}, 450_000);

afterAll(async () => {
  if (product && product.exitCode === null && product.signalCode === null) {
    product.kill('SIGTERM');
    const timer = setTimeout(() => product.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  }
  if (redis) {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  }
  await fresh.close();
  rmSync(workDir, { recursive: true, force: true });
  await tdb?.drop();
});

/** The store processes that answer /healthz over `n` fresh connections: instance name to pid. */
async function storeProcesses(n = 12): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const r = await get('/healthz');
    if (r.status === 200) seen.set(r.body.instance as string, r.body.pid as number);
  }
  return seen;
}

describe('npm start -- --store-instances 2 --workers 2 with Redis', () => {
  it('names its processes, and requests land on both store processes (GET /healthz says which answered)', async () => {
    expect(output).toMatch(/^processes\s+.*store-1 \(pid \d+\).*store-2 \(pid \d+\)/m);
    expect(output).toMatch(/worker-1 \(pid \d+\).*worker-2 \(pid \d+\)/);
    const seen = await storeProcesses();
    expect([...seen.keys()].sort()).toEqual(['store-1', 'store-2']);
    expect(new Set(seen.values()).size).toBe(2);
  });

  it('holds the per-account status limit across both processes (counted in Redis, not once per process)', async () => {
    const { eventId } = await makeEvent(tdb, { fairnessMode: 'FIFO' });
    const login = await post('/auth/dev-login', {}, { accountId: 'cluster-poller' });
    const fan = { authorization: `Bearer ${login.body.token as string}`, 'x-device-id': 'cluster-poller-device' };
    const joined = await post(`/events/${eventId}/queue`, fan);
    expect(joined.status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < STATUS_LIMIT + 10; i++)
      statuses.push((await get(`/events/${eventId}/queue/status`, { ...fan, 'x-queue-token': joined.body.queueToken as string })).status);
    // Per process, 30 polls over two processes would all pass (15 each, under 20): the shared count refuses 10.
    expect(statuses.filter((s) => s === 200)).toHaveLength(STATUS_LIMIT);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
    expect(await redis.keys(`${prefix}rl:*status:account:cluster-poller`)).toHaveLength(1);
  });

  it('GET /metrics answers for the whole cluster, whichever process serves the scrape (?scope=process: its own alone)', async () => {
    // Every /healthz and status request this file has made so far, over both processes: 12 in the first test, 30
    // polls in the second, and these.
    await storeProcesses(8);
    const healthz = 12 + 8;
    const count = (text: string, route: string) =>
      text
        .split('\n')
        .filter((l) => l.startsWith('http_request_duration_seconds_count{') && l.includes(`route="${route}"`))
        .reduce((a, l) => a + Number(l.split(' ').at(-1)), 0);
    const scrape = async (query = '') =>
      (await fetch(`${base}/metrics${query}`, { dispatcher: fresh, signal: AbortSignal.timeout(30_000) })).text();
    for (let i = 0; i < 4; i++) {
      const text = await scrape();
      expect(count(text, '/healthz')).toBe(healthz);
      expect(count(text, '/events/:id/queue/status')).toBe(STATUS_LIMIT + 10);
      expect(text).toMatch(/^cluster_metrics_missing_processes 0$/m);
      expect(text).toMatch(/^database_up 1$/m);
    }
    // Each process alone has served part of them (connections are handed out in turn).
    const own = await Promise.all(Array.from({ length: 4 }, () => scrape('?scope=process')));
    for (const text of own) {
      expect(count(text, '/healthz')).toBeLessThan(healthz);
      expect(text).not.toMatch(/cluster_metrics_missing_processes/);
    }
  });

  it('kill -9 of one store process under load: the other keeps serving, the killed one is restarted, no confirmed order lost, nothing sold twice', async () => {
    const { eventId, capacity } = await makeEvent(tdb, { fairnessMode: 'FIFO' });
    const key = await createTokenKey(QUEUE_SECRET);
    const before = await storeProcesses();
    const victim = before.get('store-1')!;
    const confirmed = new Map<string, string>(); // orderId -> holdId
    let served = 0;
    let servedAfterKill = 0;
    let killedAt = 0;
    let killed = false;
    // The fans buy until told to stop (after the kill, once the other process has served one): no wall-clock window,
    // which a loaded machine can fill with answers that confirm nothing.
    let stop = false;

    /** One fan: sign in, hold 2 seats, pay; a dropped connection is retried (the checkout with the same key). */
    const buyer = async (b: number) => {
      for (let k = 0; !stop; k++) {
        const accountId = `cluster-buyer-${b}-${k}`;
        const deviceId = `cluster-device-${b}-${k}`;
        try {
          const login = await post('/auth/dev-login', {}, { accountId });
          const claims = admissionClaimsFor(
            {
              kind: 'queue',
              eventId,
              accountId,
              deviceHash: await hashDevice(deviceId, accountId),
              joinIndex: 0,
              cohort: 'FIFO',
              iat: 0,
              exp: 0,
            },
            1,
            Date.now(),
          );
          const headers = {
            authorization: `Bearer ${login.body.token as string}`,
            'x-device-id': deviceId,
            'x-admission-token': await signToken(key, claims),
          };
          const hold = await post(`/events/${eventId}/holds`, headers, { section: 'A', quantity: 2 });
          if (hold.status !== 201) continue;
          const idem = `cluster-${b}-${k}`;
          for (let attempt = 0; attempt < 10; attempt++) {
            try {
              const paid = await post(
                `/holds/${hold.body.holdId as string}/checkout`,
                { ...headers, 'idempotency-key': idem },
                { payment: { instrument: { type: 'card', number: '4242424242424242' } } },
              );
              if (paid.status === 200) confirmed.set(paid.body.orderId as string, hold.body.holdId as string);
              if (paid.status < 500) break;
            } catch {
              // the process holding the connection was killed: the same key again, on whichever process answers
            }
            await new Promise((r) => setTimeout(r, 200));
          }
          served++;
          if (killed && Date.now() > killedAt) servedAfterKill++;
        } catch {
          // a connection the kill cut: this fan starts again
        }
      }
    };
    const load = Promise.all(Array.from({ length: 8 }, (_, b) => buyer(b)));
    // Orders confirmed before the kill too, so the check below weighs orders that crossed it.
    await expect.poll(() => served > 3 && confirmed.size > 0, { timeout: 120_000, interval: 200 }).toBe(true);
    process.kill(victim, 'SIGKILL');
    killed = true;
    killedAt = Date.now();
    await expect.poll(() => servedAfterKill, { timeout: 120_000, interval: 200 }).toBeGreaterThan(0);
    stop = true;
    await load;

    expect(servedAfterKill).toBeGreaterThan(0);
    // The restarted process loads the code base again: minutes on a busy 2-core machine.
    await expect
      .poll(async () => (await storeProcesses(6)).get('store-1'), { timeout: 300_000, interval: 1000 })
      .toSatisfy((pid) => pid !== undefined && pid !== victim);
    const after = await storeProcesses();
    expect([...after.keys()].sort()).toEqual(['store-1', 'store-2']);
    expect(after.get('store-2')).toBe(before.get('store-2'));
    expect(output).toMatch(new RegExp(`store-1 \\(pid ${victim}\\) was killed \\(SIGKILL\\)`));

    // Every order a fan was told CONFIRMED is in the database, confirmed, once per hold; no seat sold twice.
    expect(confirmed.size).toBeGreaterThan(0);
    const rows = await sql<{
      id: string;
      hold_id: string;
      status: string;
    }>`SELECT id, hold_id, status FROM orders WHERE event_id = ${eventId}`.execute(tdb.db);
    const byId = new Map(rows.rows.map((r) => [r.id, r]));
    for (const [orderId, holdId] of confirmed) expect(byId.get(orderId)).toMatchObject({ hold_id: holdId, status: 'CONFIRMED' });
    expect(new Set(rows.rows.map((r) => r.hold_id)).size).toBe(rows.rows.length);
    const inv = await checkInvariants(tdb, eventId, capacity);
    expect(inv.counts.drift).toBe(0);
    expect(inv.soldseats).toBe(inv.ordered);
    expect(inv.holdseatmismatch).toBe(0);
  }, 480_000);
});
