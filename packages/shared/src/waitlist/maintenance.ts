import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { enqueueFanout, relayFanouts } from './availability.js';
import { expireOffer } from './offers.js';

export interface MaintenanceResult {
  fanoutsResumed: number;
  offersExpired: number;
  entriesDeleted: number;
  poolsReleased: number;
}

/**
 * The waitlist's housekeeping, run every minute by the worker (and once when a worker starts):
 * - enqueues deferred fan-outs the relay has not (a worker's relay loop normally does within a fraction of a second);
 * - resumes fan-outs that stopped moving (a worker died mid-way: its job's lock outlives it, so the work is
 *   re-enqueued; the fan-out resumes from its committed cursor);
 * - lapses offers whose expiry job did not run on time (their seats cascade);
 * - deletes expired entries in small batches (reads already ignore them: expiry is a read-time predicate), so
 *   the deletes never hold many row locks or block joins;
 * - tidies lapsed waitlist pools (their seats are already on open sale by read-time expiry).
 */
export async function maintainWaitlist(db: Db, opts: { staleAfterMs?: number; deleteBatch?: number } = {}): Promise<MaintenanceResult> {
  while ((await relayFanouts(db)) > 0);
  const stale = await sql<{ id: number }>`
    SELECT id FROM availability_events
    WHERE status <> 'DONE' AND updated_at < now() - make_interval(secs => ${(opts.staleAfterMs ?? 30_000) / 1000})`.execute(db);
  for (const r of stale.rows) await db.transaction().execute((trx) => enqueueFanout(trx, Number(r.id)));

  const overdue = await sql<{ id: string }>`
    SELECT id FROM waitlist_offers WHERE status = 'OPEN' AND expires_at < now() - interval '5 seconds' ORDER BY expires_at LIMIT 1000`.execute(
    db,
  );
  let offersExpired = 0;
  for (const o of overdue.rows) if (await expireOffer(db, o.id)) offersExpired++;

  const batch = opts.deleteBatch ?? 5000;
  let entriesDeleted = 0;
  for (;;) {
    const r = await sql`
      DELETE FROM waitlist_entries w USING (
        SELECT listing_id, created_at, id FROM waitlist_entries WHERE expires_at <= now() LIMIT ${batch}) x
      WHERE w.listing_id = x.listing_id AND w.created_at = x.created_at AND w.id = x.id`.execute(db);
    const n = Number(r.numAffectedRows ?? 0);
    entriesDeleted += n;
    if (n < batch) break;
  }

  const pools = await db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ id: string }>`
      UPDATE holds SET status = 'RELEASED', updated_at = now()
      WHERE id IN (SELECT id FROM holds WHERE status = 'WAITLIST' AND expires_at <= now() LIMIT 1000 FOR UPDATE SKIP LOCKED)
      RETURNING id`.execute(trx);
    if (rows.length > 0)
      await sql`UPDATE seats SET status = 'AVAILABLE', hold_id = NULL, expires_at = NULL, version = version + 1
                WHERE hold_id = ANY(${rows.map((r) => r.id)}::uuid[]) AND status = 'HELD' AND expires_at <= now()`.execute(trx);
    return rows.length;
  });
  return { fanoutsResumed: stale.rows.length, offersExpired, entriesDeleted, poolsReleased: pools };
}

/** Live entries of the listings with a performance still to come, the largest first (for the metrics gauge). */
export async function waitlistSizes(db: Db, limit = 100): Promise<{ listingId: string; entries: number }[]> {
  const { rows } = await sql<{ listing_id: string; entries: number }>`
    SELECT l.id AS listing_id, (SELECT count(*) FROM waitlist_entries w WHERE w.listing_id = l.id AND w.expires_at > now())::int AS entries
    FROM listings l WHERE EXISTS (SELECT 1 FROM events e WHERE e.listing_id = l.id AND e.starts_at > now())
    ORDER BY entries DESC LIMIT ${limit}`.execute(db);
  return rows.map((r) => ({ listingId: r.listing_id, entries: r.entries }));
}
