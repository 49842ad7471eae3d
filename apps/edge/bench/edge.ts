import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from '@onsale/shared/db';
import { AccountTokens } from '@onsale/shared/auth';
import { createEvent, parseEventFile } from '@onsale/shared/events';
import { createTokenKey, hashDevice, signToken } from '@onsale/shared/queue';
import { installDataDir, installSecrets } from '@onsale/shared/install';
import { benchDatabase } from '../../store-api/bench/database.js';
import { startProcess, stopProcess } from '../../store-api/bench/load.js';
import { startLocalEdge } from '../src/local.js';
import { autocannon, figures, type AutocannonRequest } from '../../store-api/bench/autocannon.js';

const root = join(import.meta.dirname, '..', '..', '..');

const USAGE = `usage: npm run bench -- edge [--seconds N] [--connections N] [--fans N] [--ttl SECONDS]

Status polls through the edge worker in workerd (miniflare), in one run on this machine, same client (autocannon),
same connections:
  bare      a bare workerd route answering a constant JSON body of the status answer's size (the runtime's limit)
  edge      GET /events/:id/queue/status through the edge worker with real account and queue tokens of --fans fans,
            the store API (its own process, a scratch database) as the origin
and the origin's requests for the event's state during the run (from the store API's /metrics), against the bound
of one per event per EDGE_WATERMARK_TTL_SECONDS per isolate.`;

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
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return console.log(USAGE);
  const seconds = Number(values.seconds);
  const connections = Number(values.connections);
  const fans = Number(values.fans);
  const ttl = Number(values.ttl);

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
  const results: Record<string, unknown> = {};
  try {
    const bare = await startLocalEdge({
      storeApiUrl: storeUrl,
      queueTokenSecret: secrets.queueTokenSecret,
      authSecret: secrets.authSecret,
      script: BARE,
    });
    try {
      await autocannon({ url: bare.url, connections, duration: 2, requests: [statusRequest] }); // warm-up
      results.bareWorkerd = figures(await autocannon({ url: bare.url, connections, duration: seconds, requests: [statusRequest] }));
    } finally {
      await bare.close();
    }

    const edge = await startLocalEdge({
      storeApiUrl: storeUrl,
      queueTokenSecret: secrets.queueTokenSecret,
      authSecret: secrets.authSecret,
      watermarkTtlSeconds: ttl,
    });
    try {
      await autocannon({ url: edge.url, connections, duration: 2, requests: [statusRequest] }); // warm-up: every fan's tokens verified once
      const statusBefore = await originCount(storeUrl, '/events/:id/queue/status');
      const stateBefore = await originCount(storeUrl, '/events/:id/edge-state');
      const started = performance.now();
      const r = await autocannon({ url: edge.url, connections, duration: seconds, requests: [statusRequest] });
      const elapsedS = (performance.now() - started) / 1000;
      const stateFetches = (await originCount(storeUrl, '/events/:id/edge-state')) - stateBefore;
      results.edgeStatus = {
        ...figures(r),
        originStatusRequests: (await originCount(storeUrl, '/events/:id/queue/status')) - statusBefore,
        originStateRequests: stateFetches,
        originStateBound: Math.ceil(elapsedS / ttl) + 1,
      };
    } finally {
      await edge.close();
    }
  } finally {
    await stopProcess(server.child);
    await bench.close();
  }
  const bare = results.bareWorkerd as ReturnType<typeof figures>;
  const edge = results.edgeStatus as ReturnType<typeof figures> & {
    originStateRequests: number;
    originStateBound: number;
    originStatusRequests: number;
  };
  Object.assign(edge, { ratioToBare: round(edge.reqPerSec / bare.reqPerSec), p99RatioToBare: round(edge.p99Ms / Math.max(1, bare.p99Ms)) });
  console.log(JSON.stringify(results, null, 2));
  console.log(
    `edge: status polls ${edge.reqPerSec}/s p99 ${edge.p99Ms} ms through the worker = ${round(edge.reqPerSec / bare.reqPerSec)} of the bare workerd route ` +
      `(${bare.reqPerSec}/s p99 ${bare.p99Ms} ms; target >= 0.7), p99 ${round(edge.p99Ms / Math.max(1, bare.p99Ms))}x (target <= 1.5x); ` +
      `origin asked for the event's state ${edge.originStateRequests} times in ${seconds} s (bound: ${edge.originStateBound}, one per ${ttl} s), status polls reaching it: ${edge.originStatusRequests}; non-2xx ${edge.non2xx}`,
  );
}

const round = (n: number) => Math.round(n * 100) / 100;
