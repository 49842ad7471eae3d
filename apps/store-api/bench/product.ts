import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@onsale/shared/testing';

const root = join(import.meta.dirname, '..', '..', '..');

export interface Product {
  /** The store API's URL as `npm start` printed it. */
  storeUrl: string;
  /** The start command's process id (the one process of the default topology). */
  pid: number;
  /** Everything the start command printed so far. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * The product as a user starts it: `npm start -- <args>` (scripts/start.ts in a process of its own) on the bench's
 * database, free ports, and stand-ins for the console and the fans' page (their builds are not what a benchmark
 * measures, and the start then builds neither). `BENCH_NODE_ARGS` (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) is
 * passed to it (and, under --store-instances, to every process it forks).
 */
export async function startProduct(databaseUrl: string, args: string[], env: Record<string, string> = {}): Promise<Product> {
  const dir = mkdtempSync(join(tmpdir(), 'onsale-bench-product-'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>stand-in</title>');
  mkdirSync(join(dir, 'assets'));
  const clean: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['NODE_ENV', 'DATABASE_URL', 'TEST_DATABASE_URL']) delete clean[k];
  const extra = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child: ChildProcess = spawn(process.execPath, [...extra, '--import', 'tsx', join(root, 'scripts', 'start.ts'), ...args], {
    cwd: root,
    env: {
      ...clean,
      DATABASE_URL: databaseUrl,
      STORE_API_PORT: String(await freePort()),
      BFF_PORT: String(await freePort()),
      CONSOLE_DIR: dir,
      FAN_DIR: dir,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const deadline = Date.now() + 300_000;
  while (!/Ctrl-C to stop\./.test(out)) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`npm start exited:\n${out}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`npm start did not come up within 300 s:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const storeUrl = /^store API\s+(http:\/\/\S+)/m.exec(out)![1]!;
  return {
    storeUrl,
    pid: child.pid!,
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
