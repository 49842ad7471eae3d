import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * The lottery's notifications in the fans' inbox: LOTTERY_WON (with the cohort and purchase window, read from the
 * winner's row) and LOTTERY_NOT_DRAWN (on the waitlist now). They belong to an event rather than to an availability
 * event, so notifications get an `event_id`; the draw writes at most one per registration (a unique key, beside
 * the waitlist's own at-most-once rule).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE notifications ADD COLUMN event_id uuid REFERENCES events(id) ON DELETE CASCADE`.execute(db);
  await sql`ALTER TABLE notifications DROP CONSTRAINT notifications_kind_check`.execute(db);
  await sql`
    ALTER TABLE notifications ADD CONSTRAINT notifications_kind_check
      CHECK (kind IN ('OFFER', 'BROADCAST', 'ON_SALE', 'OFFER_EXPIRED', 'LOTTERY_WON', 'LOTTERY_NOT_DRAWN'))`.execute(db);
  await sql`
    ALTER TABLE notifications ADD CONSTRAINT notifications_lottery_event
      CHECK ((kind IN ('LOTTERY_WON', 'LOTTERY_NOT_DRAWN')) = (event_id IS NOT NULL))`.execute(db);
  await sql`CREATE UNIQUE INDEX notifications_lottery_once_uq ON notifications (event_id, account_id) WHERE event_id IS NOT NULL`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DELETE FROM notifications WHERE event_id IS NOT NULL`.execute(db);
  await sql`DROP INDEX IF EXISTS notifications_lottery_once_uq`.execute(db);
  await sql`ALTER TABLE notifications DROP CONSTRAINT IF EXISTS notifications_lottery_event`.execute(db);
  await sql`ALTER TABLE notifications DROP CONSTRAINT notifications_kind_check`.execute(db);
  await sql`ALTER TABLE notifications ADD CONSTRAINT notifications_kind_check CHECK (kind IN ('OFFER', 'BROADCAST', 'ON_SALE', 'OFFER_EXPIRED'))`.execute(
    db,
  );
  await sql`ALTER TABLE notifications DROP COLUMN event_id`.execute(db);
}
