import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { GroupCommit } from '../db/group-commit.js';
import { DomainError, invalid } from '../errors.js';
import { criteriaMatch, entryCriteria, normalizeCriteria, waitlistCriteriaSchema, type Criteria, type CriteriaRow } from './criteria.js';
import { ListingCache, type ListingInfo } from './listings.js';
import { declineOpenOffersOf } from './offers.js';

/** A fan's waitlist entry as they see it. */
export interface WaitlistEntry {
  listingId: string;
  listingName: string;
  entryId: number;
  criteria: Criteria;
  joinedAt: Date;
  expiresAt: Date;
}

export interface WaitlistEntryWithPlace extends WaitlistEntry {
  /** 1 + the live entries ahead of this one (FIFO) that compete for the same seats (overlapping criteria). */
  place: number;
  /** Live entries on the listing in all. */
  listingEntries: number;
}

export interface JoinItem {
  listingId: string;
  accountId: string;
  criteria: Criteria;
  ttlSeconds: number;
}

export interface JoinRow {
  id: number;
  created_at: Date;
  expires_at: Date;
  inserted: boolean;
}

/**
 * Parses a fan's criteria against a listing: every error names its field (criteria.<field>), and nothing is
 * written unless all of it holds.
 */
export function parseCriteria(listing: ListingInfo, input: unknown): Criteria {
  const parsed = waitlistCriteriaSchema.safeParse(input ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = ['criteria', ...issue.path.map(String)].join('.');
    throw invalid('INVALID_CRITERIA', `${path}: ${issue.message}`, path, {
      issues: parsed.error.issues.map((i) => ({ path: ['criteria', ...i.path.map(String)].join('.'), message: i.message })),
    });
  }
  const c = normalizeCriteria(parsed.data);
  const inRange = listing.performances.filter(
    (p) => (c.dateFrom === null || p.date >= c.dateFrom) && (c.dateTo === null || p.date <= c.dateTo),
  );
  if (inRange.length === 0)
    throw invalid(
      'DATE_RANGE_OUTSIDE_LISTING',
      'no performance of this listing falls in that date range',
      c.dateFrom !== null ? 'criteria.dateFrom' : 'criteria.dateTo',
      {
        performances: listing.performances.map((p) => p.date),
      },
    );
  const limit = Math.max(...inRange.map((p) => p.perAccountSeatLimit));
  if (c.quantity > limit)
    throw invalid('QUANTITY_ABOVE_LIMIT', `at most ${limit} seats per account for these performances`, 'criteria.quantity', { limit });
  const unknownSections = (c.sections ?? []).filter((s) => !listing.sections.has(s));
  if (unknownSections.length > 0)
    throw invalid('SECTION_NOT_FOUND', `this listing has no section ${unknownSections.join(', ')}`, 'criteria.sections', {
      unknown: unknownSections,
    });
  const unknownLevels = (c.priceLevels ?? []).filter((s) => !listing.priceLevels.has(s));
  if (unknownLevels.length > 0)
    throw invalid('PRICE_LEVEL_NOT_FOUND', `this listing has no price level ${unknownLevels.join(', ')}`, 'criteria.priceLevels', {
      unknown: unknownLevels,
    });
  return c;
}

/**
 * Joining, leaving and reading waitlists. A join is idempotent on (account, listing): a repeat keeps the fan's
 * place (and renews the entry's life), new criteria replace the old in place; only an entry that had already
 * expired starts again at the back. Joins within a couple of milliseconds share one statement (GroupCommit).
 */
export class WaitlistService {
  readonly listings: ListingCache;
  private readonly joins: GroupCommit<JoinItem, JoinRow>;

  constructor(
    private readonly db: Db,
    opts: { listings?: ListingCache } = {},
  ) {
    this.listings = opts.listings ?? new ListingCache(db, 15_000);
    this.joins = new GroupCommit((items) => insertJoins(db, items), { maxBatch: 500, maxWaitMs: 2, maxConcurrentBatches: 3 });
  }

  async join(accountId: string, listingId: string, criteriaInput: unknown): Promise<{ entry: WaitlistEntry; created: boolean }> {
    const listing = await this.listings.get(listingId);
    const criteria = parseCriteria(listing, criteriaInput);
    const row = await this.joins.submit({ listingId, accountId, criteria, ttlSeconds: listing.ttlSeconds });
    return {
      created: row.inserted,
      entry: {
        listingId,
        listingName: listing.name,
        entryId: Number(row.id),
        criteria,
        joinedAt: row.created_at,
        expiresAt: row.expires_at,
      },
    };
  }

