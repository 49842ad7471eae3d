import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, withAdminClient } from '@onsale/shared/testing';

// Two installs from two clones of the repository, started at once with `npm start` (DATABASE_URL
// unset, so each runs its own embedded PostgreSQL), refuse each other's tokens and each use a database of their own.
//
// A clone here is a copy of the repository's files as git sees them (tracked and new, never ignored: no .data/, no
// node_modules/, no builds), so what runs is the code under test. Its node_modules reuse this checkout's packages
// (node_modules/.pnpm is linked), while the workspace's own links (@onsale/*) point into the clone, as pnpm made them:
// each install's code runs from its own directory, and so finds its own ./.data/.

const root = join(import.meta.dirname, '..', '..', '..');

interface Install {
  dir: string;
  tmp: string;
  storePort: number;
  bffPort: number;
  product?: ChildProcess;
  exited?: Promise<unknown>;
  output: string;
  base: string;
  demoEventId: string;
}
const installs: Install[] = [];

/** A copy of the repository's files (`git ls-files`: tracked, and new unless ignored) in a directory of its own. */
function cloneRepository(): string {
  const dir = mkdtempSync(join(tmpdir(), 'onsale-install-'));
  // The embedded server runs as the postgres user, which must reach the data directory under it.
  chmodSync(dir, 0o755);
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
    .split('\0')
    .filter(Boolean);
  for (const f of files) {
    const from = join(root, f);
    if (!existsSync(from)) continue; // deleted in the working tree, not yet committed
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    cpSync(from, join(dir, f), { verbatimSymlinks: true });
  }
  // node_modules: pnpm's links, copied as links. The package store (.pnpm) is this checkout's; the workspace links
  // (node_modules/@onsale/* -> ../../apps/..., apps/*/node_modules/@onsale/shared -> ../../../../packages/shared) are
  // relative, so in the clone they lead to the clone's own packages.
  const workspaceDirs = ['.', ...['apps', 'packages'].flatMap((d) => readdirSync(join(root, d)).map((p) => join(d, p)))];
  for (const w of workspaceDirs) {
    const from = join(root, w, 'node_modules');
    if (!existsSync(from)) continue;
    cpSync(from, join(dir, w, 'node_modules'), {
      recursive: true,
      verbatimSymlinks: true,
      filter: (src) => src !== join(root, 'node_modules', '.pnpm'),
    });
  }
  symlinkSync(realpathSync(join(root, 'node_modules', '.pnpm')), join(dir, 'node_modules', '.pnpm'));
  return dir;
}

/** The environment a user's shell would give `npm start`: no test settings, no database, no secrets. */
function userEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env))
    if (
      k.startsWith('VITEST') ||
      [
        'NODE_ENV',
        'TEST_DATABASE_URL',
        'DATABASE_URL',
        'AUTH_SECRET',
        'QUEUE_TOKEN_SECRET',
        'CARD_FINGERPRINT_SECRET',
        'AUTH_JWKS_URL',
        'REDIS_URL',
      ].includes(k)
    )
      delete env[k];
  return { ...env, ...extra };
}

