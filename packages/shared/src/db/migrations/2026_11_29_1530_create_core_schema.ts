import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE EXTENSION IF NOT EXISTS pgcrypto`.execute(db);

  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('accounts_id_length', sql`char_length(id) BETWEEN 1 AND 128`)
    .execute();

  await db.schema
    .createTable('listings')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('events')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('listing_id', 'uuid', (c) => c.notNull().references('listings.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('venue_name', 'text', (c) => c.notNull())
    .addColumn('starts_at', 'timestamptz', (c) => c.notNull())
    .addColumn('onsale_at', 'timestamptz', (c) => c.notNull())
    .addColumn('seat_picking_opens_at', 'timestamptz', (c) => c.notNull())
    .addColumn('fairness_mode', 'text', (c) => c.notNull().defaultTo('RANDOMIZED_PREOPEN_THEN_FIFO'))
    .addColumn('per_account_seat_limit', 'integer', (c) => c.notNull().defaultTo(4))
    .addColumn('per_instrument_seat_limit', 'integer', (c) => c.notNull().defaultTo(4))
    .addColumn('hold_ttl_seconds', 'integer', (c) => c.notNull().defaultTo(360))
    .addColumn('hold_extension_seconds', 'integer', (c) => c.notNull().defaultTo(180))
    .addColumn('target_sale_minutes', 'double precision', (c) => c.notNull().defaultTo(25))
    .addColumn('tickets_per_order', 'double precision', (c) => c.notNull().defaultTo(2.5))
    .addColumn('checkout_minutes', 'double precision', (c) => c.notNull().defaultTo(6))
    .addColumn('payment_tps', 'integer', (c) => c.notNull().defaultTo(1000))
    .addColumn('overbook_factor', 'double precision', (c) => c.notNull().defaultTo(1.3))
    .addColumn('capacity', 'integer', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('events_fairness_mode', sql`fairness_mode IN ('RANDOMIZED_PREOPEN_THEN_FIFO', 'FIFO', 'REGISTRATION_LOTTERY')`)
    .addCheckConstraint('events_limits', sql`per_account_seat_limit > 0 AND per_instrument_seat_limit > 0`)
    .addCheckConstraint('events_hold_times', sql`hold_ttl_seconds > 0 AND hold_extension_seconds >= 0`)
    .addCheckConstraint('events_capacity', sql`capacity >= 0`)
    .execute();
  await db.schema.createIndex('events_listing_idx').on('events').column('listing_id').execute();

  await db.schema
    .createTable('price_levels')
    .addColumn('event_id', 'uuid', (c) => c.notNull().references('events.id').onDelete('cascade'))
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('price_cents', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('price_levels_pk', ['event_id', 'code'])
    .addCheckConstraint('price_levels_price', sql`price_cents >= 0`)
    .execute();

  await db.schema
    .createTable('sections')
    .addColumn('event_id', 'uuid', (c) => c.notNull().references('events.id').onDelete('cascade'))
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('RESERVED'))
    .addColumn('price_level', 'text', (c) => c.notNull())
    .addColumn('quality_rank', 'integer', (c) => c.notNull())
    .addColumn('capacity', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('sections_pk', ['event_id', 'code'])
    .addForeignKeyConstraint('sections_price_level_fk', ['event_id', 'price_level'], 'price_levels', ['event_id', 'code'])
    .addCheckConstraint('sections_kind', sql`kind IN ('RESERVED')`)
    .execute();

  // All seats of an event live together: the primary key and the section index both lead with event_id.
  await db.schema
    .createTable('seats')
    .addColumn('event_id', 'uuid', (c) => c.notNull().references('events.id').onDelete('cascade'))
    .addColumn('id', 'bigint', (c) => c.generatedAlwaysAsIdentity())
    .addColumn('section_code', 'text', (c) => c.notNull())
    .addColumn('row_label', 'text', (c) => c.notNull())
    .addColumn('row_index', 'integer', (c) => c.notNull())
    .addColumn('seat_number', 'integer', (c) => c.notNull())
    .addColumn('quality', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('AVAILABLE'))
    .addColumn('hold_id', 'uuid')
    .addColumn('expires_at', 'timestamptz')
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('seats_pk', ['event_id', 'id'])
    .addUniqueConstraint('seats_position_uq', ['event_id', 'section_code', 'row_index', 'seat_number'])
    .addForeignKeyConstraint('seats_section_fk', ['event_id', 'section_code'], 'sections', ['event_id', 'code'])
    .addCheckConstraint('seats_status', sql`status IN ('AVAILABLE', 'HELD', 'SOLD')`)
    .addCheckConstraint(
      'seats_status_shape',
      sql`(status = 'AVAILABLE' AND hold_id IS NULL AND expires_at IS NULL)
        OR (status = 'HELD' AND hold_id IS NOT NULL AND expires_at IS NOT NULL)
        OR (status = 'SOLD' AND hold_id IS NOT NULL)`,
    )
    .execute();
  await sql`CREATE INDEX seats_hold_idx ON seats (hold_id) WHERE hold_id IS NOT NULL`.execute(db);

  await db.schema
    .createTable('holds')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('event_id', 'uuid', (c) => c.notNull().references('events.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('section_code', 'text')
    .addColumn('quantity', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('HELD'))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('extended', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('holds_status', sql`status IN ('HELD', 'PAYING', 'PURCHASED', 'RELEASED', 'EXPIRED')`)
    .addCheckConstraint('holds_quantity', sql`quantity > 0`)
    .execute();
  await db.schema.createIndex('holds_account_idx').on('holds').columns(['event_id', 'account_id']).execute();
  await sql`CREATE INDEX holds_live_idx ON holds (expires_at) WHERE status IN ('HELD', 'PAYING')`.execute(db);

  // The per-account seat count of an event, taken under the account's lock. VOLATILE: in READ COMMITTED the
  // count runs with a fresh snapshot taken after the lock is granted, so a hold can lock, count, take seats
  // and record itself in one statement (one round trip) and still never exceed the limit under concurrency.
  await sql`
    CREATE FUNCTION onsale_lock_account_seats(p_event uuid, p_account text) RETURNS integer
    LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtextextended('account:' || p_event || ':' || p_account, 0));
      RETURN coalesce((SELECT sum(quantity) FROM holds WHERE event_id = p_event AND account_id = p_account
                         AND status IN ('HELD', 'PAYING') AND expires_at > now()), 0)
           + coalesce((SELECT sum(seat_count) FROM orders WHERE event_id = p_event AND account_id = p_account
                         AND status = 'CONFIRMED'), 0);
    END $$`.execute(db);

  // One row per checkout attempt (Idempotency-Key); a failed attempt may be followed by another key.
  await db.schema
    .createTable('checkout_attempts')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('hold_id', 'uuid', (c) => c.notNull().references('holds.id').onDelete('cascade'))
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('instrument_fingerprint', 'text', (c) => c.notNull())
    .addColumn('seat_count', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('PENDING'))
    .addColumn('order_id', 'uuid')
    .addColumn('error_code', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('checkout_attempts_pk', ['account_id', 'idempotency_key'])
    .addCheckConstraint('checkout_attempts_status', sql`status IN ('PENDING', 'SUCCEEDED', 'FAILED')`)
    .execute();
  await db.schema.createIndex('checkout_attempts_hold_idx').on('checkout_attempts').column('hold_id').execute();
  await sql`CREATE UNIQUE INDEX checkout_attempts_one_pending ON checkout_attempts (hold_id) WHERE status = 'PENDING'`.execute(db);

  await db.schema
    .createTable('orders')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('hold_id', 'uuid', (c) => c.notNull().unique().references('holds.id'))
    .addColumn('event_id', 'uuid', (c) => c.notNull().references('events.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('seat_count', 'integer', (c) => c.notNull())
    .addColumn('amount_cents', 'integer', (c) => c.notNull())
    .addColumn('instrument_fingerprint', 'text', (c) => c.notNull())
    .addColumn('payment_reference', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('CONFIRMED'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('orders_idempotency_uq', ['account_id', 'idempotency_key'])
    .addCheckConstraint('orders_status', sql`status IN ('CONFIRMED', 'CANCELLED')`)
    .execute();
  await db.schema.createIndex('orders_instrument_idx').on('orders').columns(['event_id', 'instrument_fingerprint']).execute();
  await db.schema.createIndex('orders_account_idx').on('orders').columns(['event_id', 'account_id']).execute();

  // Latest result of the inventory reconciliation job per event (exported as metrics).
  await db.schema
    .createTable('inventory_reconciliations')
    .addColumn('event_id', 'uuid', (c) => c.primaryKey().references('events.id').onDelete('cascade'))
    .addColumn('checked_at', 'timestamptz', (c) => c.notNull())
    .addColumn('capacity', 'integer', (c) => c.notNull())
    .addColumn('available', 'integer', (c) => c.notNull())
    .addColumn('held', 'integer', (c) => c.notNull())
    .addColumn('sold', 'integer', (c) => c.notNull())
    .addColumn('drift', 'integer', (c) => c.notNull())
    .addColumn('order_drift', 'integer', (c) => c.notNull())
    .addColumn('expired_swept', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('event_id', 'uuid')
    .addColumn('details', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .execute();
  await db.schema.createIndex('audit_log_event_idx').on('audit_log').columns(['event_id', 'at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION IF EXISTS onsale_lock_account_seats(uuid, text)`.execute(db);
  for (const t of [
    'audit_log',
    'inventory_reconciliations',
    'orders',
    'checkout_attempts',
    'holds',
    'seats',
    'sections',
    'price_levels',
    'events',
    'listings',
    'accounts',
  ]) {
    await db.schema.dropTable(t).ifExists().cascade().execute();
  }
}
