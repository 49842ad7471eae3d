// `npm run bench -- edge-guard [ROUNDS]`: the framing guard's CPU per request (and workerd's) in front of a bare worker,
// the guard reaching workerd over loopback TCP and over a Unix socket (as the local edge runs it), and a plain byte
// relay with no parsing at all (`pipe-relay.ts`, over loopback TCP: compare it with the guard over TCP) alternately,
// 100 connections, 5 s each, status-sized requests. Read the pairs: on a loaded machine each figure carries the load.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startLocalEdge } from '../src/local.js';
import { cpuMicros } from '../../store-api/bench/load.js';
import { autocannon } from '../../store-api/bench/autocannon.js';
import { BARE } from './edge.js';

export async function main(argv: string[]) {
  const common = { storeApiUrl: 'http://127.0.0.1:1', queueTokenSecret: 'x'.repeat(32), authSecret: 'y'.repeat(32), script: BARE };
  const unix = await startLocalEdge({ ...common });
  const tcpWorkerd = await startLocalEdge({ ...common, framingGuard: false });
  const g = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, '..', 'src', 'framing-guard.ts'), '127.0.0.1', '0', new URL(tcpWorkerd.url).port],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const line = (await once(createInterface({ input: g.stdout }), 'line'))[0] as string;
  const tcpUrl = `http://127.0.0.1:${JSON.parse(line).port}`;
  const p = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'pipe-relay.ts'), '127.0.0.1', '0', new URL(tcpWorkerd.url).port],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const pipeLine = (await once(createInterface({ input: p.stdout }), 'line'))[0] as string;
  const pipeUrl = `http://127.0.0.1:${JSON.parse(pipeLine).port}`;
  const headers = { authorization: 'Bearer ' + 'a'.repeat(180), 'x-device-id': 'edge-bench-device-123', 'x-queue-token': 'q'.repeat(320) };
  const targets = [
    { name: 'guard -> workerd over loopback TCP', url: tcpUrl, guard: g.pid!, workerd: tcpWorkerd.pid },
    { name: 'guard -> workerd over a Unix socket', url: unix.url, guard: unix.guardPid!, workerd: unix.pid },
    { name: 'plain byte relay (no parsing) -> workerd over loopback TCP', url: pipeUrl, guard: p.pid!, workerd: tcpWorkerd.pid },
  ];
  for (const t of targets)
    await autocannon({ url: t.url, connections: 100, duration: 2, requests: [{ method: 'GET', path: '/x', headers }] });
  const rounds = Number(argv[0] ?? 3);
  for (let i = 0; i < rounds; i++)
    for (const t of targets) {
      const gb = cpuMicros(t.guard)!,
        wb = cpuMicros(t.workerd)!;
      const r = await autocannon({ url: t.url, connections: 100, duration: 5, requests: [{ method: 'GET', path: '/x', headers }] });
      const n = r.requests.total;
      const gc = (cpuMicros(t.guard)! - gb) / n,
        wc = (cpuMicros(t.workerd)! - wb) / n;
      console.log(
        `${t.name}: ${Math.round(n / r.duration)}/s; CPU us a request: relay ${gc.toFixed(1)}, workerd ${wc.toFixed(1)}, both ${(gc + wc).toFixed(1)}; non2xx ${r.non2xx} errors ${r.errors}`,
      );
    }
  g.kill('SIGTERM');
  p.kill('SIGTERM');
  await Promise.all([unix.close(), tcpWorkerd.close()]);
}
