// Real store-API processes (apps/store-api/src/server.ts, each its own node process) on a test database, for the
// tests that kill one mid-request (store-kill.test.ts, tickets-kill.test.ts): start, call, kill -9, stop.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import { expect } from 'vitest';
import { sql, type Db, type Trx } from '@onsale/shared/db';
import { admissionClaimsFor, hashDevice, signToken, type TokenKey } from '@onsale/shared/queue';
import { freePort, userShellEnv, waitUntil } from '@onsale/shared/testing';

const root = join(import.meta.dirname, '..', '..', '..');
/**
 * A connection per request, so a killed process's requests fail at once and a retry opens a fresh connection. Made
 * again after stopStores closes it: the test files that share a worker share this module (`isolate: false`).
 */
let fresh = new Agent({ pipelining: 0 });

export interface Store {
  name: string;
  url: string;
  child: ChildProcess;
  output: () => string;
  exited: Promise<unknown>;
}
/** Every process this test file started, for stopStores (which empties it for the worker's next file). */
const stores: Store[] = [];

/** One store-API process of the install on `databaseUrl`, serving once GET /healthz answers. */
export async function startStore(databaseUrl: string, name: string, extra: Record<string, string> = {}): Promise<Store> {
  const port = await freePort();
  let output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'apps/store-api/src/server.ts')], {
    cwd: root,
    env: userShellEnv(root, {
      DATABASE_URL: databaseUrl,
      STORE_API_PORT: String(port),
      STORE_API_INSTANCE: name,
      DEV_AUTH: 'true',
      RATE_LIMIT_ENABLED: 'false',
      BOT_GATE_ENABLED: 'false',
      // The processes share two cores with the test runner and the other test files: nothing is shed here.
      LOAD_SHED_ENABLED: 'false',
      ...extra,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const store: Store = { name, url: `http://127.0.0.1:${port}`, child, output: () => output, exited };
  stores.push(store);
  // Loading the code base through tsx: tens of seconds on a busy 2-core machine.
  await waitUntil(
    `${name} serving`,
    async () => {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${name} exited:\n${output}`);
      return fetch(`${store.url}/healthz`, { dispatcher: fresh })
        .then((r) => r.status === 200)
        .catch(() => false);
    },
    { timeoutMs: 240_000, intervalMs: 250 },
  );
  return store;
}

/** SIGKILL, and the moment it is gone. */
export async function killHard(store: Store): Promise<void> {
  store.child.kill('SIGKILL');
  await store.exited;
}

/** Stops every process still running (SIGTERM, SIGKILL after 20 s) and closes the connections (afterAll). */
export async function stopStores(): Promise<void> {
  for (const s of stores)
    if (s.child.exitCode === null && s.child.signalCode === null) {
      s.child.kill('SIGTERM');
      const timer = setTimeout(() => s.child.kill('SIGKILL'), 20_000);
      await s.exited;
      clearTimeout(timer);
    }
  stores.length = 0;
  const closing = fresh;
  fresh = new Agent({ pipelining: 0 });
  await closing.close();
}

/** One request on a fresh connection; a refused or cut connection is status 0, not a throw. */
export async function call(store: Store, method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const started = Date.now();
  try {
    const r = await fetch(`${store.url}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      dispatcher: fresh,
      signal: AbortSignal.timeout(60_000),
    });
    return {
      status: r.status,
      json: (await r.json().catch(() => ({}))) as Record<string, any>,
      replayed: r.headers.get('idempotent-replayed'),
      retryAfter: r.headers.get('retry-after'),
      at: Date.now(),
      ms: Date.now() - started,
    };
  } catch (err) {
    return {
      status: 0,
      json: { error: String(err) } as Record<string, any>,
      replayed: null,
      retryAfter: null,
      at: Date.now(),
      ms: Date.now() - started,
    };
  }
}

/** A fan signed in on `store` (dev sign-in), with a device. */
export async function signIn(store: Store, accountId: string): Promise<Record<string, string>> {
  const login = await call(store, 'POST', '/auth/dev-login', {}, { accountId });
  expect(login.status, JSON.stringify(login.json)).toBe(200);
  return { authorization: `Bearer ${login.json.token}`, 'x-device-id': `${accountId}-device` };
}

/** A fan admitted to the event: signed in on `store`, with an admission token signed as the waiting room signs it. */
export async function admittedFan(store: Store, tokenKey: TokenKey, eventId: string, accountId: string): Promise<Record<string, string>> {
  const headers = await signIn(store, accountId);
  const claims = admissionClaimsFor(
    {
      kind: 'queue',
      eventId,
      accountId,
      deviceHash: await hashDevice(`${accountId}-device`, accountId),
      joinIndex: 0,
      cohort: 'FIFO',
      iat: 0,
      exp: 0,
    },
    1,
    Date.now(),
  );
  return { ...headers, 'x-admission-token': await signToken(tokenKey, claims) };
}

/**
 * Runs `take` in a transaction of the test's own and keeps it open (its locks held) until `release` is called;
 * `pid` is its backend's (-1 when `take` failed and the transaction is over).
 */
export async function holdInTransaction(db: Db, take: (trx: Trx) => Promise<void>): Promise<{ pid: number; release: () => Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let locked!: (pid: number) => void;
  const ready = new Promise<number>((r) => (locked = r));
  const done = db.transaction().execute(async (trx: Trx) => {
    await take(trx);
    locked((await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx)).rows[0]!.pid);
    await released;
  });
  const pid = await Promise.race([ready, done.then(() => -1)]);
  return {
    pid,
    release: async () => {
      release();
      await done;
    },
  };
}
