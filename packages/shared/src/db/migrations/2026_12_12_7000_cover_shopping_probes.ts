import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * The admission controller's once-a-second `shopping` count (`liveSignals`) anti-joins the fans who claimed within
 * the leaver time (every fan let in, when the store lags) against the event's holds and its confirmed orders: it read
 * every hold of the event from the heap (a sequential or bitmap heap scan, for four columns) and every order of the
 * event to keep the confirmed ones. Both read from an index alone now:
 *
 * - the fan's holds index (`holds_account_idx`, the same keys) carries the hold's status, expiry and creation time:
 *   the same index entries as before (one a hold's insert, one a status change, which already writes every index of
 *   the row since its `updated_at` is indexed), each a few bytes wider; rebuilt under the same name;
 * - confirmed orders by fan (`orders_confirmed_account_idx`, new, partial): one entry an order's insert; a cancelled
 *   order's update adds none.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX IF NOT EXISTS holds_account_cover_idx ON holds (event_id, account_id) INCLUDE (status, expires_at, created_at)`.execute(
    db,
  );
  await sql`DROP INDEX IF EXISTS holds_account_idx`.execute(db);
  await sql`ALTER INDEX holds_account_cover_idx RENAME TO holds_account_idx`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS orders_confirmed_account_idx ON orders (event_id, account_id) WHERE status = 'CONFIRMED'`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS orders_confirmed_account_idx`.execute(db);
  await sql`DROP INDEX IF EXISTS holds_account_idx`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS holds_account_idx ON holds (event_id, account_id)`.execute(db);
}