async function printed(install: Install, pattern: RegExp, ms: number): Promise<RegExpMatchArray> {
  const end = Date.now() + ms;
  for (;;) {
    const m = install.output.match(pattern);
    if (m) return m;
    if (install.product!.exitCode !== null || install.product!.signalCode !== null)
      throw new Error(`npm start in ${install.dir} exited before printing ${pattern}:\n${install.output}`);
    if (Date.now() > end) throw new Error(`npm start in ${install.dir} did not print ${pattern} within ${ms / 1000} s:\n${install.output}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

beforeAll(async () => {
  for (let i = 0; i < 2; i++) {
    const dir = cloneRepository();
    const tmp = join(dir, '.tmp');
    mkdirSync(tmp);
    // A stand-in console and fans' page: building them is not what this test is about.
    const site = join(dir, '.site');
    mkdirSync(join(site, 'assets'), { recursive: true });
    writeFileSync(join(site, 'index.html'), '<!doctype html><title>stand-in</title>');
    installs.push({ dir, tmp, storePort: await freePort(), bffPort: await freePort(), output: '', base: '', demoEventId: '' });
  }
  // Both at once, as two people starting their checkouts side by side.
  for (const install of installs) {
    const site = join(install.dir, '.site');
    install.product = spawn(process.execPath, ['--import', 'tsx', join(install.dir, 'scripts', 'start.ts'), '--demo'], {
      cwd: install.dir,
      env: userEnv({
        STORE_API_PORT: String(install.storePort),
        BFF_PORT: String(install.bffPort),
        EDGE_PORT: String(await freePort()),
        CONSOLE_DIR: site,
        FAN_DIR: site,
        TMPDIR: install.tmp,
        BOT_GATE_ENABLED: 'false',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    install.exited = new Promise((resolve) => install.product!.once('exit', resolve));
    install.product.stdout!.on('data', (d: Buffer) => (install.output += d.toString()));
    install.product.stderr!.on('data', (d: Buffer) => (install.output += d.toString()));
  }
  for (const install of installs) {
    // initdb, migrations and two code bases loading at once: minutes on a busy 2-core machine.
    await printed(install, /Ctrl-C to stop\./, 400_000);
    install.base = (await printed(install, /^store API\s+(http:\/\/\S+)/m, 0))[1]!;
    install.demoEventId = (await printed(install, /^demo event\s+([0-9a-f-]{36})/m, 0))[1]!;
  }
}, 450_000);

afterAll(async () => {
  for (const install of installs) {
    const p = install.product;
    if (p && p.exitCode === null && p.signalCode === null) {
      p.kill('SIGTERM');
      const timer = setTimeout(() => p.kill('SIGKILL'), 30_000);
      await install.exited;
      clearTimeout(timer);
    }
  }
  for (const install of installs) rmSync(install.dir, { recursive: true, force: true });
});

async function call(install: Install, method: string, path: string, headers: Record<string, string> = {}, body?: unknown) {
  const r = await fetch(`${install.base}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

describe('two installs from two clones, started at once', () => {
  it('each runs its own embedded PostgreSQL: its own port, password and data directory, on 127.0.0.1', async () => {
    const [a, b] = installs as [Install, Install];
    for (const install of installs) expect(install.output).toMatch(/^database: embedded, data in \.\/\.data\//m);
    const settings = installs.map(
      (i) => JSON.parse(readFileSync(join(i.dir, '.data', 'embedded-postgres.json'), 'utf8')) as { port: number; password: string },
    );
    expect(settings[0]!.port).not.toBe(settings[1]!.port);
    expect(settings[0]!.password).not.toBe(settings[1]!.password);
    expect(lstatSync(join(a.dir, '.data', 'embedded-postgres.json')).mode & 0o777).toBe(0o600);

    const events: string[][] = [];
    for (const [i, install] of installs.entries()) {
      const url = (database: string, password = settings[i]!.password) =>
        `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${settings[i]!.port}/${database}`;
      await withAdminClient(url('postgres'), async (c) => {
        const dataDir = (await c.query<{ data_directory: string }>('SHOW data_directory')).rows[0]!.data_directory;
        expect(realpathSync(dataDir)).toBe(realpathSync(join(install.dir, '.data', 'pg')));
        expect((await c.query<{ listen_addresses: string }>('SHOW listen_addresses')).rows[0]!.listen_addresses).toBe('127.0.0.1');
      });
      events.push(
        await withAdminClient(url('onsale'), async (c) =>
          (await c.query<{ id: string }>('SELECT id FROM events ORDER BY id')).rows.map((r) => r.id),
        ),
      );
      // The other install's password is refused here (scram-sha-256, not trust).
      await expect(withAdminClient(url('postgres', settings[1 - i]!.password), async () => {})).rejects.toThrow(
        /password authentication failed/,
      );
    }
    // Each holds its own demo event, and only it.
    expect(events[0]).toEqual([a.demoEventId]);
    expect(events[1]).toEqual([b.demoEventId]);
  });

  it("each refuses the other's account tokens and queue tokens (401), and accepts its own", async () => {
    const [a, b] = installs as [Install, Install];
    const device = 'two-installs-phone';
    const signIn = async (install: Install) =>
      (await call(install, 'POST', '/auth/dev-login', {}, { accountId: 'same-fan' })).body.token as string;
    const tokenA = await signIn(a);
    const tokenB = await signIn(b);
    expect(tokenA).not.toBe(tokenB);

    // Account tokens: the same fan id, signed by each install's own secret.
    expect((await call(a, 'GET', '/me/waitlist', { authorization: `Bearer ${tokenA}` })).status).toBe(200);
    expect((await call(b, 'GET', '/me/waitlist', { authorization: `Bearer ${tokenB}` })).status).toBe(200);
    const aOnB = await call(b, 'GET', '/me/waitlist', { authorization: `Bearer ${tokenA}` });
    expect(aOnB.status).toBe(401);
    expect(aOnB.body.error).toEqual(expect.any(String));
    expect((await call(a, 'GET', '/me/waitlist', { authorization: `Bearer ${tokenB}` })).status).toBe(401);

    // Queue tokens: joined on each install's demo event; each install's status route takes only its own.
    const join = async (install: Install, token: string) => {
      const r = await call(install, 'POST', `/events/${install.demoEventId}/queue`, {
        authorization: `Bearer ${token}`,
        'x-device-id': device,
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.queueToken as string;
    };
    const queueA = await join(a, tokenA);
    const queueB = await join(b, tokenB);
    const status = (install: Install, token: string, queueToken: string, eventId = install.demoEventId) =>
      call(install, 'GET', `/events/${eventId}/queue/status`, {
        authorization: `Bearer ${token}`,
        'x-device-id': device,
        'x-queue-token': queueToken,
      });
    expect((await status(a, tokenA, queueA)).status).toBe(200);
    expect((await status(b, tokenB, queueB)).status).toBe(200);
    // A's queue token on B, presented by B's own signed-in fan for B's event: refused as a token B did not sign.
    const foreignOnB = await status(b, tokenB, queueA);
    expect(foreignOnB.status, JSON.stringify(foreignOnB.body)).toBe(401);
    const foreignOnA = await status(a, tokenA, queueB);
    expect(foreignOnA.status, JSON.stringify(foreignOnA.body)).toBe(401);
    // And with both of A's tokens, on B.
    expect((await status(b, tokenA, queueA)).status).toBe(401);
  });
});
