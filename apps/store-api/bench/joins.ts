import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createDb, sql } from '@onsale/shared/db';
import { AccountTokens } from '@onsale/shared/auth';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { installDataDir, installSecrets } from '@onsale/shared/install';
import { bundleWorker, startLocalEdge } from '../../edge/src/local.js';
import { loadStoreApiConfig } from '../src/env.js';
import { benchDatabase } from './database.js';
import { cpuMicros, createClient, round, runLoad, startProcess, stopProcess, summarize } from './load.js';

const root = join(import.meta.dirname, '..', '..', '..');

const USAGE = `usage: npm run bench -- joins [--seconds N] [--concurrency N] [--origin-only | --edge-only] [--join-batch N|off] [--join-alone-below N] [--join-batch-wait-ms N] [--unbatched] [--against <worker.js>] [--rounds N] [--pass-through]

Joins as a crowd makes them, against the database's own insert rate, in one run on this machine:
  inserts   single-row INSERTs in autocommit, one loop per connection of the store API's pool (DB_POOL_MAX),
            on the same database: what the database itself allows for one new row a transaction
  origin    POST /events/:id/queue on the store API in its own process, request limits, the bot gate and load
            shedding on (the product's defaults), every join a new fan with a browser's headers, its own device and
            its own address (X-Forwarded-For, the store trusting its loopback proxy)
  edge      the same joins through the edge as npm start -- --edge runs it (workerd serve behind its framing guard,
            startLocalEdge), which sends them to the same store API many to a request (POST /edge/joins)
and prints joins/s (the ratio to the insert rate; goal >= 0.5 through the edge), p50/p99, the answers by status and
code, and CPU per join of the store process, the database's backends, workerd and the framing guard.
--concurrency is the client's connections (default 200); --origin-only skips the edge, --edge-only the origin.
--join-batch is the edge's EDGE_JOIN_BATCH (default off, as the edge's own default: one origin request a join; N: up to N
joins sent to the origin in one request); --join-alone-below and --join-batch-wait-ms are the edge's
EDGE_JOIN_ALONE_BELOW (joins at the origin below which a join goes alone; 0: every join batched) and
EDGE_JOIN_BATCH_WAIT_MS (the longest a backlogged join waits for its batch) (defaults: the edge's own);
--unbatched adds the same joins through the edge with EDGE_JOIN_BATCH=off, to compare within one run.
--against <file> adds the same joins through the same edge (same settings, guard included) running another build of
the worker: another checkout's apps/edge/src/index.ts (bundled here as the edge bundles its own) or a bundled .js,
measured in turn with this build's edge in every round (which goes first alternates): an A/B of two builds in one run.
JOINS_BENCH_V8_FLAGS (space-separated) passes V8 flags to every workerd alike (e.g. --perf-basic-prof for perf).
--rounds N measures the edge (and --unbatched, --against) N times, one after the other, and sums up each one's median round: on a
loaded machine the load moves within minutes, and alternating is what makes the two comparable.
--pass-through adds the same joins through a bare pass-through worker on workerd serve (fetch(request) to the origin, no
guard): what any worker forwarding one origin request per join costs workerd, the floor of the edge's figure.`;

/** A worker that forwards each request to the origin and nothing else (the --pass-through measurement). */
const PASS_THROUGH = `export default { async fetch(req, env) {
  const url = new URL(req.url);
  return fetch(new Request(env.STORE_API_URL + url.pathname + url.search, req));
} };`;

/** A browser's headers, as the rehearsal's human fans send them (the bot gate scores these as a person). */
const BROWSER = {
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
  accept: 'application/json',
  'accept-language': 'en-GB,en;q=0.9',
};

/** A worker for --against: an entry to bundle (.ts) or a bundle (.js). */
const workerScript = async (file: string) => (file.endsWith('.ts') ? bundleWorker({ entry: file }) : readFileSync(file, 'utf8'));

/** One measurement of joins against one server. */
interface Measured {
  joinsPerSecond: number;
  ofInsertRate: number;
  p99Ms: number;
  edgeBatches?: number;
  joinsPerBatch?: number;
  cpuUsPerJoin: Record<string, number | null>;
  [k: string]: unknown;
}

/** The median round by joins/s (the lower of the middle two). */
const median = (ms: Measured[]) => [...ms].sort((a, b) => a.joinsPerSecond - b.joinsPerSecond)[Math.floor((ms.length - 1) / 2)]!;

