import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import { sql, type Db } from '@onsale/shared/db';
import { AccountTokens } from '@onsale/shared/auth';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { addWebhookEndpoint, setWebhookEndpointActive } from '@onsale/shared/notify';
import { emitAvailability, insertJoins, normalizeCriteria, waitlistCriteriaSchema, type ReturnedSeat } from '@onsale/shared/waitlist';
import { installDataDir, installSecrets } from '@onsale/shared/install';
import { benchDatabase, type BenchDatabase } from './database.js';
import { createClient, percentile, round, runLoad, startProcess, stopProcess, summarize } from './load.js';

const USAGE = `usage: npm run bench -- waitlist [--rows N] [--listings N] [--hot N] [--join-seconds N] [--clients N]
                           [--join-listings N] [--page-size N] [--chunk-size N] [--worker-concurrency N] [--variants P:C:W,...]

The waitlist at catalog scale, in one run on this machine (a scratch database: BENCH_DATABASE_URL, else a new
database on the local PostgreSQL, dropped afterwards):
  load       --rows waitlist entries (default 10,000,000, hot listing included) over --listings listings
             (default 100,000), one hot listing with --hot entries (default 200,000), loaded server-side
             (INSERT ... SELECT generate_series, FIFO time order, skewed listing sizes, varied criteria);
             rows/s, then VACUUM ANALYZE and bytes per row (table and indexes of every partition)
  joins      PUT /listings/:id/waitlist on a store API process, --clients concurrent clients (default 200) for
             --join-seconds (default 10), distinct fans over --join-listings listings (default 1,000) and ~10%
             repeats, in 1-s windows alternating with a bare Fastify PUT route (the HTTP limit); beside the join's
             SQL statement straight through pg (the SQL limit)
  fan-out    one availability event on the hot listing (4 seats come back; every entry matches): time to all
             notifications enqueued (availability event DONE) and to all delivered to a local webhook sink, the
             worker's peak RSS; beside the raw INSERT of as many rows through pg (the SQL limit). The worker runs
             in its own process with --worker-concurrency (default 8); --page-size / --chunk-size are the
             fan-out's public options (defaults: the library's, 10,000 and 500); --variants compares settings
             in one run, e.g. --variants 10000:500:8,50000:2000:8 (page:chunk:concurrency, one event each)
  on read    GET /me/waitlist/matches for fans of the hot listing (fan-out on read), p50/p99

Quick run: npm run bench -- waitlist --rows 1000000 --listings 10000   (here: load 13-25 s, 4-7 minutes in all)
Default size (10,000,000 rows): load 280-490 s here, 7-14 minutes in all; about 3 GB of table and indexes.
The figures swing with whatever else runs on this shared machine: read them beside the limits printed next to them.`;

const DAY_MS = 86_400_000;
const TTL_DAYS = 28;
/** Rows per load statement (each prints a progress line). */
const SLICE_ROWS = 500_000;
/** Load statements in flight at once (one per core on this machine). */
const LOAD_PARALLEL = 2;
/** The joins' SQL limit: rows per statement and statements at once (GroupCommit: up to 500 rows, 3 batches). */
const RAW_BATCH = 200;
const RAW_CONNECTIONS = 3;

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const secs = (ms: number) => round(ms / 1000, 2);
const log = (s: string) => console.log(s);

/** A v4-shaped uuid derived from a listing number, the same in SQL and here (zod's uuid checks version/variant). */
const listingIdSql = (n: string) =>
  `(overlay(overlay(md5('bench-listing-' || (${n})::text) placing '4' from 13) placing '8' from 17)::uuid)`;
function listingId(n: number): string {
  const h = createHash('md5').update(`bench-listing-${n}`).digest('hex').split('');
  h[12] = '4';
  h[16] = '8';
  const s = h.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}
const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
const coprimeTo = (n: number, candidates: number[]) => candidates.find((p) => gcd(p, n) === 1) ?? 1;

function readRss(pid: number | undefined): { rssKb: number; hwmKb: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    return { rssKb: kb('VmRSS'), hwmKb: kb('VmHWM') };
  } catch {
    return { rssKb: 0, hwmKb: 0 };
  }
}

export async function main(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      rows: { type: 'string', default: '10000000' },
      listings: { type: 'string', default: '100000' },
      hot: { type: 'string', default: '200000' },
      'join-seconds': { type: 'string', default: '10' },
      clients: { type: 'string', default: '200' },
      'join-listings': { type: 'string', default: '1000' },
      'page-size': { type: 'string' },
      'chunk-size': { type: 'string' },
      'worker-concurrency': { type: 'string', default: '8' },
      variants: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return console.log(USAGE);
  const rows = Number(values.rows);
  const listings = Number(values.listings);
  const hot = Number(values.hot);
  const joinSeconds = Number(values['join-seconds']);
  const clients = Number(values.clients);
  const joinListingCount = Math.min(Number(values['join-listings']), listings - 1);
  const workerConcurrency = Number(values['worker-concurrency']);
  const pageSize = values['page-size'] ? Number(values['page-size']) : undefined;
  const chunkSize = values['chunk-size'] ? Number(values['chunk-size']) : undefined;
  // Fan-out settings to compare in this run, one availability event each: "page:chunk:concurrency,..." (an empty
  // field is the library default / the flag's value). The first is the one the summary judges.
  const variants: { pageSize?: number; chunkSize?: number; workerConcurrency: number }[] = values.variants
    ? values.variants.split(',').map((v) => {
        const [p, c, w] = v.split(':');
        return {
          pageSize: p ? Number(p) : pageSize,
          chunkSize: c ? Number(c) : chunkSize,
          workerConcurrency: w ? Number(w) : workerConcurrency,
        };
      })
    : [{ pageSize, chunkSize, workerConcurrency }];
  for (const [k, v] of Object.entries({ rows, listings, hot, joinSeconds, clients, joinListingCount, workerConcurrency }))
    if (!Number.isInteger(v) || v < 1) throw new Error(`--${k}: a positive integer, got ${v}`);
  if (hot >= rows) throw new Error('--hot must be below --rows');
  if (listings < 2) throw new Error('--listings must be at least 2 (the hot one and a cold one)');

  const bench = await benchDatabase();
  const children: ChildProcess[] = [];
  const first = variants[0]!;
  const results: Record<string, any> = {
    config: {
      rows,
      listings,
      hot,
      joinSeconds,
      clients,
      joinListings: joinListingCount,
      workerConcurrency: first.workerConcurrency,
      pageSize: first.pageSize ?? 'default (10000)',
      chunkSize: first.chunkSize ?? 'default (500)',
    },
  };
  log(`database: ${bench.where}`);
  log(
    `rows ${fmt(rows)} over ${fmt(listings)} listings, hot listing ${fmt(hot)} entries; joins ${clients} clients x ${joinSeconds} s; worker concurrency ${workerConcurrency}`,
  );
  try {
    const hotEvent = await createHotEvent(bench.db);
    results.load = await load(bench, { rows, listings, hot, hotListingId: hotEvent.listingId, hotDate: hotEvent.date });
    results.joins = await joins(bench, { listings, joinListingCount, joinSeconds, clients, children });
    const runs = [];
    for (const v of variants) runs.push(await fanout(bench, { hot, hotEvent, ...v, children }));
    results.fanout = runs[0];
    if (runs.length > 1)
      results.fanoutVariants = runs.map((f) => ({
        ...f.settings,
        enqueuedSeconds: f.enqueuedSeconds,
        deliveredSeconds: f.deliveredSeconds,
        sqlLimitFifoSeconds: f.sqlLimit.loggedFifoInsertSelectSeconds,
        ratioToFifo: f.sqlLimit.ratioToFifoInsertSelect,
        vmHwmMb: f.workerRss.vmHwmMb,
        pages: f.pages,
      }));
    results.onRead = await onRead(bench, { hotListingId: hotEvent.listingId, children });
  } finally {
    // Ignored on purpose: a child that does not stop is killed with the benchmark's process group.
    for (const c of children) if (c.exitCode === null && c.signalCode === null) await stopProcess(c).catch(() => {});
    await bench.close();
  }
  printSummary(results);
}

