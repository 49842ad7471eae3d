import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';

// The waitlist's housekeeping SQL (maintenance.ts), and the waitlists' sizes for the metrics gauge.

/** Releases not DONE that have not moved for `staleAfterSeconds`. */
export async function findStaleAvailability(db: Db, staleAfterSeconds: number) {
  const stale = await sql<{ id: number }>`
    SELECT id FROM availability_events
    WHERE status <> 'DONE' AND updated_at < now() - make_interval(secs => ${staleAfterSeconds})`.execute(db);
  return stale;
}

/** Open offers more than 5 seconds past their expiry (their expiry job did not run on time), oldest first. */
export async function findOverdueOffers(db: Db) {
  const overdue = await sql<{ id: string }>`
    SELECT id FROM waitlist_offers WHERE status = 'OPEN' AND expires_at < now() - interval '5 seconds' ORDER BY expires_at LIMIT 1000`.execute(
    db,
  );
  return overdue;
}

/** Deletes up to `batch` expired entries; how many. */
export async function deleteExpiredEntries(db: Db, batch: number): Promise<number> {
  const r = await sql`
      DELETE FROM waitlist_entries w USING (
        SELECT listing_id, created_at, id FROM waitlist_entries WHERE expires_at <= now() LIMIT ${batch}) x
      WHERE w.listing_id = x.listing_id AND w.created_at = x.created_at AND w.id = x.id`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

/** Lapsed waitlist pools (up to 1000) RELEASED, and their seats still HELD and lapsed back to AVAILABLE; how many pools. */
export async function releaseLapsedPools(trx: Trx): Promise<number> {
  const { rows } = await sql<{ id: string }>`
    UPDATE holds SET status = 'RELEASED', updated_at = now()
    WHERE id IN (SELECT id FROM holds WHERE status = 'WAITLIST' AND expires_at <= now() LIMIT 1000 FOR UPDATE SKIP LOCKED)
    RETURNING id`.execute(trx);
  if (rows.length > 0)
    await sql`UPDATE seats SET status = 'AVAILABLE', hold_id = NULL, expires_at = NULL, version = version + 1
              WHERE hold_id = ANY(${rows.map((r) => r.id)}::uuid[]) AND status = 'HELD' AND expires_at <= now()`.execute(trx);
  return rows.length;
}

/** Live entries of the listings with a performance still to come, the largest first (for the metrics gauge). */
export async function waitlistSizes(db: Db, limit = 100): Promise<{ listingId: string; entries: number }[]> {
  const { rows } = await sql<{ listing_id: string; entries: number }>`
    SELECT l.id AS listing_id, (SELECT count(*) FROM waitlist_entries w WHERE w.listing_id = l.id AND w.expires_at > now())::int AS entries
    FROM listings l WHERE EXISTS (SELECT 1 FROM events e WHERE e.listing_id = l.id AND e.starts_at > now())
    ORDER BY entries DESC LIMIT ${limit}`.execute(db);
  return rows.map((r) => ({ listingId: r.listing_id, entries: r.entries }));
}
