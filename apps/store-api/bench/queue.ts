import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from '@onsale/shared/db';
import { AccountTokens } from '@onsale/shared/auth';
import { createEvent, parseEventFile } from '@onsale/shared/events';
import { installDataDir, installSecrets } from '@onsale/shared/install';
import { AdmissionController } from '@onsale/shared/admission';
import { admissionClaimsFor, createTokenKey, hashDevice, signToken } from '@onsale/shared/queue';
import { TEST_CARDS } from '@onsale/shared/checkout';
import { benchDatabase } from './database.js';
import { createClient, round, runLoad, startProcess, stopProcess, summarize } from './load.js';

const root = join(import.meta.dirname, '..', '..', '..');

const USAGE = `usage: pnpm bench queue [--seconds N] [--concurrency N] [--fans N]

The waiting room under load, in one run on this machine:
  baseline   a bare Fastify GET route (the HTTP limit)
  joins      POST /events/:id/queue, a fresh account per request, real PostgreSQL
  status     GET /events/:id/queue/status with real queue tokens (no database read per poll)
  sold-out   time from the last seat sold to every polling fan seeing SOLD_OUT (controller + watermark refresh)`;

export async function main(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      seconds: { type: 'string', default: '10' },
      concurrency: { type: 'string', default: '200' },
      fans: { type: 'string', default: '2000' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return console.log(USAGE);
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  const fans = Number(values.fans);
  const bench = await benchDatabase();
  console.log(`database: ${bench.where}; ${concurrency} connections; ${seconds} s per measurement`);
  const club = JSON.parse(readFileSync(join(root, 'examples', 'club.json'), 'utf8'));
  const newEvent = async (over: Record<string, unknown> = {}) => {
    const spec = parseEventFile({ ...club, name: 'bench queue', fairnessMode: 'FIFO', onsaleAt: new Date(Date.now() - 60_000).toISOString(), startsAt: new Date(Date.now() + 30 * 86400_000).toISOString(), ...over });
    return bench.db.transaction().execute((trx) => createEvent(trx, spec, 'bench', { signOff: true }));
  };
  const accounts = new AccountTokens(installSecrets(installDataDir()).authSecret);
  const results: Record<string, unknown> = {};

  const bare = await startProcess('apps/store-api/bench/bare-server.ts', {});
  {
    const client = createClient(`http://127.0.0.1:${bare.port}`, concurrency);
    const lat: number[] = [];
    const { elapsedMs } = await runLoad(concurrency, seconds * 1000, async () => {
      lat.push((await client.request('GET', '/bare-status', { authorization: 'Bearer x', 'x-queue-token': 'x' })).ms);
    });
    client.close();
    results.bareFastify = { reqPerSec: round((lat.length / elapsedMs) * 1000, 0), ...summarize(lat) };
  }
  await stopProcess(bare.child);

  const server = await startProcess('apps/store-api/bench/server.ts', { DATABASE_URL: bench.url, NODE_ENV: 'development', DEV_AUTH: 'false' });
  const client = createClient(`http://127.0.0.1:${server.port}`, concurrency);
  try {
    // --- joins: a fresh account per join ---
    const ev = await newEvent();
    const prepared: { auth: string; device: string }[] = [];
    for (let i = 0; i < Math.ceil(seconds * 12_000); i++) prepared.push({ auth: `Bearer ${(await accounts.issue(`q-${i}`)).token}`, device: `bench-device-${i}` });
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
      else if (joined.length < fans) joined.push({ headers: { authorization: fan.auth, 'x-device-id': fan.device, 'x-queue-token': r.body.queueToken } });
    });
    const rows = await sql<{ n: number; distinct: number }>`SELECT count(*)::int AS n, count(DISTINCT join_index)::int AS distinct FROM queue_entries WHERE event_id = ${ev.eventId}`.execute(bench.db);
    results.joins = { joinsPerSec: round((joinLat.length / joinMs) * 1000, 0), ...summarize(joinLat), errors: joinErrors, rows: rows.rows[0]!.n, distinctPositions: rows.rows[0]!.distinct };

    // --- status polls: the controller is alive, the watermark is below these fans (WAITING) ---
    await sql`UPDATE queue_state SET heartbeat_at = now() + interval '1 hour', admitted_through = 0, rate_per_min = 1300 WHERE event_id = ${ev.eventId}`.execute(bench.db);
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
    results.status = { pollsPerSec: round((statusLat.length / statusMs) * 1000, 0), ...summarize(statusLat), states, distinctFans: joined.length };

    // --- sold-out propagation: the real controller (1 s ticks), 200 fans polling every 200 ms ---
    const tiny = await newEvent({ sections: [{ code: 'LAST', priceLevel: club.priceLevels[0].code, qualityRank: 1, rows: [{ label: 'A', seats: 4 }] }] });
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
        admissionClaimsFor({ kind: 'queue', eventId: tiny.eventId, accountId: buyer, deviceHash: await hashDevice(device, buyer), joinIndex: 0, cohort: 'FIFO', iat: 0, exp: 0 }, 1, Date.now()),
      );
      const buyerHeaders = { authorization: `Bearer ${(await accounts.issue(buyer)).token}`, 'x-device-id': device, 'x-admission-token': admission };
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
      const paid = await client.request('POST', `/holds/${held.body.holdId}/checkout`, { ...buyerHeaders, 'idempotency-key': 'bench-last-seats-0001' }, { payment: { instrument: { type: 'card', number: TEST_CARDS.success } } });
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
    await stopProcess(server.child);
    await bench.close();
  }
  const bareRps = (results.bareFastify as { reqPerSec: number }).reqPerSec;
  const status = results.status as { pollsPerSec: number; p99Ms: number };
  Object.assign(status, { ratioToBareFastify: round(status.pollsPerSec / bareRps, 3) });
  console.log(JSON.stringify(results, null, 2));
  const joins = results.joins as { joinsPerSec: number; p99Ms: number };
  console.log(
    `queue: status ${status.pollsPerSec}/s p99 ${status.p99Ms} ms = ${round(status.pollsPerSec / bareRps, 3)} of bare Fastify (target >= 0.6, p99 < 20 ms); ` +
      `joins ${joins.joinsPerSec}/s p99 ${joins.p99Ms} ms (target >= 5000/s, p99 < 100 ms); ` +
      `sold-out reached all ${(results.soldOutPropagation as { pollers: number }).pollers} pollers in ${(results.soldOutPropagation as { secondsToEveryPoller: number | null }).secondsToEveryPoller} s (target < 2 s)`,
  );
}
