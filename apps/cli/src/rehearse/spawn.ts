import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDb, startEmbeddedPostgres, type EmbeddedServer } from '@onsale/shared/db';
import { repoRoot } from '../database.js';
import { cliEnv } from '../env.js';
import { enableStatementStats, statementTotals, topStatements } from './statements.repository.js';

// `rehearse --spawn`: the product started by the rehearsal itself, as `npm start` starts it (store-API and worker
// processes on one port, optionally the edge), on a scratch embedded PostgreSQL of its own, so the rehearsal may
// kill its processes and restart its database.

export interface SpawnOptions {
  storeInstances: number;
  workers: number;
  edge: boolean;
  timeScale: number;
  log: (line: string) => void;
  /** Aborted (Ctrl-C while it starts): what was started is stopped and the scratch directory removed. */
  signal?: AbortSignal;
}

export interface SpawnedProduct {
  fansUrl: string;
  originUrl: string;
  databaseUrl: string;
  authSecret: string;
  describe: string;
  /** Kills a process of the group with SIGKILL (`store-1`, `worker-1`); resolves with what was done. */
  kill(name: string): string;
  /** Resolves when the named process says it runs again after `since` (epoch ms). */
  restartedSince(name: string, since: number): boolean;
  /** Stops the database server and starts it again on the same data. */
  restartDatabase(): Promise<string>;
  stop(): Promise<void>;
}

/** The guard's program (plain JavaScript for `node -e`): argv driver pid, product pid, scratch directory, data directory. */
const GUARD = `
import { existsSync, readFileSync, rmSync } from 'node:fs';
const [driver, product, scratch, data] = process.argv.slice(1);
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const signal = (pid, sig) => { try { process.kill(pid, sig); } catch {} };
while (alive(Number(driver)) && existsSync(scratch)) await sleep(1000);
if (existsSync(scratch)) {
  signal(-Number(product), 'SIGTERM');
  for (let i = 0; i < 25 && alive(Number(product)); i++) await sleep(1000);
  signal(-Number(product), 'SIGKILL');
  let postmaster;
  try { postmaster = Number(readFileSync(data + '/postmaster.pid', 'utf8').split('\\n')[0]); } catch {}
  if (postmaster) {
    signal(postmaster, 'SIGINT');
    for (let i = 0; i < 20 && alive(postmaster); i++) await sleep(1000);
    signal(postmaster, 'SIGKILL');
  }
  rmSync(scratch, { recursive: true, force: true });
}
`;

function tryPort(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => {
      const got = (s.address() as { port: number }).port;
      s.close(() => resolve(got));
    });
  });
}

/** Ports handed out from REHEARSAL_PORT_BASE in this process, so that two spawns never pick the same one. */
let nextPortOffset = 0;

/**
 * A free loopback port: any the system picks, or with REHEARSAL_PORT_BASE=<n> the first free one from n upward (at
 * most 1,000 tried), for a machine where each user keeps to a range of ports of their own.
 */
async function freePort(): Promise<number> {
  const base = Number(cliEnv().REHEARSAL_PORT_BASE || 0);
  if (!Number.isInteger(base) || base <= 0 || base > 65535) return tryPort(0);
  for (; nextPortOffset < 1000 && base + nextPortOffset <= 65535; nextPortOffset++) {
    const port = base + nextPortOffset;
    try {
      const got = await tryPort(port);
      nextPortOffset++;
      return got;
    } catch {
      // In use: the next one.
    }
  }
  throw new Error(`REHEARSAL_PORT_BASE=${base}: no free port in the 1,000 from it`);
}

