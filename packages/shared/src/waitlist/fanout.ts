import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import type { Metrics } from '../metrics/index.js';
import { criteriaMatch, entryCriteria, type CriteriaRow } from './criteria.js';
import { blockFor, poolSeats, type PoolSeat } from './pool.js';
import { enqueueFanout, POOL_GRACE_SECONDS, summarize, WAITLIST_ACCOUNT } from './availability.js';
import type { AvailabilityMode, AvailableSection } from './waitlist.table.js';

/** A chunk of freshly inserted notifications, handed to the delivery channels in the same transaction. */
export interface NotifiedChunk {
  listingId: string;
  availabilityId: number;
  /** When the seats came back: where the notify latency starts. */
  availabilityCreatedAt: Date;
  notificationIds: number[];
}

export interface FanoutOptions {
  db: Db;
  /** Called once per chunk inside the transaction that inserted the notifications (webhook deliveries enqueue here). */
  onNotified?: (trx: Trx, chunk: NotifiedChunk) => Promise<void>;
  metrics?: Metrics;
  /** Matches per transaction once a fan-out is above the inline threshold (the batch path). */
  pageSize?: number;
  /** Notifications per delivery chunk (one job and one webhook request per endpoint per chunk). */
  chunkSize?: number;
  /** Matches considered per transaction in OFFER mode (each may take a block of seats). */
  offerPageSize?: number;
  /** A job returns after this long and re-enqueues itself, so no job runs (or holds a worker) for long. */
  timeBudgetMs?: number;
  /** Test hook: awaited between pages (outside any transaction), to stop a worker mid-fan-out. */
  betweenPages?: (availabilityId: number) => Promise<void>;
}

interface AvailabilityRow {
  id: number;
  listing_id: string;
  event_id: string;
  mode: AvailabilityMode;
  status: 'PENDING' | 'FANNING_OUT' | 'DONE';
  pool_hold_id: string | null;
  performance_date: string;
  sections: AvailableSection[];
  offer_ttl_seconds: number;
  inline_threshold: number;
  created_at: Date;
  /** The fan-out's cursor: the last entry considered (created_at as text, to keep its microseconds), and its id. */
  cursor_at: string | null;
  cursor_id: number | null;
}

async function lockAvailability(trx: Trx, id: number): Promise<AvailabilityRow | undefined> {
  const { rows } = await sql<AvailabilityRow>`
    SELECT a.id, a.listing_id, a.event_id, a.mode, a.status, a.pool_hold_id, a.performance_date::text AS performance_date, a.sections, a.created_at,
           a.cursor_created_at::text AS cursor_at, a.cursor_id,
           l.offer_ttl_seconds, l.fanout_inline_threshold AS inline_threshold
    FROM availability_events a JOIN listings l ON l.id = a.listing_id
    WHERE a.id = ${id} FOR UPDATE OF a`.execute(trx);
  return rows[0];
}

/**
 * The match predicate over one listing's partition, in FIFO order after the availability event's cursor, against
 * the sections in the `secs` CTE (see secsCte). The rule is criteriaMatch's, property-tested against it. The listing
 * and the cursor are bound as values (not read from a join), so the planner walks the primary key
 * (listing_id, created_at, id) in order and stops at the page's LIMIT instead of sorting the rest of the listing.
 */
function matchSql(av: AvailabilityRow) {
  return sql`
  w.listing_id = ${av.listing_id}::uuid AND w.expires_at > now()
  AND (w.date_from IS NULL OR w.date_from <= ${av.performance_date}::date)
  AND (w.date_to IS NULL OR w.date_to >= ${av.performance_date}::date)
  AND (w.created_at, w.id) > (coalesce(${av.cursor_at}::timestamptz, '-infinity'::timestamptz), coalesce(${av.cursor_id}::bigint, 0))
  AND EXISTS (SELECT 1 FROM secs s
              WHERE (w.sections IS NULL OR s.section = ANY(w.sections))
                AND (w.price_levels IS NULL OR s.price_level = ANY(w.price_levels))
                AND (w.max_price_cents IS NULL OR s.price_cents <= w.max_price_cents)
                AND s.longest_run >= w.quantity)`;
}

