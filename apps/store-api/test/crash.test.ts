import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { sql } from '@onsale/shared/db';
import { getInventoryCounts } from '@onsale/shared/inventory';
import { admissionClaimsFor, createTokenKey, hashDevice, signToken } from '@onsale/shared/queue';
import { createTestDatabase, freePort, testSecrets, type TestDatabase } from '@onsale/shared/testing';
import { cardNumberOf, makeEvent } from './helper.js';

// After kill -9 with payments in flight, fans retrying with the same Idempotency-Key
// waited 10 s for a closed socket, eleven times over three minutes, until recovery (which looked only at attempts
// older than 180 s) settled them; and the simulated gateway, its charges in memory, told recovery "nothing
// charged" for money it had taken. Here the product itself (`npm start`'s scripts/start.ts, its own process, on a
// fresh test database) is killed -9 between charge and order, and started again.

const root = join(import.meta.dirname, '..', '..', '..');
const PAYERS = 24;
let t: TestDatabase;
let workDir: string;
let env: NodeJS.ProcessEnv;
let storeUrl: string;
let product: ChildProcess | undefined;
let output = '';

/** The environment an operator's shell would give `npm start`: this one without the test runner's. */
function productEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(e)) if (k.startsWith('VITEST') || k === 'NODE_ENV' || k === 'TEST_DATABASE_URL') delete e[k];
  return { ...e, PATH: `${join(root, 'node_modules', '.bin')}${delimiter}${e.PATH ?? ''}`, ...extra };
}

/** Starts the product (node itself with tsx as a loader: the pid killed is the product's) and waits until it serves. */
async function start(): Promise<number> {
  output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'scripts/start.ts')], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  product = child;
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  // Loading the code base through tsx, the product's processes beside two test files on two cores: minutes under load
  // (a start took over 120 s at load average 25-35). A hung start still fails (as store-processes.ts waits).
  const end = Date.now() + 240_000;
  while (!/Ctrl-C to stop/.test(output)) {
    if (child.exitCode !== null) throw new Error(`the product exited:\n${output}`);
    if (Date.now() > end) throw new Error(`the product did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return Date.now();
}

function killHard(): Promise<void> {
  const child = product!;
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 4 });
  workDir = mkdtempSync(join(tmpdir(), 'onsale-crash-'));
  // Stand-in builds of the console and the fans' page: this test is about the store API, not about building them.
  for (const dir of ['console', 'fan']) {
    mkdirSync(join(workDir, dir));
    writeFileSync(join(workDir, dir, 'index.html'), '<!doctype html><title>stand-in</title>');
  }
  const [storePort, bffPort] = [await freePort(), await freePort()];
  storeUrl = `http://127.0.0.1:${storePort}`;
  env = productEnv({
    DATABASE_URL: t.url,
    STORE_API_PORT: String(storePort),
    BFF_PORT: String(bffPort),
    CONSOLE_DIR: join(workDir, 'console'),
    FAN_DIR: join(workDir, 'fan'),
    // Slow answers from the gateway: every payment is in flight, charged and not yet ordered, when the kill comes.
    PAYMENT_LATENCY_MS: '4000',
    RATE_LIMIT_ENABLED: 'false',
    BOT_GATE_ENABLED: 'false',
    // The product shares two cores with the test runner and the other test files: a sign-in or a retry shed with
    // 503 (overload_event_loop) is the machine, not what is tested here; nothing is shed (as store-processes.ts).
    LOAD_SHED_ENABLED: 'false',
  });
});
afterAll(async () => {
  if (product && product.exitCode === null && product.signalCode === null) {
    const exited = new Promise((r) => product!.once('exit', r));
    product.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
    if (product.exitCode === null) product.kill('SIGKILL');
  }
  await t?.drop();
  rmSync(workDir, { recursive: true, force: true });
});

interface Payer {
  n: number;
  headers: Record<string, string>;
  holdId: string;
  key: string;
  body: string;
}

async function request(method: string, path: string, headers: Record<string, string>, body?: string) {
  const started = Date.now();
  try {
    const r = await fetch(storeUrl + path, {
      method,
      headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
      body,
      signal: AbortSignal.timeout(30_000),
    });
    return {
      status: r.status,
      json: (await r.json().catch(() => ({}))) as Record<string, any>,
      ms: Date.now() - started,
      retryAfter: r.headers.get('retry-after'),
    };
  } catch (err) {
    return { status: 0, json: { error: String(err) } as Record<string, any>, ms: Date.now() - started, retryAfter: null };
  }
}