  /** Leaves the listing's waitlist; open offers the fan holds are declined (their seats go to the next fan). */
  async leave(accountId: string, listingId: string): Promise<{ left: boolean }> {
    await this.listings.get(listingId);
    return this.db.transaction().execute(async (trx) => {
      const r = await trx
        .deleteFrom('waitlist_entries')
        .where('listing_id', '=', listingId)
        .where('account_id', '=', accountId)
        .executeTakeFirst();
      await declineOpenOffersOf(trx, accountId, listingId);
      return { left: r.numDeletedRows > 0n };
    });
  }

  /** The fan's live entries, each with its place among the entries that compete for the same seats. */
  async mine(accountId: string): Promise<WaitlistEntryWithPlace[]> {
    const { rows } = await sql<EntryRow & { listing_name: string; ahead: number; total: number }>`
      SELECT w.*, l.name AS listing_name,
        (SELECT count(*) FROM waitlist_entries o
          WHERE o.listing_id = w.listing_id AND o.expires_at > now() AND (o.created_at, o.id) < (w.created_at, w.id)
            AND (o.date_from IS NULL OR w.date_to IS NULL OR o.date_from <= w.date_to)
            AND (o.date_to IS NULL OR w.date_from IS NULL OR o.date_to >= w.date_from)
            AND (o.sections IS NULL OR w.sections IS NULL OR o.sections && w.sections)
            AND (o.price_levels IS NULL OR w.price_levels IS NULL OR o.price_levels && w.price_levels))::int AS ahead,
        (SELECT count(*) FROM waitlist_entries o WHERE o.listing_id = w.listing_id AND o.expires_at > now())::int AS total
      FROM waitlist_entries w JOIN listings l ON l.id = w.listing_id
      WHERE w.account_id = ${accountId} AND w.expires_at > now()
      ORDER BY w.created_at`.execute(this.db);
    return rows.map((r) => ({ ...toEntry(r, r.listing_name), place: r.ahead + 1, listingEntries: r.total }));
  }

  /**
   * Fan-out on read: which of the fan's entries match what is on sale right now, computed when the fan asks
   * (no per-fan writes): for each entry, the performances in its date range and the sections with the fan's
   * quantity of adjacent seats at or below their price.
   */
  async matchesNow(accountId: string): Promise<MatchNow[]> {
    // The entries alone (no place counts: those scan the listing, and matching does not need them).
    const { rows } = await sql<EntryRow>`
      SELECT * FROM waitlist_entries WHERE account_id = ${accountId} AND expires_at > now() ORDER BY created_at`.execute(this.db);
    const entries = rows.map((r) => toEntry(r, ''));
    if (entries.length === 0) return [];
    const listings = new Map<string, ListingInfo>();
    for (const e of entries) if (!listings.has(e.listingId)) listings.set(e.listingId, await this.listings.get(e.listingId));
    const eventIds = [
      ...new Set(
        [...listings.values()].flatMap((l) => l.performances.filter((p) => p.startsAt.getTime() > Date.now()).map((p) => p.eventId)),
      ),
    ];
    const available = await availableNow(this.db, eventIds);
    const out: MatchNow[] = [];
    for (const e of entries) {
      const listing = listings.get(e.listingId)!;
      for (const p of listing.performances) {
        const sections = available.get(p.eventId);
        if (!sections) continue;
        const summary = { performanceDate: p.date, sections };
        if (!criteriaMatch(e.criteria, summary)) continue;
        out.push({
          listingId: e.listingId,
          entryId: e.entryId,
          eventId: p.eventId,
          eventName: p.name,
          startsAt: p.startsAt,
          sections: sections
            .filter((s) => criteriaMatch(e.criteria, { performanceDate: p.date, sections: [s] }))
            .map((s) => ({
              section: s.section,
              priceLevel: s.priceLevel,
              priceCents: s.priceCents,
              available: s.available,
              longestRun: s.longestRun,
            })),
        });
      }
    }
    return out;
  }
}

export interface MatchNow {
  listingId: string;
  entryId: number;
  eventId: string;
  eventName: string;
  startsAt: Date;
  sections: { section: string; priceLevel: string; priceCents: number; available: number; longestRun: number }[];
}

interface EntryRow extends CriteriaRow {
  listing_id: string;
  id: number;
  account_id: string;
  created_at: Date;
  expires_at: Date;
}

function toEntry(r: EntryRow, listingName: string): WaitlistEntry {
  return {
    listingId: r.listing_id,
    listingName,
    entryId: Number(r.id),
    criteria: entryCriteria(r),
    joinedAt: r.created_at,
    expiresAt: r.expires_at,
  };
}

/**
 * One statement for a batch of joins. A row is new when its created_at is this transaction's start (a fresh
 * insert, or an expired entry starting again at the back; a partitioned table cannot return xmax). Repeats of one (listing, account) within the batch collapse to the last
 * (a statement cannot write a row twice); the first of them is told it created the entry, if one was created.
 */
