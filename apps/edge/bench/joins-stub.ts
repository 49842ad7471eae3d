// What a join costs workerd and the framing guard alone: joins through the edge (workerd serve behind its guard) to a
// stub origin that answers at once (no store, no database), two or more worker builds measured in turn, round after
// round, each round's CPU a join read from /proc for workerd and the guard. On a shared machine the store's and the
// database's CPU move the joins bench's figures more than a worker's change does; this measures the edge's part only.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { EDGE_JOINS_PATH, EDGE_JOINS_STREAM } from '@onsale/shared/queue/edge-joins';
import { bundleWorker, startLocalEdge, type LocalEdge } from '../src/local.js';
import { cpuMicros, createClient, runLoad } from '../../store-api/bench/load.js';

const USAGE = `usage: npm run bench -- edge-joins [--builds <a.ts|a.js>,<b.ts|b.js>,...] [--join-batch N|off] [--alone-below N] [--rounds N] [--seconds N] [--concurrency N] [--route join|seatmap] [--rate N]

Joins (POST /events/:id/queue with a browser's headers) through the edge, workerd serve behind its framing guard, to a
stub origin that answers each at once (201; a batch's lines streamed), for each build in turn, alternating which goes
first, --rounds times (default 6, --seconds 3 each, --concurrency 50). Prints each round's joins/s and CPU
microseconds a join of workerd and of the guard, the medians, and each build's workerd CPU over the first's by round.
--builds: worker entries (.ts, bundled as the edge bundles its own) or bundles (.js); default this checkout's edge.
A bare worker (an answer without an origin) and a bare pass-through are useful builds to compare with.
--route seatmap: GET /events/:id/seatmap instead (a ~20 KB JSON the stub marks public, max-age=1: answered from the
edge's memory cache but for one fill a second). --rate N: N requests a second in all, paced (the rehearsal's fans send
at their own pace; without it each loop sends its next request as soon as its last is answered). --alone-below N: the
edge's EDGE_JOIN_ALONE_BELOW (default 32; 0: every join batched, the batched path alone). Each round prints what reached
the stub: joins sent alone, and batches with their joins.`;

