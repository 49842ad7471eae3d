import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import type { WaitlistMode } from './waitlist.table.js';

// Listings' SQL as the waitlist reads and sets them (listings.ts).

export function findListingRow(db: Db | Trx, listingId: string) {
  return db.selectFrom('listings').selectAll().where('id', '=', listingId).executeTakeFirst();
}

/** A listing's performances (events), by start, with whether each has sold out. */
export async function findPerformanceRows(db: Db | Trx, listingId: string) {
  const { rows } = await sql<{
    id: string;
    name: string;
    starts_at: Date;
    date: string;
    per_account_seat_limit: number;
    sold_out: boolean;
  }>`
    SELECT e.id, e.name, e.starts_at, to_char(e.starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date, e.per_account_seat_limit,
           coalesce(q.sold_out_at IS NOT NULL, false) AS sold_out
    FROM events e LEFT JOIN queue_state q ON q.event_id = e.id
    WHERE e.listing_id = ${listingId} ORDER BY e.starts_at`.execute(db);
  return rows;
}

/** Every section and its price level across a listing's performances. */
export async function findListingPlaces(db: Db | Trx, listingId: string) {
  const { rows } = await sql<{ section: string; price_level: string }>`
    SELECT DISTINCT s.code AS section, s.price_level FROM sections s JOIN events e ON e.id = s.event_id
    WHERE e.listing_id = ${listingId}`.execute(db);
  return rows;
}

/** Sets a listing's waitlist settings (none: only checks it exists); whether the listing exists. */
export async function updateListingSettings(
  db: Db | Trx,
  listingId: string,
  set: { waitlist_mode?: WaitlistMode; waitlist_ttl_seconds?: number; offer_ttl_seconds?: number; fanout_inline_threshold?: number },
): Promise<boolean> {
  return Object.keys(set).length === 0
    ? (await db.selectFrom('listings').select('id').where('id', '=', listingId).executeTakeFirst()) !== undefined
    : (await db.updateTable('listings').set(set).where('id', '=', listingId).executeTakeFirst()).numUpdatedRows > 0n;
}
