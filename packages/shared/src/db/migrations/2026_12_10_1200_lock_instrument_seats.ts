import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * A checkout's payment-card limit in one round trip instead of two: `onsale_lock_instrument_seats` takes the card's
 * lock for the event (the advisory lock `lockKey(trx, 'instrument', event, fingerprint)` takes: the same key) and
 * then counts the card's seats (confirmed orders and pending attempts, under its keyed and its legacy fingerprint).
 * A VOLATILE function's statements each read a snapshot of their own, so the count is read after the lock is held:
 * exact, as the two statements were.
 *
 * The checkout's last step likewise: `onsale_lock_hold_attempt` locks the hold (FOR UPDATE) and then reads the
 * account's attempt under the key, in a statement of its own after the lock (a settlement by another process that
 * held the lock is seen): one round trip for the lock and the read.
 *
 * And its first step: `onsale_checkout_replay_or_lock` reads the attempt under the key for this hold without the
 * hold's lock (a retry is answered from it, never queued behind the attempt's own last step), and only when there is
 * none locks the hold and reads the account's attempt under the key (any hold) after the lock: the two reads and the
 * lock of the checkout's first step in one round trip (the hold's row and its event are read after, the lock held).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION onsale_lock_instrument_seats(p_event text, p_fingerprint text, p_legacy text) RETURNS integer
    LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtextextended('instrument:' || p_event || ':' || p_fingerprint, 0));
      RETURN (coalesce((SELECT sum(seat_count) FROM orders
                        WHERE event_id = p_event::uuid AND instrument_fingerprint IN (p_fingerprint, p_legacy) AND status = 'CONFIRMED'), 0)
            + coalesce((SELECT sum(a.seat_count) FROM checkout_attempts a JOIN holds h ON h.id = a.hold_id
                        WHERE h.event_id = p_event::uuid AND a.instrument_fingerprint IN (p_fingerprint, p_legacy) AND a.status = 'PENDING'), 0))::integer;
    END $$`.execute(db);
  await sql`
    CREATE FUNCTION onsale_lock_hold_attempt(p_hold uuid, p_account text, p_key text) RETURNS SETOF checkout_attempts
    LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      PERFORM 1 FROM holds WHERE id = p_hold FOR UPDATE;
      RETURN QUERY SELECT * FROM checkout_attempts WHERE account_id = p_account AND idempotency_key = p_key;
    END $$`.execute(db);
  await sql`
    CREATE FUNCTION onsale_checkout_replay_or_lock(p_hold uuid, p_account text, p_key text)
    RETURNS TABLE (replay boolean, request_hash text, event_id uuid, account_blocked boolean)
    LANGUAGE plpgsql VOLATILE AS $$
    #variable_conflict use_column
    BEGIN
      RETURN QUERY
        SELECT true, a.request_hash, h.event_id,
               EXISTS (SELECT 1 FROM account_blocks b WHERE b.event_id = h.event_id AND b.account_id = a.account_id)
        FROM checkout_attempts a JOIN holds h ON h.id = a.hold_id
        WHERE a.account_id = p_account AND a.idempotency_key = p_key AND a.hold_id = p_hold;
      IF FOUND THEN RETURN; END IF;
      PERFORM 1 FROM holds WHERE id = p_hold FOR UPDATE;
      RETURN QUERY
        SELECT false, a.request_hash, NULL::uuid, NULL::boolean
        FROM checkout_attempts a WHERE a.account_id = p_account AND a.idempotency_key = p_key;
    END $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION onsale_checkout_replay_or_lock(uuid, text, text)`.execute(db);
  await sql`DROP FUNCTION onsale_lock_hold_attempt(uuid, text, text)`.execute(db);
  await sql`DROP FUNCTION onsale_lock_instrument_seats(text, text, text)`.execute(db);
}
