import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  // The fan-facing words per queue state, where the promoter replaced the defaults.
  await db.schema.alterTable('events').addColumn('queue_copy', 'jsonb').execute();

  // One row per event: the few numbers that cross to the edges (watermark, state, rate), the controller's
  // heartbeat, and the fairness seed (secret until the open; only its commitment is public before).
  await db.schema
    .createTable('queue_state')
    .addColumn('event_id', 'uuid', (c) => c.primaryKey().references('events.id').onDelete('cascade'))
    .addColumn('admitted_through', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('rate_per_min', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('rate_override_per_min', 'integer')
    .addColumn('paused', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('paused_reason', 'text')
    .addColumn('paused_by', 'text')
    .addColumn('paused_at', 'timestamptz')
    .addColumn('seed_hex', 'text', (c) => c.notNull())
    .addColumn('seed_commitment', 'text', (c) => c.notNull())
    .addColumn('seed_revealed_at', 'timestamptz')
    .addColumn('cohort_size', 'integer')
    .addColumn('sealed_at', 'timestamptz')
    .addColumn('inventory_state', 'text', (c) => c.notNull().defaultTo('AVAILABLE'))
    .addColumn('sold_out_at', 'timestamptz')
    .addColumn('heartbeat_at', 'timestamptz')
    // [[epoch ms, admittedThrough], ...] at most one point per 10 s over the last 30 min: when a position was
    // reached, so a position never claimed can expire (published with the watermark; edges can apply it).
    .addColumn('watermark_history', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('controller_id', 'text')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('queue_state_override', sql`rate_override_per_min IS NULL OR rate_override_per_min >= 0`)
    .addCheckConstraint('queue_state_inventory', sql`inventory_state IN ('AVAILABLE', 'LAST_CHANCE', 'SOLD_OUT')`)
    .execute();

  // One position per account per event. join_index is dense-ish per event (a sequence per event): the
  // pre-open cohort's positions are a keyed permutation of it, later joins stand behind the cohort in order.
  await db.schema
    .createTable('queue_entries')
    .addColumn('event_id', 'uuid', (c) => c.notNull().references('events.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('device_hash', 'text', (c) => c.notNull())
    .addColumn('join_index', 'integer', (c) => c.notNull())
    .addColumn('cohort', 'text', (c) => c.notNull())
    .addColumn('joined_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('claimed_at', 'timestamptz')
    .addPrimaryKeyConstraint('queue_entries_pk', ['event_id', 'account_id'])
    .addUniqueConstraint('queue_entries_index_uq', ['event_id', 'join_index'])
    .addCheckConstraint('queue_entries_cohort', sql`cohort IN ('PREOPEN', 'FIFO')`)
    .execute();

  // Queue state for the events created before this migration (new events get theirs at creation).
  await sql`
    INSERT INTO queue_state (event_id, seed_hex, seed_commitment)
    SELECT id, encode(s.seed, 'hex'), encode(sha256(s.seed), 'hex')
    FROM events, LATERAL (SELECT gen_random_bytes(32) AS seed) s`.execute(db);
  // ...and their join sequences (one per event; new events get theirs at creation).
  await sql`
    DO $$ DECLARE r record; BEGIN
      FOR r IN SELECT id FROM events LOOP
        EXECUTE format('CREATE SEQUENCE IF NOT EXISTS %I MINVALUE 0 START 0', 'queue_join_' || replace(r.id::text, '-', ''));
      END LOOP;
    END $$`.execute(db);

  // Admissions per minute, for the controller's feedback and the public audit.
  await db.schema
    .createTable('admission_minutes')
    .addColumn('event_id', 'uuid', (c) => c.notNull().references('events.id').onDelete('cascade'))
    .addColumn('minute', 'timestamptz', (c) => c.notNull())
    .addColumn('watermark_advanced', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('admission_tokens_issued', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rate_per_min', 'double precision', (c) => c.notNull().defaultTo(0))
    // Hold outcomes reported by the store-API instances (flushed with the claims), for the controller's slow-down.
    .addColumn('holds_created', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('holds_refused', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('admission_minutes_pk', ['event_id', 'minute'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['admission_minutes', 'queue_entries', 'queue_state']) await db.schema.dropTable(t).ifExists().execute();
  await db.schema.alterTable('events').dropColumn('queue_copy').execute();
}
