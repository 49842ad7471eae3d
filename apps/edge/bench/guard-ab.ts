// `npm run bench -- edge-guard-ab GUARD.ts [GUARD.ts ...] [--rate N] [--rounds N] [--seconds N] [--connections N] [--plain] [--post]`:
// framing guard builds side by side (this checkout's apps/edge/src/framing-guard.ts, a copy of another's with its
// framing-scan.ts beside it) in front of one bare worker on `workerd serve` over a Unix socket (as the local edge
// runs it), measured alternately (each round starts one build further on), status polls with a browser's headers
// (--plain: only the three a poll needs; --post: a join instead, `POST /events/:id/queue` with a JSON body of a
// join's size and a Content-Length) paced at --rate a second (0: as fast as answered). Prints each guard's user
// and system CPU microseconds a request (from /proc) and workerd's, round by round, and each build's median.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { startLocalEdge } from '../src/local.js';
import { autocannon } from '../../store-api/bench/autocannon.js';
import { BARE } from './edge.js';

/** A process's user and system CPU in milliseconds (clock ticks of 10 ms). */
function times(pid: number): [number, number] {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return [Number(f[11]) * 10, Number(f[12]) * 10];
}

export async function main(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      rate: { type: 'string', default: '700' },
      rounds: { type: 'string', default: '4' },
      seconds: { type: 'string', default: '5' },
      connections: { type: 'string', default: '100' },
      plain: { type: 'boolean', default: false },
      post: { type: 'boolean', default: false },
    },
  });
  if (positionals.length === 0)
    throw new Error('usage: npm run bench -- edge-guard-ab GUARD.ts [GUARD.ts ...] [--rate N] [--rounds N] [--seconds N] [--plain]');
  const common = { storeApiUrl: 'http://127.0.0.1:1', queueTokenSecret: 'x'.repeat(32), authSecret: 'y'.repeat(32), script: BARE };
  const edge = await startLocalEdge({ ...common });
  // The Unix socket workerd listens on, from its own guard's arguments (host, port, socket, workerd's pid).
  const sock = readFileSync(`/proc/${edge.guardPid}/cmdline`, 'utf8').split('\0')[6]!;
  const guards: { name: string; pid: number; url: string; kill: () => void }[] = [];
  for (const script of positionals) {
    const flags = process.env.GUARD_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
    const g = spawn(process.execPath, [...flags, '--import', 'tsx', script, '127.0.0.1', '0', sock], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const port = await new Promise<number>((resolve) =>
      createInterface({ input: g.stdout }).on('line', (line) => {
        if (line.startsWith('{"event":"listen"')) resolve((JSON.parse(line) as { port: number }).port);
        else if (process.env.GUARD_LOG) process.stderr.write(`${line}\n`);
      }),
    );
    guards.push({ name: script, pid: g.pid!, url: `http://127.0.0.1:${port}`, kill: () => g.kill('SIGTERM') });
  }
  const headers: Record<string, string> = {
    authorization: 'Bearer ' + 'a'.repeat(180),
    'x-device-id': 'edge-bench-device-123',
    'x-queue-token': 'q'.repeat(320),
    ...(values.plain
      ? {}
      : {
          'x-forwarded-for': '10.1.2.3',
          'cf-connecting-ip': '10.1.2.3',
          'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
          accept: 'application/json',
          'accept-language': 'en-GB,en;q=0.9',
        }),
  };
  const rate = Number(values.rate);
  const connections = Number(values.connections);
  // A join as the crowd sends it (undici writes the Content-Length), its body about a join's size.
  const joinBody = JSON.stringify({ deviceId: 'edge-bench-device-123', captchaToken: 'c'.repeat(64), locale: 'en-GB', referrer: null });
  const requests = values.post
    ? [{ method: 'POST', path: '/events/abc/queue', headers: { ...headers, 'content-type': 'application/json' }, body: joinBody }]
    : [{ method: 'GET', path: '/events/abc/queue/status', headers }];
  for (const g of guards) await autocannon({ url: g.url, connections, duration: 2, requests });
  const perRequest = guards.map(() => [] as number[]);
  for (let r = 0; r < Number(values.rounds); r++)
    for (let k = 0; k < guards.length; k++) {
      const i = (k + r) % guards.length;
      const g = guards[i]!;
      const [u0, s0] = times(g.pid);
      const [wu0, ws0] = times(edge.pid);
      const res = await autocannon({
        url: g.url,
        connections,
        duration: Number(values.seconds),
        ...(rate > 0 ? { overallRate: rate } : {}),
        requests,
      });
      const [u1, s1] = times(g.pid);
      const [wu1, ws1] = times(edge.pid);
      const n = res.requests.total;
      const us = (ms: number) => ((ms * 1000) / n).toFixed(1);
      perRequest[i]!.push(((u1 - u0 + s1 - s0) * 1000) / n);
      console.log(
        `round ${r + 1} ${g.name}: ${Math.round(n / res.duration)}/s; guard us a request: user ${us(u1 - u0)} system ${us(s1 - s0)} total ${us(u1 - u0 + s1 - s0)}; workerd ${us(wu1 - wu0 + ws1 - ws0)}; non-2xx ${res.non2xx} errors ${res.errors}; load ${loadavg()[0]!.toFixed(2)}`,
      );
    }
  const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor((a.length - 1) / 2)]!;
  guards.forEach((g, i) =>
    console.log(
      `${g.name}: median ${median(perRequest[i]!).toFixed(1)} us a request (${perRequest[i]!.map((x) => x.toFixed(1)).join(' / ')})`,
    ),
  );
  for (const g of guards) g.kill();
  await edge.close();
}
