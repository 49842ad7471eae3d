import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cpus, loadavg } from 'node:os';
import { sql } from '@onsale/shared/db';
import { AccountTokens } from '@onsale/shared/auth';
import { createEvent, parseEventFile } from '@onsale/shared/events';
import { createTokenKey, hashDevice, signToken } from '@onsale/shared/queue';
import { installDataDir, installSecrets } from '@onsale/shared/install';
import { benchDatabase } from '../../store-api/bench/database.js';
import { cpuMicros, startProcess, stopProcess } from '../../store-api/bench/load.js';
import { startLocalEdge, type LocalEdge } from '../src/local.js';
import { autocannon, figures, type AutocannonRequest } from '../../store-api/bench/autocannon.js';

const root = join(import.meta.dirname, '..', '..', '..');

const USAGE = `usage: npm run bench -- edge [--seconds N] [--connections N] [--fans N] [--ttl SECONDS]

Status polls through the edge worker on \`workerd serve\` (as npm start -- --edge runs it), in one run on this
machine, same client (autocannon, in this process), same connections:
  bare      a bare worker on \`workerd serve\` answering a constant JSON body of the status answer's size (the
            runtime's limit)
  edge      GET /events/:id/queue/status through the edge worker with real account and queue tokens of --fans fans,
            the store API (its own process, a scratch database) as the origin
Each prints requests a second, p50/p99, and CPU milliseconds per request of the workerd process, the origin's
process and this process (the client); then the edge's ratio to the bare worker (goal >= 0.7) and its p99 ratio
(goal <= 1.5x). --rounds N alternates bare and edge N times and reports each round and the median ratios. The
origin's requests for the event's state during a run (from the store API's /metrics) are counted against the bound
of one per event per EDGE_WATERMARK_TTL_SECONDS.`;

// The same body size and headers as a status answer, constant.
const BARE = `export default { async fetch() {
  return new Response(JSON.stringify({ state: 'WAITING', message: 'You are in line. Keep this page open; we will let you in when it is your turn. Refreshing does not move you up.', position: 1234, admittedThrough: 1000, estWaitSeconds: 20 }),
    { headers: { 'content-type': 'application/json; charset=utf-8', 'retry-after': '20', 'cache-control': 'no-store', 'x-onsale-edge': 'hit' } });
} };`;

/** Requests the store API answered on a route, from its /metrics. */
async function originCount(storeUrl: string, route: string): Promise<number> {
  const text = await (await fetch(`${storeUrl}/metrics`)).text();
  let n = 0;
  for (const line of text.split('\n'))
    if (line.startsWith('http_request_duration_seconds_count{') && line.includes(`route="${route}"`)) n += Number(line.split(' ').at(-1));
  return n;
}

