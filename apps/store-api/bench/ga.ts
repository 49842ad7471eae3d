import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createDb, sql } from '@onsale/shared/db';
import { AccountTokens } from '@onsale/shared/auth';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { reconcileInventory } from '@onsale/shared/jobs';
import { attemptGaHold } from '@onsale/shared/inventory';
import { admissionClaimsFor, createTokenKey, hashDevice, signToken } from '@onsale/shared/queue';
import { installDataDir, installSecrets } from '@onsale/shared/install';
import { benchDatabase } from './database.js';
import { cpuMicros, createClient, percentile, round, runLoad, startProcess, stopProcess as stop, summarize } from './load.js';

const root = join(import.meta.dirname, '..', '..', '..');

const USAGE = `usage: npm run bench -- ga [--concurrency 500] [--shards 16] [--rounds 2] [--seconds 60] [--pool 10] [--bare-seconds 5]
                    [--commit-delay-us 0]

HTTP load against a store API process on examples/ga.json (an all-GA event: one section of 20,000 identical
units), 500 concurrent buyers, each request a fresh fan asking for 1-4 units, until the units are gone:
  baseline   a bare Fastify route on this machine (the HTTP limit), same client, same concurrency
  raw        the hold statement alone (onsale_hold_ga through pg, --pool concurrent callers, no HTTP): what the
             counter itself allows, one row against shards
  single     the event with its counter in one row (shards = 1): every hold updates the same row
  sharded    the same event with the counter split into --shards rows
Each round sells out one event of each kind (the order alternates between rounds); prints successful holds/s and
p50/p99 per run, the median over rounds, the ratio sharded / single, and the oversell check at the end of each run.
--commit-delay-us N sets PostgreSQL's commit_delay on the connections under test (the server's and the raw callers'):
each commit waits N microseconds before its WAL flush, as a commit does on replicated or networked storage (the
local disk here flushes in about 0.3 ms). Leave it at 0 for this machine's own figures.`;

interface RunResult {
  shards: number;
  successfulHoldsPerSec: number;
  unitsPerSec: number;
  secondsToSellOut: number;
  requests: number;
  cpuUsPerRequest: number | null;
  holds: number;
  p50Ms: number;
  p99Ms: number;
  refusals: Record<string, number>;
  serverErrors: number;
  soldOut: boolean;
  oversold: number;
  unitsInAnswers: number;
  /** Units held in the database = units in the 201 answers (no hold the client did not hear of, none twice). */
  answersMatchDatabase: boolean;
  inventory: { capacity: number; available: number; held: number; sold: number; drift: number; counterMismatch: number };
}

