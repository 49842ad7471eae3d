import { randomUUID } from 'node:crypto';
import type { Db, Trx } from '../db/connect.js';
import type { Metrics } from '../metrics/index.js';
import { criteriaMatch, entryCriteria } from './criteria.js';
import { blockFor, poolSeats, type PoolSeat } from './pool.js';
import { enqueueFanout, POOL_GRACE_SECONDS, summarize, WAITLIST_ACCOUNT } from './availability.js';
import type { AvailableSection } from './waitlist.table.js';
import * as repo from './waitlist.repository.js';
import type { AvailabilityRow } from './waitlist.repository.js';

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
      const av = await repo.lockAvailability(trx, availabilityId);
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
    if ((await repo.countMatches(trx, av, av.inline_threshold + 1)) <= av.inline_threshold) limit = av.inline_threshold + 1;
  }
  const kind = av.mode === 'ON_SALE' ? 'ON_SALE' : 'BROADCAST';
  const { ids, n } = await repo.notifyMatchesPage(trx, av, limit, kind);
  await handOver(o, trx, av, ids.map(Number));
  o.metrics?.waitlistMatches.inc({ mode: av.mode }, n);
  return { done: n < limit };
}

async function handOver(o: FanoutOptions, trx: Trx, av: AvailabilityRow, ids: number[]) {
  const size = o.chunkSize ?? 500;
  for (let i = 0; i < ids.length; i += size)
    await o.onNotified?.(trx, {
      listingId: av.listing_id,
      availabilityId: Number(av.id),
      availabilityCreatedAt: av.created_at,
      notificationIds: ids.slice(i, i + size),
    });
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
      await repo.returnPoolToSale(trx, poolHoldId);
    }
    await repo.releaseHold(trx, poolHoldId);
    await repo.markReleaseDone(trx, av.id);
    return { done: true };
  };
  if (pool.length === 0) return finish();
  await repo.renewPool(trx, poolHoldId, av.offer_ttl_seconds + POOL_GRACE_SECONDS);

  const summary = summarize(pool, new Map(pool.map((s) => [s.sectionCode, { price_level: s.priceLevel, price_cents: s.priceCents }])));
  const limit = o.offerPageSize ?? 200;
  const candidates = await repo.findOfferCandidates(trx, av, summary, limit);

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
    await repo.reserveOffer(trx, av, {
      offerId,
      reserveId,
      accountId: WAITLIST_ACCOUNT,
      fan: { entryId: c.id, accountId: c.account_id },
      sectionCode: block[0]!.sectionCode,
      seatIds: ids,
      poolHoldId,
      reserveSeconds: av.offer_ttl_seconds + POOL_GRACE_SECONDS,
    });
    offerIds.push(offerId);
    const taken = new Set(ids);
    pool = pool.filter((s) => !taken.has(s.id));
  }
  let notificationIds: number[] = [];
  if (offerIds.length > 0) {
    notificationIds = (await repo.insertOfferNotices(trx, offerIds)).sort((a, b) => a - b);
  }
  if (considered)
    await repo.advanceOfferCursor(trx, av.id, {
      cursorAt: considered.cursor_at,
      cursorId: considered.id,
      matched: offerIds.length,
      notified: notificationIds.length,
    });
  await handOver(o, trx, av, notificationIds);
  o.metrics?.waitlistMatches.inc({ mode: 'OFFER' }, offerIds.length);
  if (pool.length === 0) {
    await repo.releaseHold(trx, poolHoldId);
    await repo.markReleaseDone(trx, av.id);
    return { done: true };
  }
  if (candidates.length < limit && considered === candidates.at(-1)) return finish();
  return { done: false };
}

function priceMap(pool: PoolSeat[]) {
  return new Map(pool.map((s) => [s.sectionCode, { price_level: s.priceLevel, price_cents: s.priceCents }]));
}

export type { AvailableSection };
