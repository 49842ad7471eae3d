import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cpus, loadavg } from 'node:os';
import { PerformanceObserver } from 'node:perf_hooks';
import { sql } from '@onsale/shared/db';
import { AccountTokens } from '@onsale/shared/auth';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { createTokenKey, hashDevice, signToken } from '@onsale/shared/queue';
import { installDataDir, installSecrets } from '@onsale/shared/install';
import { benchDatabase } from '../../store-api/bench/database.js';
import { cpuMicros, startProcess, stopProcess } from '../../store-api/bench/load.js';
import { bundleWorker, startLocalEdge, type LocalEdge } from '../src/local.js';
import { autocannon, figures, type AutocannonRequest } from '../../store-api/bench/autocannon.js';

const root = join(import.meta.dirname, '..', '..', '..');

const USAGE = `usage: npm run bench -- edge [--seconds N] [--connections N] [--fans N] [--ttl SECONDS] [--rounds N] [--against ENTRY] [--rate N]

Status polls through the edge worker on \`workerd serve\` (as npm start -- --edge runs it), in one run on this
machine, same client (autocannon, in this process), same connections:
  bare      a bare worker on \`workerd serve\` answering a constant JSON body of the status answer's size (the
            runtime's limit)
  bare+guard the same bare worker behind the framing guard, as the edge always runs (like for like: what the edge's
            worker costs beyond the guard's relay)
  edge      GET /events/:id/queue/status through the edge as npm start -- --edge runs it (the framing guard in front
            of workerd serve), with real account and queue tokens of --fans fans, the store API (its own process, a
            scratch database) as the origin
  unguarded the same through the worker on workerd serve alone (EDGE_FRAMING_GUARD=off)
Each prints requests a second, p50/p99, and CPU milliseconds per request of the edge's processes (workerd and the guard), the origin's
process and this process (the client); then each edge's ratio to the bare worker (goal >= 0.7) and its p99 ratio
(goal <= 1.5x). --rounds N (default 3) measures every target N times, each round starting one target further on,
and reports each round, the median ratios, and each target's p99 round by round with its median and spread. Every
workerd runs with the edge's own V8 settings (EDGE_V8_FLAGS in local.ts; EDGE_BENCH_EDGE_V8_FLAGS=off: every target with
V8's defaults instead), more from EDGE_BENCH_V8_FLAGS (every target alike), and V8's --trace-gc (EDGE_BENCH_GC=off:
without), and each measurement prints the isolate's young and
full collections per 10,000 answers and its pauses (ms a second, the longest). The
origin's requests for the event's state during a run (from the store API's /metrics) are counted against the bound
of one per event per EDGE_WATERMARK_TTL_SECONDS. --against ENTRY adds a fourth measurement: the worker built from
another entry (e.g. another checkout's apps/edge/src/index.ts) on workerd serve alone, so that two versions of the
worker are compared in the same run, by rate and by workerd's CPU per request. --rate N offers every measurement the same
N requests a second instead of as many as it answers: the ratios then say nothing, but CPU per request is compared
at one rate (a process's CPU per request rises as its rate falls: fewer requests share each wake-up), which on a
loaded machine is the comparison that holds. --browser-headers: each poll also carries the headers the rehearsal's
fans send (User-Agent, Accept, Accept-Language, X-Forwarded-For, CF-Connecting-IP), not only the three it needs.`;