// ---------------------------------------------------------------------------------------------------------------
// The hot listing: one real event (400 seats: A at 90.00, B at 50.00), all held but 4 adjacent seats in A. Before
// each measured availability event a fan holds those 4 (holdReturningSeats); the event is that fan letting them go.

interface HotEvent {
  eventId: string;
  listingId: string;
  date: string;
}

async function createHotEvent(db: Db): Promise<HotEvent> {
  const startsAt = new Date(Date.now() + 20 * DAY_MS);
  const spec = parseEventFile({
    name: 'Bench hot show',
    venueName: 'Arena',
    listing: { name: 'Bench hot listing' },
    startsAt: startsAt.toISOString(),
    onsaleAt: new Date(Date.now() - 3_600_000).toISOString(),
    fairnessMode: 'FIFO',
    priceLevels: [
      { code: 'P1', name: 'Front', priceCents: 9000 },
      { code: 'P2', name: 'Back', priceCents: 5000 },
    ],
    sections: [
      { code: 'A', priceLevel: 'P1', qualityRank: 1, rowCount: 10, seatsPerRow: 20 },
      { code: 'B', priceLevel: 'P2', qualityRank: 2, rowCount: 10, seatsPerRow: 20 },
    ],
  });
  const ev = await db.transaction().execute((trx) => createEvent(trx, spec, 'bench', { signOff: true }));
  const crowd = randomUUID();
  await db.transaction().execute(async (trx) => {
    await sql`INSERT INTO accounts (id) VALUES ('bench-crowd'), ('bench-returner') ON CONFLICT DO NOTHING`.execute(trx);
    await sql`INSERT INTO holds (id, event_id, account_id, section_code, quantity, status, expires_at)
              VALUES (${crowd}, ${ev.eventId}, 'bench-crowd', NULL, ${ev.capacity - 4}, 'HELD', now() + interval '1 day')`.execute(trx);
    await sql`UPDATE seats SET status = 'HELD', hold_id = ${crowd}, expires_at = now() + interval '1 day'
              WHERE event_id = ${ev.eventId} AND id NOT IN (
                SELECT id FROM seats WHERE event_id = ${ev.eventId} AND section_code = 'A' ORDER BY row_index, seat_number LIMIT 4 OFFSET 8)`.execute(
      trx,
    );
  });
  return { eventId: ev.eventId, listingId: ev.listingId, date: startsAt.toISOString().slice(0, 10) };
}

/** A fan takes the 4 seats still on sale (set up before each measured availability event; not timed). */
async function holdReturningSeats(db: Db, eventId: string): Promise<string> {
  const id = randomUUID();
  await db.transaction().execute(async (trx) => {
    await sql`INSERT INTO holds (id, event_id, account_id, section_code, quantity, status, expires_at)
              VALUES (${id}, ${eventId}, 'bench-returner', 'A', 4, 'HELD', now() + interval '1 day')`.execute(trx);
    const r = await sql`UPDATE seats SET status = 'HELD', hold_id = ${id}, expires_at = now() + interval '1 day'
                        WHERE event_id = ${eventId} AND status = 'AVAILABLE'`.execute(trx);
    if (Number(r.numAffectedRows) !== 4) throw new Error(`expected 4 seats on sale, found ${r.numAffectedRows}`);
  });
  return id;
}

// ---------------------------------------------------------------------------------------------------------------
// 1. Load

