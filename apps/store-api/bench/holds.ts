import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from '@onsale/shared/db';
import { AccountTokens } from '@onsale/shared/auth';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { reconcileInventory } from '@onsale/shared/jobs';
import { installDataDir, installSecrets } from '@onsale/shared/install';
import { admissionClaimsFor, createTokenKey, hashDevice, signToken } from '@onsale/shared/queue';
import { benchDatabase } from './database.js';
import { cpuMicros, createClient, round, runLoad, startProcess, stopProcess as stop, summarize } from './load.js';
import { startProduct } from './product.js';

const root = join(import.meta.dirname, '..', '..', '..');

const USAGE = `usage: npm run bench -- holds [--seconds N] [--concurrency N] [--pool N] [--warmup-seconds N] [--scenario spread|hot]... [--store-instances N]

HTTP load against a store API process on examples/stadium.json (60,000 seats, 150 sections), in one run:
  baseline   a bare Fastify route on this machine (the HTTP limit) and the raw conditional write through pg
  spread     best-available holds across all sections (quantity 1-4)
  hot        every request for the single best section; fans release at once, so it stays contended
The store API process is warmed first (--warmup-seconds, default 3; 0 measures a cold process): spread load on an
event of its own, whose figures are printed as warmUp (a cold process's first seconds).
Prints successful holds/s, p50/p99, double-held seats and invariant drift, with ratios to the baselines.
--store-instances N: the scenarios against \`npm start -- --store-instances 1 --workers 1\` and then against
\`npm start -- --store-instances N --workers 1\` (node:cluster, one port; --pool connections per store process), same
clients, and the ratio of N processes to one (request limits raised so one loopback client is not refused).`;

