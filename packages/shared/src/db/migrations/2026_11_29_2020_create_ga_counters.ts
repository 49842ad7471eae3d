import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * General admission: a GA section is a counter split into shard rows, not seat rows. Each shard keeps
 * available + held + sold = capacity (a CHECK, so no write can break it); a hold takes units from one shard with
 * one conditional UPDATE, so concurrent holds spread over the shards instead of queueing on one row. A hold's units
 * per shard are rows of ga_hold_units; whether they are live is the hold's own expiry (holds.expires_at), so expiry
 * stays a read-time predicate: `held` in a shard may include units of lapsed holds until a writer, a release or the
 * sweeper gives them back, and every read counts those as available.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE sections DROP CONSTRAINT sections_kind`.execute(db);
  await sql`ALTER TABLE sections ADD CONSTRAINT sections_kind CHECK (kind IN ('RESERVED', 'GA'))`.execute(db);

  await sql`
    CREATE TABLE ga_shards (
      event_id uuid NOT NULL,
      section_code text NOT NULL,
      shard smallint NOT NULL,
      capacity integer NOT NULL,
      available integer NOT NULL,
      held integer NOT NULL DEFAULT 0,
      sold integer NOT NULL DEFAULT 0,
      PRIMARY KEY (event_id, section_code, shard),
      FOREIGN KEY (event_id, section_code) REFERENCES sections (event_id, code) ON DELETE CASCADE,
      CONSTRAINT ga_shards_shard CHECK (shard >= 0),
      CONSTRAINT ga_shards_counts CHECK (available >= 0 AND held >= 0 AND sold >= 0),
      CONSTRAINT ga_shards_sum CHECK (available + held + sold = capacity)
    )`.execute(db);

  // No foreign key to ga_shards or sections: a key check on the hot path would lock a row every concurrent hold
  // shares. The writers (the functions below) only ever insert units for a shard they hold locked.
  await sql`
    CREATE TABLE ga_hold_units (
      hold_id uuid NOT NULL REFERENCES holds (id) ON DELETE CASCADE,
      event_id uuid NOT NULL,
      section_code text NOT NULL,
      shard smallint NOT NULL,
      quantity integer NOT NULL,
      state text NOT NULL DEFAULT 'HELD',
      PRIMARY KEY (hold_id, shard),
      CONSTRAINT ga_hold_units_quantity CHECK (quantity > 0),
      CONSTRAINT ga_hold_units_state CHECK (state IN ('HELD', 'SOLD', 'RETURNED'))
    )`.execute(db);
  await sql`CREATE INDEX ga_hold_units_held_idx ON ga_hold_units (event_id, section_code) WHERE state = 'HELD'`.execute(db);

  // Units of lapsed holds back to `available`. The caller holds the lock of every shard of the section (so no
  // other writer moves these units meanwhile). Lapsed: the hold is no longer HELD/PAYING/WAITLIST, or its
  // expiry has passed. Returns how many units came back.
  await sql`
    CREATE FUNCTION onsale_ga_reclaim(p_event uuid, p_section text) RETURNS integer
    LANGUAGE sql VOLATILE AS $$
      WITH lapsed AS (
        UPDATE ga_hold_units u SET state = 'RETURNED'
        FROM holds h
        WHERE u.event_id = p_event AND u.section_code = p_section AND u.state = 'HELD' AND h.id = u.hold_id
          AND NOT (h.status IN ('HELD', 'PAYING', 'WAITLIST') AND h.expires_at > now())
        RETURNING u.shard, u.quantity),
      per_shard AS (SELECT shard, sum(quantity)::int AS q FROM lapsed GROUP BY shard),
      moved AS (
        UPDATE ga_shards s SET available = s.available + p.q, held = s.held - p.q
        FROM per_shard p WHERE s.event_id = p_event AND s.section_code = p_section AND s.shard = p.shard
        RETURNING p.q)
      SELECT coalesce(sum(q), 0)::int FROM moved
    $$`.execute(db);

  // One GA hold attempt as one statement (one round trip, one transaction):
  //  1. the account's lock and seat count (onsale_lock_account_seats: reserved and GA holds and orders alike);
  //  2. fast path: the first shard in a per-request random order that has enough units and that no other
  //     transaction is writing (SKIP LOCKED: a busy shard is passed over, not waited for), then one UPDATE;
  //  3. otherwise (every shard busy or short): every shard of the section locked in shard order (the order every
  //     writer uses), lapsed units reclaimed when what is free is short, then the quantity taken across shards,
  //     all or nothing. When even that is short the hold is refused with no lock taken when nothing has lapsed;
  //  4. the account, the hold and its per-shard units recorded.
  // Returns the account's count, the hold's expiry (null when refused) and, when refused for want of units, how
  // many are available.
  await sql`
    CREATE FUNCTION onsale_hold_ga(p_hold uuid, p_event uuid, p_account text, p_section text, p_quantity integer,
                                   p_limit integer, p_ttl integer, p_seed integer)
    RETURNS TABLE (used integer, expires_at timestamptz, available integer)
    LANGUAGE plpgsql VOLATILE AS $$
    #variable_conflict use_column
    DECLARE
      v_used integer;
      v_shard integer;
      v_free integer;
      v_left integer := p_quantity;
      v_take integer;
      v_shards smallint[] := '{}';
      v_takes integer[] := '{}';
      v_expires timestamptz := now() + make_interval(secs => p_ttl);
      r record;
    BEGIN
      v_used := onsale_lock_account_seats(p_event, p_account);
      IF v_used + p_quantity > p_limit THEN
        RETURN QUERY SELECT v_used, NULL::timestamptz, NULL::integer;
        RETURN;
      END IF;

      SELECT s.shard INTO v_shard FROM ga_shards s
      WHERE s.event_id = p_event AND s.section_code = p_section AND s.available >= p_quantity
      ORDER BY hashint4(s.shard + p_seed) LIMIT 1
      FOR UPDATE SKIP LOCKED;
      IF FOUND THEN
        UPDATE ga_shards s SET available = s.available - p_quantity, held = s.held + p_quantity
        WHERE s.event_id = p_event AND s.section_code = p_section AND s.shard = v_shard;
        v_shards := ARRAY[v_shard::smallint];
        v_takes := ARRAY[p_quantity];
      ELSE
        SELECT coalesce(sum(s.available), 0)::int INTO v_free FROM ga_shards s
        WHERE s.event_id = p_event AND s.section_code = p_section;
        IF v_free < p_quantity AND NOT EXISTS (
            SELECT 1 FROM holds h WHERE h.status IN ('HELD', 'PAYING') AND h.expires_at <= now()
              AND h.event_id = p_event AND h.section_code = p_section) THEN
          RETURN QUERY SELECT v_used, NULL::timestamptz, v_free;
          RETURN;
        END IF;
        PERFORM 1 FROM ga_shards s WHERE s.event_id = p_event AND s.section_code = p_section ORDER BY s.shard FOR UPDATE;
        SELECT coalesce(sum(s.available), 0)::int INTO v_free FROM ga_shards s
        WHERE s.event_id = p_event AND s.section_code = p_section;
        IF v_free < p_quantity THEN
          v_free := v_free + onsale_ga_reclaim(p_event, p_section);
        END IF;
        IF v_free < p_quantity THEN
          RETURN QUERY SELECT v_used, NULL::timestamptz, v_free;
          RETURN;
        END IF;
        FOR r IN SELECT s.shard, s.available FROM ga_shards s
                 WHERE s.event_id = p_event AND s.section_code = p_section AND s.available > 0
                 ORDER BY hashint4(s.shard + p_seed) LOOP
          v_take := least(r.available, v_left);
          UPDATE ga_shards s SET available = s.available - v_take, held = s.held + v_take
          WHERE s.event_id = p_event AND s.section_code = p_section AND s.shard = r.shard;
          v_shards := v_shards || r.shard::smallint;
          v_takes := v_takes || v_take;
          v_left := v_left - v_take;
          EXIT WHEN v_left = 0;
        END LOOP;
      END IF;

      INSERT INTO accounts (id) VALUES (p_account) ON CONFLICT (id) DO NOTHING;
      INSERT INTO holds (id, event_id, account_id, section_code, quantity, expires_at)
      VALUES (p_hold, p_event, p_account, p_section, p_quantity, v_expires);
      INSERT INTO ga_hold_units (hold_id, event_id, section_code, shard, quantity)
      SELECT p_hold, p_event, p_section, t.shard, t.quantity FROM unnest(v_shards, v_takes) AS t(shard, quantity);
      RETURN QUERY SELECT v_used, v_expires, NULL::integer;
    END $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION IF EXISTS onsale_hold_ga(uuid, uuid, text, text, integer, integer, integer, integer)`.execute(db);
  await sql`DROP FUNCTION IF EXISTS onsale_ga_reclaim(uuid, text)`.execute(db);
  await sql`DROP TABLE IF EXISTS ga_hold_units`.execute(db);
  await sql`DROP TABLE IF EXISTS ga_shards`.execute(db);
  await sql`ALTER TABLE sections DROP CONSTRAINT sections_kind`.execute(db);
  await sql`ALTER TABLE sections ADD CONSTRAINT sections_kind CHECK (kind IN ('RESERVED'))`.execute(db);
}