async function load(bench: BenchDatabase, o: { rows: number; listings: number; hot: number; hotListingId: string; hotDate: string }) {
  const db = bench.db;
  const T = o.rows;
  const cold = T - o.hot;
  const Lc = o.listings - 1; // cold listings, numbered 0..Lc-1 (the hot one is the event's own listing)
  const stride = Math.floor(T / o.hot); // row i is the hot listing's when i % stride = 0 and i < hot * stride
  const A = Math.max(o.hot, Math.ceil(cold / 5)); // fans: each on about 5 cold listings (and some on the hot one)
  const step = coprimeTo(Lc, [7919, 104729, 1299709, 15485863]);
  const P = coprimeTo(A, [9973, 7907, 6121, 4999, 3571]);
  const windowMs = (TTL_DAYS - 1) * DAY_MS; // entries joined over the last 27 days; a TTL of 28 days
  const t0 = new Date(Date.now() - windowMs - 60_000);
  const dtMs = windowMs / T;

  log(`\n[load] ${fmt(Lc)} cold listings (no events: the waitlist table has no foreign keys)`);
  let started = performance.now();
  await sql`INSERT INTO listings (id, name) SELECT ${sql.raw(listingIdSql('n'))}, 'Bench listing ' || n FROM generate_series(0, ${Lc - 1}::int) n`.execute(
    db,
  );
  const listingsMs = performance.now() - started;
  log(`[load] listings in ${secs(listingsMs)} s`);

  // One statement per slice of the FIFO timeline: rows in created_at order (as joins arrive), the hot listing's
  // rows spread evenly through it, cold rows over skewed listings (u^2: a few listings hold thousands, most a
  // few dozen); a fan's cold entries are on distinct listings, so (listing, account) is unique by construction.
  const sliceSql = (lo: number, hi: number) => sql`
    INSERT INTO waitlist_entries (listing_id, created_at, expires_at, account_id, date_from, date_to, max_price_cents, quantity, sections, price_levels)
    SELECT
      CASE WHEN hot THEN ${o.hotListingId}::uuid ELSE ${sql.raw(listingIdSql(`(base + k * ${step}) % ${Lc}`))} END,
      created_at,
      -- a tenth renewed their entry since joining (a repeat join renews the expiry and keeps the place)
      created_at + interval '${sql.raw(String(TTL_DAYS))} days' + CASE WHEN x5 < 0.1 THEN (now() - created_at) * x6 ELSE interval '0' END,
      'fan-' || CASE WHEN hot THEN (h * ${P}) % ${A} ELSE a END,
      CASE WHEN hot THEN CASE WHEN x2 < 0.2 THEN ${o.hotDate}::date - (x3 * 10)::int END
           ELSE CASE WHEN x2 < 0.25 THEN current_date + (x3 * 60)::int END END,
      CASE WHEN hot THEN CASE WHEN x2 < 0.2 THEN ${o.hotDate}::date + (x4 * 10)::int END
           ELSE CASE WHEN x2 < 0.25 THEN current_date + (x3 * 60)::int + (x4 * 30)::int
                     WHEN x2 < 0.30 THEN current_date + (x4 * 90)::int END END,
      CASE WHEN hot THEN CASE WHEN x7 < 0.3 THEN 9000 + (x8 * 10)::int * 500 END
           ELSE CASE WHEN x7 < 0.4 THEN (20 + (x8 * 180)::int) * 100 END END,
      CASE WHEN x1 < 0.30 THEN 1 WHEN x1 < 0.75 THEN 2 WHEN x1 < 0.85 THEN 3 ELSE 4 END,
      CASE WHEN hot THEN CASE WHEN x9 < 0.10 THEN ARRAY['A'] WHEN x9 < 0.15 THEN ARRAY['A', 'B'] END
           ELSE CASE WHEN x9 < 0.10 THEN ARRAY['S' || (1 + (x8 * 19)::int)] WHEN x9 < 0.15 THEN ARRAY['S1', 'S' || (2 + (x8 * 18)::int)] END END,
      CASE WHEN x10 < 0.05 THEN CASE WHEN hot THEN ARRAY['P1'] ELSE ARRAY['P' || (1 + (x8 * 2)::int)] END END
    FROM (
      SELECT *, c % ${A} AS a, c / ${A} AS k,
             floor(${Lc}::float8 * power(((c % ${A}) * 2654435761 % 4294967296)::float8 / 4294967296, 2))::bigint AS base
      FROM (
        SELECT i, hot,
               CASE WHEN hot THEN i / ${stride} END AS h,
               CASE WHEN NOT hot THEN i - least((i + ${stride} - 1) / ${stride}, ${o.hot}) END AS c,
               ${t0.toISOString()}::timestamptz + (i * ${dtMs}::float8) * interval '1 millisecond' AS created_at,
               random() AS x1, random() AS x2, random() AS x3, random() AS x4, random() AS x5,
               random() AS x6, random() AS x7, random() AS x8, random() AS x9, random() AS x10
        FROM (SELECT i, (i % ${stride} = 0 AND i < ${o.hot * stride}) AS hot FROM generate_series(${lo}::bigint, ${hi - 1}::bigint) i) g
      ) r
    ) s`;

  const slices: [number, number][] = [];
  for (let lo = 0; lo < T; lo += SLICE_ROWS) slices.push([lo, Math.min(T, lo + SLICE_ROWS)]);
  log(`[load] ${fmt(T)} rows in ${slices.length} statements, ${LOAD_PARALLEL} at a time`);
  let loaded = 0;
  let nextSlice = 0;
  const before = await snapshot(db);
  const stopWaits = sampleWaits(db, 200);
  started = performance.now();
  await Promise.all(
    Array.from({ length: LOAD_PARALLEL }, () =>
      db.connection().execute(async (conn) => {
        for (;;) {
          const s = nextSlice++;
          const slice = slices[s];
          if (!slice) return;
          const t = performance.now();
          await sql`SELECT setseed(${(s % 1000) / 1000})`.execute(conn);
          await sliceSql(slice[0], slice[1]).execute(conn);
          loaded += slice[1] - slice[0];
          const el = performance.now() - started;
          log(
            `[load]   statement ${s + 1}/${slices.length}: ${fmt(slice[1] - slice[0])} rows in ${secs(performance.now() - t)} s; ${fmt(loaded)} rows so far, ${fmt(loaded / (el / 1000))} rows/s`,
          );
        }
      }),
    ),
  );
  const loadMs = performance.now() - started;
  const loadProbe = describe(before, await snapshot(db), T);
  const loadWaits = await stopWaits();
  log(`[load] ${fmt(T)} rows in ${secs(loadMs)} s = ${fmt(T / (loadMs / 1000))} rows/s`);
  logProbe('load', 'row', loadProbe, loadWaits);

  started = performance.now();
  await sql`VACUUM (ANALYZE) waitlist_entries`.execute(db);
  const vacuumMs = performance.now() - started;
  log(`[load] VACUUM ANALYZE in ${secs(vacuumMs)} s`);
  // Settle: write out what the load dirtied, so the joins that follow meet the table as a running system would,
  // not in the middle of the load's checkpoint. (Needs superuser or pg_checkpoint; skipped otherwise.)
  started = performance.now();
  let checkpointMs: number | null = null;
  try {
    await sql`CHECKPOINT`.execute(db);
    checkpointMs = performance.now() - started;
    log(`[load] CHECKPOINT in ${secs(checkpointMs)} s`);
  } catch (e) {
    log(`[load] CHECKPOINT skipped: ${(e as Error).message}`);
  }

  const { rows: sizes } = await sql<{ table_bytes: number; index_bytes: number; total_bytes: number }>`
    SELECT sum(pg_table_size(c.oid))::bigint AS table_bytes, sum(pg_indexes_size(c.oid))::bigint AS index_bytes,
           sum(pg_total_relation_size(c.oid))::bigint AS total_bytes
    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'waitlist_entries'::regclass`.execute(db);
  const { rows: perIndex } = await sql<{ index: string; bytes: number }>`
    SELECT pi.relname AS index, sum(pg_relation_size(ci.oid))::bigint AS bytes
    FROM pg_index x JOIN pg_class pi ON pi.oid = x.indexrelid
    JOIN pg_inherits inh ON inh.inhparent = pi.oid JOIN pg_class ci ON ci.oid = inh.inhrelid
    WHERE x.indrelid = 'waitlist_entries'::regclass GROUP BY pi.relname ORDER BY 2 DESC`.execute(db);
  const { rows: counted } = await sql<{ n: number; hot: number; live: number; max_listing: number }>`
    SELECT (SELECT count(*) FROM waitlist_entries)::bigint AS n,
           (SELECT count(*) FROM waitlist_entries WHERE listing_id = ${o.hotListingId})::bigint AS hot,
           (SELECT count(*) FROM waitlist_entries WHERE listing_id = ${o.hotListingId} AND expires_at > now())::bigint AS live,
           (SELECT max(n) FROM (SELECT count(*) AS n FROM waitlist_entries WHERE listing_id <> ${o.hotListingId} GROUP BY listing_id) x)::bigint AS max_listing`.execute(
    db,
  );
  const z = sizes[0]!;
  const c = counted[0]!;
  const perRow = (b: number) => round(b / c.n, 1);
  const out = {
    rows: c.n,
    hotListingRows: c.hot,
    hotListingLive: c.live,
    largestColdListing: c.max_listing,
    coldListings: Lc,
    fans: A,
    listingsSeconds: secs(listingsMs),
    loadSeconds: secs(loadMs),
    rowsPerSec: Math.round(T / (loadMs / 1000)),
    vacuumAnalyzeSeconds: secs(vacuumMs),
    checkpointSeconds: checkpointMs === null ? null : secs(checkpointMs),
    duringLoad: { ...loadProbe, waits: loadWaits },
    bytes: { table: z.table_bytes, indexes: z.index_bytes, total: z.total_bytes },
    bytesPerRow: { total: perRow(z.total_bytes), table: perRow(z.table_bytes), indexes: perRow(z.index_bytes) },
    bytesPerRowByIndex: Object.fromEntries(perIndex.map((r) => [r.index, perRow(r.bytes)])),
  };
  log(`[load] ${fmt(c.n)} rows; hot listing ${fmt(c.hot)} (${fmt(c.live)} live); largest cold listing ${fmt(c.max_listing)}`);
  log(
    `[load] ${round(z.total_bytes / 2 ** 20, 0)} MiB = ${out.bytesPerRow.total} bytes/row (table ${out.bytesPerRow.table} + indexes ${out.bytesPerRow.indexes}: ${perIndex.map((r) => `${r.index} ${perRow(r.bytes)}`).join(', ')})`,
  );
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Where the time goes: PostgreSQL's cumulative counters (WAL, buffers, checkpoints: cluster-wide, so other work on
// this shared machine shows in them too), the machine's CPU split, CPU used by our child processes, and samples
// of what this database's active backends wait on.

interface Snapshot {
  at: number;
  pg: Record<string, number>;
  cpu: number[];
  procs: Record<string, number>;
}

async function pgCounters(db: Db): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const views: [string, string][] = [
    ['wal', 'SELECT to_jsonb(w) AS j FROM pg_stat_wal w'],
    ['bgwriter', 'SELECT to_jsonb(b) AS j FROM pg_stat_bgwriter b'],
    ['db', 'SELECT to_jsonb(d) AS j FROM pg_stat_database d WHERE datname = current_database()'],
  ];
  for (const [name, q] of views) {
    try {
      const { rows } = await sql<{ j: Record<string, unknown> }>`${sql.raw(q)}`.execute(db);
      for (const [k, v] of Object.entries(rows[0]?.j ?? {})) if (typeof v === 'number') out[`${name}.${k}`] = v;
    } catch {
      /* not on this PostgreSQL version */
    }
  }
  return out;
}

