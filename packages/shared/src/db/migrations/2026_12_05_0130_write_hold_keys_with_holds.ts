import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * A hold's Idempotency-Key is written by the hold's own statement, not by a second one after it: a process killed
 * (or a connection lost) between the two left a committed hold with no key, and the fan's retry with the key made a
 * second hold. Every hold statement now takes the account's lock, then reads the fan's hold under the key
 * (`onsale_hold_of_key`, after the lock, so the read is exact: every hold with a key is written under that lock),
 * and either answers with that hold or writes the new one with its key and request hash.
 *
 * `onsale_hold_of_key` takes the account's lock itself (a lock held already by the transaction is taken again at
 * no cost), so it is exact whatever order a statement evaluates it in. The GA hold attempt (fourth version) takes
 * the key and the request hash, and returns the key's hold in `keyed` when there is one (nothing else is done).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION onsale_hold_of_key(p_event uuid, p_account text, p_key text) RETURNS uuid
    LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      IF p_key IS NULL THEN RETURN NULL; END IF;
      PERFORM pg_advisory_xact_lock(hashtextextended('account:' || p_event || ':' || p_account, 0));
      RETURN (SELECT id FROM holds WHERE event_id = p_event AND account_id = p_account AND idempotency_key = p_key);
    END $$`.execute(db);
  await sql`DROP FUNCTION onsale_hold_ga(uuid, uuid, text, text, text, integer, integer, integer, integer, integer, text)`.execute(db);
  await sql`
    CREATE FUNCTION onsale_hold_ga(p_hold uuid, p_event uuid, p_account text, p_device text, p_section text, p_quantity integer,
                                   p_limit integer, p_device_limit integer, p_ttl integer, p_seed integer, p_allocation text,
                                   p_key text, p_request_hash text)
    RETURNS TABLE (used integer, device_used integer, expires_at timestamptz, available integer, keyed uuid)
    LANGUAGE plpgsql VOLATILE AS $$
    #variable_conflict use_column
    DECLARE
      v_used integer;
      v_device_used integer;
      v_shard integer;
      v_free integer;
      v_left integer := p_quantity;
      v_take integer;
      v_got integer;
      v_expires timestamptz := now() + make_interval(secs => p_ttl);
      v_keyed uuid;
      r record;
    BEGIN
      v_used := onsale_lock_account_seats(p_event, p_account);
      -- The fan's hold made under this key already (read under the account's lock, after it: exact).
      v_keyed := onsale_hold_of_key(p_event, p_account, p_key);
      IF v_keyed IS NOT NULL THEN
        RETURN QUERY SELECT v_used, 0, NULL::timestamptz, NULL::integer, v_keyed;
        RETURN;
      END IF;
      v_device_used := onsale_lock_device_seats(p_event, p_device);
      IF v_used + p_quantity > p_limit OR v_device_used + p_quantity > p_device_limit THEN
        RETURN QUERY SELECT v_used, v_device_used, NULL::timestamptz, NULL::integer, NULL::uuid;
        RETURN;
      END IF;

      -- No shard can take the whole quantity (a plain read) and nothing has lapsed: refused with no lock taken.
      IF NOT EXISTS (SELECT 1 FROM ga_shards s WHERE s.event_id = p_event AND s.section_code = p_section AND s.available >= p_quantity AND s.allocation IS NOT DISTINCT FROM p_allocation) THEN
        SELECT coalesce(sum(s.available), 0)::int INTO v_free FROM ga_shards s WHERE s.event_id = p_event AND s.section_code = p_section AND s.allocation IS NOT DISTINCT FROM p_allocation;
        IF v_free < p_quantity AND NOT EXISTS (
            SELECT 1 FROM holds h WHERE h.status IN ('HELD', 'PAYING') AND h.expires_at <= now()
              AND h.event_id = p_event AND h.section_code = p_section) THEN
          RETURN QUERY SELECT v_used, v_device_used, NULL::timestamptz, v_free, NULL::uuid;
          RETURN;
        END IF;
      END IF;

      -- The hold's rows before any shard lock (they are the slow part: foreign keys, indexes), so a shard's lock
      -- covers only its UPDATE, the units row and the commit.
      INSERT INTO accounts (id) VALUES (p_account) ON CONFLICT (id) DO NOTHING;
      INSERT INTO holds (id, event_id, account_id, section_code, quantity, expires_at, device_hash, allocation, idempotency_key, request_hash)
      VALUES (p_hold, p_event, p_account, p_section, p_quantity, v_expires, p_device, p_allocation, p_key, p_request_hash);

      -- Tries on one shard each, every try in a subtransaction: a try that fails gives back every lock it took (a
      -- row lock taken and then rejected on recheck included), so a transaction never waits for a shard while
      -- holding another, and holds can never deadlock. Try 1: the first shard with enough units in this request's
      -- random order that no one is writing (SKIP LOCKED: no wait). Tries 2-4: wait for one such shard.
      FOR i IN 1..4 LOOP
        v_shard := NULL;
        BEGIN
          IF i = 1 THEN
            SELECT s.shard INTO v_shard FROM ga_shards s
            WHERE s.event_id = p_event AND s.section_code = p_section AND s.available >= p_quantity AND s.allocation IS NOT DISTINCT FROM p_allocation
            ORDER BY hashint4(s.shard + p_seed) LIMIT 1
            FOR UPDATE SKIP LOCKED;
          ELSE
            SELECT s.shard INTO v_shard FROM ga_shards s
            WHERE s.event_id = p_event AND s.section_code = p_section AND s.available >= p_quantity AND s.allocation IS NOT DISTINCT FROM p_allocation
            ORDER BY hashint4(s.shard + p_seed + i) LIMIT 1;
            IF v_shard IS NULL THEN EXIT; END IF;
            SELECT s.available INTO v_got FROM ga_shards s
            WHERE s.event_id = p_event AND s.section_code = p_section AND s.shard = v_shard FOR UPDATE;
            IF v_got < p_quantity THEN RAISE EXCEPTION USING ERRCODE = 'OG001'; END IF;
          END IF;
          IF v_shard IS NOT NULL THEN
            UPDATE ga_shards s SET available = s.available - p_quantity, held = s.held + p_quantity
            WHERE s.event_id = p_event AND s.section_code = p_section AND s.shard = v_shard;
          ELSE
            RAISE EXCEPTION USING ERRCODE = 'OG001';
          END IF;
        EXCEPTION WHEN SQLSTATE 'OG001' THEN
          v_shard := NULL;
        END;
        IF v_shard IS NOT NULL THEN
          INSERT INTO ga_hold_units (hold_id, event_id, section_code, shard, quantity) VALUES (p_hold, p_event, p_section, v_shard, p_quantity);
          RETURN QUERY SELECT v_used, v_device_used, v_expires, NULL::integer, NULL::uuid;
          RETURN;
        END IF;
      END LOOP;

      -- No shard has enough on its own: every shard of the section locked in shard order (the order every GA writer
      -- uses, holding no other shard), lapsed units reclaimed when what is free is short, then the quantity taken
      -- across shards, all or nothing (a refusal deletes the hold row written above).
      PERFORM 1 FROM ga_shards s WHERE s.event_id = p_event AND s.section_code = p_section ORDER BY s.shard FOR UPDATE;
      SELECT coalesce(sum(s.available), 0)::int INTO v_free FROM ga_shards s WHERE s.event_id = p_event AND s.section_code = p_section AND s.allocation IS NOT DISTINCT FROM p_allocation;
      IF v_free < p_quantity THEN
        -- Reclaimed units go back to their own shards, of whatever tier: count this tier's free units again.
        PERFORM onsale_ga_reclaim(p_event, p_section);
        SELECT coalesce(sum(s.available), 0)::int INTO v_free FROM ga_shards s WHERE s.event_id = p_event AND s.section_code = p_section AND s.allocation IS NOT DISTINCT FROM p_allocation;
      END IF;
      IF v_free < p_quantity THEN
        DELETE FROM holds h WHERE h.id = p_hold;
        RETURN QUERY SELECT v_used, v_device_used, NULL::timestamptz, v_free, NULL::uuid;
        RETURN;
      END IF;
      FOR r IN SELECT s.shard, s.available FROM ga_shards s
               WHERE s.event_id = p_event AND s.section_code = p_section AND s.available > 0 AND s.allocation IS NOT DISTINCT FROM p_allocation
               ORDER BY hashint4(s.shard + p_seed) LOOP
        v_take := least(r.available, v_left);
        UPDATE ga_shards s SET available = s.available - v_take, held = s.held + v_take
        WHERE s.event_id = p_event AND s.section_code = p_section AND s.shard = r.shard;
        INSERT INTO ga_hold_units (hold_id, event_id, section_code, shard, quantity) VALUES (p_hold, p_event, p_section, r.shard, v_take);
        v_left := v_left - v_take;
        EXIT WHEN v_left = 0;
      END LOOP;
      RETURN QUERY SELECT v_used, v_device_used, v_expires, NULL::integer, NULL::uuid;
    END $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION onsale_hold_ga(uuid, uuid, text, text, text, integer, integer, integer, integer, integer, text, text, text)`.execute(
    db,
  );
  await sql`DROP FUNCTION onsale_hold_of_key(uuid, text, text)`.execute(db);
  // Back to the third version (2026_11_29_2130_ga_allocations).
  await sql`
    CREATE FUNCTION onsale_hold_ga(p_hold uuid, p_event uuid, p_account text, p_device text, p_section text, p_quantity integer,
                                   p_limit integer, p_device_limit integer, p_ttl integer, p_seed integer, p_allocation text)
    RETURNS TABLE (used integer, device_used integer, expires_at timestamptz, available integer)
    LANGUAGE plpgsql VOLATILE AS $$
    #variable_conflict use_column
    DECLARE
      v_used integer;
      v_device_used integer;
      v_shard integer;
      v_free integer;
      v_left integer := p_quantity;
      v_take integer;
      v_got integer;
      v_expires timestamptz := now() + make_interval(secs => p_ttl);
      r record;
    BEGIN
      v_used := onsale_lock_account_seats(p_event, p_account);
      v_device_used := onsale_lock_device_seats(p_event, p_device);
      IF v_used + p_quantity > p_limit OR v_device_used + p_quantity > p_device_limit THEN
        RETURN QUERY SELECT v_used, v_device_used, NULL::timestamptz, NULL::integer;
        RETURN;
      END IF;

      -- No shard can take the whole quantity (a plain read) and nothing has lapsed: refused with no lock taken.
      IF NOT EXISTS (SELECT 1 FROM ga_shards s WHERE s.event_id = p_event AND s.section_code = p_section AND s.available >= p_quantity AND s.allocation IS NOT DISTINCT FROM p_allocation) THEN
        SELECT coalesce(sum(s.available), 0)::int INTO v_free FROM ga_shards s WHERE s.event_id = p_event AND s.section_code = p_section AND s.allocation IS NOT DISTINCT FROM p_allocation;
        IF v_free < p_quantity AND NOT EXISTS (
            SELECT 1 FROM holds h WHERE h.status IN ('HELD', 'PAYING') AND h.expires_at <= now()
              AND h.event_id = p_event AND h.section_code = p_section) THEN
          RETURN QUERY SELECT v_used, v_device_used, NULL::timestamptz, v_free;
          RETURN;
        END IF;
      END IF;

      -- The hold's rows before any shard lock (they are the slow part: foreign keys, indexes), so a shard's lock
      -- covers only its UPDATE, the units row and the commit.
      INSERT INTO accounts (id) VALUES (p_account) ON CONFLICT (id) DO NOTHING;
      INSERT INTO holds (id, event_id, account_id, section_code, quantity, expires_at, device_hash, allocation)
      VALUES (p_hold, p_event, p_account, p_section, p_quantity, v_expires, p_device, p_allocation);

      -- Tries on one shard each, every try in a subtransaction: a try that fails gives back every lock it took (a
      -- row lock taken and then rejected on recheck included), so a transaction never waits for a shard while
      -- holding another, and holds can never deadlock. Try 1: the first shard with enough units in this request's
      -- random order that no one is writing (SKIP LOCKED: no wait). Tries 2-4: wait for one such shard.
      FOR i IN 1..4 LOOP
        v_shard := NULL;
        BEGIN
          IF i = 1 THEN
            SELECT s.shard INTO v_shard FROM ga_shards s
            WHERE s.event_id = p_event AND s.section_code = p_section AND s.available >= p_quantity AND s.allocation IS NOT DISTINCT FROM p_allocation
            ORDER BY hashint4(s.shard + p_seed) LIMIT 1
            FOR UPDATE SKIP LOCKED;
          ELSE
            SELECT s.shard INTO v_shard FROM ga_shards s
            WHERE s.event_id = p_event AND s.section_code = p_section AND s.available >= p_quantity AND s.allocation IS NOT DISTINCT FROM p_allocation
            ORDER BY hashint4(s.shard + p_seed + i) LIMIT 1;
            IF v_shard IS NULL THEN EXIT; END IF;
            SELECT s.available INTO v_got FROM ga_shards s
            WHERE s.event_id = p_event AND s.section_code = p_section AND s.shard = v_shard FOR UPDATE;
            IF v_got < p_quantity THEN RAISE EXCEPTION USING ERRCODE = 'OG001'; END IF;
          END IF;
          IF v_shard IS NOT NULL THEN
            UPDATE ga_shards s SET available = s.available - p_quantity, held = s.held + p_quantity
            WHERE s.event_id = p_event AND s.section_code = p_section AND s.shard = v_shard;
          ELSE
            RAISE EXCEPTION USING ERRCODE = 'OG001';
          END IF;
        EXCEPTION WHEN SQLSTATE 'OG001' THEN
          v_shard := NULL;
        END;
        IF v_shard IS NOT NULL THEN
          INSERT INTO ga_hold_units (hold_id, event_id, section_code, shard, quantity) VALUES (p_hold, p_event, p_section, v_shard, p_quantity);
          RETURN QUERY SELECT v_used, v_device_used, v_expires, NULL::integer;
          RETURN;
        END IF;
      END LOOP;

      -- No shard has enough on its own: every shard of the section locked in shard order (the order every GA writer
      -- uses, holding no other shard), lapsed units reclaimed when what is free is short, then the quantity taken
      -- across shards, all or nothing (a refusal deletes the hold row written above).
      PERFORM 1 FROM ga_shards s WHERE s.event_id = p_event AND s.section_code = p_section ORDER BY s.shard FOR UPDATE;
      SELECT coalesce(sum(s.available), 0)::int INTO v_free FROM ga_shards s WHERE s.event_id = p_event AND s.section_code = p_section AND s.allocation IS NOT DISTINCT FROM p_allocation;
      IF v_free < p_quantity THEN
        -- Reclaimed units go back to their own shards, of whatever tier: count this tier's free units again.
        PERFORM onsale_ga_reclaim(p_event, p_section);
        SELECT coalesce(sum(s.available), 0)::int INTO v_free FROM ga_shards s WHERE s.event_id = p_event AND s.section_code = p_section AND s.allocation IS NOT DISTINCT FROM p_allocation;
      END IF;
      IF v_free < p_quantity THEN
        DELETE FROM holds h WHERE h.id = p_hold;
        RETURN QUERY SELECT v_used, v_device_used, NULL::timestamptz, v_free;
        RETURN;
      END IF;
      FOR r IN SELECT s.shard, s.available FROM ga_shards s
               WHERE s.event_id = p_event AND s.section_code = p_section AND s.available > 0 AND s.allocation IS NOT DISTINCT FROM p_allocation
               ORDER BY hashint4(s.shard + p_seed) LOOP
        v_take := least(r.available, v_left);
        UPDATE ga_shards s SET available = s.available - v_take, held = s.held + v_take
        WHERE s.event_id = p_event AND s.section_code = p_section AND s.shard = r.shard;
        INSERT INTO ga_hold_units (hold_id, event_id, section_code, shard, quantity) VALUES (p_hold, p_event, p_section, r.shard, v_take);
        v_left := v_left - v_take;
        EXIT WHEN v_left = 0;
      END LOOP;
      RETURN QUERY SELECT v_used, v_device_used, v_expires, NULL::integer;
    END $$`.execute(db);
}
