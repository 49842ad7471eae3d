import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import type { Criteria, CriteriaRow } from './criteria.js';

// Waitlist entries' SQL: joining (one statement per batch), leaving, a fan's entries, and what is on sale now.

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

export interface EntryRow extends CriteriaRow {
  listing_id: string;
  id: number;
  account_id: string;
  created_at: Date;
  expires_at: Date;
}

/** Deletes the fan's entry on the listing; whether there was one. */
export async function deleteEntryOf(trx: Trx, listingId: string, accountId: string): Promise<boolean> {
  const r = await trx
    .deleteFrom('waitlist_entries')
    .where('listing_id', '=', listingId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return r.numDeletedRows > 0n;
}

/** The fan's live entries with, for each, the live entries ahead of it that compete for the same seats, and all live ones. */
export async function findEntriesWithPlace(db: Db, accountId: string) {
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
      ORDER BY w.created_at`.execute(db);
  return rows;
}

/** The fan's live entries, oldest first. */
export async function findLiveEntries(db: Db, accountId: string): Promise<EntryRow[]> {
  const { rows } = await sql<EntryRow>`
      SELECT * FROM waitlist_entries WHERE account_id = ${accountId} AND expires_at > now() ORDER BY created_at`.execute(db);
  return rows;
}

/** One statement for a batch of joins, each (listing, account) once (see insertJoins). */
export async function upsertEntries(db: Db, unique: JoinItem[]) {
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
  return rows;
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