describe('kill -9 with payments in flight', () => {
  it('retries with the same keys are answered at once and settled within seconds of the restart; every charged payment is an order or a refund', async () => {
    await start();
    const { eventId, capacity } = await makeEvent(t, { fairnessMode: 'FIFO' });
    const key = await createTokenKey(testSecrets().queueTokenSecret);

    // Fans with holds, each paying with a key of their own.
    const payers: Payer[] = [];
    for (let n = 0; n < PAYERS; n++) {
      const login = await request('POST', '/auth/dev-login', {}, JSON.stringify({ accountId: `crash-fan-${n}` }));
      expect(login.status, JSON.stringify(login.json)).toBe(200);
      const deviceId = `crash-device-${n}`;
      const claims = admissionClaimsFor(
        {
          kind: 'queue',
          eventId,
          accountId: `crash-fan-${n}`,
          deviceHash: await hashDevice(deviceId, `crash-fan-${n}`),
          joinIndex: n,
          cohort: 'FIFO',
          iat: 0,
          exp: 0,
        },
        n + 1,
        Date.now(),
      );
      const headers = {
        authorization: `Bearer ${login.json.token}`,
        'x-device-id': deviceId,
        'x-admission-token': await signToken(key, claims),
      };
      const hold = await request('POST', `/events/${eventId}/holds`, headers, JSON.stringify({ section: 'A', quantity: 2 }));
      expect(hold.status, JSON.stringify(hold.json)).toBe(201);
      payers.push({
        n,
        headers,
        holdId: hold.json.holdId,
        key: randomUUID(),
        body: JSON.stringify({ payment: { instrument: { type: 'card', number: cardNumberOf(2000 + n) } } }),
      });
    }
    const pay = (p: Payer) => request('POST', `/holds/${p.holdId}/checkout`, { ...p.headers, 'idempotency-key': p.key }, p.body);
    const inFlight = payers.map(pay);

    // Kill -9 once every payment is charged at the gateway and none has its order yet.
    await vi.waitFor(
      async () => {
        const { rows } = await sql<{
          n: number;
        }>`SELECT count(*)::int AS n FROM simulated_gateway_charges WHERE status = 'succeeded'`.execute(t.db);
        expect(rows[0]!.n).toBe(PAYERS);
      },
      { timeout: 30_000, interval: 50 },
    );
    await killHard();
    const lost = await Promise.all(inFlight);
    expect(lost.every((r) => r.status === 0)).toBe(true); // the process died under them: no answer came
    const orphans = await sql<{ n: number }>`SELECT count(*)::int AS n FROM checkout_attempts WHERE status = 'PENDING'`.execute(t.db);
    expect(orphans.rows[0]!.n).toBe(PAYERS);
    expect(
      (
        await t.db
          .selectFrom('orders')
          .select(sql<number>`count(*)::int`.as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    ).toBe(0);

    // While the product was down one fan's hold lapsed and its seats went back on sale: that charge is refunded.
    const lapsed = payers[0]!;
    await sql`UPDATE holds SET expires_at = now() - interval '1 second' WHERE id = ${lapsed.holdId}`.execute(t.db);
    await sql`UPDATE seats SET status = 'AVAILABLE', hold_id = NULL, expires_at = NULL WHERE hold_id = ${lapsed.holdId}`.execute(t.db);

    const restartedAt = await start();
    // Retries with the same keys, at once: each answered (409 CHECKOUT_IN_PROGRESS with Retry-After, or the outcome).
    const retries = await Promise.all(payers.map(pay));
    for (const r of retries) {
      expect([200, 409, 410], JSON.stringify(r.json)).toContain(r.status);
      if (r.status === 409) expect(r).toMatchObject({ json: { error: 'CHECKOUT_IN_PROGRESS' }, retryAfter: '2' });
    }
    // Answered without the in-progress wait: the attempts' owner is the killed process, whose lease is silent, so
    // nothing is waited on (recovery.test.ts holds the rule; the figure is reported, not a pass mark).
    const slowest = Math.max(...retries.map((r) => r.ms));
    console.log(`retries after the restart: slowest answer ${slowest} ms (a killed process's checkout is not waited on)`);

    // Settled within 10 s of the restart: the restarted process knows the killed one is gone (its lease went silent).
    await vi.waitFor(
      async () => {
        const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM checkout_attempts WHERE status = 'PENDING'`.execute(t.db);
        expect(rows[0]!.n).toBe(0);
      },
      { timeout: Math.max(1_000, restartedAt + 10_000 - Date.now()), interval: 100 },
    );
    console.log(`every orphaned checkout settled ${Date.now() - restartedAt} ms after the restart`);

    // The fans' retries now get the outcome: the order (a replay), or, for the lapsed hold, the refund.
    const final = await Promise.all(payers.map(pay));
    for (const [i, r] of final.entries()) {
      if (i === 0) expect(r).toMatchObject({ status: 410, json: { error: 'HOLD_EXPIRED' } });
      else expect(r, JSON.stringify(r.json)).toMatchObject({ status: 200, json: { status: 'CONFIRMED', seatCount: 2 } });
    }

    // Every charged payment is an order or a refund; nothing was charged twice; the inventory adds up.
    const { rows: unaccounted } = await sql<{ idempotency_key: string }>`
      SELECT c.idempotency_key FROM simulated_gateway_charges c
      WHERE c.status = 'succeeded' AND c.refunded_at IS NULL AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.payment_reference = c.reference)`.execute(
      t.db,
    );
    expect(unaccounted).toEqual([]);
    const charges = await sql<{ n: number; refunded: number }>`
      SELECT count(*)::int AS n, count(*) FILTER (WHERE refunded_at IS NOT NULL)::int AS refunded FROM simulated_gateway_charges`.execute(
      t.db,
    );
    expect(charges.rows[0]).toEqual({ n: PAYERS, refunded: 1 });
    expect(
      (
        await t.db
          .selectFrom('orders')
          .select(sql<number>`count(*)::int`.as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    ).toBe(PAYERS - 1);
    const counts = await getInventoryCounts(t.db, eventId, capacity);
    expect(counts.drift).toBe(0);
    expect(counts.sold).toBe((PAYERS - 1) * 2);
  }, 600_000);
});
