import type { Db } from '../db/connect.js';
import { GroupCommit } from '../db/group-commit.js';
import { DomainError, invalid } from '../errors.js';
import { criteriaMatch, entryCriteria, normalizeCriteria, waitlistCriteriaSchema, type Criteria } from './criteria.js';
import {
  availableNow,
  deleteEntryOf,
  findEntriesWithPlace,
  findLiveEntries,
  upsertEntries,
  type EntryRow,
  type JoinItem,
  type JoinRow,
} from './entries.repository.js';
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
      const left = await deleteEntryOf(trx, listingId, accountId);
      await declineOpenOffersOf(trx, accountId, listingId);
      return { left };
    });
  }

  /** The fan's live entries, each with its place among the entries that compete for the same seats. */
  async mine(accountId: string): Promise<WaitlistEntryWithPlace[]> {
    const rows = await findEntriesWithPlace(this.db, accountId);
    return rows.map((r) => ({ ...toEntry(r, r.listing_name), place: r.ahead + 1, listingEntries: r.total }));
  }

  /**
   * Fan-out on read: which of the fan's entries match what is on sale right now, computed when the fan asks
   * (no per-fan writes): for each entry, the performances in its date range and the sections with the fan's
   * quantity of adjacent seats at or below their price.
   */
  async matchesNow(accountId: string): Promise<MatchNow[]> {
    // The entries alone (no place counts: those scan the listing, and matching does not need them).
    const rows = await findLiveEntries(this.db, accountId);
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
  const rows = await upsertEntries(db, unique);
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

export { availableNow, type JoinItem, type JoinRow } from './entries.repository.js';
