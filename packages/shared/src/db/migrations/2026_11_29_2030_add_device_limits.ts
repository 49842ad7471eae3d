import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  // Per-device seat limit of an event; NULL means "the same as the per-account limit".
  await sql`ALTER TABLE events ADD COLUMN per_device_seat_limit integer`.execute(db);
  await sql`ALTER TABLE events ADD CONSTRAINT events_device_limit CHECK (per_device_seat_limit IS NULL OR per_device_seat_limit > 0)`.execute(
    db,
  );

  // The account-independent fingerprint of the device a hold was made from (NULL: not made by a fan's device,
  // e.g. a waitlist offer). The per-device limit counts by it; the post-sale review clusters by it.
  await sql`ALTER TABLE holds ADD COLUMN device_hash text`.execute(db);
  await sql`CREATE INDEX holds_device_idx ON holds (event_id, device_hash) WHERE device_hash IS NOT NULL`.execute(db);

  // The per-device seat count of an event, taken under the device's lock: live holds plus holds whose order is
  // confirmed. Like onsale_lock_account_seats, VOLATILE so the count's snapshot is taken after the lock is
  // granted, and a hold can lock, count, take seats and record itself in one statement. A NULL device counts 0
  // and takes no lock.
  await sql`
    CREATE FUNCTION onsale_lock_device_seats(p_event uuid, p_device text) RETURNS integer
    LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      IF p_device IS NULL THEN
        RETURN 0;
      END IF;
      PERFORM pg_advisory_xact_lock(hashtextextended('device:' || p_event || ':' || p_device, 0));
      RETURN coalesce((SELECT sum(h.quantity) FROM holds h
                       WHERE h.event_id = p_event AND h.device_hash = p_device
                         AND ((h.status IN ('HELD', 'PAYING') AND h.expires_at > now())
                              OR (h.status = 'PURCHASED' AND EXISTS (SELECT 1 FROM orders o WHERE o.hold_id = h.id AND o.status = 'CONFIRMED')))), 0)::int;
    END $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION IF EXISTS onsale_lock_device_seats(uuid, text)`.execute(db);
  await sql`DROP INDEX IF EXISTS holds_device_idx`.execute(db);
  await sql`ALTER TABLE holds DROP COLUMN IF EXISTS device_hash`.execute(db);
  await sql`ALTER TABLE events DROP CONSTRAINT IF EXISTS events_device_limit`.execute(db);
  await sql`ALTER TABLE events DROP COLUMN IF EXISTS per_device_seat_limit`.execute(db);
}