export async function insertJoins(db: Db, items: JoinItem[]): Promise<JoinRow[]> {
  const key = (i: JoinItem) => `${i.listingId}\u0000${i.accountId}`;
  const last = new Map<string, JoinItem>();
  for (const i of items) last.set(key(i), i);
  const unique = [...last.values()];
  const list = (xs: string[] | null) => (xs === null ? null : JSON.stringify(xs));
  const { rows } = await sql<JoinRow & { listing_id: string; account_id: string }>`
    INSERT INTO waitlist_entries AS w (listing_id, account_id, expires_at, date_from, date_to, max_price_cents, quantity, sections, price_levels)
    SELECT t.listing_id, t.account_id, now() + make_interval(secs => t.ttl), t.date_from, t.date_to, t.max_price, t.quantity,
           CASE WHEN t.sections IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_array_elements_text(t.sections)) END,
           CASE WHEN t.levels IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_array_elements_text(t.levels)) END
    FROM unnest(${unique.map((i) => i.listingId)}::uuid[], ${unique.map((i) => i.accountId)}::text[], ${unique.map((i) => i.ttlSeconds)}::int[],
                ${unique.map((i) => i.criteria.dateFrom)}::date[], ${unique.map((i) => i.criteria.dateTo)}::date[],
                ${unique.map((i) => i.criteria.maxPriceCents)}::int[], ${unique.map((i) => i.criteria.quantity)}::smallint[],
                ${unique.map((i) => list(i.criteria.sections))}::jsonb[], ${unique.map((i) => list(i.criteria.priceLevels))}::jsonb[])
         WITH ORDINALITY AS t(listing_id, account_id, ttl, date_from, date_to, max_price, quantity, sections, levels, ord)
    ORDER BY t.ord
    ON CONFLICT (listing_id, account_id) DO UPDATE SET
      created_at = CASE WHEN w.expires_at <= now() THEN now() ELSE w.created_at END,
      id = CASE WHEN w.expires_at <= now() THEN nextval('waitlist_entries_id_seq') ELSE w.id END,
      expires_at = excluded.expires_at, date_from = excluded.date_from, date_to = excluded.date_to,
      max_price_cents = excluded.max_price_cents, quantity = excluded.quantity, sections = excluded.sections,
      price_levels = excluded.price_levels
    RETURNING listing_id, account_id, id, created_at, expires_at, (created_at = now()) AS inserted`.execute(db);
  const byKey = new Map(rows.map((r) => [`${r.listing_id}\u0000${r.account_id}`, r]));
  const told = new Set<string>();
  return items.map((i) => {
    const k = key(i);
    const r = byKey.get(k);
    if (!r) throw new DomainError('unavailable', 'WAITLIST_WRITE_FAILED', 'the waitlist write returned no row; retry');
    const first = !told.has(k);
    told.add(k);
    return { ...r, inserted: r.inserted && first };
  });
}

/** Per event, the sections with seats on sale now: price, count and the longest run of adjacent seats. */
export async function availableNow(db: Db, eventIds: string[]) {
  const out = new Map<string, { section: string; priceLevel: string; priceCents: number; available: number; longestRun: number }[]>();
  if (eventIds.length === 0) return out;
  const { rows } = await sql<{
    event_id: string;
    section: string;
    price_level: string;
    price_cents: number;
    available: number;
    longest_run: number;
  }>`
    WITH free AS (
      SELECT event_id, section_code, row_index, seat_number - row_number() OVER (PARTITION BY event_id, section_code, row_index ORDER BY seat_number) AS grp
      FROM seats
      WHERE event_id = ANY(${eventIds}::uuid[]) AND (status = 'AVAILABLE' OR (status = 'HELD' AND expires_at <= now()))),
    runs AS (SELECT event_id, section_code, count(*)::int AS run FROM free GROUP BY event_id, section_code, row_index, grp)
    SELECT r.event_id, r.section_code AS section, s.price_level, p.price_cents, sum(r.run)::int AS available, max(r.run)::int AS longest_run
    FROM runs r
    JOIN sections s ON s.event_id = r.event_id AND s.code = r.section_code
    JOIN price_levels p ON p.event_id = s.event_id AND p.code = s.price_level
    GROUP BY r.event_id, r.section_code, s.price_level, p.price_cents`.execute(db);
  for (const r of rows)
    out.set(r.event_id, [
      ...(out.get(r.event_id) ?? []),
      { section: r.section, priceLevel: r.price_level, priceCents: r.price_cents, available: r.available, longestRun: r.longest_run },
    ]);
  return out;
}