function procCpuTicks(pid: number | undefined): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return Number(rest[11]) + Number(rest[12]); // utime + stime
  } catch {
    return 0;
  }
}

async function snapshot(db: Db, procs: Record<string, number | undefined> = {}): Promise<Snapshot> {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  return {
    at: performance.now(),
    pg: await pgCounters(db),
    cpu,
    procs: Object.fromEntries(Object.entries(procs).map(([k, pid]) => [k, procCpuTicks(pid)])),
  };
}

/** What happened between two snapshots, per unit of work (`per`: joins, notifications...). */
function describe(a: Snapshot, b: Snapshot, units: number) {
  const d = (k: string) => (b.pg[k] ?? 0) - (a.pg[k] ?? 0);
  const seconds = (b.at - a.at) / 1000;
  const cpuD = b.cpu.map((v, i) => v - a.cpu[i]!);
  const total = cpuD.reduce((x, y) => x + y, 0) || 1;
  const pct = (i: number) => round((100 * cpuD[i]!) / total, 0);
  const per = (n: number) => (units > 0 ? round(n / units, 2) : null);
  const procs = Object.fromEntries(
    Object.keys(b.procs).map((k) => [k, round(((b.procs[k]! - (a.procs[k] ?? 0)) / 100 / seconds) * 100, 0)]),
  );
  return {
    seconds: round(seconds, 1),
    walMB: round(d('wal.wal_bytes') / 2 ** 20, 1),
    walBytesPerUnit: per(d('wal.wal_bytes')),
    fullPageImagesPerUnit: per(d('wal.wal_fpi')),
    walRecordsPerUnit: per(d('wal.wal_records')),
    blocksReadPerUnit: per(d('db.blks_read')),
    blocksHitPerUnit: per(d('db.blks_hit')),
    commits: d('db.xact_commit'),
    checkpointsStarted: d('bgwriter.checkpoints_timed') + d('bgwriter.checkpoints_req'),
    buffersWrittenByBackends: d('bgwriter.buffers_backend'),
    buffersWrittenByCheckpointer: d('bgwriter.buffers_checkpoint'),
    machineCpuPct: { user: pct(0) + pct(1), system: pct(2) + pct(5) + pct(6), iowait: pct(4), idle: pct(3), steal: pct(7) },
    processCpuPctOfOneCore: procs,
  };
}