/** The sections an availability event offers, as a small materialized relation the match predicate reads. */
function secsCte(sections: Pick<AvailableSection, 'section' | 'priceLevel' | 'priceCents' | 'longestRun'>[]) {
  return sql`secs AS MATERIALIZED (
    SELECT * FROM unnest(${sections.map((x) => x.section)}::text[], ${sections.map((x) => x.priceLevel)}::text[],
                         ${sections.map((x) => x.priceCents)}::int[], ${sections.map((x) => x.longestRun)}::int[])
      AS t(section, price_level, price_cents, longest_run))`;
}

/**
 * Runs an availability event's fan-out until it is done or the time budget is spent (then it re-enqueues
 * itself). Every page is one short transaction that locks the availability event, writes the page's
 * notifications (at most once per entry: a unique key), hands them to the channels in chunks, and moves the
 * cursor, all or nothing: a worker killed mid-fan-out leaves a consistent cursor, and the next run resumes
 * after it with neither a duplicate nor a gap.
 */
export async function runFanout(o: FanoutOptions, availabilityId: number): Promise<{ done: boolean; pages: number }> {
  const started = Date.now();
  let pages = 0;
  for (;;) {
    const r = await o.db.transaction().execute(async (trx) => {
      const av = await lockAvailability(trx, availabilityId);
      if (!av || av.status === 'DONE') return { done: true };
      return av.mode === 'OFFER' ? offerPage(o, trx, av) : broadcastPage(o, trx, av);
    });
    pages++;
    if (r.done) return { done: true, pages };
    if (Date.now() - started > (o.timeBudgetMs ?? 20_000)) {
      await o.db.transaction().execute((trx) => enqueueFanout(trx, availabilityId));
      return { done: false, pages };
    }
    await o.betweenPages?.(availabilityId);
  }
}

/**
 * BROADCAST and ON_SALE: every match is told. Up to the listing's inline threshold, all of them in this one
 * transaction; above it, pages of `pageSize` by keyset.
 */
async function broadcastPage(o: FanoutOptions, trx: Trx, av: AvailabilityRow): Promise<{ done: boolean }> {
  let limit = o.pageSize ?? 10_000;
  if (av.status === 'PENDING') {
    const { rows } = await sql<{ n: number }>`
      WITH ${secsCte(av.sections)}
      SELECT count(*)::int AS n FROM (
        SELECT 1 FROM waitlist_entries w WHERE ${matchSql(av)} LIMIT ${av.inline_threshold + 1}) m`.execute(trx);
    if (rows[0]!.n <= av.inline_threshold) limit = av.inline_threshold + 1;
  }
  const kind = av.mode === 'ON_SALE' ? 'ON_SALE' : 'BROADCAST';
  const { rows } = await sql<{ ids: number[]; n: number }>`
    WITH ${secsCte(av.sections)},
    page AS (
      SELECT w.created_at, w.id, w.account_id FROM waitlist_entries w
      WHERE ${matchSql(av)}
      ORDER BY w.created_at, w.id LIMIT ${limit}),
    ins AS (
      INSERT INTO notifications (account_id, listing_id, availability_id, entry_id, kind)
      SELECT p.account_id, ${av.listing_id}::uuid, ${av.id}::bigint, p.id, ${kind} FROM page p ORDER BY p.created_at, p.id
      ON CONFLICT DO NOTHING
      RETURNING id),
    last AS (SELECT created_at, id FROM page ORDER BY created_at DESC, id DESC LIMIT 1),
    upd AS (
      UPDATE availability_events a SET
        cursor_created_at = coalesce((SELECT created_at FROM last), a.cursor_created_at),
        cursor_id = coalesce((SELECT id FROM last), a.cursor_id),
        matched = a.matched + (SELECT count(*) FROM page),
        notified = a.notified + (SELECT count(*) FROM ins),
        status = CASE WHEN (SELECT count(*) FROM page) < ${limit} THEN 'DONE' ELSE 'FANNING_OUT' END,
        completed_at = CASE WHEN (SELECT count(*) FROM page) < ${limit} THEN now() END,
        updated_at = now()
      WHERE a.id = ${av.id})
    SELECT ARRAY(SELECT id FROM ins ORDER BY id) AS ids, (SELECT count(*) FROM page)::int AS n`.execute(trx);
  const { ids, n } = rows[0]!;
  await handOver(o, trx, av, ids.map(Number));
  o.metrics?.waitlistMatches.inc({ mode: av.mode }, n);
  return { done: n < limit };
}

