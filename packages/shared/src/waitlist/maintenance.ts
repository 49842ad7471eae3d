import type { Db } from '../db/connect.js';
import { enqueueFanout, relayFanouts } from './availability.js';
import { expireOffer } from './offers.js';
import { deleteExpiredEntries, findOverdueOffers, findStaleAvailability, releaseLapsedPools } from './maintenance.repository.js';

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
  const stale = await findStaleAvailability(db, (opts.staleAfterMs ?? 30_000) / 1000);
  for (const r of stale.rows) await db.transaction().execute((trx) => enqueueFanout(trx, Number(r.id)));

  const overdue = await findOverdueOffers(db);
  let offersExpired = 0;
  for (const o of overdue.rows) if (await expireOffer(db, o.id)) offersExpired++;

  const batch = opts.deleteBatch ?? 5000;
  let entriesDeleted = 0;
  for (;;) {
    const n = await deleteExpiredEntries(db, batch);
    entriesDeleted += n;
    if (n < batch) break;
  }

  const pools = await db.transaction().execute((trx) => releaseLapsedPools(trx));
  return { fanoutsResumed: stale.rows.length, offersExpired, entriesDeleted, poolsReleased: pools };
}

export { waitlistSizes } from './maintenance.repository.js';
