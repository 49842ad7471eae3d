// `npm run bench -- edge-instructions [--polls N] [--fans N] [--port P] [ENTRY ...]`: instructions per status poll in
// workerd, counted by valgrind's callgrind (valgrind must be installed; it is not a dependency): a figure the
// machine's load does not move, for comparing builds of the worker where rates and CPU time on a shared machine cannot.
// ENTRY: a worker entry (default this checkout's apps/edge/src/index.ts; e.g. another checkout's, to compare), or
// `bare` for the edge bench's bare worker. Each runs on `workerd serve` under callgrind in front of a stand-in origin
// (the tests' FakeOrigin), every fan WAITING; after a warm-up (every fan's tokens verified and kept) the counters are
// zeroed, N polls are sent (10 at a time) and the instructions workerd ran meanwhile are divided by N.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { AccountTokens } from '@onsale/shared/auth';
import { createTokenKey, hashDevice, signToken } from '@onsale/shared/queue';
import { bundleWorker, COMPATIBILITY_DATE, WORKERD_BIN } from '../src/local.js';
import { FakeOrigin, queueState } from '../test/fake-origin.js';
import { BARE } from './edge.js';

async function pollAll(url: string, headers: Record<string, string>[], n: number): Promise<number> {
  let next = 0;
  let ok = 0;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < n) {
        const h = headers[next++ % headers.length];
        // A kept-alive connection workerd closes just as it is reused fails the request ("other side closed"): sent again.
        for (let attempt = 1; ; attempt++) {
          try {
            const r = await fetch(url, { headers: h });
            await r.arrayBuffer();
            if (r.status === 200) ok++;
            break;
          } catch (e) {
            if (attempt >= 3) throw e;
          }
        }
      }
    }),
  );
  return ok;
}

export async function main(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      polls: { type: 'string', default: '3000' },
      fans: { type: 'string', default: '200' },
      port: { type: 'string', default: '7210' },
    },
  });
  const polls = Number(values.polls);
  const fans = Number(values.fans);
  const port = Number(values.port);
  const entries = positionals.length > 0 ? positionals : [join(import.meta.dirname, '..', 'src', 'index.ts')];

  const QUEUE_SECRET = 'instructions probe queue secret, 32+ characters';
  const AUTH_SECRET = 'instructions probe account secret, 32+ characters';
  const EVENT = randomUUID();
  const origin = await new FakeOrigin().start();
  // Admitted through 100: every fan below (join index 10,000 and up) is WAITING.
  origin.events.set(EVENT, () => ({ eventId: EVENT, tiers: [], queues: [queueState(EVENT)], generatedAt: Date.now() }));
  const key = await createTokenKey(QUEUE_SECRET);
  const accounts = new AccountTokens(AUTH_SECRET);
  const headers: Record<string, string>[] = [];
  for (let i = 0; i < fans; i++) {
    const accountId = `probe-${i}`;
    const deviceId = `probe-device-${i}`;
    const now = Math.floor(Date.now() / 1000);
    headers.push({
      authorization: `Bearer ${(await accounts.issue(accountId)).token}`,
      'x-device-id': deviceId,
      'x-queue-token': await signToken(key, {
        kind: 'queue',
        eventId: EVENT,
        accountId,
        deviceHash: await hashDevice(deviceId, accountId),
        joinIndex: 10_000 + i,
        cohort: 'FIFO',
        iat: now,
        exp: now + 3600,
      }),
      'accept-language': 'en-GB,en;q=0.9',
    });
  }

  const bindings = {
    STORE_API_URL: origin.url,
    QUEUE_TOKEN_SECRET: QUEUE_SECRET,
    AUTH_SECRET,
    EDGE_WATERMARK_TTL_SECONDS: '2',
    EDGE_STALE_SECONDS: '15',
    EDGE_ORIGIN_TIMEOUT_MS: '5000',
    EDGE_PROXY_TIMEOUT_MS: '20000',
    EDGE_FAN_TIMEOUT_MS: '12000',
    EDGE_BREAKER_FAILURES: '5',
    EDGE_BREAKER_OPEN_SECONDS: '5',
    EDGE_CACHE: 'memory',
  };
  const url = `http://127.0.0.1:${port}/events/${EVENT}/queue/status`;

  try {
    for (const entry of entries) {
      const dir = await mkdtemp(join(tmpdir(), 'onsale-edge-cg-'));
      await writeFile(join(dir, 'worker.js'), entry === 'bare' ? BARE : await bundleWorker({ entry }));
      await writeFile(
        join(dir, 'edge.capnp'),
        `using Workerd = import "/workerd/workerd.capnp";
  const config :Workerd.Config = (
    services = [(name = "edge", worker = .edge), (name = "internet", network = (allow = ["public", "private", "local"]))],
    sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "edge")],
  );
  const edge :Workerd.Worker = (
    modules = [(name = "worker.js", esModule = embed "worker.js")],
    compatibilityDate = "${COMPATIBILITY_DATE}",
    bindings = [${Object.keys(bindings)
      .map((n) => `(name = "${n}", fromEnvironment = "${n}")`)
      .join(', ')}],
    globalOutbound = "internet",
  );
  `,
      );
      const out = join(dir, 'callgrind.out');
      const vg = spawn('valgrind', ['--tool=callgrind', `--callgrind-out-file=${out}`, WORKERD_BIN, 'serve', join(dir, 'edge.capnp')], {
        env: { ...process.env, ...bindings },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let said = '';
      vg.stderr.on('data', (d: Buffer) => (said += d.toString()));
      try {
        for (let waited = 0; ; waited += 500) {
          try {
            await (await fetch(`http://127.0.0.1:${port}/healthz-probe`, { signal: AbortSignal.timeout(2000) })).arrayBuffer();
            break;
          } catch {
            if (waited > 180_000 || vg.exitCode !== null) throw new Error(`workerd under valgrind did not answer: ${said.slice(-2000)}`);
            await new Promise((r) => setTimeout(r, 500));
          }
        }
        // Warm-up: every fan's tokens verified and kept, the code compiled.
        await pollAll(url, headers, Math.max(fans * 3, 500));
        execFileSync('callgrind_control', ['-z', String(vg.pid)], { stdio: 'ignore' });
        const ok = await pollAll(url, headers, polls);
        execFileSync('callgrind_control', ['-d', String(vg.pid)], { stdio: 'ignore' });
        const dumps = (await readdir(dir)).filter((f) => f.startsWith('callgrind.out'));
        let ir = 0;
        for (const f of dumps) {
          const text = await readFile(join(dir, f), 'utf8');
          if (!/^trigger: Client Request/m.test(text)) continue;
          const m = /^(?:summary|totals): (\d+)/m.exec(text);
          if (m) ir = Math.max(ir, Number(m[1]));
        }
        console.log(
          `${entry}: ${Math.round(ir / polls).toLocaleString('en')} instructions a poll in workerd (${polls} polls, ${ok} answered 200)`,
        );
      } finally {
        vg.kill('SIGTERM');
        await new Promise((r) => vg.once('exit', r));
        await rm(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await origin.stop();
  }
}