export async function main(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      concurrency: { type: 'string', default: '500' },
      shards: { type: 'string', default: '16' },
      rounds: { type: 'string', default: '2' },
      seconds: { type: 'string', default: '60' },
      pool: { type: 'string', default: '10' },
      'bare-seconds': { type: 'string', default: '5' },
      'commit-delay-us': { type: 'string', default: '0' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return console.log(USAGE);
  const concurrency = Number(values.concurrency);
  const shards = Number(values.shards);
  const rounds = Number(values.rounds);
  const seconds = Number(values.seconds);
  const bench = await benchDatabase();
  const commitDelayUs = Number(values['commit-delay-us']);
  // The connections under test; with a commit delay, through the startup options (this run's connections only).
  const testUrl = commitDelayUs > 0 ? withOptions(bench.url, `-c commit_delay=${commitDelayUs}`) : bench.url;
  const testDb = commitDelayUs > 0 ? createDb(testUrl, { max: Number(values.pool), applicationName: 'bench-raw' }) : bench.db;
  const festival = JSON.parse(readFileSync(join(root, 'examples', 'ga.json'), 'utf8'));
  const section = festival.sections[0] as { code: string; capacity: number };
  console.log(
    `database: ${bench.where}; ${concurrency} concurrent buyers; ${section.capacity} GA units; pool ${values.pool}; sharded = ${shards} shards; ${rounds} round(s)` +
      (commitDelayUs > 0 ? `; commit_delay ${commitDelayUs} us on the connections under test` : ''),
  );

  const newEvent = async (name: string, n: number) => {
    const spec = parseEventFile({
      ...festival,
      name,
      onsaleAt: new Date(Date.now() - 60_000).toISOString(),
      startsAt: new Date(Date.now() + 30 * 86400_000).toISOString(),
      sections: [{ ...festival.sections[0], shards: n }],
    });
    return bench.db.transaction().execute((trx) => createEvent(trx, spec, 'bench', { signOff: true }));
  };

  // One fan per request, on a device of their own (the per-device limit counts across accounts): an account token
  // and an admission token for the run's event, signed with the development secrets the bench server uses (the
  // waiting room that issues admission tokens is measured by `npm run bench -- queue`; here every fan has been admitted).
  const tokens = new AccountTokens(installSecrets(installDataDir()).authSecret);
  const queueKey = await createTokenKey(installSecrets(installDataDir()).queueTokenSecret);
  let accountSeq = 0;
  const fanHeaders = async (eventId: string) => {
    const i = accountSeq++;
    const accountId = `ga-fan-${i}`;
    const device = `ga-device-${i}`;
    const claims = admissionClaimsFor(
      { kind: 'queue', eventId, accountId, deviceHash: await hashDevice(device, accountId), joinIndex: i, cohort: 'FIFO', iat: 0, exp: 0 },
      i + 1,
      Date.now(),
    );
    return {
      authorization: `Bearer ${(await tokens.issue(accountId)).token}`,
      'x-device-id': device,
      'x-admission-token': await signToken(queueKey, claims),
    };
  };

  const results: Record<string, unknown> = {};
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  // --- the HTTP limit: a bare Fastify route, same client, same concurrency ---
  const bare = await startProcess('apps/store-api/bench/bare-server.ts', {});
  {
    const client = createClient(`http://127.0.0.1:${bare.port}`, concurrency);
    const lat: number[] = [];
    const { elapsedMs } = await runLoad(concurrency, Number(values['bare-seconds']) * 1000, async () => {
      const r = await client.request('POST', '/bare', { authorization: 'Bearer x' }, { section: section.code, quantity: 2 });
      lat.push(r.ms);
    });
    client.close();
    results.bareFastify = { reqPerSec: round((lat.length / elapsedMs) * 1000, 0), ...summarize(lat) };
  }
  await stop(bare.child);

  // --- the counter alone: the hold statement through pg, as many callers as the server has connections ---
  {
    const callers = Number(values.pool);
    const raw: Record<string, number[]> = { single: [], sharded: [] };
    for (let round_ = 0; round_ < rounds; round_++) {
      for (const n of round_ % 2 === 0 ? [1, shards] : [shards, 1]) {
        const ev = await newEvent(`bench ga raw ${n} round ${round_ + 1}`, n);
        let seq = 0;
        let done = false;
        let ok = 0;
        let lastOkAt = 0;
        const started = performance.now();
        await Promise.all(
          Array.from({ length: callers }, async () => {
            while (!done && performance.now() - started < seconds * 1000) {
              const i = seq++;
              // The service's own statement (one onsale_hold_ga call), without the service or HTTP around it.
              const r = await attemptGaHold(
                testDb,
                {
                  eventId: ev.eventId,
                  holdId: randomUUID(),
                  accountId: `raw-${n}-${round_}-${i}`,
                  deviceHash: `raw-device-${n}-${round_}-${i}`,
                  sectionCode: section.code,
                  quantity: 1 + (i % 4),
                  limit: 4,
                  deviceLimit: 4,
                  ttlSeconds: 360,
                  seed: i,
                  allocation: null,
                },
                'async',
              ); // as the service commits it (HOLD_COMMIT's default)
              if (r.expiresAt) {
                ok++;
                lastOkAt = performance.now();
              } else if (r.available === 0) done = true;
            }
          }),
        );
        raw[n === 1 ? 'single' : 'sharded']!.push(round((ok / ((lastOkAt || performance.now()) - started)) * 1000, 0));
      }
    }
    results.rawHoldStatement = {
      callers,
      singleHoldsPerSec: round(median(raw.single!), 0),
      shardedHoldsPerSec: round(median(raw.sharded!), 0),
      ratio: round(median(raw.sharded!) / median(raw.single!), 2),
      runs: raw,
    };
    console.log(`raw hold statement, ${callers} callers: ${JSON.stringify(results.rawHoldStatement)}`);
  }

  if (testDb !== bench.db) await testDb.destroy();
  const server = await startProcess('apps/store-api/bench/server.ts', {
    DATABASE_URL: testUrl,
    DB_POOL_MAX: String(values.pool),
    NODE_ENV: 'development',
    DEV_AUTH: 'false',
  });
  const client = createClient(`http://127.0.0.1:${server.port}`, concurrency);
  const runs: RunResult[] = [];
  try {
    for (let round_ = 0; round_ < rounds; round_++) {
      const order = round_ % 2 === 0 ? [1, shards] : [shards, 1];
      for (const n of order) {
        const r = await sellOut(n, round_);
        runs.push(r);
        console.log(
          `round ${round_ + 1}, ${n === 1 ? 'single row' : `${n} shards`}: ${r.successfulHoldsPerSec} holds/s (${r.unitsPerSec} units/s), ` +
            `sold out in ${r.secondsToSellOut} s, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms, store CPU ${r.cpuUsPerRequest ?? 'n/a'} us a request, oversold ${r.oversold}, drift ${r.inventory.drift}`,
        );
      }
    }
  } finally {
    client.close();
    await stop(server.child);
    await bench.close();
  }

  async function sellOut(n: number, round_: number): Promise<RunResult> {
    const ev = await newEvent(`bench ga ${n === 1 ? 'single' : 'sharded'} round ${round_ + 1}`, n);
    // Enough fans for the whole sale (20,000 units at 2.5 a hold, plus refusals at the end), signed before the clock starts.
    const prepared: Record<string, string>[] = [];
    for (let i = 0; i < Math.ceil((section.capacity / 2.5) * 1.15); i++) prepared.push(await fanHeaders(ev.eventId));
    const lat: number[] = [];
    const okLat: number[] = [];
    const codes: Record<string, number> = {};
    const held = new Map<string, number>(); // holdId -> units in the answer
    let errors5xx = 0;
    let soldOutAt = 0;
    let lastOkAt = 0;
    const started = performance.now();
    const deadline = started + seconds * 1000;
    const cpuBefore = cpuMicros(server.child.pid!);
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (!soldOutAt && performance.now() < deadline) {
          const headers = prepared.pop() ?? (await fanHeaders(ev.eventId));
          const quantity = 1 + Math.floor(Math.random() * 4);
          const r = await client.request('POST', `/events/${ev.eventId}/holds`, headers, { section: section.code, quantity });
          lat.push(r.ms);
          if (r.status === 201) {
            okLat.push(r.ms);
            held.set(
              r.body.holdId,
              (r.body.units as { quantity: number }[]).reduce((a, u) => a + u.quantity, 0),
            );
            lastOkAt = performance.now();
          } else {
            const code = r.body?.error ?? String(r.status);
            codes[code] = (codes[code] ?? 0) + 1;
            if (r.status >= 500) errors5xx++;
            if (code === 'SECTION_SOLD_OUT') soldOutAt ||= performance.now();
          }
        }
      }),
    );
    const elapsedMs = (soldOutAt || lastOkAt || performance.now()) - started;
    const cpuAfter = cpuMicros(server.child.pid!);

    // The oversell check: units in the answers against capacity, the shards' counters against the hold units, and
    // the event's invariant as the reconciliation job computes it.
    const unitsInAnswers = [...held.values()].reduce((a, q) => a + q, 0);
    const { rows } = await sql<{ held_units: number; counter_mismatch: number }>`
      SELECT (SELECT coalesce(sum(u.quantity), 0) FROM ga_hold_units u JOIN holds h ON h.id = u.hold_id
              WHERE u.event_id = ${ev.eventId} AND u.state = 'HELD' AND h.status = 'HELD' AND h.expires_at > now())::int AS held_units,
             (SELECT count(*) FROM ga_shards s WHERE s.event_id = ${ev.eventId}
                AND s.held <> (SELECT coalesce(sum(quantity), 0) FROM ga_hold_units u
                               WHERE u.event_id = s.event_id AND u.section_code = s.section_code AND u.shard = s.shard AND u.state = 'HELD'))::int AS counter_mismatch`.execute(
      bench.db,
    );
    const recon = (await reconcileInventory(bench.db)).find((x) => x.eventId === ev.eventId)!;
    const heldUnits = rows[0]!.held_units;
    const oversold = Math.max(0, unitsInAnswers - ev.capacity, heldUnits + recon.sold - ev.capacity);
    const sortedOk = [...okLat].sort((a, b) => a - b);
    return {
      shards: n,
      successfulHoldsPerSec: round((held.size / elapsedMs) * 1000, 0),
      unitsPerSec: round((unitsInAnswers / elapsedMs) * 1000, 0),
      secondsToSellOut: round(elapsedMs / 1000, 2),
      requests: lat.length,
      // The store process's CPU per hold request (refusals included), whatever else ran meanwhile.
      cpuUsPerRequest: cpuBefore === null || cpuAfter === null || lat.length === 0 ? null : Math.round((cpuAfter - cpuBefore) / lat.length),
      holds: held.size,
      p50Ms: round(percentile(sortedOk, 50)),
      p99Ms: round(percentile(sortedOk, 99)),
      refusals: codes,
      serverErrors: errors5xx,
      soldOut: soldOutAt > 0,
      oversold,
      unitsInAnswers,
      answersMatchDatabase: heldUnits === unitsInAnswers,
      inventory: {
        capacity: recon.capacity,
        available: recon.available,
        held: recon.held,
        sold: recon.sold,
        drift: recon.drift,
        counterMismatch: rows[0]!.counter_mismatch,
      },
    };
  }

  const pick = (n: number) => runs.filter((r) => r.shards === n);
  const summary = (rs: RunResult[]) => ({
    successfulHoldsPerSec: round(median(rs.map((r) => r.successfulHoldsPerSec)), 0),
    p99Ms: round(median(rs.map((r) => r.p99Ms))),
    runs: rs,
  });
  results.single = summary(pick(1));
  results.sharded = summary(pick(shards));
  const single = results.single as { successfulHoldsPerSec: number; p99Ms: number };
  const sharded = results.sharded as { successfulHoldsPerSec: number; p99Ms: number };
  const bareRps = (results.bareFastify as { reqPerSec: number }).reqPerSec;
  const ratio = round(sharded.successfulHoldsPerSec / single.successfulHoldsPerSec, 2);
  const oversold = runs.reduce((a, r) => a + r.oversold, 0);
  const drift = runs.reduce((a, r) => a + Math.abs(r.inventory.drift) + r.inventory.counterMismatch, 0);
  results.ratio = ratio;
  console.log(JSON.stringify(results, null, 2));
  console.log(
    `ga: single row ${single.successfulHoldsPerSec} holds/s p99 ${single.p99Ms} ms; ${shards} shards ${sharded.successfulHoldsPerSec} holds/s p99 ${sharded.p99Ms} ms; ` +
      `ratio ${ratio} (target >= 3); the hold statement alone ${(results.rawHoldStatement as { ratio: number }).ratio}x; ` +
      `bare Fastify ${bareRps} req/s (sharded = ${round(sharded.successfulHoldsPerSec / bareRps, 3)} of it); ` +
      `oversold ${oversold}; drift ${drift}`,
  );
}

/** A connection string with libpq startup options (e.g. `-c commit_delay=1000`) for every connection made with it. */
function withOptions(url: string, options: string): string {
  const u = new URL(url);
  u.searchParams.set('options', options);
  return u.toString();
}