export async function main(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      seconds: { type: 'string', default: '10' },
      concurrency: { type: 'string', default: '200' },
      pool: { type: 'string', default: '10' },
      scenario: { type: 'string', multiple: true },
      'warmup-seconds': { type: 'string', default: '3' },
      'store-instances': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return console.log(USAGE);
  const scenarios = (values.scenario ?? ['spread', 'hot']) as ('spread' | 'hot')[];
  for (const s of scenarios) if (s !== 'spread' && s !== 'hot') throw new Error(`--scenario must be spread or hot, not ${String(s)}`);
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  const warmupSeconds = Number(values['warmup-seconds']);
  const instances = values['store-instances'] === undefined ? null : Number(values['store-instances']);
  if (instances !== null && !(Number.isInteger(instances) && instances >= 1 && instances <= 16))
    throw new Error(`--store-instances must be 1-16, not ${values['store-instances']}`);
  if (!(warmupSeconds >= 0)) throw new Error(`--warmup-seconds must be 0 or more, not ${values['warmup-seconds']}`);
  const bench = await benchDatabase();
  console.log(
    `database: ${bench.where}; ${concurrency} concurrent clients; ${seconds} s per scenario, after a ${warmupSeconds} s warm-up of the new store API process`,
  );

  const stadium = JSON.parse(readFileSync(join(root, 'examples', 'stadium.json'), 'utf8'));
  const newEvent = async (name: string) => {
    const spec = parseEventFile({
      ...stadium,
      name,
      onsaleAt: new Date(Date.now() - 60_000).toISOString(),
      startsAt: new Date(Date.now() + 30 * 86400_000).toISOString(),
    });
    return bench.db.transaction().execute((trx) => createEvent(trx, spec, 'bench', { signOff: true }));
  };

  // One fan per request: an account token and an admission token for the scenario's event, both signed with the
  // development secrets the bench server uses (the waiting room that issues admission tokens is measured by
  // `npm run bench -- queue`; here every fan has been admitted).
  const tokens = new AccountTokens(installSecrets(installDataDir()).authSecret);
  const queueKey = await createTokenKey(installSecrets(installDataDir()).queueTokenSecret);
  let accountSeq = 0;
  const fanHeaders = async (eventId: string, i: number) => {
    const accountId = `bench-${i}`;
    // Each fan on their own device, as at a real on-sale (the per-device seat limit counts a device's holds).
    const DEVICE = `bench-device-${String(i).padStart(8, '0')}`;
    const claims = admissionClaimsFor(
      { kind: 'queue', eventId, accountId, deviceHash: await hashDevice(DEVICE, accountId), joinIndex: i, cohort: 'FIFO', iat: 0, exp: 0 },
      i + 1,
      Date.now(),
    );
    return {
      authorization: `Bearer ${(await tokens.issue(accountId)).token}`,
      'x-device-id': DEVICE,
      'x-admission-token': await signToken(queueKey, claims),
    };
  };
  let prepared: Record<string, string>[] = [];
  const prepare = async (eventId: string, n: number) => {
    prepared = [];
    for (let i = 0; i < n; i++) prepared.push(await fanHeaders(eventId, accountSeq + i));
  };
  const nextFan = async (eventId: string) => {
    const i = accountSeq++;
    return prepared.shift() ?? (await fanHeaders(eventId, i));
  };

  const results: Record<string, unknown> = {};
  const trace: string[] = [];
  // --- baselines ---
  const bare = await startProcess('apps/store-api/bench/bare-server.ts', {});
  {
    const client = createClient(`http://127.0.0.1:${bare.port}`, concurrency);
    await client.connect(concurrency, '/bare-status');
    const lat: number[] = [];
    const { elapsedMs } = await runLoad(concurrency, seconds * 1000, async () => {
      const r = await client.request('POST', '/bare', { authorization: 'Bearer x' }, { section: '101', quantity: 2 });
      lat.push(r.ms);
    });
    client.close();
    results.bareFastify = { reqPerSec: round((lat.length / elapsedMs) * 1000, 0), ...summarize(lat) };
  }
  await stop(bare.child);
  {
    const ev = await newEvent('baseline raw SQL');
    const { rows } = await sql<{ id: number }>`SELECT id FROM seats WHERE event_id = ${ev.eventId} ORDER BY random()`.execute(bench.db);
    let next = 0;
    const lat: number[] = [];
    const { elapsedMs } = await runLoad(
      concurrency,
      seconds * 1000,
      async () => {
        const seat = rows[next++ % rows.length]!.id;
        const t0 = performance.now();
        await sql`UPDATE seats SET status = 'HELD', hold_id = gen_random_uuid(), expires_at = now() + interval '6 minutes', version = version + 1
                WHERE event_id = ${ev.eventId} AND id = ${seat} AND (status = 'AVAILABLE' OR (status = 'HELD' AND expires_at <= now()))`.execute(
          bench.db,
        );
        lat.push(performance.now() - t0);
      },
      rows.length,
    );
    results.rawConditionalWrite = {
      writesPerSec: round((lat.length / elapsedMs) * 1000, 0),
      ...summarize(lat),
      note: 'one autocommit UPDATE per seat, pool of 40',
    };
  }

  // --- the store API under load ---
  /** The warm-up and the scenarios against the store API at `baseUrl`; their figures into `into`. */
  /** `pid`: the store API's one process, whose CPU per hold request is printed (null under a cluster). */
  const measure = async (baseUrl: string, into: Record<string, unknown>, perProcessMetrics: boolean, pid: number | null) => {
    const client = createClient(baseUrl, concurrency);
    try {
      // The warm-up: spread load on an event of its own against the process just started (its code not yet compiled
      // by V8's optimizing tiers), as the traffic before an on-sale opens warms a real instance; its figures are the
      // cold process's, printed as `warmUp`.
      const runs = [
        ...(warmupSeconds > 0 ? [{ name: 'warmUp', scenario: 'spread' as const, seconds: warmupSeconds }] : []),
        ...scenarios.map((scenario) => ({ name: scenario, scenario, seconds })),
      ];
      for (const { name, scenario, seconds } of runs) {
        const ev = await newEvent(`bench ${name}`);
        const sections = stadium.sections.map((s: { code: string }) => s.code) as string[];
        const best = [...stadium.sections].sort(
          (a: { qualityRank: number }, b: { qualityRank: number }) => a.qualityRank - b.qualityRank,
        )[0].code as string;
        const lat: number[] = [];
        const steady: number[] = []; // requests that started after the first second (warm caches)
        let scenarioStart = performance.now();
        const codes: Record<string, number> = {};
        const live = new Map<string, number[]>(); // holdId -> seat ids, for holds not released
        let ok = 0;
        let errors5xx = 0;
        await prepare(ev.eventId, Math.ceil(seconds * 1500));
        // Connections opened once the fans are prepared (a server closes connections idle past its timeout meanwhile).
        await client.connect(concurrency).catch(() => client.connect(concurrency));
        scenarioStart = performance.now();
        if (process.env.BENCH_TRACE) trace.push(`start ${Date.now()}`);
        const cpuBefore = pid === null ? null : cpuMicros(pid);
        const { elapsedMs } = await runLoad(concurrency, seconds * 1000, async () => {
          const headers = await nextFan(ev.eventId);
          const section = scenario === 'hot' ? best : sections[Math.floor(Math.random() * sections.length)]!;
          const quantity = 1 + Math.floor(Math.random() * 4);
          const startedAt = performance.now();
          let r: Awaited<ReturnType<typeof client.request>>;
          try {
            r = await client.request('POST', `/events/${ev.eventId}/holds`, headers, { section, quantity });
          } catch {
            // A kept-alive connection the server closed as the request went out (its idle timeout): counted, not fatal.
            codes.CONNECTION_CLOSED = (codes.CONNECTION_CLOSED ?? 0) + 1;
            return;
          }
          lat.push(r.ms);
          if (process.env.BENCH_TRACE) trace.push(`${Math.round(startedAt - scenarioStart)} ${Math.round(r.ms)} ${r.status}`);
          if (startedAt - scenarioStart > 1000) steady.push(r.ms);
          if (r.status === 201) {
            ok++;
            if (scenario === 'hot') {
              // Handled: a release that failed (no answer, or not 200) keeps the hold in `live`, checked below as held.
              const d = await client.request('DELETE', `/holds/${r.body.holdId}`, headers).catch(() => null);
              if (d?.status !== 200)
                live.set(
                  r.body.holdId,
                  r.body.seats.map((s: { id: number }) => s.id),
                );
            } else
              live.set(
                r.body.holdId,
                r.body.seats.map((s: { id: number }) => s.id),
              );
          } else {
            const code = r.body?.error ?? String(r.status);
            codes[code] = (codes[code] ?? 0) + 1;
            if (r.status >= 500) errors5xx++;
          }
        });
        const cpuAfter = pid === null ? null : cpuMicros(pid);
        // Double-held seats: a seat in two live holds' responses, or a held seat whose hold does not own it.
        const seen = new Map<number, number>();
        for (const ids of live.values()) for (const id of ids) seen.set(id, (seen.get(id) ?? 0) + 1);
        const doubleInResponses = [...seen.values()].filter((n) => n > 1).length;
        const { rows } = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM holds h WHERE h.event_id = ${ev.eventId} AND h.status IN ('HELD','PAYING') AND h.expires_at > now()
            AND h.quantity <> (SELECT count(*) FROM seats s WHERE s.hold_id = h.id AND s.status = 'HELD')`.execute(bench.db);
        const recon = (await reconcileInventory(bench.db)).find((x) => x.eventId === ev.eventId)!;
        // Conditional-write attempts per hold request, from the server's own metrics (one process's, under a cluster).
        const metricsText = perProcessMetrics ? '' : String((await client.request('GET', '/metrics', {})).body);
        const attempts = (outcome: string) =>
          [
            ...metricsText.matchAll(
              new RegExp(`hold_attempts_total\\{event="${ev.eventId}",section="[^"]*",outcome="${outcome}"\\} (\\d+)`, 'g'),
            ),
          ].reduce((a, m) => a + Number(m[1]), 0);
        into[name] = {
          successfulHoldsPerSec: round((ok / elapsedMs) * 1000, 0),
          holdRequestsPerSec: round((lat.length / elapsedMs) * 1000, 0),
          ...summarize(lat),
          // The store process's CPU per hold request (a hot section's releases included), whatever else ran meanwhile.
          cpuUsPerRequest:
            cpuBefore === null || cpuAfter === null || lat.length === 0 ? null : Math.round((cpuAfter - cpuBefore) / lat.length),
          afterFirstSecond: summarize(steady),
          refusals: codes,
          writeAttempts: perProcessMetrics ? null : { hit: attempts('hit'), miss: attempts('miss') },
          serverErrors: errors5xx,
          doubleHeldSeats: doubleInResponses + rows[0]!.n,
          invariantDrift: recon.drift,
          inventory: { available: recon.available, held: recon.held, sold: recon.sold, capacity: recon.capacity },
        };
      }
    } finally {
      client.close();
    }
  };

  const topologies: Record<string, Record<string, unknown>> = {};
  try {
    if (instances === null) {
      const server = await startProcess('apps/store-api/bench/server.ts', {
        DATABASE_URL: bench.url,
        DB_POOL_MAX: String(values.pool),
        NODE_ENV: 'development',
        DEV_AUTH: 'false',
      });
      try {
        await measure(`http://127.0.0.1:${server.port}`, results, false, server.child.pid ?? null);
      } finally {
        await stop(server.child);
      }
    } else {
      // npm start as an operator runs it, once with one store process and once with N, on the same database.
      const big = '1000000000';
      for (const n of [...new Set([1, instances])]) {
        const product = await startProduct(bench.url, ['--store-instances', String(n), '--workers', '1'], {
          DB_POOL_MAX: String(values.pool),
          RATE_LIMIT_HOLD_PER_IP: big,
          RATE_LIMIT_HOLD_PER_ACCOUNT: big,
        });
        const into: Record<string, unknown> = {};
        try {
          await measure(product.storeUrl, into, n > 1, null);
        } finally {
          await product.stop();
        }
        topologies[`storeInstances${n}`] = into;
      }
      results.npmStart = topologies;
    }
  } finally {
    await bench.close();
  }

  const bareRps = (results.bareFastify as { reqPerSec: number }).reqPerSec;
  const rawWps = (results.rawConditionalWrite as { writesPerSec: number }).writesPerSec;
  const sets = instances === null ? [results] : Object.values(topologies);
  for (const set of sets)
    for (const s of scenarios) {
      const r = set[s] as { successfulHoldsPerSec: number; holdRequestsPerSec: number };
      Object.assign(r, {
        ratioToBareFastify: round(r.holdRequestsPerSec / bareRps, 3),
        ratioToRawWrite: round(r.successfulHoldsPerSec / rawWps, 3),
      });
    }
  if (process.env.BENCH_TRACE) (await import('node:fs')).writeFileSync(process.env.BENCH_TRACE, trace.join('\n'));
  console.log(JSON.stringify(results, null, 2));
  type Outcome = {
    successfulHoldsPerSec: number;
    p99Ms: number;
    doubleHeldSeats: number;
    invariantDrift: number;
    cpuUsPerRequest: number | null;
  };
  const cpu = (o: Outcome) => (o.cpuUsPerRequest === null ? '' : `, store CPU ${o.cpuUsPerRequest} us a request`);
  const summary = (set: Record<string, unknown>) => {
    const spread = set.spread as Outcome | undefined;
    const hot = set.hot as Outcome | undefined;
    const line = [
      spread && `spread ${spread.successfulHoldsPerSec}/s p99 ${spread.p99Ms} ms (target >= 1000/s, p99 < 250 ms)${cpu(spread)}`,
      hot && `hot p99 ${hot.p99Ms} ms (target < 500 ms)${cpu(hot)}`,
    ].filter(Boolean);
    const warm = set.warmUp as Outcome | undefined;
    if (warm) line.push(`cold process (warm-up, first ${warmupSeconds} s) ${warm.successfulHoldsPerSec}/s p99 ${warm.p99Ms} ms`);
    const all = [warm, spread, hot].filter((r): r is Outcome => r !== undefined);
    return `${line.join('; ')}; double-held ${all.reduce((a, r) => a + r.doubleHeldSeats, 0)}; drift ${all.reduce((a, r) => a + r.invariantDrift, 0)}`;
  };
  if (instances === null) console.log(`holds: ${summary(results)}`);
  else {
    const one = topologies.storeInstances1!;
    const many = topologies[`storeInstances${instances}`]!;
    const ratios = scenarios.map(
      (s) => `${s} ${round((many[s] as Outcome).successfulHoldsPerSec / Math.max(1, (one[s] as Outcome).successfulHoldsPerSec), 2)}x`,
    );
    console.log(`holds, npm start with 1 store process: ${summary(one)}`);
    if (instances !== 1) console.log(`holds, npm start with ${instances} store processes: ${summary(many)}`);
    console.log(
      `holds: ${instances} store processes against 1 (successful holds/s): ${ratios.join(', ')}; bare Fastify ${bareRps} req/s, raw conditional write ${rawWps}/s`,
    );
  }
}
