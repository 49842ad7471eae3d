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
import { createRawClient, requestBytes } from './http1.js';
import { cpuMicros, createClient, protectedStoreEnv, round, runLoad, startProcess, stopProcess } from './load.js';

const root = join(import.meta.dirname, '..', '..', '..');

const USAGE = `usage: npm run bench -- joins [--seconds N] [--concurrency N] [--origin-only | --edge-only] [--join-batch N|off] [--join-alone-below N] [--join-batch-wait-ms N] [--unbatched] [--against <worker.js>] [--rounds N] [--pass-through] [--client raw|undici|both]

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
guard): what any worker forwarding one origin request per join costs workerd, the floor of the edge's figure.
--client is the bench's own HTTP client: raw (default: a keep-alive HTTP/1.1 client on node:net, each join's request
bytes built before the clock starts, bench/http1.ts), undici (the Pool the other benches use), or both (every
measurement made with each, the order alternating; the summary gives both; first, each client alone against a bare
Fastify route in its own process, three rounds: its own CPU a request where the server costs little). Every
measurement prints this process's
own CPU per join (user + system over the measured run, process.cpuUsage) beside the product's, and its ratio to it:
the client shares the two cores with what it measures (goal: at most 1/5 of the product's).`;

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
  /** This process's own CPU per join answered 200 (the client), and its ratio to the product's. */
  clientCpuUsPerJoin: number | null;
  clientOfProduct: number | null;
  /** With --client both: the same measurement made with the other client. */
  undiciClient?: Measured;
  [k: string]: unknown;
}

type ClientKind = 'raw' | 'undici';

/** The product's CPU a join: every process measured but this one. */
const productCpu = (m: { cpuUsPerJoin: Record<string, number | null> }) =>
  Object.values(m.cpuUsPerJoin).reduce<number>((a, v) => a + (v ?? 0), 0);