async function handOver(o: FanoutOptions, trx: Trx, av: AvailabilityRow, ids: number[]) {
  const size = o.chunkSize ?? 500;
  for (let i = 0; i < ids.length; i += size)
    await o.onNotified?.(trx, { listingId: av.listing_id, availabilityId: Number(av.id), availabilityCreatedAt: av.created_at, notificationIds: ids.slice(i, i + size) });
}

/** Keeps the pool alive while offers are being made from it (seats and hold together). */
async function renewPool(trx: Trx, poolHoldId: string, ttlSeconds: number) {
  await sql`UPDATE holds SET status = 'WAITLIST', expires_at = now() + make_interval(secs => ${ttlSeconds}), updated_at = now() WHERE id = ${poolHoldId}`.execute(trx);
  await sql`UPDATE seats SET expires_at = now() + make_interval(secs => ${ttlSeconds}) WHERE hold_id = ${poolHoldId} AND status = 'HELD'`.execute(trx);
}

/**
 * OFFER: walks the matches in FIFO order and gives each the best block of their quantity the pool still has
 * (a reserve hold in their name for the offer's life), until the pool is empty or the matches are. Seats no
 * match can use go back on open sale when the matches run out.
 */
async function offerPage(o: FanoutOptions, trx: Trx, av: AvailabilityRow): Promise<{ done: boolean }> {
  const poolHoldId = av.pool_hold_id!;
  let pool = await poolSeats(trx, poolHoldId);
  const finish = async () => {
    if (pool.length > 0) {
      await sql`UPDATE seats SET status = 'AVAILABLE', hold_id = NULL, expires_at = NULL, version = version + 1
                WHERE hold_id = ${poolHoldId} AND status = 'HELD'`.execute(trx);
    }
    await sql`UPDATE holds SET status = 'RELEASED', updated_at = now() WHERE id = ${poolHoldId}`.execute(trx);
    await sql`UPDATE availability_events SET status = 'DONE', completed_at = now(), updated_at = now() WHERE id = ${av.id}`.execute(trx);
    return { done: true };
  };
  if (pool.length === 0) return finish();
  await renewPool(trx, poolHoldId, av.offer_ttl_seconds + POOL_GRACE_SECONDS);

  const summary = summarize(pool, new Map(pool.map((s) => [s.sectionCode, { price_level: s.priceLevel, price_cents: s.priceCents }])));
  const limit = o.offerPageSize ?? 200;
  const { rows: candidates } = await sql<CriteriaRow & { id: number; cursor_at: string; account_id: string }>`
    WITH ${secsCte(summary)}
    SELECT w.id, w.created_at::text AS cursor_at, w.account_id, w.date_from::text AS date_from, w.date_to::text AS date_to,
           w.max_price_cents, w.quantity, w.sections, w.price_levels
    FROM waitlist_entries w
    WHERE ${matchSql(av)}
      AND NOT EXISTS (SELECT 1 FROM notifications n WHERE n.availability_id = ${av.id} AND n.entry_id = w.id)
    ORDER BY w.created_at, w.id LIMIT ${limit}`.execute(trx);

  const offerIds: string[] = [];
  let considered: (typeof candidates)[number] | undefined;
  for (const c of candidates) {
    if (pool.length === 0) break;
    considered = c;
    const criteria = entryCriteria(c);
    if (!criteriaMatch(criteria, { performanceDate: av.performance_date, sections: summarize(pool, priceMap(pool)) })) continue;
    const block = blockFor(criteria, pool);
    if (!block) continue;
    const offerId = randomUUID();
    const reserveId = randomUUID();
    const ids = block.map((s) => s.id);
    await sql`
      INSERT INTO holds (id, event_id, account_id, section_code, quantity, status, expires_at)
      VALUES (${reserveId}, ${av.event_id}, ${WAITLIST_ACCOUNT}, ${block[0]!.sectionCode}, ${block.length}, 'WAITLIST',
              now() + make_interval(secs => ${av.offer_ttl_seconds + POOL_GRACE_SECONDS}))`.execute(trx);
    await sql`
      UPDATE seats SET hold_id = ${reserveId}, expires_at = now() + make_interval(secs => ${av.offer_ttl_seconds + POOL_GRACE_SECONDS}), version = version + 1
      WHERE hold_id = ${poolHoldId} AND status = 'HELD' AND id = ANY(${ids}::bigint[])`.execute(trx);
    await sql`
      INSERT INTO waitlist_offers (id, availability_id, listing_id, event_id, entry_id, account_id, quantity, reserve_hold_id, expires_at)
      VALUES (${offerId}, ${av.id}, ${av.listing_id}, ${av.event_id}, ${c.id}, ${c.account_id}, ${block.length}, ${reserveId},
              now() + make_interval(secs => ${av.offer_ttl_seconds}))`.execute(trx);
    await sql`
      SELECT graphile_worker.add_job('waitlist_offer_expire', json_build_object('offerId', ${offerId}::text),
        run_at := now() + make_interval(secs => ${av.offer_ttl_seconds}), job_key := ${`waitlist_offer_expire:${offerId}`}, max_attempts := 25)`.execute(trx);
    offerIds.push(offerId);
    const taken = new Set(ids);
    pool = pool.filter((s) => !taken.has(s.id));
  }
  let notificationIds: number[] = [];
  if (offerIds.length > 0) {
    const { rows } = await sql<{ id: number }>`
      INSERT INTO notifications (account_id, listing_id, availability_id, entry_id, kind, offer_id)
      SELECT o.account_id, o.listing_id, o.availability_id, o.entry_id, 'OFFER', o.id
      FROM unnest(${offerIds}::uuid[]) WITH ORDINALITY AS t(id, ord) JOIN waitlist_offers o ON o.id = t.id
      ORDER BY t.ord
      RETURNING id`.execute(trx);
    notificationIds = rows.map((r) => Number(r.id)).sort((a, b) => a - b);
  }
  if (considered)
    await sql`UPDATE availability_events SET cursor_created_at = ${considered.cursor_at}::timestamptz, cursor_id = ${considered.id},
                matched = matched + ${offerIds.length}, notified = notified + ${notificationIds.length}, status = 'FANNING_OUT', updated_at = now()
              WHERE id = ${av.id}`.execute(trx);
  await handOver(o, trx, av, notificationIds);
  o.metrics?.waitlistMatches.inc({ mode: 'OFFER' }, offerIds.length);
  if (pool.length === 0) {
    await sql`UPDATE holds SET status = 'RELEASED', updated_at = now() WHERE id = ${poolHoldId}`.execute(trx);
    await sql`UPDATE availability_events SET status = 'DONE', completed_at = now(), updated_at = now() WHERE id = ${av.id}`.execute(trx);
    return { done: true };
  }
  if (candidates.length < limit && considered === candidates.at(-1)) return finish();
  return { done: false };
}

function priceMap(pool: PoolSeat[]) {
  return new Map(pool.map((s) => [s.sectionCode, { price_level: s.priceLevel, price_cents: s.priceCents }]));
}

export type { AvailableSection };