export async function main(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      builds: { type: 'string' },
      'join-batch': { type: 'string', default: 'off' },
      'alone-below': { type: 'string' },
      rounds: { type: 'string', default: '6' },
      seconds: { type: 'string', default: '3' },
      concurrency: { type: 'string', default: '50' },
      route: { type: 'string', default: 'join' },
      rate: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return void console.log(USAGE);
  const rounds = Math.max(1, Number(values.rounds));
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  // --rate: requests a second in all, each of the concurrent loops sending at its share of it (a paced load, as fans
  // send, rather than each loop's next request the moment its last is answered).
  const gapMs = values.rate === undefined ? 0 : (concurrency * 1000) / Number(values.rate);
  const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
  const files = values.builds ? values.builds.split(',') : [''];
  const scripts = await Promise.all(
    files.map(async (f) => (f === '' ? bundleWorker() : f.endsWith('.ts') ? bundleWorker({ entry: f }) : readFileSync(f, 'utf8'))),
  );
  const body = '{"queueToken":"stub","position":1}';
  const seatmapRoute = values.route === 'seatmap';
  // A seat map the size of the stadium's (~23 KB of JSON), marked as the store API marks it (public, max-age=1).
  const seatmap = JSON.stringify({
    eventId: '7f1e2d3c-4b5a-4968-8776-655443322110',
    sections: Array.from({ length: 240 }, (_, i) => ({
      code: `S${String(i).padStart(3, '0')}`,
      name: `Section ${i}`,
      tier: `T${i % 4}`,
      priceCents: 4500 + (i % 4) * 2000,
      available: 1000 - i,
    })),
  });
  // What reached the origin: joins sent alone, and batches with the joins in them (printed each round).
  const seen = { alone: 0, batches: 0, batched: 0 };
  const origin = createServer((req, res) => {
    if (req.method === 'GET' && req.url?.endsWith('/seatmap')) {
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(seatmap),
        'cache-control': 'public, max-age=1',
      });
      return void res.end(seatmap);
    }
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString('utf8')));
    req.on('end', () => {
      if (req.url === EDGE_JOINS_PATH) {
        const { joins } = JSON.parse(text) as { joins: unknown[] };
        seen.batches++;
        seen.batched += joins.length;
        res.writeHead(200, { 'content-type': EDGE_JOINS_STREAM });
        const headers = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };
        return void res.end(joins.map((_, i) => `${JSON.stringify({ i, status: 201, headers, body })}\n`).join(''));
      }
      seen.alone++;
      res.writeHead(201, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        'cache-control': 'no-store',
      });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  const edges: { name: string; edge: LocalEdge; workerd: number[]; guard: number[]; rate: number[] }[] = [];
  for (const [i, script] of scripts.entries())
    edges.push({
      name: files[i] || 'this checkout',
      edge: await startLocalEdge({
        storeApiUrl: `http://127.0.0.1:${(origin.address() as AddressInfo).port}`,
        queueTokenSecret: 'edge joins bench queue secret, 32+ characters',
        authSecret: 'edge joins bench account secret, 32+ characters',
        joinBatch: values['join-batch'] === 'off' ? 'off' : Number(values['join-batch']),
        ...(values['alone-below'] === undefined ? {} : { joinAloneBelow: Number(values['alone-below']) }),
        script,
        log: () => {},
      }),
      workerd: [],
      guard: [],
      rate: [],
    });
  const headers = {
    'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
    accept: 'application/json',
    'accept-language': 'en-GB,en;q=0.9',
    authorization: 'Bearer stub',
    'x-device-id': 'edge-joins-bench-device-0001',
    'cf-connecting-ip': '10.1.2.3',
  };
  const path = `/events/7f1e2d3c-4b5a-4968-8776-655443322110/${seatmapRoute ? 'seatmap' : 'queue'}`;
  const method = seatmapRoute ? 'GET' : 'POST';
  const okStatus = seatmapRoute ? 200 : 201;
  try {
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? edges : [...edges].reverse();
      for (const e of order) {
        const client = createClient(e.edge.url, concurrency);
        // A second unmeasured first: V8 compiles the path, connections open.
        await runLoad(concurrency, 1000, async () => void (await client.request(method, path, headers).catch(() => undefined)));
        const w0 = cpuMicros(e.edge.pid) ?? 0;
        const g0 = e.edge.guardPid === undefined ? 0 : (cpuMicros(e.edge.guardPid) ?? 0);
        let ok = 0;
        const seen0 = { ...seen };
        const next = Array.from({ length: concurrency }, (_, c) => performance.now() + (c * gapMs) / concurrency);
        const { elapsedMs } = await runLoad(concurrency, seconds * 1000, async (c) => {
          if (gapMs > 0) {
            const wait = next[c]! - performance.now();
            next[c] = Math.max(next[c]!, performance.now()) + gapMs;
            if (wait > 0) await sleep(wait);
          }
          const a = await client.request(method, path, headers).catch(() => null);
          if (a?.status === okStatus) ok++;
        });
        const w = Math.round(((cpuMicros(e.edge.pid) ?? 0) - w0) / ok);
        const g = e.edge.guardPid === undefined ? 0 : Math.round(((cpuMicros(e.edge.guardPid) ?? 0) - g0) / ok);
        e.workerd.push(w);
        e.guard.push(g);
        e.rate.push(Math.round((ok / elapsedMs) * 1000));
        const batches = seen.batches - seen0.batches;
        const batched = seen.batched - seen0.batched;
        console.log(
          `round ${r + 1}, ${e.name}: ${e.rate.at(-1)} joins/s; CPU a join: workerd ${w} us, guard ${g} us; at the origin ${seen.alone - seen0.alone} alone, ${batched} in ${batches} batches` +
            (batches > 0 ? ` (${(batched / batches).toFixed(1)} a batch)` : ''),
        );
        client.close();
      }
    }
  } finally {
    for (const e of edges) await e.edge.close();
    origin.close();
  }
  const median = (x: number[]) => [...x].sort((a, b) => a - b)[Math.floor((x.length - 1) / 2)]!;
  for (const e of edges)
    console.log(
      `${e.name}: median ${median(e.rate)} joins/s; CPU a join: workerd ${median(e.workerd)} us (by round ${e.workerd.join(', ')}), guard ${median(e.guard)} us`,
    );
  for (const e of edges.slice(1))
    console.log(
      `${e.name} / ${edges[0]!.name}, workerd's CPU a join by round: ${e.workerd.map((w, i) => (w / edges[0]!.workerd[i]!).toFixed(2)).join(', ')}`,
    );
}