/** p50/p99/max of the first `n` latencies (sorted in place). */
function summarizeF64(lat: Float64Array, n: number) {
  const s = lat.subarray(0, n).sort();
  const at = (p: number) => (n === 0 ? 0 : s[Math.min(n - 1, Math.floor((p / 100) * n))]!);
  return { count: n, p50Ms: round(at(50)), p99Ms: round(at(99)), maxMs: round(n === 0 ? 0 : s[n - 1]!) };
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
      client: { type: 'string', default: 'raw' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return console.log(USAGE);
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  const rounds = Math.max(1, Number(values.rounds));
  if (!['raw', 'undici', 'both'].includes(values.client)) throw new Error(`--client is raw, undici or both, not ${values.client}`);
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
  // The product's protections on, as it runs for fans.
  const store = await startProcess('apps/store-api/bench/server.ts', protectedStoreEnv(bench.url));
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
  /**
   * Joins of new fans for `seconds` against `base` with the `kind` of client; requests/s, latencies, answers, CPU per
   * join of the product's processes and of this one (the client).
   */
  const measureWith = async (kind: ClientKind, base: string, cpuPids: () => Promise<Record<string, number[]>>): Promise<Measured> => {
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
    // A second of joins unmeasured first: V8 compiles the route's path (a separate event, so none counts twice).
    // Its fans are taken from the end; the measured joins from the start, up to where the warm-up stopped.
    const warm = await newEvent();
    let w = prepared.length;
    let ok = 0;
    const answers: Record<string, number> = {};
    let lat: Float64Array;
    let elapsedMs: number;
    let before: Record<string, number>;
    let groups: Record<string, number[]>;
    let batches0: number;
    let own: NodeJS.CpuUsage;
    if (kind === 'raw') {
      const client = createRawClient(base, concurrency, { timeoutMs: 30_000 });
      try {
        await client.connect(() => requestBytes('GET', '/healthz', client.host, {}));
        const warmPath = `/events/${warm.eventId}/queue`;
        await client.run(
          1000,
          () => (w > prepared.length / 2 ? requestBytes('POST', warmPath, client.host, prepared[--w]!) : undefined),
          () => undefined,
        );
        // Each measured join's request, whole, before the clock starts.
        const path = `/events/${ev.eventId}/queue`;
        const requests = prepared.slice(0, w).map((h) => requestBytes('POST', path, client.host, h));
        lat = new Float64Array(requests.length);
        batches0 = await edgeBatches();
        groups = await cpuPids();
        before = Object.fromEntries(Object.entries(groups).map(([k, pids]) => [k, cpuOf(pids)]));
        let next = 0;
        own = process.cpuUsage();
        ({ elapsedMs } = await client.run(
          seconds * 1000,
          () => requests[next++],
          (status, code, ms) => {
            if (status === 200) {
              lat[ok++] = ms;
              return;
            }
            // No answer (a server closing a reused keep-alive connection, say) is counted by its code.
            const key = status === 0 ? `no answer ${code}` : `${status} ${code}`.trim();
            answers[key] = (answers[key] ?? 0) + 1;
          },
        ));
        own = process.cpuUsage(own);
      } finally {
        client.close();
      }
    } else {
      const client = createClient(base, concurrency);
      try {
        await client.connect(concurrency);
        await runLoad(concurrency, 1000, async () => {
          const h = prepared[--w];
          // A connection the server closed as it was reused fails a join here; the warm-up does not count it.
          if (h && w > prepared.length / 2) await client.request('POST', `/events/${warm.eventId}/queue`, h).catch(() => undefined);
        });
        batches0 = await edgeBatches();
        groups = await cpuPids();
        before = Object.fromEntries(Object.entries(groups).map(([k, pids]) => [k, cpuOf(pids)]));
        let next = 0;
        const latencies: number[] = [];
        own = process.cpuUsage();
        ({ elapsedMs } = await runLoad(concurrency, seconds * 1000, async () => {
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
          if (key === '200') ok++;
          else answers[key] = (answers[key] ?? 0) + 1;
          if (!(r instanceof Error) && r.status === 200) latencies.push(r.ms);
        }));
        own = process.cpuUsage(own);
        lat = Float64Array.from(latencies);
      } finally {
        client.close();
      }
    }
    const batches = (await edgeBatches()) - batches0;
    const cpuUsPerJoin = Object.fromEntries(
      Object.entries(groups).map(([k, pids]) => [k, ok === 0 ? null : Math.round((cpuOf(pids) - before[k]!) / ok)]),
    );
    const clientCpuUsPerJoin = ok === 0 ? null : Math.round((own.user + own.system) / ok);
    const product = productCpu({ cpuUsPerJoin });
    const rows = await sql<{ n: string }>`SELECT count(*)::text AS n FROM queue_entries WHERE event_id = ${ev.eventId}`.execute(bench.db);
    const all = { '200': ok, ...answers };
    return {
      client: kind,
      joinsPerSecond: Math.round((ok / elapsedMs) * 1000),
      ofInsertRate: round(((ok / elapsedMs) * 1000) / insertRate, 2),
      ...summarizeF64(lat, ok),
      answers: all,
      queueEntries: Number(rows.rows[0]!.n),
      // Requests the store answered on POST /edge/joins (the edge's batches) and the joins answered per batch.
      ...(batches > 0 ? { edgeBatches: batches, joinsPerBatch: round(Object.values(all).reduce((a, b) => a + b, 0) / batches, 1) } : {}),
      cpuUsPerJoin,
      clientCpuUsPerJoin,
      clientOfProduct: clientCpuUsPerJoin === null || product === 0 ? null : round(clientCpuUsPerJoin / product, 2),
    };
  };
  /** With --client both, which client goes first alternates from one measurement to the next. */
  let measurements = 0;
  const measure = async (base: string, cpuPids: () => Promise<Record<string, number[]>>): Promise<Measured> => {
    if (values.client !== 'both') return measureWith(values.client as ClientKind, base, cpuPids);
    if (measurements++ % 2 === 0) {
      const undiciClient = await measureWith('undici', base, cpuPids);
      return { ...(await measureWith('raw', base, cpuPids)), undiciClient };
    }
    const raw = await measureWith('raw', base, cpuPids);
    return { ...raw, undiciClient: await measureWith('undici', base, cpuPids) };
  };
  /**
   * With --client both: each client alone against a bare Fastify route in a process of its own (bench/bare-server.ts,
   * POST /bare, a 100-byte answer) with joins' headers (a browser's, a bearer token, a device, an address): the
   * client's own CPU a request where the server costs little and answers fast, in rounds alternating which goes
   * first, after a second of each unmeasured.
   */
  const clientFloor = async () => {
    const bare = await startProcess('apps/store-api/bench/bare-server.ts', {});
    try {
      const base = `http://127.0.0.1:${bare.port}`;
      const fans: Record<string, string>[] = [];
      for (let k = 0; k < 2000; k++) {
        const address = `10.200.${(k >> 8) & 255}.${k & 255}`;
        fans.push({
          ...BROWSER,
          authorization: `Bearer ${(await accounts.issue(`join-bench-floor-${process.pid}-${k}`)).token}`,
          'x-device-id': `join-bench-floor-device-${process.pid}-${k}`,
          'x-forwarded-for': address,
          'cf-connecting-ip': address,
        });
      }
      const once = async (kind: ClientKind, ms: number) => {
        let ok = 0;
        let i = 0;
        let elapsedMs: number;
        let own: NodeJS.CpuUsage;
        const server0 = cpuMicros(bare.child.pid!) ?? 0;
        if (kind === 'raw') {
          const c = createRawClient(base, concurrency);
          try {
            const requests = fans.map((h) => requestBytes('POST', '/bare', c.host, h));
            await c.connect(() => requestBytes('GET', '/healthz', c.host, {}));
            own = process.cpuUsage();
            ({ elapsedMs } = await c.run(
              ms,
              () => requests[i++ % requests.length],
              (status) => void (status === 200 && ok++),
            ));
            own = process.cpuUsage(own);
          } finally {
            c.close();
          }
        } else {
          const c = createClient(base, concurrency);
          try {
            await c.connect(concurrency);
            own = process.cpuUsage();
            ({ elapsedMs } = await runLoad(concurrency, ms, async () => {
              const r = await c.request('POST', '/bare', fans[i++ % fans.length]!).catch(() => null);
              if (r?.status === 200) ok++;
            }));
            own = process.cpuUsage(own);
          } finally {
            c.close();
          }
        }
        return {
          client: kind,
          perSecond: Math.round((ok / elapsedMs) * 1000),
          clientCpuUsPerRequest: ok === 0 ? null : Math.round((own.user + own.system) / ok),
          serverCpuUsPerRequest: ok === 0 ? null : Math.round(((cpuMicros(bare.child.pid!) ?? 0) - server0) / ok),
        };
      };
      await once('undici', 1000);
      await once('raw', 1000);
      const rounds: Awaited<ReturnType<typeof once>>[] = [];
      for (let r = 0; r < 3; r++)
        for (const kind of r % 2 === 0 ? (['undici', 'raw'] as const) : (['raw', 'undici'] as const)) rounds.push(await once(kind, 2000));
      return rounds;
    } finally {
      await stopProcess(bare.child);
    }
  };
  try {
    if (values.client === 'both') {
      results.clientFloor = await clientFloor();
      console.log('client floor (a bare route)', results.clientFloor);
    }
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
  const o = results.origin as Measured | undefined;
  const e = results.edge as Measured | undefined;
  const pt = results.passThrough as Measured | undefined;
  const u = results.unbatched as Measured | undefined;
  // The product's processes, then this process's own (the client), and with --client both the undici client's run.
  const client = (m: Measured) =>
    `the client (this process, ${String(m.client)}) ${m.clientCpuUsPerJoin ?? 'n/a'} us, ${m.clientOfProduct ?? 'n/a'} of the product's`;
  const cpu = (m: Measured) =>
    Object.entries(m.cpuUsPerJoin)
      .map(([k, v]) => `${k} ${v ?? 'n/a'} us`)
      .join(', ') +
    `; the product ${productCpu(m)} us; ${client(m)}` +
    (m.undiciClient
      ? ` [with --client undici: ${m.undiciClient.joinsPerSecond}/s, ${m.undiciClient.ofInsertRate} of the insert rate, p99 ${m.undiciClient.p99Ms} ms, the product ${productCpu(m.undiciClient)} us, ${client(m.undiciClient)}]`
      : '');
  console.log(`\ninserts: ${insertRate}/s (${poolMax} connections, autocommit)`);
  const cf = results.clientFloor as { client: string; perSecond: number; clientCpuUsPerRequest: number | null }[] | undefined;
  if (cf)
    console.log(
      `the client alone against a bare route, its own CPU a request by round: ${['raw', 'undici']
        .map(
          (k) =>
            `${k} ${cf
              .filter((x) => x.client === k)
              .map((x) => `${x.clientCpuUsPerRequest ?? 'n/a'} us (${x.perSecond}/s)`)
              .join(', ')}`,
        )
        .join('; ')}`,
    );
  if (o)
    console.log(
      `joins at the origin: ${o.joinsPerSecond}/s, ${o.ofInsertRate} of the insert rate, p99 ${o.p99Ms} ms; CPU per join: ${cpu(o)}`,
    );
  if (e)
    console.log(
      `joins through the edge: ${e.joinsPerSecond}/s, ${e.ofInsertRate} of the insert rate (goal >= 0.5: ${e.ofInsertRate >= 0.5 ? 'met' : 'not met'}), p99 ${e.p99Ms} ms; CPU per join: ${cpu(e)}; ${e.edgeBatches ? `${e.edgeBatches} batches to the origin, ${e.joinsPerBatch} answers each (joins sent alone counted in)` : 'one origin request a join'}`,
    );
  if (u)
    console.log(
      `joins through the edge, each alone (EDGE_JOIN_BATCH=off): ${u.joinsPerSecond}/s, ${u.ofInsertRate} of the insert rate, p99 ${u.p99Ms} ms; CPU per join: ${cpu(u)}`,
    );
  const rr = results.rounds as { edge: Measured[]; unbatched?: Measured[]; against?: Measured[] } | undefined;
  const ag = results.against as Measured | undefined;
  if (ag)
    console.log(
      `joins through the edge, the --against build: ${ag.joinsPerSecond}/s, ${ag.ofInsertRate} of the insert rate, p99 ${ag.p99Ms} ms; CPU per join: ${cpu(ag)}`,
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
    const pairs = rr?.unbatched ? rr.edge.map((m, i) => [m, rr.unbatched![i]!] as const) : [[e, u] as const];
    console.log(
      `batched / unbatched, by round: joins/s ${pairs.map(([b, a]) => round(b.joinsPerSecond / a.joinsPerSecond, 2)).join(', ')}; ` +
        `the product's CPU a join ${pairs.map(([b, a]) => round(product(b) / product(a), 2)).join(', ')}; ` +
        `workerd's ${pairs.map(([b, a]) => round((b.cpuUsPerJoin.edge ?? 0) / (a.cpuUsPerJoin.edge ?? 1), 2)).join(', ')}`,
    );
  }
  if (pt)
    console.log(
      `joins through a bare pass-through worker (workerd serve, no guard): ${pt.joinsPerSecond}/s, ${pt.ofInsertRate} of the insert rate, p99 ${pt.p99Ms} ms; CPU per join: ${cpu(pt)}`,
    );
}