export async function main(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      seconds: { type: 'string', default: '10' },
      connections: { type: 'string', default: '100' },
      fans: { type: 'string', default: '2000' },
      ttl: { type: 'string', default: '2' },
      rounds: { type: 'string', default: '1' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return console.log(USAGE);
  const seconds = Number(values.seconds);
  const connections = Number(values.connections);
  const fans = Number(values.fans);
  const ttl = Number(values.ttl);
  const rounds = Number(values.rounds);
  if (![seconds, connections, fans, ttl, rounds].every((n) => Number.isFinite(n) && n > 0))
    throw new Error('--seconds, --connections, --fans, --ttl and --rounds are positive numbers');

  const bench = await benchDatabase();
  console.log(
    `database: ${bench.where}; ${connections} connections; ${seconds} s per measurement; ${fans} fans; EDGE_WATERMARK_TTL_SECONDS ${ttl}`,
  );
  const club = JSON.parse(readFileSync(join(root, 'examples', 'club.json'), 'utf8'));
  const spec = parseEventFile({
    ...club,
    name: 'bench edge',
    fairnessMode: 'FIFO',
    onsaleAt: new Date(Date.now() - 60_000).toISOString(),
    startsAt: new Date(Date.now() + 30 * 86400_000).toISOString(),
  });
  const { eventId } = await bench.db.transaction().execute((trx) => createEvent(trx, spec, 'bench'));
  // The controller alive for the run, the watermark below every fan: everyone reads WAITING.
  await sql`UPDATE queue_state SET heartbeat_at = now() + interval '1 hour', admitted_through = 0, rate_per_min = 1300 WHERE event_id = ${eventId}`.execute(
    bench.db,
  );

  // The install's own secrets, as the store API it starts reads them (./.data/secrets/).
  const secrets = installSecrets(installDataDir());
  const key = await createTokenKey(secrets.queueTokenSecret);
  const accounts = new AccountTokens(secrets.authSecret);
  const headers: Record<string, string>[] = [];
  for (let i = 0; i < fans; i++) {
    const accountId = `edge-bench-${i}`;
    const deviceId = `edge-bench-device-${i}`;
    const now = Math.floor(Date.now() / 1000);
    const queueToken = await signToken(key, {
      kind: 'queue',
      eventId,
      accountId,
      deviceHash: await hashDevice(deviceId, accountId),
      joinIndex: 10_000 + i,
      cohort: 'FIFO',
      iat: now,
      exp: now + 3600,
    });
    headers.push({
      authorization: `Bearer ${(await accounts.issue(accountId)).token}`,
      'x-device-id': deviceId,
      'x-queue-token': queueToken,
    });
  }
  let next = 0;
  const statusRequest: AutocannonRequest = {
    method: 'GET',
    setupRequest: (req) => ({ ...req, path: `/events/${eventId}/queue/status`, headers: headers[next++ % headers.length] }),
  };

  const server = await startProcess('apps/store-api/bench/server.ts', {
    DATABASE_URL: bench.url,
    NODE_ENV: 'development',
    DEV_AUTH: 'false',
  });
  const storeUrl = `http://127.0.0.1:${server.port}`;
  const runs: { round: number; bare: Measured; edge: Measured & OriginCounts }[] = [];
  try {
    const bare = await startLocalEdge({
      storeApiUrl: storeUrl,
      queueTokenSecret: secrets.queueTokenSecret,
      authSecret: secrets.authSecret,
      script: BARE,
    });
    const edge = await startLocalEdge({
      storeApiUrl: storeUrl,
      queueTokenSecret: secrets.queueTokenSecret,
      authSecret: secrets.authSecret,
      watermarkTtlSeconds: ttl,
    });
    try {
      // Warm-up: both runtimes compiled and every fan's tokens verified once at the edge.
      await autocannon({ url: bare.url, connections, duration: 2, requests: [statusRequest] });
      await autocannon({ url: edge.url, connections, duration: 2, requests: [statusRequest] });
      for (let round = 1; round <= rounds; round++) {
        const b = await measure(bare, server.child.pid!, connections, seconds, statusRequest);
        const statusBefore = await originCount(storeUrl, '/events/:id/queue/status');
        const stateBefore = await originCount(storeUrl, '/events/:id/edge-state');
        const e = await measure(edge, server.child.pid!, connections, seconds, statusRequest);
        runs.push({
          round,
          bare: b,
          edge: {
            ...e,
            originStatusRequests: (await originCount(storeUrl, '/events/:id/queue/status')) - statusBefore,
            originStateRequests: (await originCount(storeUrl, '/events/:id/edge-state')) - stateBefore,
            originStateBound: Math.ceil(e.elapsedS / ttl) + 1,
          },
        });
      }
    } finally {
      await Promise.all([bare.close(), edge.close()]);
    }
  } finally {
    await stopProcess(server.child);
    await bench.close();
  }
  const ratios = runs.map(({ bare, edge }) => ({
    ratio: round(edge.reqPerSec / bare.reqPerSec),
    p99Ratio: round(edge.p99Ms / Math.max(1, bare.p99Ms)),
  }));
  console.log(
    JSON.stringify(
      runs.map((r, i) => ({ ...r, ...ratios[i] })),
      null,
      2,
    ),
  );
  for (const [i, { bare, edge }] of runs.entries())
    console.log(
      `round ${i + 1}: bare workerd ${bare.reqPerSec}/s p99 ${bare.p99Ms} ms, workerd CPU ${bare.edgeCpuMsPerRequest} ms/request; ` +
        `edge ${edge.reqPerSec}/s p99 ${edge.p99Ms} ms, workerd CPU ${edge.edgeCpuMsPerRequest} ms/request, origin CPU ${edge.originCpuMsPerRequest} ms/request, client CPU ${edge.clientCpuMsPerRequest} ms/request; ` +
        `ratio ${ratios[i]!.ratio} (goal >= 0.7), p99 ${ratios[i]!.p99Ratio}x (goal <= 1.5x); ` +
        `origin asked for the event's state ${edge.originStateRequests} times (bound ${edge.originStateBound}), status polls reaching it ${edge.originStatusRequests}; non-2xx ${edge.non2xx}, errors ${edge.errors}`,
    );
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(
    `edge: status polls through the worker on workerd serve = ${median(ratios.map((r) => r.ratio))} of the bare workerd route (goal >= 0.7), ` +
      `p99 ${median(ratios.map((r) => r.p99Ratio))}x (goal <= 1.5x)${rounds > 1 ? `, medians of ${rounds} rounds` : ''}; ` +
      `load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} on ${cpus().length} cores`,
  );
}

interface OriginCounts {
  originStatusRequests: number;
  originStateRequests: number;
  originStateBound: number;
}
type Measured = ReturnType<typeof figures> & {
  elapsedS: number;
  edgeCpuMsPerRequest: number | null;
  originCpuMsPerRequest: number | null;
  clientCpuMsPerRequest: number;
};

/** One autocannon run against `target`, with the CPU each process used per request meanwhile. */
async function measure(
  target: LocalEdge,
  originPid: number,
  connections: number,
  seconds: number,
  request: AutocannonRequest,
): Promise<Measured> {
  const edgeBefore = cpuMicros(target.pid);
  const originBefore = cpuMicros(originPid);
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  const r = await autocannon({ url: target.url, connections, duration: seconds, requests: [request] });
  const elapsedS = (performance.now() - started) / 1000;
  const client = process.cpuUsage(clientBefore);
  const edgeAfter = cpuMicros(target.pid);
  const originAfter = cpuMicros(originPid);
  const n = Math.max(1, r.requests.total);
  const perRequest = (before: number | null, after: number | null) =>
    before === null || after === null ? null : Math.round(((after - before) / n / 1000) * 1000) / 1000;
  return {
    ...figures(r),
    elapsedS,
    edgeCpuMsPerRequest: perRequest(edgeBefore, edgeAfter),
    originCpuMsPerRequest: perRequest(originBefore, originAfter),
    clientCpuMsPerRequest: Math.round(((client.user + client.system) / n / 1000) * 1000) / 1000,
  };
}

const round = (n: number) => Math.round(n * 100) / 100;
