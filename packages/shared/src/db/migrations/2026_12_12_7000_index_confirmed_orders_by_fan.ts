import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * The admission controller's once-a-second `shopping` count (`liveSignals`) anti-joins the fans who claimed within
 * the leaver time (every fan let in, when the store lags) against the event's confirmed orders: with only the fan's
 * orders index (`orders_account_idx`, every status), its plan read every order of the event from the heap to keep
 * the confirmed ones, or scanned the whole table. Confirmed orders by fan, in a partial index: the event's entries
 * alone, read without the heap. One index entry an order's insert; a cancellation's update adds none.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX IF NOT EXISTS orders_confirmed_account_idx ON orders (event_id, account_id) WHERE status = 'CONFIRMED'`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS orders_confirmed_account_idx`.execute(db);
}
