import { sql, type RawBuilder } from 'kysely';
import type { Trx } from '../db/connect.js';

/**
 * How hold writes commit (hold attempts, GA holds, releases). Checkout, orders and payments always commit
 * synchronously; this is about the reservations before them.
 *
 * - `async` (the default): the hold's transaction commits without waiting for its WAL to reach the disk
 *   (PostgreSQL's `synchronous_commit = off`, for that transaction only). A fan's hold then never waits on the
 *   disk's flush: on this machine an fdatasync now and then takes 300 ms, and every hold committing behind it
 *   waited as long. What it risks, and only if PostgreSQL itself crashes: the holds and releases of its last
 *   moments (at most 3 x `wal_writer_delay`, 600 ms by default) are lost whole, never half-written. A lost hold
 *   fails safe: its seats are available again, its fan is told HOLD_NOT_FOUND at checkout and holds again. A paid
 *   hold cannot be lost: checkout commits synchronously, and a flushed commit flushes every earlier one, its
 *   hold's included. A lost release leaves seats held until their hold expires (expiry is read-time).
 * - `sync`: every hold waits for its flush like any other transaction (`HOLD_COMMIT=sync`).
 */
export type HoldCommit = 'async' | 'sync';

/**
 * A select-list expression that sets the commit mode of the statement's own transaction (an autocommit statement
 * is its transaction); evaluate it once in a CTE or select list of the hold statement. `sync` leaves the
 * server's setting as it is.
 */
export function commitModeExpression(mode: HoldCommit): RawBuilder<string> {
  return mode === 'async' ? sql<string>`set_config('synchronous_commit', 'off', true)` : sql<string>`current_setting('synchronous_commit')`;
}

/** The same, as a statement for an explicit transaction (releases). Nothing for `sync`. */
export async function setCommitMode(trx: Trx, mode: HoldCommit): Promise<void> {
  if (mode === 'async') await sql`SET LOCAL synchronous_commit = off`.execute(trx);
}