/** CPU microseconds used so far by the given processes together (those gone since count as nothing more). */
const cpuOf = (pids: number[]) => pids.reduce((a, pid) => a + (cpuMicros(pid) ?? 0), 0);

export async function main(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      seconds: { type: 'string', default: '10' },
      concurrency: { type: 'string', default: '200' },
      'origin-only': { type: 'boolean', default: false },
      'edge-only': { type: 'boolean', default: false },
      'pass-through': { type: 'boolean', default: false },
      'join-batch': { type: 'string', default: 'off' },
      'join-alone-below': { type: 'string' },
      'join-batch-wait-ms': { type: 'string' },
      unbatched: { type: 'boolean', default: false },
      against: { type: 'string' },
      rounds: { type: 'string', default: '1' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return console.log(USAGE);
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  const rounds = Math.max(1, Number(values.rounds));
  const poolMax = loadStoreApiConfig({ ...process.env, STORE_API_PORT: '0' }).dbPoolMax;
  const bench = await benchDatabase();
  console.log(`database: ${bench.where}; ${concurrency} client connections; store pool ${poolMax}; ${seconds} s per measurement`);
  const results: Record<string, unknown> = {};
  const backends = async () =>
    (
      await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`.execute(
        bench.db,
      )
    ).rows.map((r) => r.pid);

  // --- the database's own single-row insert rate, one loop per connection of the store's pool ---
  // Its own table, made afresh (a BENCH_DATABASE_URL outlives the run), dropped at the end.
  await sql`DROP TABLE IF EXISTS bench_join_inserts`.execute(bench.db);
  await sql`CREATE TABLE bench_join_inserts (
      id bigserial PRIMARY KEY, event_id uuid NOT NULL, account_id text NOT NULL, device_hash text NOT NULL,
      joined_at timestamptz NOT NULL DEFAULT now(), UNIQUE (event_id, account_id))`.execute(bench.db);
  const inserts = createDb(bench.url, { max: poolMax, applicationName: 'bench-joins-inserts' });
  try {
    await Promise.all(Array.from({ length: poolMax }, () => sql`SELECT 1`.execute(inserts)));
    const eventId = '00000000-0000-4000-8000-000000000027';
    let n = 0;
    const pids = await backends();
    const cpu0 = cpuOf(pids);
    const { elapsedMs } = await runLoad(poolMax, seconds * 1000, async () => {
      const i = n++;
      await sql`INSERT INTO bench_join_inserts (event_id, account_id, device_hash) VALUES (${eventId}, ${`insert-${i}`}, ${`device-${i}`})`.execute(
        inserts,
      );
    });
    results.inserts = {
      perSecond: Math.round((n / elapsedMs) * 1000),
      connections: poolMax,
      databaseCpuUsPerInsert: Math.round((cpuOf(pids) - cpu0) / Math.max(1, n)),
    };
  } finally {
    await inserts.destroy();
    await sql`DROP TABLE IF EXISTS bench_join_inserts`.execute(bench.db);
  }
  console.log('inserts', results.inserts);
  const insertRate = (results.inserts as { perSecond: number }).perSecond;

  const club = JSON.parse(readFileSync(join(root, 'examples', 'club.json'), 'utf8'));
  const newEvent = async () => {
    const spec = parseEventFile({
      ...club,
      name: 'bench joins',
      fairnessMode: 'FIFO',
      onsaleAt: new Date(Date.now() - 60_000).toISOString(),
      startsAt: new Date(Date.now() + 30 * 86400_000).toISOString(),
    });
    return bench.db.transaction().execute((trx) => createEvent(trx, spec, 'bench', { signOff: true }));
  };
  const secrets = installSecrets(installDataDir());
  const accounts = new AccountTokens(secrets.authSecret);
  const store = await startProcess('apps/store-api/bench/server.ts', {
    DATABASE_URL: bench.url,
    NODE_ENV: 'development',
    DEV_AUTH: 'false',
    // The product's protections, as it runs for fans (the bench server turns them off unless told).
    RATE_LIMIT_ENABLED: 'true',
    BOT_GATE_ENABLED: 'true',
    LOAD_SHED_ENABLED: 'true',
    STORE_API_TRUST_PROXY: 'loopback',
  });
  const storeUrl = `http://127.0.0.1:${store.port}`;
  let fanSeq = 0;
  /** Batches of joins the store has answered (POST /edge/joins), from its /metrics. */
  const edgeBatches = async () => {
    const text = await (await fetch(`${storeUrl}/metrics`)).text();
    let n = 0;
    for (const line of text.split('\n'))
      if (line.startsWith('http_request_duration_seconds_count{') && line.includes('route="/edge/joins"'))
        n += Number(line.split(' ').at(-1));
    return n;
  };
  /** Joins of new fans for `seconds` against `base`; requests/s, latencies, answers, CPU per join. */
  const measure = async (base: string, cpuPids: () => Promise<Record<string, number[]>>): Promise<Measured> => {
    const ev = await newEvent();
    // Every join a new fan: prepared before the clock starts (an account token is what a signed-in fan carries).
    const prepared: Record<string, string>[] = [];
    for (let i = 0; i < Math.ceil(seconds * 8000); i++) {
      const k = fanSeq++;
      const address = `10.${100 + (k >> 16)}.${(k >> 8) & 255}.${k & 255}`;
      prepared.push({
        ...BROWSER,
        authorization: `Bearer ${(await accounts.issue(`join-bench-${process.pid}-${k}`)).token}`,
        'x-device-id': `join-bench-device-${process.pid}-${k}`,
        'x-forwarded-for': address,
        'cf-connecting-ip': address,
      });
    }
    const client = createClient(base, concurrency);
    await client.connect(concurrency);
    // A second of joins unmeasured first: V8 compiles the route's path (a separate event, so none counts twice).
    const warm = await newEvent();
    let w = prepared.length;
    await runLoad(concurrency, 1000, async () => {
      const h = prepared[--w];
      // A connection the server closed as it was reused fails a join here; the warm-up does not count it.
      if (h && w > prepared.length / 2) await client.request('POST', `/events/${warm.eventId}/queue`, h).catch(() => undefined);
    });
    const batches0 = await edgeBatches();
    const groups = await cpuPids();
    const before = Object.fromEntries(Object.entries(groups).map(([k, pids]) => [k, cpuOf(pids)]));
    let next = 0;
    const lat: number[] = [];
    const answers: Record<string, number> = {};
    const { elapsedMs } = await runLoad(concurrency, seconds * 1000, async () => {
      const h = prepared[next++];
      if (!h || next >= w) return;
      // A join whose connection failed is counted by its error's code (a server closing a reused keep-alive
      // connection, say) rather than ending the bench with everything measured so far.
      const r = await client.request('POST', `/events/${ev.eventId}/queue`, h).catch((e: Error & { code?: string }) => e);
      const key =
        r instanceof Error
          ? `no answer ${r.code ?? r.message}`
          : r.status === 200
            ? '200'
            : `${r.status} ${(r.body as { error?: string } | null)?.error ?? ''}`.trim();
      answers[key] = (answers[key] ?? 0) + 1;
      if (!(r instanceof Error) && r.status === 200) lat.push(r.ms);
    });
    client.close();
    const batches = (await edgeBatches()) - batches0;
    const ok = answers['200'] ?? 0;
    const cpuUsPerJoin = Object.fromEntries(
      Object.entries(groups).map(([k, pids]) => [k, ok === 0 ? null : Math.round((cpuOf(pids) - before[k]!) / ok)]),
    );
    const rows = await sql<{ n: string }>`SELECT count(*)::text AS n FROM queue_entries WHERE event_id = ${ev.eventId}`.execute(bench.db);
    return {
      joinsPerSecond: Math.round((ok / elapsedMs) * 1000),
      ofInsertRate: round(((ok / elapsedMs) * 1000) / insertRate, 2),
      ...summarize(lat),
      answers,
      queueEntries: Number(rows.rows[0]!.n),
      // Requests the store answered on POST /edge/joins (the edge's batches) and the joins answered per batch.
      ...(batches > 0
        ? { edgeBatches: batches, joinsPerBatch: round(Object.values(answers).reduce((a, b) => a + b, 0) / batches, 1) }
        : {}),
      cpuUsPerJoin,
    };
  };
  try {
    if (!values['edge-only']) {
      results.origin = await measure(storeUrl, async () => ({ store: [store.child.pid!], database: await backends() }));
      console.log('origin', results.origin);
    }
    if (!values['origin-only']) {
      const v8Flags = (process.env.JOINS_BENCH_V8_FLAGS ?? '').split(/\s+/).filter((f) => f !== '');
      const edgeOptions = {
        storeApiUrl: storeUrl,
        queueTokenSecret: secrets.queueTokenSecret,
        authSecret: secrets.authSecret,
        joinBatch: values['join-batch'] === 'off' ? ('off' as const) : Number(values['join-batch']),
        ...(values['join-alone-below'] === undefined ? {} : { joinAloneBelow: Number(values['join-alone-below']) }),
        ...(values['join-batch-wait-ms'] === undefined ? {} : { joinBatchWaitMs: Number(values['join-batch-wait-ms']) }),
        ...(v8Flags.length > 0 ? { v8Flags } : {}),
      };
      const edge = await startLocalEdge(edgeOptions);
      // Another build of the worker, the same settings (--against): an A/B of two builds within one run.
      const against = values.against ? await startLocalEdge({ ...edgeOptions, script: await workerScript(values.against) }) : null;
      // The same edge with every join proxied alone (EDGE_JOIN_BATCH=off), for a comparison within one run.
      const alone = values.unbatched
        ? await startLocalEdge({
            storeApiUrl: storeUrl,
            queueTokenSecret: secrets.queueTokenSecret,
            authSecret: secrets.authSecret,
            joinBatch: 'off',
            ...(v8Flags.length > 0 ? { v8Flags } : {}),
          })
        : null;
      const groupsOf = (e: { pid: number; guardPid?: number | undefined }) => async () => ({
        edge: [e.pid],
        ...(e.guardPid === undefined ? {} : { 'framing guard': [e.guardPid] }),
        store: [store.child.pid!],
        database: await backends(),
      });
      try {
        // --rounds N: the two measured one after the other N times (a loaded machine's load moves within minutes);
        // the summary gives each one's median round (by joins/s).
        const edgeRounds: Measured[] = [];
        const aloneRounds: Measured[] = [];
        const againstRounds: Measured[] = [];
        for (let r = 0; r < rounds; r++) {
          // With --against, which of the two builds goes first alternates by round.
          if (against && r % 2 === 1) {
            againstRounds.push(await measure(against.url, groupsOf(against)));
            console.log(`against (round ${r + 1})`, againstRounds.at(-1));
          }
          edgeRounds.push(await measure(edge.url, groupsOf(edge)));
          console.log(`edge${rounds > 1 ? ` (round ${r + 1})` : ''}`, edgeRounds.at(-1));
          if (against && r % 2 === 0) {
            againstRounds.push(await measure(against.url, groupsOf(against)));
            console.log(`against (round ${r + 1})`, againstRounds.at(-1));
          }
          if (alone) {
            aloneRounds.push(await measure(alone.url, groupsOf(alone)));
            console.log(`unbatched${rounds > 1 ? ` (round ${r + 1})` : ''}`, aloneRounds.at(-1));
          }
        }
        results.edge = median(edgeRounds);
        if (alone) results.unbatched = median(aloneRounds);
        if (against) results.against = median(againstRounds);
        if (rounds > 1 || against)
          results.rounds = {
            edge: edgeRounds,
            ...(alone ? { unbatched: aloneRounds } : {}),
            ...(against ? { against: againstRounds } : {}),
          };
      } finally {
        await edge.close();
        await alone?.close();
        await against?.close();
      }
    }
    if (values['pass-through']) {
      const bare = await startLocalEdge({
        storeApiUrl: storeUrl,
        queueTokenSecret: secrets.queueTokenSecret,
        authSecret: secrets.authSecret,
        script: PASS_THROUGH,
        framingGuard: false,
      });
      try {
        results.passThrough = await measure(bare.url, async () => ({
          workerd: [bare.pid],
          store: [store.child.pid!],
          database: await backends(),
        }));
        console.log('pass-through', results.passThrough);
      } finally {
        await bare.close();
      }
    }
  } finally {
    await stopProcess(store.child);
    await bench.close();
  }
  console.log(JSON.stringify(results, null, 2));
  const o = results.origin as
    { joinsPerSecond: number; ofInsertRate: number; p99Ms: number; cpuUsPerJoin: Record<string, number | null> } | undefined;
  const e = results.edge as (NonNullable<typeof o> & { edgeBatches?: number; joinsPerBatch?: number }) | undefined;
  const pt = results.passThrough as NonNullable<typeof o> | undefined;
  const u = results.unbatched as NonNullable<typeof o> | undefined;
  const cpu = (c: Record<string, number | null>) =>
    Object.entries(c)
      .map(([k, v]) => `${k} ${v ?? 'n/a'} us`)
      .join(', ') + `; the product ${Object.values(c).reduce<number>((a, v) => a + (v ?? 0), 0)} us`;
  console.log(`\ninserts: ${insertRate}/s (${poolMax} connections, autocommit)`);
  if (o)
    console.log(
      `joins at the origin: ${o.joinsPerSecond}/s, ${o.ofInsertRate} of the insert rate, p99 ${o.p99Ms} ms; CPU per join: ${cpu(o.cpuUsPerJoin)}`,
    );
  if (e)
    console.log(
      `joins through the edge: ${e.joinsPerSecond}/s, ${e.ofInsertRate} of the insert rate (goal >= 0.5: ${e.ofInsertRate >= 0.5 ? 'met' : 'not met'}), p99 ${e.p99Ms} ms; CPU per join: ${cpu(e.cpuUsPerJoin)}; ${e.edgeBatches ? `${e.edgeBatches} batches to the origin, ${e.joinsPerBatch} answers each (joins sent alone counted in)` : 'one origin request a join'}`,
    );
  if (u)
    console.log(
      `joins through the edge, each alone (EDGE_JOIN_BATCH=off): ${u.joinsPerSecond}/s, ${u.ofInsertRate} of the insert rate, p99 ${u.p99Ms} ms; CPU per join: ${cpu(u.cpuUsPerJoin)}`,
    );
  const rr = results.rounds as { edge: Measured[]; unbatched?: Measured[]; against?: Measured[] } | undefined;
  const ag = results.against as NonNullable<typeof o> | undefined;
  if (ag)
    console.log(
      `joins through the edge, the --against build: ${ag.joinsPerSecond}/s, ${ag.ofInsertRate} of the insert rate, p99 ${ag.p99Ms} ms; CPU per join: ${cpu(ag.cpuUsPerJoin)}`,
    );
  if (e && rr?.against) {
    const product = (m: Measured) => Object.values(m.cpuUsPerJoin).reduce<number>((a, v) => a + (v ?? 0), 0);
    const pairs = rr.edge.map((m, i) => [m, rr.against![i]!] as const);
    console.log(
      `this build / the --against build, by round: joins/s ${pairs.map(([b, a]) => round(b.joinsPerSecond / a.joinsPerSecond, 2)).join(', ')}; ` +
        `the product's CPU a join ${pairs.map(([b, a]) => round(product(b) / product(a), 2)).join(', ')}; ` +
        `workerd's ${pairs.map(([b, a]) => round((b.cpuUsPerJoin.edge ?? 0) / (a.cpuUsPerJoin.edge ?? 1), 2)).join(', ')}`,
    );
  }
  if (e && u) {
    // Each round's batched against unbatched, measured minutes apart at most: the pairs a loaded machine allows comparing.
    const product = (m: Measured) => Object.values(m.cpuUsPerJoin).reduce<number>((a, v) => a + (v ?? 0), 0);
    const pairs = rr?.unbatched ? rr.edge.map((m, i) => [m, rr.unbatched![i]!] as const) : [[e as Measured, u as Measured] as const];
    console.log(
      `batched / unbatched, by round: joins/s ${pairs.map(([b, a]) => round(b.joinsPerSecond / a.joinsPerSecond, 2)).join(', ')}; ` +
        `the product's CPU a join ${pairs.map(([b, a]) => round(product(b) / product(a), 2)).join(', ')}; ` +
        `workerd's ${pairs.map(([b, a]) => round((b.cpuUsPerJoin.edge ?? 0) / (a.cpuUsPerJoin.edge ?? 1), 2)).join(', ')}`,
    );
  }
  if (pt)
    console.log(
      `joins through a bare pass-through worker (workerd serve, no guard): ${pt.joinsPerSecond}/s, ${pt.ofInsertRate} of the insert rate, p99 ${pt.p99Ms} ms; CPU per join: ${cpu(pt.cpuUsPerJoin)}`,
    );
}