/** Samples this database's active backends every `everyMs`: average number busy per (application, wait event). */
function sampleWaits(db: Db, everyMs = 50) {
  let running = true;
  let samples = 0;
  const counts: Record<string, number> = {};
  const loop = (async () => {
    while (running) {
      try {
        const { rows } = await sql<{ app: string; w: string; n: number }>`
          SELECT application_name AS app, coalesce(wait_event_type || ':' || wait_event, 'CPU') AS w, count(*)::int AS n
          FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()
          GROUP BY 1, 2`.execute(db);
        samples++;
        for (const r of rows) counts[`${r.app} ${r.w}`] = (counts[`${r.app} ${r.w}`] ?? 0) + r.n;
      } catch {
        /* keep sampling */
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return async () => {
    running = false;
    await loop;
    return Object.fromEntries(
      Object.entries(counts)
        .map(([k, n]) => [k, round(n / Math.max(samples, 1), 2)] as const)
        .filter(([, v]) => v >= 0.05)
        .sort((x, y) => y[1] - x[1])
        .slice(0, 10),
    );
  };
}

function logProbe(tag: string, unit: string, p: ReturnType<typeof describe>, waits: Record<string, number>) {
  log(
    `[${tag}] during it, server-wide (other databases on this server count too): WAL ${p.walMB} MB (${fmt(p.walBytesPerUnit ?? 0)} bytes, ` +
      `${p.fullPageImagesPerUnit} full-page images per ${unit}), checkpoints started ${p.checkpointsStarted}, buffers written by backends ` +
      `${fmt(p.buffersWrittenByBackends)}; this database: blocks read into shared_buffers ${p.blocksReadPerUnit} per ${unit} (hits ${p.blocksHitPerUnit})`,
  );
  log(
    `[${tag}] machine CPU % ${JSON.stringify(p.machineCpuPct)}; our processes, % of one core ${JSON.stringify(p.processCpuPctOfOneCore)}`,
  );
  log(
    `[${tag}] active backends of this database on average, by wait: ${
      Object.entries(waits)
        .map(([k, v]) => `${k} ${v}`)
        .join('; ') || 'none sampled'
    }`,
  );
}

// ---------------------------------------------------------------------------------------------------------------
// 2. Joins over HTTP

interface JoinListing {
  id: string;
  date: string;
}

function joinCriteria(l: JoinListing): Record<string, unknown> {
  const c: Record<string, unknown> = {};
  const r = Math.random();
  c.quantity = r < 0.3 ? 1 : r < 0.75 ? 2 : r < 0.85 ? 3 : 4;
  if (Math.random() < 0.3) {
    const d = Date.parse(`${l.date}T00:00:00Z`);
    c.dateFrom = new Date(d - Math.floor(Math.random() * 10) * DAY_MS).toISOString().slice(0, 10);
    c.dateTo = new Date(d + Math.floor(Math.random() * 10) * DAY_MS).toISOString().slice(0, 10);
  }
  if (Math.random() < 0.4) c.maxPriceCents = (20 + Math.floor(Math.random() * 180)) * 100;
  if (Math.random() < 0.15) c.sections = ['S'];
  if (Math.random() < 0.05) c.priceLevels = ['P'];
  return c;
}

async function joins(
  bench: BenchDatabase,
  o: { listings: number; joinListingCount: number; joinSeconds: number; clients: number; children: ChildProcess[] },
) {
  const Lc = o.listings - 1;
  // Listings fans join over HTTP need a performance (criteria are checked against it): one small event each, on
  // cold listings spread over the catalog (so each already holds its loaded entries).
  log(`\n[joins] one event on each of ${fmt(o.joinListingCount)} cold listings`);
  let started = performance.now();
  const targets: JoinListing[] = [];
  let m = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (;;) {
        const i = m++;
        if (i >= o.joinListingCount) return;
        const n = Math.floor(((i + 0.5) * Lc) / o.joinListingCount);
        const startsAt = new Date(Date.now() + (2 + (i % 90)) * DAY_MS);
        const spec = parseEventFile({
          name: `Bench show ${n}`,
          venueName: 'Hall',
          listing: { id: listingId(n) },
          startsAt: startsAt.toISOString(),
          onsaleAt: new Date(Date.now() - 3_600_000).toISOString(),
          priceLevels: [{ code: 'P', name: 'All', priceCents: 5000 }],
          sections: [{ code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: 2, seatsPerRow: 10 }],
        });
        await bench.db.transaction().execute((trx) => createEvent(trx, spec, 'bench', { signOff: true }));
        targets.push({ id: listingId(n), date: startsAt.toISOString().slice(0, 10) });
      }
    }),
  );
  log(`[joins] events in ${secs(performance.now() - started)} s`);

  const tokens = new AccountTokens(installSecrets(installDataDir()).authSecret);
  const fanCount = Math.ceil(o.joinSeconds * 12_000);
  started = performance.now();
  const fans: string[] = [];
  for (let i = 0; i < fanCount; i++) fans.push(`Bearer ${(await tokens.issue(`j-${i}`)).token}`);
  log(`[joins] ${fmt(fanCount)} account tokens in ${secs(performance.now() - started)} s`);

  // The SQL limit: the join's group-commit statement (WaitlistService's own insertJoins) straight through
  // pg, batches of RAW_BATCH new (listing, account) rows on RAW_CONNECTIONS connections at once (GroupCommit runs
  // at most 3 batches at a time), into the same loaded table. Its rows stay (accounts r-*).
  const rawLat: number[] = [];
  let rawSeq = 0;
  const before0 = await snapshot(bench.db);
  const { elapsedMs: rawMs } = await runLoad(RAW_CONNECTIONS, o.joinSeconds * 1000, async () => {
    const items = Array.from({ length: RAW_BATCH }, () => {
      const l = targets[Math.floor(Math.random() * targets.length)]!;
      return { listingId: l.id, accountId: `r-${rawSeq++}`, c: joinCriteria(l) };
    });
    const batch = items.map((i) => ({
      listingId: i.listingId,
      accountId: i.accountId,
      criteria: normalizeCriteria(waitlistCriteriaSchema.parse(i.c)),
      ttlSeconds: TTL_DAYS * 86400,
    }));
    const t = performance.now();
    await insertJoins(bench.db, batch);
    rawLat.push(performance.now() - t);
  });
  const rawProbe = describe(before0, await snapshot(bench.db), rawLat.length * RAW_BATCH);
  const rawResult = {
    rowsPerSec: Math.round(((rawLat.length * RAW_BATCH) / rawMs) * 1000),
    batch: RAW_BATCH,
    connections: RAW_CONNECTIONS,
    batchLatency: summarize(rawLat),
    during: rawProbe,
  };
  log(
    `[joins] raw SQL: the join statement through pg, ${RAW_BATCH} rows x ${RAW_CONNECTIONS} connections: ${fmt(rawResult.rowsPerSec)} rows/s, batch p50 ${rawResult.batchLatency.p50Ms} ms p99 ${rawResult.batchLatency.p99Ms} ms; ` +
      `server-wide ${fmt(rawProbe.walBytesPerUnit ?? 0)} WAL bytes and ${rawProbe.fullPageImagesPerUnit} full-page images per row`,
  );

  // The HTTP limit and the route, interleaved: both servers run, and 1-second windows alternate between a bare
  // Fastify PUT route (same client, same bodies: the HTTP limit) and the store API, so a burst of other work on
  // this shared machine falls on both alike. One window of each first, not counted (connections, JIT, caches).
  const bare = await startProcess('apps/store-api/bench/waitlist-bare.ts', {});
  o.children.push(bare.child);
  const server = await startProcess('apps/store-api/bench/server.ts', {
    DATABASE_URL: bench.url,
    NODE_ENV: 'development',
    DEV_AUTH: 'false',
  });
  o.children.push(server.child);
  storeApi = server;
  const bareClient = createClient(`http://127.0.0.1:${bare.port}`, o.clients);
  const client = createClient(`http://127.0.0.1:${server.port}`, o.clients);
  let counting = false;
  const bareLat: number[] = [];
  const lat: number[] = [];
  const codes: Record<string, number> = {};
  const done: { auth: string; listingId: string; entryId: number; l: JoinListing }[] = [];
  let next = 0;
  let created = 0;
  let repeats = 0;
  let repeatsKeptPlace = 0;
  let errors = 0;
  const bareRequest = async () => {
    const l = targets[Math.floor(Math.random() * targets.length)]!;
    const r = await bareClient.request('PUT', `/listings/${l.id}/waitlist`, { authorization: fans[0]! }, { criteria: joinCriteria(l) });
    if (counting && r.status === 201) bareLat.push(r.ms);
  };
  const join = async () => {
    const again = done.length > 100 && Math.random() < 0.1 ? done[Math.floor(Math.random() * done.length)] : undefined;
    const auth = again?.auth ?? fans[next++];
    if (!auth) return;
    const l = again?.l ?? targets[Math.floor(Math.random() * targets.length)]!;
    const r = await client.request('PUT', `/listings/${l.id}/waitlist`, { authorization: auth }, { criteria: joinCriteria(l) });
    if (counting) lat.push(r.ms);
    if (r.status === 201 && !again) {
      created++;
      done.push({ auth, listingId: l.id, entryId: r.body.entryId, l });
    } else if (r.status === 200 && again) {
      repeats++;
      if (r.body.entryId === again.entryId) repeatsKeptPlace++;
    } else {
      errors++;
      const code = `${r.status} ${r.body?.error ?? ''}`.trim();
      codes[code] = (codes[code] ?? 0) + 1;
    }
  };
  await runLoad(o.clients, 1000, bareRequest);
  await runLoad(o.clients, 1000, join);
  counting = true;
  let bareMs = 0;
  let elapsedMs = 0;
  const windowRatios: number[] = [];
  const before = await snapshot(bench.db, { storeApi: server.child.pid, bareFastify: bare.child.pid, benchClient: process.pid });
  const stopWaits = sampleWaits(bench.db);
  for (let w = 0; w < o.joinSeconds; w++) {
    const n0 = bareLat.length;
    const b = await runLoad(o.clients, 1000, bareRequest);
    bareMs += b.elapsedMs;
    const m0 = lat.length;
    const a = await runLoad(o.clients, 1000, join);
    elapsedMs += a.elapsedMs;
    windowRatios.push((lat.length - m0) / a.elapsedMs / ((bareLat.length - n0) / b.elapsedMs));
  }
  const probe = describe(
    before,
    await snapshot(bench.db, { storeApi: server.child.pid, bareFastify: bare.child.pid, benchClient: process.pid }),
    lat.length,
  );
  const waits = await stopWaits();
  client.close();
  bareClient.close();
  await stopProcess(bare.child);
  const bareResult = { reqPerSec: Math.round((bareLat.length / bareMs) * 1000), ...summarize(bareLat) };
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM waitlist_entries WHERE listing_id = ANY(${targets.map((t) => t.id)}::uuid[]) AND account_id LIKE 'j-%'`.execute(
    bench.db,
  );
  const joinsPerSec = Math.round((lat.length / elapsedMs) * 1000);
  const sortedRatios = [...windowRatios].sort((x, y) => x - y);
  const out = {
    joinsPerSec,
    ...summarize(lat),
    created,
    repeats,
    repeatsKeptPlace,
    errors,
    errorCodes: codes,
    rowsWritten: rows[0]!.n,
    listings: targets.length,
    bareFastify: bareResult,
    ratioToBareFastify: round(joinsPerSec / bareResult.reqPerSec, 3),
    ratioToBareFastifyPerWindow: {
      median: round(percentile(sortedRatios, 50), 3),
      min: round(sortedRatios[0] ?? 0, 3),
      max: round(sortedRatios.at(-1) ?? 0, 3),
    },
    rawSql: rawResult,
    ratioToRawSql: round(joinsPerSec / rawResult.rowsPerSec, 3),
    during: { ...probe, waits },
  };
  log(`[joins] bare Fastify PUT (interleaved): ${fmt(bareResult.reqPerSec)}/s p50 ${bareResult.p50Ms} ms p99 ${bareResult.p99Ms} ms`);
  log(
    `[joins] store API (interleaved): ${fmt(joinsPerSec)} joins/s p50 ${out.p50Ms} ms p99 ${out.p99Ms} ms; ${fmt(created)} new (${fmt(out.rowsWritten)} rows written), ` +
      `${fmt(repeats)} repeats (${fmt(repeatsKeptPlace)} kept their entry), ${errors} errors; ${out.ratioToBareFastify} of bare Fastify ` +
      `(per 1-s window pair: median ${out.ratioToBareFastifyPerWindow.median}, ${out.ratioToBareFastifyPerWindow.min}-${out.ratioToBareFastifyPerWindow.max}), ${out.ratioToRawSql} of the raw SQL`,
  );
  logProbe('joins', "join (both servers' windows)", probe, waits);
  return out;
}

let storeApi: { child: ChildProcess; port: number } | undefined;

// ---------------------------------------------------------------------------------------------------------------
// 3. Fan-out on write: one availability event on the hot listing

/** The fan-out's SQL limit: as many notification-like rows in one INSERT ... SELECT (no delivery rows, no jobs). */
async function fanoutSqlLimit(db: Db, hot: number, listingId: string) {
  return db.connection().execute(async (conn) => {
    await sql`CREATE TEMP TABLE bench_raw_notifications (LIKE notifications INCLUDING DEFAULTS INCLUDING IDENTITY)`.execute(conn);
    let t = performance.now();
    await sql`INSERT INTO bench_raw_notifications (account_id, listing_id, availability_id, entry_id, kind)
              SELECT 'fan-' || g, ${listingId}::uuid, 1, g, 'ON_SALE' FROM generate_series(1, ${hot}) g`.execute(conn);
    const tempMs = performance.now() - t;
    await sql`DROP TABLE bench_raw_notifications`.execute(conn);
    // The same work as the fan-out's statements, in one: the hot listing's entries in FIFO order into a logged
    // copy of notifications with its indexes (no delivery rows, no jobs, one transaction).
    await sql`CREATE TABLE bench_raw_notify (LIKE notifications INCLUDING ALL)`.execute(conn);
    t = performance.now();
    await sql`INSERT INTO bench_raw_notify (account_id, listing_id, availability_id, entry_id, kind)
              SELECT w.account_id, w.listing_id, 1, w.id, 'ON_SALE' FROM waitlist_entries w
              WHERE w.listing_id = ${listingId}::uuid AND w.expires_at > now() ORDER BY w.created_at, w.id`.execute(conn);
    const fifoMs = performance.now() - t;
    await sql`DROP TABLE bench_raw_notify`.execute(conn);
    return { tempTableGenerateSeriesSeconds: secs(tempMs), loggedFifoInsertSelectSeconds: secs(fifoMs) };
  });
}

async function fanout(
  bench: BenchDatabase,
  o: { hot: number; hotEvent: HotEvent; workerConcurrency: number; pageSize?: number; chunkSize?: number; children: ChildProcess[] },
) {
  const db = bench.db;
  log(
    `\n[fan-out] hot listing ${o.hotEvent.listingId}: ${fmt(o.hot)} entries; worker concurrency ${o.workerConcurrency}, page ${o.pageSize ?? 'default'}, chunk ${o.chunkSize ?? 'default'}`,
  );
  const returningHoldId = await holdReturningSeats(db, o.hotEvent.eventId);

  // The SQL limit, measured in the same run just before the fan-out and again just after it.
  const rawBefore = await fanoutSqlLimit(db, o.hot, o.hotEvent.listingId);
  log(
    `[fan-out] SQL limit before: ${fmt(o.hot)} rows from generate_series into a temp table in ${rawBefore.tempTableGenerateSeriesSeconds} s; ` +
      `the hot listing's entries in FIFO order into a logged, indexed copy of notifications in ${rawBefore.loggedFifoInsertSelectSeconds} s`,
  );

  // The webhook sink, registered for the hot listing.
  const secret = `whsec_bench_${randomBytes(16).toString('hex')}`;
  const sink = await startProcess('apps/store-api/bench/waitlist-sink.ts', { SINK_SECRET: secret, SINK_EXPECT: String(o.hot) });
  o.children.push(sink.child);
  // The sink is on this machine, which webhooks may not reach by default: the bench's install names it (here and
  // in the worker's WEBHOOK_ALLOW_HOSTS).
  const endpoint = await addWebhookEndpoint(
    db,
    { url: `http://127.0.0.1:${sink.port}/hooks`, listingId: o.hotEvent.listingId, secret },
    { outbound: { allowHosts: ['127.0.0.1'] } },
  );
  const sinkStats = async () => (await fetch(`http://127.0.0.1:${sink.port}/stats`)).json() as Promise<Record<string, any>>;

  // The worker in its own process.
  const worker = await startProcess('apps/store-api/bench/waitlist-worker.ts', {
    DATABASE_URL: bench.url,
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
    WORKER_CONCURRENCY: String(o.workerConcurrency),
    ...(o.pageSize ? { FANOUT_PAGE_SIZE: String(o.pageSize) } : {}),
    ...(o.chunkSize ? { FANOUT_CHUNK_SIZE: String(o.chunkSize) } : {}),
  });
  o.children.push(worker.child);
  let workerOut = '';
  worker.child.stdout!.on('data', (d: Buffer) => (workerOut += d.toString()));
  // Let its start-up jobs (reconciliation, waitlist housekeeping) finish.
  const idleBy = performance.now() + 30_000;
  while (performance.now() < idleBy) {
    const { rows } = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE run_at <= now() OR locked_at IS NOT NULL`.execute(db);
    if (rows[0]!.n === 0) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const rssBefore = readRss(worker.child.pid);
  worker.child.kill('SIGUSR2'); // statement timings from here on

  // The availability event: 4 adjacent seats come back (the returner's hold is released), in one transaction.
  const before = await snapshot(db, { worker: worker.child.pid, sink: sink.child.pid });
  const stopWaits = sampleWaits(db);
  const emitWall = Date.now();
  const emitted = await db.transaction().execute(async (trx) => {
    await sql`UPDATE holds SET status = 'RELEASED', updated_at = now() WHERE id = ${returningHoldId}`.execute(trx);
    const { rows } = await sql<{ id: number; section_code: string; row_index: number; seat_number: number }>`
      UPDATE seats SET status = 'AVAILABLE', hold_id = NULL, expires_at = NULL, version = version + 1
      WHERE event_id = ${o.hotEvent.eventId} AND hold_id = ${returningHoldId} AND status = 'HELD'
      RETURNING id, section_code, row_index, seat_number`.execute(trx);
    const seats: ReturnedSeat[] = rows.map((r) => ({
      id: Number(r.id),
      sectionCode: r.section_code,
      rowIndex: r.row_index,
      seatNumber: r.seat_number,
    }));
    return emitAvailability(trx, o.hotEvent.eventId, 'HOLD_RELEASED', seats);
  });
  if (!emitted) throw new Error('emitAvailability emitted nothing');
  const availabilityId = emitted.availabilityId;
  log(`[fan-out] availability event ${availabilityId} (${emitted.mode}) committed; waiting for the fan-out and the deliveries`);

  let enqueuedWall = 0;
  let deliveredWall = 0;
  let peakRssKb = 0;
  let last: Record<string, any>;
  let lastSink: Record<string, any>;
  let lastPrint = 0;
  const deadline = Date.now() + 600_000;
  for (;;) {
    const { rows } = await sql<{
      status: string;
      matched: number;
      notified: number;
      created_ms: number;
      completed_ms: number | null;
      deliveries: number;
      delivered: number;
      dead: number;
      last_delivered_ms: number | null;
    }>`
      SELECT a.status, a.matched, a.notified, extract(epoch FROM a.created_at) * 1000 AS created_ms,
             extract(epoch FROM a.completed_at) * 1000 AS completed_ms,
             (SELECT count(*) FROM webhook_deliveries d WHERE d.availability_id = a.id)::int AS deliveries,
             (SELECT count(*) FROM webhook_deliveries d WHERE d.availability_id = a.id AND d.status = 'DELIVERED')::int AS delivered,
             (SELECT count(*) FROM webhook_deliveries d WHERE d.availability_id = a.id AND d.status = 'DEAD')::int AS dead,
             (SELECT extract(epoch FROM max(d.delivered_at)) * 1000 FROM webhook_deliveries d WHERE d.availability_id = a.id) AS last_delivered_ms
      FROM availability_events a WHERE a.id = ${availabilityId}`.execute(db);
    last = rows[0]!;
    lastSink = await sinkStats();
    peakRssKb = Math.max(peakRssKb, readRss(worker.child.pid).rssKb);
    const now = Date.now();
    if (!enqueuedWall && last.status === 'DONE') enqueuedWall = now;
    const allDelivered =
      last.status === 'DONE' && last.deliveries > 0 && last.delivered === last.deliveries && lastSink.distinctNotifications >= o.hot;
    if (!deliveredWall && allDelivered) deliveredWall = now;
    if (now - lastPrint > 2000 || allDelivered) {
      lastPrint = now;
      log(
        `[fan-out]   +${secs(now - emitWall)} s: ${last.status} notified ${fmt(last.notified)}; deliveries ${fmt(last.delivered)}/${fmt(last.deliveries)} delivered; sink has ${fmt(lastSink.distinctNotifications)} notifications; worker RSS ${round(readRss(worker.child.pid).rssKb / 1024, 0)} MB`,
      );
    }
    if (allDelivered || now > deadline || last.dead > 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const rss = readRss(worker.child.pid);
  const probe = describe(before, await snapshot(db, { worker: worker.child.pid, sink: sink.child.pid }), o.hot);
  const waits = await stopWaits();
  const rawAfter = await fanoutSqlLimit(db, o.hot, o.hotEvent.listingId);
  const raw = {
    tempTableGenerateSeriesSeconds: round((rawBefore.tempTableGenerateSeriesSeconds + rawAfter.tempTableGenerateSeriesSeconds) / 2, 2),
    loggedFifoInsertSelectSeconds: round((rawBefore.loggedFifoInsertSelectSeconds + rawAfter.loggedFifoInsertSelectSeconds) / 2, 2),
    before: rawBefore,
    after: rawAfter,
  };
  log(
    `[fan-out] SQL limit after: ${rawAfter.tempTableGenerateSeriesSeconds} s (temp table), ${rawAfter.loggedFifoInsertSelectSeconds} s (FIFO insert-select); the ratios use the mean of before and after`,
  );
  // Stop the worker and collect its statement timings.
  await stopProcess(worker.child);
  // This variant's receiver goes away: its endpoint is switched off first (a later variant registers its own).
  await setWebhookEndpointActive(db, endpoint.id, false);
  await stopProcess(sink.child);
  const statsLine = workerOut.split('\n').find((l) => l.startsWith('STATS '));
  const stats = statsLine
    ? (JSON.parse(statsLine.slice(6)) as {
        statements: { sql: string; n: number; ms: number; maxMs: number }[];
        pageEnds: number[];
        errors: string[];
      })
    : undefined;

  const { rows: check } = await sql<{ notifications: number; distinct_entries: number; ids: number }>`
    SELECT count(*)::int AS notifications, count(DISTINCT entry_id)::int AS distinct_entries,
           (SELECT coalesce(sum(cardinality(notification_ids)), 0) FROM webhook_deliveries WHERE availability_id = ${availabilityId})::int AS ids
    FROM notifications WHERE availability_id = ${availabilityId}`.execute(db);
  const created = Number(last.created_ms);
  const enqueuedDbMs = last.completed_ms ? Number(last.completed_ms) - created : null;
  const deliveredDbMs = last.last_delivered_ms && deliveredWall ? Number(last.last_delivered_ms) - created : null;
  const sinkMs = lastSink.reachedAt ? lastSink.reachedAt - created : null;
  const pages = stats?.pageEnds ?? [];
  const pageDurations = pages.map((t, i) => t - (i === 0 ? created : pages[i - 1]!));
  const sorted = [...pageDurations].sort((a, b) => a - b);
  const out = {
    availabilityId,
    mode: emitted.mode,
    matched: last.matched,
    notified: last.notified,
    notificationRows: check[0]!.notifications,
    distinctEntries: check[0]!.distinct_entries,
    deliveries: last.deliveries,
    deliveriesDelivered: last.delivered,
    deliveriesDead: last.dead,
    notificationIdsInDeliveries: check[0]!.ids,
    enqueuedSeconds: enqueuedDbMs === null ? null : secs(enqueuedDbMs),
    enqueuedSecondsWallClock: enqueuedWall ? secs(enqueuedWall - emitWall) : null,
    deliveredSeconds: deliveredDbMs === null ? null : secs(deliveredDbMs),
    sinkReceivedAllSeconds: sinkMs === null ? null : secs(sinkMs),
    deliveredSecondsWallClock: deliveredWall ? secs(deliveredWall - emitWall) : null,
    enqueuedPerSec: enqueuedDbMs ? Math.round((last.notified / enqueuedDbMs) * 1000) : null,
    sink: {
      requests: lastSink.requests,
      megabytes: round(lastSink.bytes / 2 ** 20, 1),
      notifications: lastSink.notifications,
      distinct: lastSink.distinctNotifications,
      duplicateNotifications: lastSink.duplicateNotifications,
      duplicateDeliveries: lastSink.duplicateDeliveries,
      badSignatures: lastSink.badSignatures,
      kinds: lastSink.kinds,
      otherListings: Object.keys(lastSink.listings ?? {}).filter((l) => l !== o.hotEvent.listingId).length,
      firstRequestAfterSeconds: lastSink.firstAt ? secs(lastSink.firstAt - created) : null,
    },
    pages: pageDurations.length + (last.status === 'DONE' ? 1 : 0),
    pageSeconds: pageDurations.length
      ? {
          first: secs(pageDurations[0]!),
          p50: secs(percentile(sorted, 50)),
          max: secs(sorted.at(-1)!),
          lastEndToDone: last.completed_ms && pages.length ? secs(Number(last.completed_ms) - pages.at(-1)!) : null,
        }
      : null,
    workerRss: {
      beforeMb: round(rssBefore.rssKb / 1024, 0),
      peakSampledMb: round(peakRssKb / 1024, 0),
      vmHwmMb: round(rss.hwmKb / 1024, 0),
    },
    sqlLimit: {
      ...raw,
      ratioToTempInsert: enqueuedDbMs ? round(enqueuedDbMs / 1000 / raw.tempTableGenerateSeriesSeconds, 1) : null,
      ratioToFifoInsertSelect: enqueuedDbMs ? round(enqueuedDbMs / 1000 / raw.loggedFifoInsertSelectSeconds, 1) : null,
    },
    workerStatements: (stats?.statements ?? [])
      .slice(0, 12)
      .map((s) => ({ totalMs: Math.round(s.ms), calls: s.n, avgMs: round(s.ms / s.n, 1), maxMs: Math.round(s.maxMs), sql: s.sql })),
    workerErrors: stats?.errors ?? [],
    during: { ...probe, waits },
    endpointId: endpoint.id,
    settings: { workerConcurrency: o.workerConcurrency, pageSize: o.pageSize ?? null, chunkSize: o.chunkSize ?? null },
  };
  log(
    `[fan-out] enqueued ${fmt(out.notified)} in ${out.enqueuedSeconds} s (${fmt(out.enqueuedPerSec ?? 0)}/s, ${out.pages} pages); delivered to the sink in ${out.deliveredSeconds} s; worker VmHWM ${out.workerRss.vmHwmMb} MB`,
  );
  logProbe('fan-out', 'notification', probe, waits);
  log("[fan-out] where the worker's database time went (its pool; statements overlap, fan-out and deliveries run at once):");
  for (const s of out.workerStatements)
    log(
      `[fan-out]   ${String(s.totalMs).padStart(7)} ms ${String(s.calls).padStart(6)} calls avg ${String(s.avgMs).padStart(7)} max ${String(s.maxMs).padStart(6)}  ${s.sql.slice(0, 100)}`,
    );
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// 4. Fan-out on read: GET /me/waitlist/matches for fans of the hot listing

async function onRead(bench: BenchDatabase, o: { hotListingId: string; children: ChildProcess[] }) {
  if (!storeApi) throw new Error('the store API is not running');
  const { rows } = await sql<{ account_id: string }>`
    SELECT account_id FROM waitlist_entries WHERE listing_id = ${o.hotListingId} ORDER BY random() LIMIT 320`.execute(bench.db);
  const tokens = new AccountTokens(installSecrets(installDataDir()).authSecret);
  const auths: string[] = [];
  for (const r of rows) auths.push(`Bearer ${(await tokens.issue(r.account_id)).token}`);
  const client = createClient(`http://127.0.0.1:${storeApi.port}`, 4);
  const lat: number[] = [];
  let withMatch = 0;
  let errors = 0;
  let before: Snapshot | undefined;
  let stopWaits: (() => Promise<Record<string, number>>) | undefined;
  for (let i = 0; i < auths.length; i++) {
    if (i === 20) {
      before = await snapshot(bench.db, { storeApi: storeApi.child.pid });
      stopWaits = sampleWaits(bench.db);
    }
    const r = await client.request('GET', '/me/waitlist/matches', { authorization: auths[i]! });
    if (i < 20) continue; // warm-up (connections, listing cache)
    lat.push(r.ms);
    if (r.status !== 200) errors++;
    else if ((r.body.matches as { listingId: string }[]).some((m) => m.listingId === o.hotListingId)) withMatch++;
  }
  const probe = describe(before!, await snapshot(bench.db, { storeApi: storeApi.child.pid }), lat.length);
  const waits = await stopWaits!();
  client.close();
  const out = { calls: lat.length, ...summarize(lat), withHotMatch: withMatch, errors, during: { ...probe, waits } };
  log(
    `\n[on read] GET /me/waitlist/matches x ${out.calls} (one client, fans at random places on the hot listing): p50 ${out.p50Ms} ms p99 ${out.p99Ms} ms; ${withMatch} saw the hot match; ${errors} errors`,
  );
  logProbe('on read', 'call', probe, waits);
  await stopProcess(storeApi.child);
  return out;
}

// ---------------------------------------------------------------------------------------------------------------

function printSummary(r: Record<string, any>) {
  console.log('\n' + JSON.stringify(r, null, 2));
  const verdict = (ok: boolean | null) => (ok === null ? 'NOT MEASURED' : ok ? 'met' : 'NOT MET');
  const f = r.fanout;
  const lines = [
    `load                ${fmt(r.load.rows)} rows in ${r.load.loadSeconds} s = ${fmt(r.load.rowsPerSec)} rows/s (+ VACUUM ANALYZE ${r.load.vacuumAnalyzeSeconds} s)`,
    `bytes per row       ${r.load.bytesPerRow.total} (table ${r.load.bytesPerRow.table} + indexes ${r.load.bytesPerRow.indexes})`,
    `joins               ${fmt(r.joins.joinsPerSec)}/s p50 ${r.joins.p50Ms} ms p99 ${r.joins.p99Ms} ms, ${r.joins.errors} errors   target >= 5,000/s: ${verdict(r.joins.joinsPerSec >= 5000)}   (bare Fastify ${fmt(r.joins.bareFastify.reqPerSec)}/s, interleaved: ratio ${r.joins.ratioToBareFastify}, per-window median ${r.joins.ratioToBareFastifyPerWindow.median}; raw SQL ${fmt(r.joins.rawSql.rowsPerSec)} rows/s: ratio ${r.joins.ratioToRawSql})`,
    `fan-out enqueued    ${fmt(f.notified)} in ${f.enqueuedSeconds ?? '-'} s   target < 10 s: ${verdict(f.enqueuedSeconds === null ? null : f.enqueuedSeconds < 10 && f.notified === r.config.hot)}   (SQL limit ${f.sqlLimit.tempTableGenerateSeriesSeconds} s temp-table insert: x${f.sqlLimit.ratioToTempInsert}; ${f.sqlLimit.loggedFifoInsertSelectSeconds} s FIFO insert-select: x${f.sqlLimit.ratioToFifoInsertSelect})`,
    `fan-out delivered   ${fmt(f.sink.distinct)} at the sink in ${f.deliveredSeconds ?? '-'} s (sink's own clock ${f.sinkReceivedAllSeconds ?? '-'} s)   target < 60 s: ${verdict(f.deliveredSeconds === null ? false : f.deliveredSeconds < 60)}`,
    `worker peak RSS     ${f.workerRss.vmHwmMb} MB (VmHWM)   target < 300 MB: ${verdict(f.workerRss.vmHwmMb > 0 ? f.workerRss.vmHwmMb < 300 : null)}`,
    `fan-out on read     GET /me/waitlist/matches p50 ${r.onRead.p50Ms} ms p99 ${r.onRead.p99Ms} ms over ${r.onRead.calls} calls (no per-fan writes; on write: ${f.enqueuedSeconds} s from the event to ${fmt(f.notified)} notifications enqueued = ${f.enqueuedSeconds ? round((f.enqueuedSeconds * 1e6) / f.notified, 0) : '-'} us per fan)`,
  ];
  console.log(
    `\n== waitlist summary: ${fmt(r.config.rows)} rows, ${fmt(r.config.listings)} listings, hot ${fmt(r.config.hot)}; page ${r.config.pageSize}, chunk ${r.config.chunkSize}, worker concurrency ${r.config.workerConcurrency}${r.fanoutVariants ? ' (the first variant)' : ''} ==`,
  );
  for (const l of lines) console.log(l);
  if (r.fanoutVariants) {
    console.log('fan-out variants (in run order; each a new availability event on the hot listing, a fresh worker process):');
    for (const v of r.fanoutVariants)
      console.log(
        `  page ${v.pageSize ?? 'default'} chunk ${v.chunkSize ?? 'default'} concurrency ${v.workerConcurrency}: enqueued ${v.enqueuedSeconds} s (x${v.ratioToFifo} of the FIFO insert-select, ${v.sqlLimitFifoSeconds} s), delivered ${v.deliveredSeconds} s, VmHWM ${v.vmHwmMb} MB, ${v.pages} pages`,
      );
  }
}
