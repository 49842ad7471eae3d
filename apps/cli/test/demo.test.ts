import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, freePort, type TestDatabase, userShellEnv, waitForOutput } from '@onsale/shared/testing';
import { root } from './run.js';

// `npm start -- --demo` prints a fan session "ready to paste". This pastes it, as a new user would: into bash, from
// the repository root, against the product that printed it (scripts/start.ts, on a fresh database and free
// ports). The session must get through the bot gate (curl is challenged), the waiting room, a hold and checkout.

let tdb: TestDatabase;
let product: ChildProcess;
let exited: Promise<unknown>;
let output = '';
let workDir: string;

const userEnv = (extra: Record<string, string> = {}) => userShellEnv(root, extra);
const printed = (pattern: RegExp, ms: number) => waitForOutput(product, () => output, pattern, ms);

beforeAll(async () => {
  tdb = await createTestDatabase(inject('templateDatabaseUrl'), { max: 2 });
  workDir = mkdtempSync(join(tmpdir(), 'onsale-demo-'));
  // The console and the fans' page are not what this test is about: a stand-in build, so the start builds neither.
  writeFileSync(join(workDir, 'index.html'), '<!doctype html><title>console</title>');
  const [storePort, bffPort] = [await freePort(), await freePort()];
  product = spawn(process.execPath, ['--import', 'tsx', join(root, 'scripts', 'start.ts'), '--demo'], {
    cwd: root,
    env: userEnv({
      DATABASE_URL: tdb.url,
      STORE_API_PORT: String(storePort),
      BFF_PORT: String(bffPort),
      CONSOLE_DIR: workDir,
      FAN_DIR: workDir,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  exited = new Promise((resolve) => product.once('exit', resolve));
  product.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  product.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  await printed(/Ctrl-C to stop\./, 120_000);
});

afterAll(async () => {
  if (product && product.exitCode === null && product.signalCode === null) {
    product.kill('SIGTERM');
    const timer = setTimeout(() => product.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }
  rmSync(workDir, { recursive: true, force: true });
  await tdb?.drop();
});

describe('npm start -- --demo', () => {
  it('prints a curl session that, pasted into bash, gets through the bot gate and the queue, holds two seats and pays', async () => {
    const session = (await printed(/try it \(bash\):\n\n([\s\S]+?)\n\n/, 0))[1]!;
    // The session tees each response to /dev/stderr. Reopening that works on a terminal or a pipe, not on the
    // socket a child's stdio gets from Node (ENXIO), and would truncate a file at every tee: so a pipe to cat.
    const errPath = join(workDir, 'session.stderr');
    const r = spawnSync('bash', ['-c', 'bash -c "$SESSION" 2> >(cat > "$ERRORS"); status=$?; wait $!; exit $status'], {
      cwd: root,
      env: userEnv({ SESSION: session, ERRORS: errPath }),
      encoding: 'utf8',
      timeout: 120_000,
    });
    const stderr = readFileSync(errPath, 'utf8');
    expect(r.status, `${r.stdout}\n${stderr}`).toBe(0);
    // What went by on stderr (each response, as the session tees them): challenged first, then a place in line.
    expect(stderr).toContain('"error":"CHALLENGE_REQUIRED"');
    expect(stderr).toMatch(/"queueToken":"[^"]+"/);
    expect(stderr).toMatch(/"admissionToken":"[^"]+"/);
    expect(stderr).toMatch(/"holdId":"[^"]+".*"status":"HELD"/);
    // The last command's answer is the order.
    const order = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { orderId?: string; status?: string; seatCount?: number };
    expect(order).toMatchObject({ status: 'CONFIRMED', seatCount: 2 });
    expect(order.orderId).toMatch(/^[0-9a-f-]{36}$/);
    const { n } = await tdb.db
      .selectFrom('orders')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(n)).toBe(1);
  });
});