export async function spawnProduct(o: SpawnOptions): Promise<SpawnedProduct> {
  const scratch = mkdtempSync(join(tmpdir(), 'onsale-rehearsal-'));
  // As root the server runs as the postgres user, who must pass through the scratch directory to its data.
  if (process.getuid?.() === 0) chmodSync(scratch, 0o711);
  const password = randomBytes(18).toString('base64url');
  const pgPort = await freePort();
  // A profiling run (REHEARSAL_PG_STATEMENTS=<file.json>): the database counts its statements (pg_stat_statements)
  // and the busiest ones are written to that file when the product stops, before the scratch database goes.
  const statementsFile = cliEnv().REHEARSAL_PG_STATEMENTS || undefined;
  const settings = statementsFile
    ? { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all', 'pg_stat_statements.track_planning': 'on' }
    : undefined;
  let db: EmbeddedServer;
  try {
    db = await startEmbeddedPostgres(join(scratch, 'db'), { port: pgPort, password, ...(settings ? { settings } : {}) });
  } catch (e) {
    rmSync(scratch, { recursive: true, force: true });
    throw e;
  }
  if (o.signal?.aborted) {
    // Ignored on purpose: The embedded database is being torn down after a failure that is reported; its own stop error adds nothing.
    await db.stop().catch(() => {});
    rmSync(scratch, { recursive: true, force: true });
    throw new Error('interrupted while the product started');
  }
  // The rehearsal needs no console and no fans' page: a placeholder keeps `npm start` from building them.
  const placeholder = join(scratch, 'www');
  mkdirSync(placeholder);
  writeFileSync(join(placeholder, 'index.html'), '<!doctype html><title>rehearsal</title>');
  const [storePort, bffPort, edgePort] = [await freePort(), await freePort(), await freePort()];
  const secret = () => randomBytes(32).toString('base64url');
  const authSecret = secret();
  // The event's clock runs timeScale times fast, so does the bot gate's: its low-priority delay, and the proof-of-work's
  // cost (log2 of the scale fewer bits, as a challenge should take the same share of a fan's compressed wait).
  const powBits = Math.max(8, 18 - Math.round(Math.log2(o.timeScale)));
  const env: NodeJS.ProcessEnv = {
    ...cliEnv(),
    DATABASE_URL: db.url,
    STORE_API_PORT: String(storePort),
    BFF_PORT: String(bffPort),
    EDGE_PORT: String(edgePort),
    AUTH_SECRET: authSecret,
    QUEUE_TOKEN_SECRET: secret(),
    CARD_FINGERPRINT_SECRET: secret(),
    CONSOLE_DIR: placeholder,
    FAN_DIR: placeholder,
    // The virtual fans come from one machine with X-Forwarded-For saying whose address each is.
    STORE_API_TRUST_PROXY: 'loopback',
    BOT_LOW_PRIORITY_DELAY_SECONDS: String(Math.max(1, Math.round(60 / o.timeScale))),
    POW_DIFFICULTY_BITS: String(powBits),
    NODE_ENV: 'development',
  };
  const flags = ['--store-instances', String(o.storeInstances), '--workers', String(o.workers), ...(o.edge ? ['--edge'] : [])];
  // Its own process group, so that a guard can stop all of it (store and worker processes, workerd) at once.
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'scripts', 'start.ts'), ...flags], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  // A driver that dies without stopping what it started (out of memory, SIGKILL) must not leave a product and a
  // database running: a small guard process watches it and, when it is gone, stops them and removes the scratch
  // directory. It leaves by itself once the scratch directory is gone (the driver stopped them).
  spawn(
    process.execPath,
    ['--input-type=module', '-e', GUARD, String(process.pid), String(child.pid), scratch, join(scratch, 'db', 'pg')],
    {
      detached: true,
      stdio: 'ignore',
      // The rehearsal's own process, not the product's: its sampler counts it with the driver (resources.ts).
      env: { ...process.env, ONSALE_PROCESS: 'rehearsal-1' },
    },
  ).unref();
  const pids = new Map<string, number>();
  const restarts = new Map<string, number>();
  let out = '';
  const onLine = (line: string) => {
    for (const m of line.matchAll(/((?:store|worker)-\d+) \(pid (\d+)\)/g)) pids.set(m[1]!, Number(m[2]));
    const again = /^((?:store|worker)-\d+) running again \(pid (\d+)\)/.exec(line);
    if (again) {
      pids.set(again[1]!, Number(again[2]));
      restarts.set(again[1]!, Date.now());
    }
    if (/running again|was killed|exited|failed|error/i.test(line)) o.log(`  product: ${line}`);
  };
  const split = (chunk: Buffer) => {
    out += chunk.toString('utf8');
    let nl;
    while ((nl = out.indexOf('\n')) >= 0) {
      onLine(out.slice(0, nl));
      out = out.slice(nl + 1);
    }
  };
  let started = false;
  const ready = new Promise<void>((resolve, reject) => {
    // 300 s: on a loaded machine (load 30-50) the migrations and four processes' start take over two minutes.
    const timer = setTimeout(() => reject(new Error('the spawned product did not start within 300 s')), 300_000);
    o.signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new Error('interrupted while the product started'));
    });
    const watch = (chunk: Buffer) => {
      if (chunk.toString('utf8').includes('Ctrl-C to stop.')) {
        clearTimeout(timer);
        started = true;
        resolve();
      }
    };
    child.stdout!.on('data', (c: Buffer) => {
      split(c);
      if (!started) watch(c);
    });
    child.stderr!.on('data', (c: Buffer) => split(c));
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (!started) reject(new Error(`the spawned product exited before it was ready (${signal ?? `exit ${code}`})`));
    });
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const force = setTimeout(() => child.kill('SIGKILL'), 25_000);
      await exited;
      clearTimeout(force);
    }
    if (statementsFile) await dumpStatements(db.url, statementsFile).catch((e: Error) => o.log(`  statements: ${e.message}`));
    // Ignored on purpose: The embedded database is being torn down after a failure that is reported; its own stop error adds nothing.
    await db.stop().catch(() => {});
    rmSync(scratch, { recursive: true, force: true });
  };
  try {
    await ready;
    if (statementsFile) await withDb(db.url, enableStatementStats);
  } catch (e) {
    await stop();
    throw e;
  }
  const originUrl = `http://127.0.0.1:${storePort}`;
  return {
    fansUrl: o.edge ? `http://127.0.0.1:${edgePort}` : originUrl,
    originUrl,
    databaseUrl: db.url,
    authSecret,
    describe: `spawn (${o.storeInstances} store API process${o.storeInstances === 1 ? '' : 'es'}, ${o.workers} worker${o.workers === 1 ? '' : 's'}${o.edge ? ', edge' : ''}, scratch embedded PostgreSQL)`,
    kill(name) {
      const pid = pids.get(name);
      if (pid === undefined) throw new Error(`no process ${name} in the spawned product`);
      process.kill(pid, 'SIGKILL');
      return `killed ${name} (pid ${pid}) with SIGKILL`;
    },
    restartedSince(name, since) {
      return (restarts.get(name) ?? 0) >= since;
    },
    async restartDatabase() {
      const t0 = Date.now();
      await db.stop();
      db = await startEmbeddedPostgres(join(scratch, 'db'), { port: pgPort, password, ...(settings ? { settings } : {}) });
      return `stopped and started PostgreSQL (down ${((Date.now() - t0) / 1000).toFixed(1)} s)`;
    },
    stop,
  };
}

async function withDb<T>(url: string, fn: (db: ReturnType<typeof createDb>) => Promise<T>): Promise<T> {
  const db = createDb(url, { max: 1, applicationName: 'onsale-rehearsal-statements', onError: () => {} });
  try {
    return await fn(db);
  } finally {
    await db.destroy();
  }
}

/** The busiest statements of the run (REHEARSAL_PG_STATEMENTS), written as JSON. */
async function dumpStatements(url: string, file: string): Promise<void> {
  const [top, byCalls, totals] = await withDb(
    url,
    async (db) => [await topStatements(db, 60), await topStatements(db, 40, 'calls'), await statementTotals(db)] as const,
  );
  writeFileSync(file, JSON.stringify(top, null, 2) + '\n');
  // The statements called the most (polling loops and per-request statements), beside it.
  writeFileSync(file.replace(/(\.json)?$/, '-calls.json'), JSON.stringify(byCalls, null, 2) + '\n');
  // Every statement's calls, execution and planning time in all, beside it (statements per request: calls / answers).
  writeFileSync(file.replace(/(\.json)?$/, '-totals.json'), JSON.stringify(totals, null, 2) + '\n');
}
