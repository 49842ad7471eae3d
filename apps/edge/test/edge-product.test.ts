import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get as httpGet, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, freePort, type TestDatabase, userShellEnv, waitForOutput } from '@onsale/shared/testing';
import { solveChallenge } from '@onsale/shared/abuse';
import { sql } from '@onsale/shared/db';

// The product with the edge in front, started as the README says (`npm start -- --demo --edge`: scripts/start.ts on
// a fresh database, free ports): a fan signs in, joins, polls and is admitted through the edge, holds and pays
// through it; the status polls never reach the store API, and the admissions made at the edge reach its counters.

const root = join(import.meta.dirname, '..', '..', '..');
let tdb: TestDatabase;
let product: ChildProcess;
let exited: Promise<unknown>;
let output = '';
let workDir: string;
let edgeUrl: string;
let storeUrl: string;
let eventId: string;

const userEnv = (extra: Record<string, string> = {}) => userShellEnv(root, extra);
const printed = (pattern: RegExp, ms: number) => waitForOutput(product, () => output, pattern, ms);

beforeAll(async () => {
  tdb = await createTestDatabase(inject('templateDatabaseUrl'), { max: 2 });
  workDir = mkdtempSync(join(tmpdir(), 'onsale-edge-product-'));
  // Stand-ins for the console and the fans' page: neither is what this test is about, and the start then builds neither.
  writeFileSync(join(workDir, 'index.html'), '<!doctype html><title>console</title>');
  mkdirSync(join(workDir, 'assets'));
  const [storePort, bffPort, edgePort] = [await freePort(), await freePort(), await freePort()];
  product = spawn(process.execPath, ['--import', 'tsx', join(root, 'scripts', 'start.ts'), '--demo', '--edge'], {
    cwd: root,
    env: userEnv({
      DATABASE_URL: tdb.url,
      STORE_API_PORT: String(storePort),
      BFF_PORT: String(bffPort),
      EDGE_PORT: String(edgePort),
      CONSOLE_DIR: workDir,
      FAN_DIR: workDir,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  exited = new Promise((resolve) => product.once('exit', resolve));
  product.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  product.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  await printed(/Ctrl-C to stop\./, 240_000);
  edgeUrl = (await printed(/^edge\s+(http:\/\/\S+)/m, 0))[1]!;
  storeUrl = (await printed(/^store API\s+(http:\/\/\S+)/m, 0))[1]!;
  eventId = (await printed(/^demo event\s+([0-9a-f-]{36})/m, 0))[1]!;
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

/** Requests the store API has answered on a route, from its own /metrics. */
async function originCount(route: string): Promise<number> {
  const text = await (await fetch(`${storeUrl}/metrics`)).text();
  let n = 0;
  for (const line of text.split('\n'))
    if (line.startsWith('http_request_duration_seconds_count{') && line.includes(`route="${route}"`)) n += Number(line.split(' ').at(-1));
  return n;
}

describe('npm start -- --demo --edge', () => {
  it('prints the edge URL on EDGE_PORT, and a fan session that goes through it', () => {
    expect(edgeUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(output).toMatch(new RegExp(`^S=${edgeUrl.replace(/[.:/]/g, '\\$&')}$`, 'm'));
  });

  it('a fan joins, polls and is admitted through the edge, holds and pays through it; the polls never reach the store API', async () => {
    const accountId = 'edge-fan-1';
    const deviceId = 'edge-fan-device-0001';
    const login = await fetch(`${edgeUrl}/auth/dev-login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ accountId }),
    });
    expect(login.headers.get('x-onsale-edge')).toBe('miss');
    const { token } = (await login.json()) as { token: string };
    const fan = { authorization: `Bearer ${token}`, 'x-device-id': deviceId };

    // Join: the bot gate challenges a client without a browser's signals; solve and join again, through the edge.
    let join = await fetch(`${edgeUrl}/events/${eventId}/queue`, { method: 'POST', headers: fan });
    if (join.status === 403) {
      const { challenge } = (await join.json()) as { challenge: { token: string; nonce: string; difficulty: number } };
      const pow = `${challenge.token}:${solveChallenge(challenge.nonce, challenge.difficulty)}`;
      join = await fetch(`${edgeUrl}/events/${eventId}/queue`, { method: 'POST', headers: { ...fan, 'x-proof-of-work': pow } });
    }
    expect(join.status).toBe(200);
    expect(join.headers.get('x-onsale-edge')).toBe('miss');
    const { queueToken } = (await join.json()) as { queueToken: string };

    const statusBefore = await originCount('/events/:id/queue/status');
    let admissionToken: string | undefined;
    await expect
      .poll(
        async () => {
          const r = await fetch(`${edgeUrl}/events/${eventId}/queue/status`, { headers: { ...fan, 'x-queue-token': queueToken } });
          expect(r.status).toBe(200);
          expect(r.headers.get('x-onsale-edge')).toBe('hit');
          expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
          admissionToken = ((await r.json()) as { admissionToken?: string }).admissionToken;
          return admissionToken;
        },
        { timeout: 30_000, interval: 250 },
      )
      .toMatch(/^[\w-]+\.[\w-]+$/);
    expect(await originCount('/events/:id/queue/status')).toBe(statusBefore);
    expect(await originCount('/events/:id/edge-state')).toBeGreaterThan(0);

    // The same poll at the store API answers the same (the edge runs the origin's rule on the origin's numbers; the
    // watermark itself may have moved on between the two reads).
    const pick = ({ state, position, message, estWaitSeconds }: Record<string, unknown>) => ({ state, position, message, estWaitSeconds });
    const atOrigin = (await (
      await fetch(`${storeUrl}/events/${eventId}/queue/status`, { headers: { ...fan, 'x-queue-token': queueToken } })
    ).json()) as Record<string, unknown>;
    const atEdge = (await (
      await fetch(`${edgeUrl}/events/${eventId}/queue/status`, { headers: { ...fan, 'x-queue-token': queueToken } })
    ).json()) as Record<string, unknown>;
    expect(pick(atEdge)).toEqual(pick(atOrigin));
    expect(Object.keys(atEdge).sort()).toEqual(Object.keys(atOrigin).sort());

    const admitted = { ...fan, 'x-admission-token': admissionToken!, 'content-type': 'application/json' };
    const hold = await fetch(`${edgeUrl}/events/${eventId}/holds`, {
      method: 'POST',
      headers: admitted,
      body: JSON.stringify({ section: 'MAIN', quantity: 2 }),
    });
    expect(hold.headers.get('x-onsale-edge')).toBe('miss');
    expect(hold.status).toBe(201);
    const { holdId } = (await hold.json()) as { holdId: string };
    const paid = await fetch(`${edgeUrl}/holds/${holdId}/checkout`, {
      method: 'POST',
      headers: { ...admitted, 'idempotency-key': 'edge-product-test-0001' },
      body: JSON.stringify({ payment: { instrument: { type: 'card', number: '4242424242424242' } } }),
    });
    expect(paid.status).toBe(200);
    expect(await paid.json()).toMatchObject({ status: 'CONFIRMED', seatCount: 2 });
    const orders = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM orders WHERE hold_id = ${holdId} AND status = 'CONFIRMED'`.execute(tdb.db);
    expect(orders.rows[0]!.n).toBe(1);
    // The admission made at the edge reached the store API's counters (the admission controller reads them).
    await expect
      .poll(
        async () =>
          (
            await sql<{
              n: number;
            }>`SELECT coalesce(sum(admission_tokens_issued), 0)::int AS n FROM admission_minutes WHERE event_id = ${eventId}`.execute(
              tdb.db,
            )
          ).rows[0]!.n,
        { timeout: 15_000 },
      )
      .toBeGreaterThan(0);
    const claimed = await sql<{
      claimed_at: Date | null;
    }>`SELECT claimed_at FROM queue_entries WHERE event_id = ${eventId} AND account_id = ${accountId}`.execute(tdb.db);
    expect(claimed.rows[0]!.claimed_at).not.toBeNull();
  });

  it("the seat map and the event page through the edge: read again within the store API's max-age with a fan's token, the store is not asked; the event page's ETag answered 304 at the edge", async () => {
    const login = await fetch(`${edgeUrl}/auth/dev-login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ accountId: 'edge-fan-seatmap' }),
    });
    const fan = { authorization: `Bearer ${((await login.json()) as { token: string }).token}` };
    // The seat map is good for one second (Cache-Control: public, max-age=1): two reads in a row within it, the
    // second from the edge, the store API asked at most once for both (tried again if the machine took the second).
    await expect
      .poll(
        async () => {
          const before = await originCount('/events/:id/seatmap');
          const first = await fetch(`${edgeUrl}/events/${eventId}/seatmap`, { headers: fan });
          const second = await fetch(`${edgeUrl}/events/${eventId}/seatmap`, { headers: fan });
          const asked = (await originCount('/events/:id/seatmap')) - before;
          expect([first.status, second.status]).toEqual([200, 200]);
          expect(await second.json()).toEqual(await first.json());
          return { second: second.headers.get('x-onsale-edge'), age: second.headers.get('age'), fewer: asked <= 1 };
        },
        { timeout: 30_000, interval: 100 },
      )
      .toEqual({ second: 'hit', age: '0', fewer: true });

    const page = await fetch(`${edgeUrl}/events/${eventId}`, { headers: fan });
    expect(page.status).toBe(200);
    const etag = page.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{20}"$/);
    const pagesBefore = await originCount('/events/:id');
    const again = await fetch(`${edgeUrl}/events/${eventId}`, { headers: { ...fan, 'if-none-match': etag } });
    expect([again.status, again.headers.get('etag'), again.headers.get('x-onsale-edge')]).toEqual([304, etag, 'hit']);
    expect(await originCount('/events/:id')).toBe(pagesBefore);
  });

  it('the printed session, pasted into bash, gets through the edge: challenged, queued, admitted, two seats held and paid', () => {
    const session = output.match(/try it \(bash\):\n\n([\s\S]+?)\n\n/)![1]!.replace(/fan-1/g, 'edge-fan-2');
    const errPath = join(workDir, 'session.stderr');
    const r = spawnSync('bash', ['-c', 'bash -c "$SESSION" 2> >(cat > "$ERRORS"); status=$?; wait $!; exit $status'], {
      cwd: root,
      env: userEnv({ SESSION: session, ERRORS: errPath }),
      encoding: 'utf8',
      timeout: 170_000,
    });
    const stderr = readFileSync(errPath, 'utf8');
    expect(r.status, `${r.stdout}\n${stderr}\n--- npm start printed:\n${output.slice(-4000)}`).toBe(0);
    expect(stderr).toMatch(/"admissionToken":"[^"]+"/);
    const order = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { status?: string; seatCount?: number };
    expect(order).toMatchObject({ status: 'CONFIRMED', seatCount: 2 });
  });

  it("the store API hung (its process stopped, SIGSTOP): fans' requests through the edge are 503 ORIGIN_UNAVAILABLE within the fan budget, then answered at once, and served again once it runs", async () => {
    // A new connection each (the test before blocked this process's event loop for its whole bash session, so a
    // pooled connection the edge closed meanwhile would be taken up again before its end was read).
    const fanRoute = () =>
      new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>((resolve, reject) => {
        const req = httpGet(`${edgeUrl}/me/notifications`, { agent: false }, (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
        });
        req.on('error', reject);
      });
    expect((await fanRoute()).status).toBe(401); // the store API's own answer: no account token
    process.kill(product.pid!, 'SIGSTOP'); // the store API, BFF and worker's process; workerd and its guard run on
    try {
      const started = performance.now();
      const hung = await Promise.all(Array.from({ length: 5 }, fanRoute));
      const ms = performance.now() - started;
      for (const r of hung) {
        expect(r.status).toBe(503);
        expect(r.headers['retry-after']).toMatch(/^[1-9]\d*$/);
        expect(JSON.parse(r.body)).toMatchObject({ error: 'ORIGIN_UNAVAILABLE' });
      }
      // The fan budget (EDGE_FAN_TIMEOUT_MS, 5 s), not the 12 s proxy timeout nor the clients' own.
      expect(ms).toBeGreaterThanOrEqual(4950);
      expect(ms).toBeLessThan(12_000);
      // Five failures in a row: the circuit is open, and the edge answers without asking the origin.
      const open = await fanRoute();
      expect(open.status).toBe(503);
      expect(open.headers['x-onsale-edge']).toBe('hit');
    } finally {
      process.kill(product.pid!, 'SIGCONT');
    }
    // The origin running again: within the circuit's open time a trial gets through and closes it.
    await expect.poll(async () => (await fanRoute()).status, { timeout: 30_000, interval: 200 }).toBe(401);
  });
});
