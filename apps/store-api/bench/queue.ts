import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from '@onsale/shared/db';
import { AccountTokens } from '@onsale/shared/auth';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { installDataDir, installSecrets } from '@onsale/shared/install';
import { AdmissionController } from '@onsale/shared/admission';
import { admissionClaimsFor, createTokenKey, hashDevice, signToken } from '@onsale/shared/queue';
import { TEST_CARDS } from '@onsale/shared/checkout';
import { benchDatabase } from './database.js';
import { createClient, round, runLoad, startProcess, stopProcess, summarize, withCpu } from './load.js';
import { autocannon, figures, type AutocannonRequest } from './autocannon.js';
import { startProduct } from './product.js';

const root = join(import.meta.dirname, '..', '..', '..');

/** The bare route's CPU per request over the status route's: the rate ratio a server bound by its own CPU would show. */
const cpuRatio = (status: { cpuUsPerRequest: number | null }, bare: { cpuUsPerRequest: number | null }) =>
  status.cpuUsPerRequest && bare.cpuUsPerRequest ? Math.round((bare.cpuUsPerRequest / status.cpuUsPerRequest) * 1000) / 1000 : null;

const USAGE = `usage: npm run bench -- queue [--seconds N] [--concurrency N] [--connections N] [--fans N]

The waiting room under load, in one run on this machine:
  baseline   a bare Fastify GET route (the HTTP limit), with this bench's own client and with autocannon
  joins      POST /events/:id/queue, a fresh account per request, real PostgreSQL (the store API alone)
  status     GET /events/:id/queue/status with real queue tokens (no database read per poll), on the store API alone
  npm start  the same status polls against \`npm start\` as a user runs it (one process: store API, BFF and worker
             sharing its event loop), with both clients, beside the bare route measured the same way
  sold-out   time from the last seat sold to every polling fan seeing SOLD_OUT (controller + watermark refresh)
--concurrency is the own client's connections (default 200), --connections autocannon's (default 100).
--only npm-start measures the last part alone (with its bare route), e.g. while profiling.`;

