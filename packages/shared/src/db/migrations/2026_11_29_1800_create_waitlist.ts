import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/** Hash partitions of the waitlist: an availability change on a listing reads one of them. */
const WAITLIST_PARTITIONS = 16;

export async function up(db: Kysely<any>): Promise<void> {
  // Waitlist settings per listing.
  await sql`
    ALTER TABLE listings
      ADD COLUMN waitlist_mode text NOT NULL DEFAULT 'OFFER',
      ADD COLUMN waitlist_ttl_seconds integer NOT NULL DEFAULT 2419200,
      ADD COLUMN offer_ttl_seconds integer NOT NULL DEFAULT 900,
      ADD COLUMN fanout_inline_threshold integer NOT NULL DEFAULT 10000,
      ADD CONSTRAINT listings_waitlist_mode CHECK (waitlist_mode IN ('OFFER', 'BROADCAST')),
      ADD CONSTRAINT listings_waitlist_times CHECK (waitlist_ttl_seconds > 0 AND offer_ttl_seconds > 0 AND fanout_inline_threshold > 0)`.execute(
    db,
  );

  // The system account that owns seats set aside for the waitlist (fans cannot sign in as it: '~' is not
  // allowed in a fan's account id), and the hold statuses of those seats.
  await sql`INSERT INTO accounts (id) VALUES ('~waitlist') ON CONFLICT DO NOTHING`.execute(db);
  await sql`ALTER TABLE holds DROP CONSTRAINT holds_status`.execute(db);
  await sql`
    ALTER TABLE holds ADD CONSTRAINT holds_status
      CHECK (status IN ('HELD', 'PAYING', 'PURCHASED', 'RELEASED', 'EXPIRED', 'WAITLIST'))`.execute(db);

  // Waitlist entries: small typed rows (the criteria are columns, matched in SQL), hash-partitioned by listing.
  // The primary key is the FIFO order within a listing (keyset pages for the fan-out); one entry per
  // (listing, account); an index on account for "my waitlists" and leave. No foreign keys: rows are many and
  // cheap, and the listing is checked by the service before a write.
  await sql`CREATE SEQUENCE waitlist_entries_id_seq AS bigint`.execute(db);
  await sql`
    CREATE TABLE waitlist_entries (
      listing_id uuid NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      id bigint NOT NULL DEFAULT nextval('waitlist_entries_id_seq'),
      expires_at timestamptz NOT NULL,
      account_id text NOT NULL,
      date_from date,
      date_to date,
      max_price_cents integer,
      quantity smallint NOT NULL,
      sections text[],
      price_levels text[],
      PRIMARY KEY (listing_id, created_at, id),
      UNIQUE (listing_id, account_id),
      CHECK (quantity > 0),
      CHECK (max_price_cents IS NULL OR max_price_cents >= 0),
      CHECK (date_from IS NULL OR date_to IS NULL OR date_from <= date_to)
    ) PARTITION BY HASH (listing_id)`.execute(db);
  for (let i = 0; i < WAITLIST_PARTITIONS; i++)
    await sql`${sql.raw(`CREATE TABLE waitlist_entries_p${i} PARTITION OF waitlist_entries FOR VALUES WITH (MODULUS ${WAITLIST_PARTITIONS}, REMAINDER ${i})`)}`.execute(
      db,
    );
  await sql`CREATE INDEX waitlist_entries_account_idx ON waitlist_entries (account_id)`.execute(db);
  // Rows are written in roughly expiry order, so a block range index finds the expired ones at almost no cost.
  await sql`CREATE INDEX waitlist_entries_expiry_brin ON waitlist_entries USING brin (expires_at)`.execute(db);

  // Seats came back: one row per change, written in the same transaction as the change. `sections` carries,
  // per section, the seats, their price and price level, and the longest run of adjacent seats.
  await sql`
    CREATE TABLE availability_events (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      listing_id uuid NOT NULL REFERENCES listings(id),
      event_id uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
      cause text NOT NULL,
      performance_date date NOT NULL,
      sections jsonb NOT NULL,
      seat_count integer NOT NULL,
      pool_hold_id uuid REFERENCES holds(id),
      mode text NOT NULL,
      status text NOT NULL DEFAULT 'PENDING',
      matched integer NOT NULL DEFAULT 0,
      notified integer NOT NULL DEFAULT 0,
      cursor_created_at timestamptz,
      cursor_id bigint,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      completed_at timestamptz,
      CHECK (cause IN ('HOLD_RELEASED', 'HOLD_EXPIRED', 'ORDER_CANCELLED', 'INVENTORY_ADDED', 'ALLOCATION_ROLLED', 'OFFER_RETURNED')),
      CHECK (mode IN ('OFFER', 'BROADCAST', 'ON_SALE')),
      CHECK (status IN ('PENDING', 'FANNING_OUT', 'DONE'))
    )`.execute(db);
  await sql`CREATE INDEX availability_events_open_idx ON availability_events (updated_at) WHERE status <> 'DONE'`.execute(db);
  await sql`CREATE INDEX availability_events_event_idx ON availability_events (event_id, created_at)`.execute(db);

  // Offers: a fan's time-boxed claim. OFFER mode reserves seats for the fan (a WAITLIST hold); BROADCAST
  // offers share the availability event's pool, first to claim wins.
  await sql`
    CREATE TABLE waitlist_offers (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      availability_id bigint NOT NULL REFERENCES availability_events(id) ON DELETE CASCADE,
      listing_id uuid NOT NULL,
      event_id uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
      entry_id bigint NOT NULL,
      account_id text NOT NULL,
      quantity integer NOT NULL,
      reserve_hold_id uuid REFERENCES holds(id),
      status text NOT NULL DEFAULT 'OPEN',
      claimed_hold_id uuid REFERENCES holds(id),
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      decided_at timestamptz,
      CHECK (status IN ('OPEN', 'CLAIMED', 'DECLINED', 'EXPIRED', 'GONE'))
    )`.execute(db);
  await sql`CREATE INDEX waitlist_offers_account_idx ON waitlist_offers (account_id, created_at)`.execute(db);
  await sql`CREATE INDEX waitlist_offers_open_idx ON waitlist_offers (expires_at) WHERE status = 'OPEN'`.execute(db);
  await sql`CREATE INDEX waitlist_offers_availability_idx ON waitlist_offers (availability_id)`.execute(db);

  // The in-app inbox, and the at-most-once rule: one notification per (availability event, entry).
  await sql`
    CREATE TABLE notifications (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id text NOT NULL,
      listing_id uuid NOT NULL,
      availability_id bigint REFERENCES availability_events(id) ON DELETE CASCADE,
      entry_id bigint,
      kind text NOT NULL,
      offer_id uuid REFERENCES waitlist_offers(id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      read_at timestamptz,
      CHECK (kind IN ('OFFER', 'BROADCAST', 'ON_SALE', 'OFFER_EXPIRED'))
    )`.execute(db);
  await sql`CREATE UNIQUE INDEX notifications_once_uq ON notifications (availability_id, entry_id) WHERE kind <> 'OFFER_EXPIRED'`.execute(
    db,
  );
  await sql`CREATE INDEX notifications_account_idx ON notifications (account_id, id)`.execute(db);

  // Webhook endpoints (the operator's messaging gateway) and their deliveries: one POST per endpoint per chunk
  // of notifications, signed, retried with backoff, dead-lettered after max attempts.
  await sql`
    CREATE TABLE webhook_endpoints (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      url text NOT NULL,
      secret text NOT NULL,
      listing_id uuid REFERENCES listings(id) ON DELETE CASCADE,
      active boolean NOT NULL DEFAULT true,
      max_attempts integer NOT NULL DEFAULT 8,
      timeout_ms integer NOT NULL DEFAULT 5000,
      consecutive_failures integer NOT NULL DEFAULT 0,
      open_until timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK (max_attempts BETWEEN 1 AND 25),
      CHECK (timeout_ms BETWEEN 100 AND 60000)
    )`.execute(db);
  await sql`
    CREATE TABLE webhook_deliveries (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      endpoint_id uuid NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
      availability_id bigint,
      notification_ids bigint[] NOT NULL,
      status text NOT NULL DEFAULT 'PENDING',
      attempts integer NOT NULL DEFAULT 0,
      last_status_code integer,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      delivered_at timestamptz,
      CHECK (status IN ('PENDING', 'RETRYING', 'DELIVERED', 'DEAD'))
    )`.execute(db);
  await sql`CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, id)`.execute(db);
  await sql`CREATE INDEX webhook_deliveries_undelivered_idx ON webhook_deliveries (status) WHERE status <> 'DELIVERED'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of [
    'webhook_deliveries',
    'webhook_endpoints',
    'notifications',
    'waitlist_offers',
    'availability_events',
    'waitlist_entries',
  ])
    await sql`DROP TABLE IF EXISTS ${sql.raw(t)} CASCADE`.execute(db);
  await sql`DROP SEQUENCE IF EXISTS waitlist_entries_id_seq`.execute(db);
  await sql`UPDATE holds SET status = 'RELEASED' WHERE status = 'WAITLIST'`.execute(db);
  await sql`ALTER TABLE holds DROP CONSTRAINT holds_status`.execute(db);
  await sql`ALTER TABLE holds ADD CONSTRAINT holds_status CHECK (status IN ('HELD', 'PAYING', 'PURCHASED', 'RELEASED', 'EXPIRED'))`.execute(
    db,
  );
  await sql`
    ALTER TABLE listings DROP COLUMN waitlist_mode, DROP COLUMN waitlist_ttl_seconds, DROP COLUMN offer_ttl_seconds,
      DROP COLUMN fanout_inline_threshold`.execute(db);
}