// The same body size and headers as a status answer, constant.
export const BARE = `export default { async fetch() {
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
      rounds: { type: 'string', default: '3' },
      against: { type: 'string' },
      rate: { type: 'string' },
      'browser-headers': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return console.log(USAGE);
  const seconds = Number(values.seconds);
  const connections = Number(values.connections);
  const fans = Number(values.fans);
  const ttl = Number(values.ttl);
  const rounds = Number(values.rounds);
  const rate = values.rate === undefined ? undefined : Number(values.rate);
  if (rate !== undefined && !(Number.isFinite(rate) && rate > 0)) throw new Error('--rate is a positive number');
  if (![seconds, connections, fans, ttl, rounds].every((n) => Number.isFinite(n) && n > 0))
    throw new Error('--seconds, --connections, --fans, --ttl and --rounds are positive numbers');

  const bench = await benchDatabase();
  console.log(
    `database: ${bench.where}; ${connections} connections; ${seconds} s per measurement; ${fans} fans; EDGE_WATERMARK_TTL_SECONDS ${ttl}${rate === undefined ? '' : `; ${rate} requests a second offered`}`,
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
      // --browser-headers: the rest of what the rehearsal's fans send with each poll.
      ...(values['browser-headers']
        ? {
            'x-forwarded-for': '10.1.2.3',
            'cf-connecting-ip': '10.1.2.3',
            'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
            accept: 'application/json',
            'accept-language': 'en-GB,en;q=0.9',
          }
        : {}),
    });
  }
  let next = 0;
  // One request whose setupRequest hands each poll the next fan's tokens. (Every fan's poll built once instead, which
  // autocannon then sends without building it again, was tried: 2,000 requests prebuilt on each of 100 connections at
  // each measurement's start cost the client more, not less, and left some connections waiting out the timeout.)
  const statusRequests: AutocannonRequest[] = [
    {
      method: 'GET',
      setupRequest: (req) => ({ ...req, path: `/events/${eventId}/queue/status`, headers: headers[next++ % headers.length] }),
    },
  ];

  const server = await startProcess('apps/store-api/bench/server.ts', {
    DATABASE_URL: bench.url,
    NODE_ENV: 'development',
    DEV_AUTH: 'false',
  });
  const storeUrl = `http://127.0.0.1:${server.port}`;
  // EDGE_BENCH_TIMELINE: the edges reach the origin through a recorder of when they asked for the event's state.
  let originForEdges = storeUrl;
  let recorder: import('node:http').Server | undefined;
  if (process.env.EDGE_BENCH_TIMELINE) {
    const http = await import('node:http');
    recorder = http.createServer((req, res) => {
      const t0 = performance.now();
      // EDGE_BENCH_STATE_DELAY_MS: the origin's state answer held that long (an origin slow to be scheduled).
      const delay = req.url?.endsWith('/edge-state') ? Number(process.env.EDGE_BENCH_STATE_DELAY_MS ?? 0) : 0;
      void new Promise((r) => setTimeout(r, delay)).then(() =>
        fetch(`${storeUrl}${req.url}`, { headers: { accept: 'application/json' } }).then(async (r) => {
          const body = Buffer.from(await r.arrayBuffer());
          res.writeHead(r.status, Object.fromEntries(r.headers));
          res.end(body);
          if (req.url?.endsWith('/edge-state')) stateFetches.push([t0, performance.now()]);
        }),
      );
    });
    await new Promise<void>((r) => recorder!.listen(0, '127.0.0.1', r));
    originForEdges = `http://127.0.0.1:${(recorder.address() as import('node:net').AddressInfo).port}`;
  }
  type Edge = Measured & OriginCounts;
  const runs: { round: number; bare: Measured; bareGuarded: Measured; edge: Edge; unguarded: Edge; against?: Edge }[] = [];
  try {
    const common = { storeApiUrl: originForEdges, queueTokenSecret: secrets.queueTokenSecret, authSecret: secrets.authSecret };
    const againstScript = values.against === undefined ? undefined : await bundleWorker({ entry: values.against });
    const [bare, bareGuarded, edge, unguarded, against] = await Promise.all([
      startTraced({ ...common, script: BARE, framingGuard: false }),
      startTraced({ ...common, script: BARE }),
      startTraced({ ...common, watermarkTtlSeconds: ttl }),
      startTraced({ ...common, watermarkTtlSeconds: ttl, framingGuard: false }),
      againstScript === undefined
        ? undefined
        : startTraced({ ...common, script: againstScript, watermarkTtlSeconds: ttl, framingGuard: false }),
    ]);
    /** One measurement of an edge, with what reached the origin meanwhile. */
    const measureEdge = async (target: LocalEdge): Promise<Edge> => {
      const statusBefore = await originCount(storeUrl, '/events/:id/queue/status');
      const stateBefore = await originCount(storeUrl, '/events/:id/edge-state');
      const e = await measure(target, server.child.pid!, connections, seconds, statusRequests, rate);
      return {
        ...e,
        originStatusRequests: (await originCount(storeUrl, '/events/:id/queue/status')) - statusBefore,
        originStateRequests: (await originCount(storeUrl, '/events/:id/edge-state')) - stateBefore,
        originStateBound: Math.ceil(e.elapsedS / ttl) + 1,
      };
    };
    try {
      // Warm-up: the runtimes compiled and every fan's tokens verified once at each edge.
      for (const target of [bare, bareGuarded, edge, unguarded, against])
        if (target) await autocannon({ url: target.url, connections, duration: 2, requests: statusRequests });
      for (let round = 1; round <= rounds; round++) {
        // Each round starts one target further on, so that no target is always measured first, or always right
        // after the same other one (the machine's state carries from one measurement into the next).
        const plain = (t: LocalEdge) => () => measure(t, server.child.pid!, connections, seconds, statusRequests, rate);
        const order: [string, () => Promise<Measured | Edge>][] = [
          ['bare', plain(bare)],
          ['bareGuarded', plain(bareGuarded)],
          ['edge', () => measureEdge(edge)],
          ['unguarded', () => measureEdge(unguarded)],
          ...(against ? [['against', () => measureEdge(against)] as [string, () => Promise<Edge>]] : []),
        ];
        const got: Record<string, Measured | Edge> = {};
        for (let i = 0; i < order.length; i++) {
          const [name, run] = order[(i + round - 1) % order.length]!;
          got[name] = await run();
        }
        runs.push({
          round,
          bare: got.bare!,
          bareGuarded: got.bareGuarded!,
          edge: got.edge as Edge,
          unguarded: got.unguarded as Edge,
          against: got.against as Edge | undefined,
        });
      }
    } finally {
      await Promise.all([bare.close(), bareGuarded.close(), edge.close(), unguarded.close(), against?.close()]);
    }
  } finally {
    recorder?.close();
    await stopProcess(server.child);
    await bench.close();
  }
  const ratio = (e: Measured, b: Measured) => ({
    ratio: round(e.reqPerSec / b.reqPerSec),
    p99Ratio: round(e.p99Ms / Math.max(1, b.p99Ms)),
  });
  const ratios = runs.map(({ bare, bareGuarded, edge, unguarded, against }) => ({
    edge: ratio(edge, bare),
    edgeToGuardedBare: ratio(edge, bareGuarded),
    unguarded: ratio(unguarded, bare),
    against: against && ratio(against, bare),
  }));
  console.log(
    JSON.stringify(
      runs.map((r, i) => ({ ...r, ratios: ratios[i] })),
      null,
      2,
    ),
  );
  const line = (name: string, e: Edge, r: { ratio: number; p99Ratio: number }, b: Measured) =>
    `${name} ${e.reqPerSec}/s p99 ${e.p99Ms} ms = ${r.ratio} of bare (goal >= 0.7), p99 ${r.p99Ratio}x (goal <= 1.5x); CPU per request: edge processes ${e.edgeCpuMsPerRequest} ms${e.guardCpuMsPerRequest === null ? '' : ` (the framing guard ${e.guardCpuMsPerRequest} ms)`}, by CPU ${cpuRatio(b, e)} of the bare worker's rate, origin ${e.originCpuMsPerRequest} ms, client ${e.clientCpuMsPerRequest} ms; ` +
    `origin asked for the event's state ${e.originStateRequests} times (bound ${e.originStateBound}), status polls reaching it ${e.originStatusRequests}; non-2xx ${e.non2xx}, errors ${e.errors}; ${gcLine(e)}`;
  for (const [i, { bare, bareGuarded, edge, unguarded, against }] of runs.entries()) {
    console.log(
      `round ${i + 1}: bare worker on workerd serve ${bare.reqPerSec}/s p99 ${bare.p99Ms} ms, CPU per request: workerd ${bare.edgeCpuMsPerRequest} ms, client ${bare.clientCpuMsPerRequest} ms; ${gcLine(bare)}`,
    );
    console.log(
      `  the bare worker behind the framing guard (like for like with the edge as run): ${bareGuarded.reqPerSec}/s p99 ${bareGuarded.p99Ms} ms, CPU per request: workerd and the guard ${bareGuarded.edgeCpuMsPerRequest} ms (the guard ${bareGuarded.guardCpuMsPerRequest} ms); ${gcLine(bareGuarded)}`,
    );
    console.log(`  ${line('edge as npm start runs it (framing guard + workerd serve):', edge, ratios[i]!.edge, bare)}`);
    console.log(
      `    against the bare worker behind the same guard: ${ratios[i]!.edgeToGuardedBare.ratio} of its rate, p99 ${ratios[i]!.edgeToGuardedBare.p99Ratio}x`,
    );
    console.log(`  ${line('edge worker on workerd serve alone (EDGE_FRAMING_GUARD=off):', unguarded, ratios[i]!.unguarded, bare)}`);
    if (against)
      console.log(`  ${line(`the worker built from ${values.against} on workerd serve alone:`, against, ratios[i]!.against!, bare)}`);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  type Target = 'bare' | 'bareGuarded' | 'edge' | 'unguarded' | 'against';
  const targets: [Target, string][] = [
    ['bare', 'bare'],
    ['bareGuarded', 'bare behind the guard'],
    ['edge', 'edge as run'],
    ['unguarded', 'worker alone'],
    ...(values.against === undefined ? [] : ([['against', `${values.against} alone`]] as [Target, string][])),
  ];
  // Each target's p99 round by round, its median and spread; then what its collections cost (medians).
  if (rounds > 1)
    console.log(
      `p99 by round (ms; median, min-max): ${targets
        .map(([k, name]) => {
          const p = runs.map((r) => r[k]!.p99Ms);
          return `${name} ${p.join(' / ')} (${median(p)}, ${Math.min(...p)}-${Math.max(...p)})`;
        })
        .join('; ')}`,
    );
  console.log(
    `workerd GC (medians${rounds > 1 ? ` of ${rounds} rounds` : ''}): ${targets
      .map(([k, name]) => {
        const m = (f: (x: Measured) => number | null) => median(runs.map((r) => f(r[k]!) ?? NaN));
        return `${name} ${m((x) => x.youngGcPer10k)} young + ${m((x) => x.fullGcPer10k)} full per 10,000 answers, pauses ${m((x) => x.gcPauseMsPerSecond)} ms/s (longest ${m((x) => x.gcPauseMaxMs)} ms)`;
      })
      .join('; ')}`,
  );
  const summary = (k: 'edge' | 'edgeToGuardedBare' | 'unguarded' | 'against') =>
    `${median(ratios.map((r) => r[k]!.ratio))} of the bare route, p99 ${median(ratios.map((r) => r[k]!.p99Ratio))}x`;
  const cpu = (k: 'bare' | 'bareGuarded' | 'edge' | 'unguarded' | 'against') => median(runs.map((r) => r[k]?.edgeCpuMsPerRequest ?? NaN));
  console.log(
    `edge: status polls through the edge as run = ${summary('edge')} (against the bare worker behind the same guard: ${summary('edgeToGuardedBare').replace('of the bare route', 'of its rate')}); the worker on workerd serve alone = ${summary('unguarded')} ` +
      `(goal >= 0.7, p99 <= 1.5x)${values.against === undefined ? '' : `; the worker built from ${values.against} = ${summary('against')}`}` +
      `; CPU ms per request (workerd, and the guard): bare ${cpu('bare')}, bare behind the guard ${cpu('bareGuarded')}, edge as run ${cpu('edge')}, worker alone ${cpu('unguarded')}` +
      `${values.against === undefined ? '' : `, ${values.against} alone ${cpu('against')}`}` +
      `${rounds > 1 ? `; medians of ${rounds} rounds` : ''}; load average ${loadavg()
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
  /** The framing guard's share of edgeCpuMsPerRequest (null: no guard). */
  guardCpuMsPerRequest: number | null;
  originCpuMsPerRequest: number | null;
  clientCpuMsPerRequest: number;
  /** workerd's collections (V8's --trace-gc) per 10,000 answers: young (scavenges), full (mark-compact). */
  youngGcPer10k: number | null;
  fullGcPer10k: number | null;
  /** workerd's GC pauses, ms a second of the measurement, and the longest (wall time). */
  gcPauseMsPerSecond: number | null;
  gcPauseMaxMs: number | null;
};

/** One autocannon run against `target`, with the CPU each process used per request meanwhile. */
async function measure(
  target: LocalEdge,
  originPid: number,
  connections: number,
  seconds: number,
  requests: AutocannonRequest[],
  rate?: number,
): Promise<Measured> {
  // The edge's processes: workerd, and the framing guard when it runs.
  const edgeCpu = () => {
    const [a, b] = [cpuMicros(target.pid), target.guardPid === undefined ? 0 : cpuMicros(target.guardPid)];
    return a === null || b === null ? null : a + b;
  };
  const guardCpu = () => (target.guardPid === undefined ? null : cpuMicros(target.guardPid));
  const edgeBefore = edgeCpu();
  const guardBefore = guardCpu();
  const originBefore = cpuMicros(originPid);
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  const run = autocannon({
    url: target.url,
    connections,
    duration: seconds,
    requests,
    ...(rate === undefined ? {} : { overallRate: rate }),
  });
  const seen: number[] = [];
  const gcs: string[] = [];
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      if (e.duration >= 3) gcs.push(`${((e.startTime - started) / 1000).toFixed(2)}:${Math.round(e.duration)}`);
  });
  if (process.env.EDGE_BENCH_TIMELINE) obs.observe({ entryTypes: ['gc'] });
  if (process.env.EDGE_BENCH_TIMELINE)
    (run as unknown as { on(e: string, f: (...a: unknown[]) => void): void }).on('response', (_c, _s, _b, ms) =>
      seen.push(performance.now() - started, ms as number),
    );
  const r = await run;
  obs.disconnect();
  if (process.env.EDGE_BENCH_TIMELINE)
    timeline(
      seen,
      stateFetches.filter(([a]) => a >= started).map(([a, b]) => [a - started, b - started]),
      (workerdGcs.get(target.pid) ?? []).filter((g) => g.at >= started).map((g) => [g.at - started - g.ms, g.at - started]),
    );
  if (process.env.EDGE_BENCH_TIMELINE)
    console.log(
      `origin state fetches (start s +ms): ${stateFetches
        .filter(([a]) => a >= started)
        .map(([a, b]) => `${((a - started) / 1000).toFixed(2)}+${Math.round(b - a)}`)
        .join(' ')}`,
    );
  if (process.env.EDGE_BENCH_TIMELINE) console.log(`client GC >= 3 ms (start s:ms): ${gcs.join(' ')}`);
  const mine = (workerdGcs.get(target.pid) ?? []).filter((g) => g.at >= started);
  if (process.env.EDGE_BENCH_TIMELINE) {
    const kinds = new Map<string, { n: number; total: number; max: number }>();
    for (const g of mine) {
      const k = kinds.get(g.kind) ?? { n: 0, total: 0, max: 0 };
      k.n++;
      k.total += g.ms;
      k.max = Math.max(k.max, g.ms);
      kinds.set(g.kind, k);
    }
    console.log(
      `workerd GC: ${[...kinds].map(([kind, k]) => `${kind} ${k.n} (${k.total.toFixed(1)} ms, max ${k.max.toFixed(1)})`).join(', ') || 'none'}; >= 3 ms (end s:ms): ${mine
        .filter((g) => g.ms >= 3)
        .map((g) => `${((g.at - started) / 1000).toFixed(2)}:${g.ms.toFixed(1)}`)
        .join(' ')}`,
    );
  }
  const elapsedS = (performance.now() - started) / 1000;
  const client = process.cpuUsage(clientBefore);
  const edgeAfter = edgeCpu();
  const guardAfter = guardCpu();
  const originAfter = cpuMicros(originPid);
  const n = Math.max(1, r.requests.total);
  const perRequest = (before: number | null, after: number | null) =>
    before === null || after === null ? null : Math.round(((after - before) / n / 1000) * 1000) / 1000;
  const collections = (young: boolean) => mine.filter((g) => /^(Scavenge|Minor)/.test(g.kind) === young);
  const per10k = (k: number) => (workerdGcs.has(target.pid) ? Math.round((k / n) * 10_000 * 10) / 10 : null);
  return {
    ...figures(r),
    elapsedS,
    youngGcPer10k: per10k(collections(true).length),
    fullGcPer10k: per10k(collections(false).length),
    gcPauseMsPerSecond: workerdGcs.has(target.pid) ? round(mine.reduce((t, g) => t + g.ms, 0) / elapsedS) : null,
    gcPauseMaxMs: workerdGcs.has(target.pid) ? round(Math.max(0, ...mine.map((g) => g.ms))) : null,
    edgeCpuMsPerRequest: perRequest(edgeBefore, edgeAfter),
    guardCpuMsPerRequest: perRequest(guardBefore, guardAfter),
    originCpuMsPerRequest: perRequest(originBefore, originAfter),
    clientCpuMsPerRequest: Math.round(((client.user + client.system) / n / 1000) * 1000) / 1000,
  };
}

const stateFetches: [number, number][] = [];

/** One garbage collection in a workerd isolate (`--trace-gc`): when its line arrived (ms, performance.now()), its pause. */
interface WorkerdGc {
  at: number;
  ms: number;
  kind: string;
}
/** Each workerd's collections, by its process id. */
const workerdGcs = new Map<number, WorkerdGc[]>();
/**
 * `startLocalEdge` with V8's `--trace-gc` (every target alike; EDGE_BENCH_GC=off: without), its lines read into
 * `workerdGcs`: how often each isolate collects and how long each pause is (wall time, so a pause preempted by the
 * load is counted long; the counts are what the load does not move).
 */
async function startTraced(given: Parameters<typeof startLocalEdge>[0]): Promise<LocalEdge> {
  // EDGE_BENCH_V8_FLAGS: more V8 flags for every workerd alike (space-separated), e.g. a young generation's size.
  const extra = (process.env.EDGE_BENCH_V8_FLAGS ?? '').split(/\s+/).filter((f) => f !== '');
  // EDGE_BENCH_EDGE_V8_FLAGS=off: every workerd alike without the edge's own V8 settings (EDGE_V8_FLAGS), V8's defaults.
  const o = process.env.EDGE_BENCH_EDGE_V8_FLAGS === 'off' ? { ...given, edgeV8Flags: false } : given;
  if (process.env.EDGE_BENCH_GC === 'off') return startLocalEdge(extra.length > 0 ? { ...o, v8Flags: extra } : o);
  const sink: WorkerdGc[] = [];
  const edge = await startLocalEdge({
    ...o,
    v8Flags: ['--trace-gc', ...extra],
    log: (line) => {
      // e.g. "[123:0x5f..]  2345 ms: Scavenge 1.3 (2.8) -> 0.8 (2.2) MB, pooled: 1.0 MB, 1.58 / 0.00 ms (average mu ..."
      const m = /ms: ([A-Za-z -]+?) [\d.]+ \([\d.]+\) -> [\d.]+ \([\d.]+\) MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ /.exec(line);
      if (m) sink.push({ at: performance.now(), ms: Number(m[2]), kind: m[1]! });
      else process.stderr.write(`${line}\n`);
    },
  });
  workerdGcs.set(edge.pid, sink);
  return edge;
}

/** Where the slow answers fell in time: 50 ms bins holding answers slower than the run's p99. */
function timeline(seen: number[], fetches: [number, number][], pauses: [number, number][]) {
  const lat: number[] = [];
  for (let i = 1; i < seen.length; i += 2) lat.push(seen[i]!);
  const sorted = [...lat].sort((a, b) => a - b);
  const p99 = sorted[Math.floor(sorted.length * 0.99)]!;
  const bins = new Map<number, { n: number; max: number }>();
  for (let i = 0; i < seen.length; i += 2) {
    if (seen[i + 1]! < p99) continue;
    const b = Math.floor(seen[i]! / 50);
    const e = bins.get(b) ?? { n: 0, max: 0 };
    e.n++;
    e.max = Math.max(e.max, seen[i + 1]!);
    bins.set(b, e);
  }
  let slow = 0;
  let during = 0;
  let inGc = 0;
  for (let i = 0; i < seen.length; i += 2) {
    if (seen[i + 1]! < p99) continue;
    slow++;
    // Released by a fetch: asked before it ended, answered within 20 ms after (a poll that waited for the refresh).
    const [from, to] = [seen[i]! - seen[i + 1]!, seen[i]!];
    if (fetches.some(([, b]) => from <= b && to >= b && to <= b + 20)) during++;
    if (pauses.some(([a, b]) => from <= b && to >= a && to <= b + 20)) inGc++;
  }
  console.log(
    `timeline: answers at or over p99 that overlapped a workerd GC pause and were released within 20 ms of its end ${inGc} of ${slow}; the pauses cover ${((pauses.reduce((t, [a, b]) => t + (b - a), 0) / Math.max(1, seen.at(-2) ?? 1)) * 100).toFixed(1)}% of the run`,
  );
  const covered = fetches.reduce((t, [a, b]) => t + (b - a), 0) / Math.max(1, seen.at(-2) ?? 1);
  console.log(
    `timeline: answers at or over p99 released within 20 ms of an origin state fetch's end ${during} of ${slow}; the fetches cover ${(covered * 100).toFixed(1)}% of the run`,
  );
  console.log(
    `timeline: ${lat.length} answers, p50 ${sorted[Math.floor(sorted.length / 2)]} p99 ${p99} ms; slow ones by 50 ms bin (start s: count/max ms): ` +
      [...bins.entries()]
        .sort((a, b) => a[0] - b[0])
        .map(([b, e]) => `${(b * 0.05).toFixed(2)}:${e.n}/${Math.round(e.max)}`)
        .join(' '),
  );
}

const round = (n: number) => Math.round(n * 100) / 100;

/** workerd's collections in a measurement, as printed. */
function gcLine(m: Measured): string {
  return m.youngGcPer10k === null
    ? 'workerd GC not traced'
    : `workerd GC ${m.youngGcPer10k} young + ${m.fullGcPer10k} full per 10,000 answers, pauses ${m.gcPauseMsPerSecond} ms/s (longest ${m.gcPauseMaxMs} ms)`;
}

/**
 * The bare worker's CPU per request over the edge's (its processes, workerd and the guard): the share of the bare
 * worker's rate the edge reaches where CPU bounds both. Robust to what else the machine runs, unlike the rates.
 */
function cpuRatio(bare: Measured, edge: Measured): number | string {
  if (bare.edgeCpuMsPerRequest === null || edge.edgeCpuMsPerRequest === null || edge.edgeCpuMsPerRequest === 0) return 'n/a';
  return round(bare.edgeCpuMsPerRequest / edge.edgeCpuMsPerRequest);
}