export async function main(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      seconds: { type: 'string', default: '10' },
      concurrency: { type: 'string', default: '200' },
      connections: { type: 'string', default: '100' },
      fans: { type: 'string', default: '2000' },
      only: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return console.log(USAGE);
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  const connections = Number(values.connections);
  const fans = Number(values.fans);
  const bench = await benchDatabase();
  console.log(`database: ${bench.where}; ${concurrency} connections; ${seconds} s per measurement`);
  const club = JSON.parse(readFileSync(join(root, 'examples', 'club.json'), 'utf8'));
  const newEvent = async (over: Record<string, unknown> = {}) => {
    const spec = parseEventFile({
      ...club,
      name: 'bench queue',
      fairnessMode: 'FIFO',
      onsaleAt: new Date(Date.now() - 60_000).toISOString(),
      startsAt: new Date(Date.now() + 30 * 86400_000).toISOString(),
      ...over,
    });
    return bench.db.transaction().execute((trx) => createEvent(trx, spec, 'bench', { signOff: true }));
  };
  const accounts = new AccountTokens(installSecrets(installDataDir()).authSecret);
  const results: Record<string, unknown> = {};

  // The bare route's process runs through the whole bench: each status measurement is beside one of it, same client.
  const bare = await startProcess('apps/store-api/bench/bare-server.ts', {});
  const bareUrl = `http://127.0.0.1:${bare.port}`;
  /** The own client (undici, `concurrency` connections) for `seconds` on a route; requests/s and latencies. */
  /** 2 s of the same load unmeasured: a process that has not served the route yet (V8 compiles its hot path meanwhile). */
  const warmUp = async (base: string, path: string, headersOf: (i: number) => Record<string, string>) => {
    const c = createClient(base, concurrency);
    let i = 0;
    await runLoad(concurrency, 2000, async () => void (await c.request('GET', path, headersOf(i++))));
    c.close();
  };
  const ownRun = async (base: string, path: string, headersOf: (i: number) => Record<string, string>) => {
    const c = createClient(base, concurrency);
    let i = 0;
    const lat: number[] = [];
    const states: Record<string, number> = {};
    const { elapsedMs } = await runLoad(concurrency, seconds * 1000, async () => {
      const r = await c.request('GET', path, headersOf(i++));
      lat.push(r.ms);
      const s = r.status === 200 ? (r.body?.state ?? 'OK') : `HTTP ${r.status}`;
      states[s] = (states[s] ?? 0) + 1;
    });
    c.close();
    return { reqPerSec: round((lat.length / elapsedMs) * 1000, 0), ...summarize(lat), states };
  };
  const bareHeaders = () => ({ authorization: 'Bearer x', 'x-queue-token': 'x' });
  results.bareFastify = await ownRun(bareUrl, '/bare-status', bareHeaders);

  const alone = values.only !== 'npm-start';
  const server = alone
    ? await startProcess('apps/store-api/bench/server.ts', { DATABASE_URL: bench.url, NODE_ENV: 'development', DEV_AUTH: 'false' })
    : null;
  const client = createClient(`http://127.0.0.1:${server?.port ?? bare.port}`, concurrency);
  if (server)
    try {
      // --- joins: a fresh account per join ---
      const ev = await newEvent();
      const prepared: { auth: string; device: string }[] = [];
      for (let i = 0; i < Math.ceil(seconds * 12_000); i++)
        prepared.push({ auth: `Bearer ${(await accounts.issue(`q-${i}`)).token}`, device: `bench-device-${i}` });
      let next = 0;
      const joined: { headers: Record<string, string> }[] = [];
      const joinLat: number[] = [];
      let joinErrors = 0;
      const { elapsedMs: joinMs } = await runLoad(concurrency, seconds * 1000, async () => {
        const fan = prepared[next++];
        if (!fan) return;
        const r = await client.request('POST', `/events/${ev.eventId}/queue`, { authorization: fan.auth, 'x-device-id': fan.device });
        joinLat.push(r.ms);
        if (r.status !== 200) joinErrors++;
        else if (joined.length < fans)
          joined.push({ headers: { authorization: fan.auth, 'x-device-id': fan.device, 'x-queue-token': r.body.queueToken } });
      });
      const rows = await sql<{
        n: number;
        distinct: number;
      }>`SELECT count(*)::int AS n, count(DISTINCT join_index)::int AS distinct FROM queue_entries WHERE event_id = ${ev.eventId}`.execute(
        bench.db,
      );
      results.joins = {
        joinsPerSec: round((joinLat.length / joinMs) * 1000, 0),
        ...summarize(joinLat),
        errors: joinErrors,
        rows: rows.rows[0]!.n,
        distinctPositions: rows.rows[0]!.distinct,
      };

      // --- status polls: the controller is alive, the watermark is below these fans (WAITING) ---
      await sql`UPDATE queue_state SET heartbeat_at = now() + interval '1 hour', admitted_through = 0, rate_per_min = 1300 WHERE event_id = ${ev.eventId}`.execute(
        bench.db,
      );
      await new Promise((r) => setTimeout(r, 1200));
      const statusLat: number[] = [];
      const states: Record<string, number> = {};
      let i = 0;
      const { elapsedMs: statusMs } = await runLoad(concurrency, seconds * 1000, async () => {
        const fan = joined[i++ % joined.length]!;
        const r = await client.request('GET', `/events/${ev.eventId}/queue/status`, fan.headers);
        statusLat.push(r.ms);
        const s = r.status === 200 ? r.body.state : `HTTP ${r.status}`;
        states[s] = (states[s] ?? 0) + 1;
      });
      results.status = {
        pollsPerSec: round((statusLat.length / statusMs) * 1000, 0),
        ...summarize(statusLat),
        states,
        distinctFans: joined.length,
      };

      // --- sold-out propagation: the real controller (1 s ticks), 200 fans polling every 200 ms ---
      const tiny = await newEvent({
        sections: [{ code: 'LAST', priceLevel: club.priceLevels[0].code, qualityRank: 1, rows: [{ label: 'A', seats: 4 }] }],
      });
      const controller = new AdmissionController({ db: bench.db, connectionString: bench.url });
      await controller.start();
      try {
        const pollers: Record<string, string>[] = [];
        for (let k = 0; k < 200; k++) {
          const auth = `Bearer ${(await accounts.issue(`so-${k}`)).token}`;
          const device = `soldout-device-${k}`;
          const r = await client.request('POST', `/events/${tiny.eventId}/queue`, { authorization: auth, 'x-device-id': device });
          pollers.push({ authorization: auth, 'x-device-id': device, 'x-queue-token': r.body.queueToken });
        }
        const buyer = 'so-buyer';
        const key = await createTokenKey(installSecrets(installDataDir()).queueTokenSecret);
        const device = 'soldout-buyer-device';
        const admission = await signToken(
          key,
          admissionClaimsFor(
            {
              kind: 'queue',
              eventId: tiny.eventId,
              accountId: buyer,
              deviceHash: await hashDevice(device, buyer),
              joinIndex: 0,
              cohort: 'FIFO',
              iat: 0,
              exp: 0,
            },
            1,
            Date.now(),
          ),
        );
        const buyerHeaders = {
          authorization: `Bearer ${(await accounts.issue(buyer)).token}`,
          'x-device-id': device,
          'x-admission-token': admission,
        };
        await new Promise((r) => setTimeout(r, 2500)); // the controller is ticking; every poller sees the live queue
        const held = await client.request('POST', `/events/${tiny.eventId}/holds`, buyerHeaders, { section: 'LAST', quantity: 4 });
        const firstSeen: number[] = new Array(pollers.length).fill(0);
        let soldAt = 0;
        const polling = Promise.all(
          pollers.map(async (headers, k) => {
            const deadline = performance.now() + 30_000;
            while (!firstSeen[k] && performance.now() < deadline) {
              const r = await client.request('GET', `/events/${tiny.eventId}/queue/status`, headers);
              if (r.body?.state === 'SOLD_OUT') firstSeen[k] = performance.now();
              else await new Promise((x) => setTimeout(x, 200));
            }
          }),
        );
        const paid = await client.request(
          'POST',
          `/holds/${held.body.holdId}/checkout`,
          { ...buyerHeaders, 'idempotency-key': 'bench-last-seats-0001' },
          { payment: { instrument: { type: 'card', number: TEST_CARDS.success } } },
        );
        soldAt = performance.now();
        await polling;
        const seen = firstSeen.filter((t) => t > 0);
        results.soldOutPropagation = {
          lastSeatsSold: paid.status === 200,
          pollers: pollers.length,
          pollersToldSoldOut: seen.length,
          secondsToEveryPoller: seen.length === pollers.length ? round((Math.max(...seen) - soldAt) / 1000, 2) : null,
          secondsToFirstPoller: seen.length > 0 ? round((Math.min(...seen) - soldAt) / 1000, 2) : null,
          controllerTickMs: controller.tickMs,
        };
      } finally {
        await controller.stop();
      }
    } finally {
      client.close();
      if (server) await stopProcess(server.child);
    }

  // --- status polls against `npm start` (the default topology: one process), both clients, beside the bare route ---
  // Limits stay on (their hooks are part of the route's cost) but high enough that one loopback client standing for
  // thousands of fans is not refused; the bot gate is off for the joins that hand out the queue tokens.
  const big = '1000000000';
  // A product that does not start (the database refusing more clients, say) leaves no bare route running behind it.
  const product = await startProduct(bench.url, [], {
    BOT_GATE_ENABLED: 'false',
    RATE_LIMIT_STATUS_PER_IP: big,
    RATE_LIMIT_STATUS_PER_ACCOUNT: big,
    RATE_LIMIT_JOIN_PER_IP: big,
  }).catch(async (e: unknown) => {
    await stopProcess(bare.child);
    await bench.close();
    throw e;
  });
  try {
    // Fans behind a block of earlier joins, so the running admission controller (it stops at the plausible seats)
    // leaves them WAITING for the run.
    const ev = await newEvent();
    const c = createClient(product.storeUrl, 50);
    const pollers: Record<string, string>[] = [];
    const ahead = 1000;
    let joined = 0;
    await runLoad(
      50,
      600_000,
      async () => {
        const n = joined++;
        const auth = `Bearer ${(await accounts.issue(`start-${n}`)).token}`;
        const device = `start-device-${n}`;
        // A join shed while the machine is loaded (503 with Retry-After) is retried as a fan's browser would.
        let r = await c.request('POST', `/events/${ev.eventId}/queue`, { authorization: auth, 'x-device-id': device });
        for (let retries = 0; r.status === 503 && retries < 10; retries++) {
          await new Promise((x) => setTimeout(x, 1000 * Number(r.body?.retryAfterSeconds ?? 1)));
          r = await c.request('POST', `/events/${ev.eventId}/queue`, { authorization: auth, 'x-device-id': device });
        }
        if (r.status !== 200) throw new Error(`join under npm start: HTTP ${r.status} ${JSON.stringify(r.body)}`);
        if (r.body.position === null || r.body.position > ahead)
          pollers.push({ authorization: auth, 'x-device-id': device, 'x-queue-token': r.body.queueToken });
      },
      fans + ahead,
    );
    c.close();
    const path = `/events/${ev.eventId}/queue/status`;
    // CPU per request of the server process besides the rates: on a shared machine, what each route costs its process.
    const pollerHeaders = (i: number) => pollers[i % pollers.length]!;
    await warmUp(product.storeUrl, path, pollerHeaders);
    const own = await withCpu(
      product.pid,
      () => ownRun(product.storeUrl, path, pollerHeaders),
      (r) => r.count,
    );
    const ownBare = await withCpu(
      bare.child.pid!,
      () => ownRun(bareUrl, '/bare-status', bareHeaders),
      (r) => r.count,
    );

    let k = 0;
    const statusReq: AutocannonRequest = {
      method: 'GET',
      setupRequest: (req) => ({ ...req, path, headers: pollers[k++ % pollers.length] }),
    };
    const bareReq: AutocannonRequest = { method: 'GET', setupRequest: (req) => ({ ...req, path: '/bare-status', headers: bareHeaders() }) };
    await autocannon({ url: product.storeUrl, connections, duration: 2, requests: [statusReq] }); // warm-up
    const ac = await withCpu(
      product.pid,
      async () => figures(await autocannon({ url: product.storeUrl, connections, duration: seconds, requests: [statusReq] })),
      (r) => r.ok + r.non2xx,
    );
    await autocannon({ url: bareUrl, connections, duration: 2, requests: [bareReq] });
    const acBare = await withCpu(
      bare.child.pid!,
      async () => figures(await autocannon({ url: bareUrl, connections, duration: seconds, requests: [bareReq] })),
      (r) => r.ok + r.non2xx,
    );
    results.npmStart = {
      pollers: pollers.length,
      ownClient: {
        status: own,
        bareFastify: ownBare,
        ratio: round(own.reqPerSec / ownBare.reqPerSec, 3),
        p99Ratio: round(own.p99Ms / Math.max(0.1, ownBare.p99Ms), 2),
        cpuRatio: cpuRatio(own, ownBare),
      },
      autocannon: {
        status: ac,
        bareFastify: acBare,
        ratio: round(ac.reqPerSec / acBare.reqPerSec, 3),
        p99Ratio: round(ac.p99Ms / Math.max(1, acBare.p99Ms), 2),
        cpuRatio: cpuRatio(ac, acBare),
      },
    };
  } finally {
    await product.stop();
    await stopProcess(bare.child);
    await bench.close();
  }
  const bareRps = (results.bareFastify as { reqPerSec: number }).reqPerSec;
  const status = results.status as { pollsPerSec: number; p99Ms: number };
  if (status) Object.assign(status, { ratioToBareFastify: round(status.pollsPerSec / bareRps, 3) });
  console.log(JSON.stringify(results, null, 2));
  const joins = results.joins as { joinsPerSec: number; p99Ms: number };
  const ns = results.npmStart as {
    ownClient: {
      status: { reqPerSec: number; p99Ms: number; cpuUsPerRequest: number | null; clientCpuUsPerRequest: number | null };
      bareFastify: { reqPerSec: number; p99Ms: number; cpuUsPerRequest: number | null; clientCpuUsPerRequest: number | null };
      ratio: number;
      p99Ratio: number;
      cpuRatio: number | null;
    };
    autocannon: {
      status: ReturnType<typeof figures> & { cpuUsPerRequest: number | null; clientCpuUsPerRequest: number | null };
      bareFastify: ReturnType<typeof figures> & { cpuUsPerRequest: number | null; clientCpuUsPerRequest: number | null };
      ratio: number;
      p99Ratio: number;
      cpuRatio: number | null;
    };
  };
  type Fig = { reqPerSec: number; p99Ms: number; cpuUsPerRequest: number | null; clientCpuUsPerRequest: number | null };
  const line = (name: string, x: { status: Fig; bareFastify: Fig; ratio: number; p99Ratio: number; cpuRatio: number | null }) =>
    `${name}: status ${x.status.reqPerSec}/s p99 ${x.status.p99Ms} ms (${x.status.cpuUsPerRequest} us CPU/request) vs bare Fastify ${x.bareFastify.reqPerSec}/s p99 ${x.bareFastify.p99Ms} ms (${x.bareFastify.cpuUsPerRequest} us) = ${x.ratio} of bare, p99 ${x.p99Ratio}x, CPU ${x.cpuRatio} of bare's; ` +
    `the client's own CPU ${x.status.clientCpuUsPerRequest} / ${x.bareFastify.clientCpuUsPerRequest} us/request`;
  if (status)
    console.log(
      `queue (store API alone): status ${status.pollsPerSec}/s p99 ${status.p99Ms} ms = ${round(status.pollsPerSec / bareRps, 3)} of bare Fastify; ` +
        `joins ${joins.joinsPerSec}/s p99 ${joins.p99Ms} ms (target >= 5000/s, p99 < 100 ms); ` +
        `sold-out reached all ${(results.soldOutPropagation as { pollers: number }).pollers} pollers in ${(results.soldOutPropagation as { secondsToEveryPoller: number | null }).secondsToEveryPoller} s (target < 2 s)`,
    );
  console.log(
    `queue under npm start (target >= 0.6 of bare, p99 <= 1.5x): ${line('own client', ns.ownClient)}; ${line('autocannon', ns.autocannon)}`,
  );
}
