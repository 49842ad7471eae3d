import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  // Presale tiers: each a share of the event's reserved seats, with its own window, access rule, fairness mode and
  // queue. The last tier (general) sells through the event's own queue (queue_id = the event's id); a presale
  // tier's queue is keyed by its own id. `capacity` is the seats the tier owns now: it moves only when a roll
  // forward moves seats, in that transaction, so available + held + sold = capacity per tier.
  await sql`
    CREATE TABLE allocations (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      event_id uuid NOT NULL REFERENCES events (id) ON DELETE CASCADE,
      code text NOT NULL,
      name text NOT NULL,
      position integer NOT NULL,
      general boolean NOT NULL,
      queue_id uuid NOT NULL UNIQUE,
      share double precision,
      access text NOT NULL,
      bin_ranges jsonb,
      fairness_mode text NOT NULL,
      opens_at timestamptz NOT NULL,
      closes_at timestamptz,
      rolls_forward_at timestamptz,
      rolls_into text,
      rolled_at timestamptz,
      capacity integer NOT NULL,
      CONSTRAINT allocations_code_uq UNIQUE (event_id, code),
      CONSTRAINT allocations_access CHECK (access IN ('OPEN', 'ACCESS_CODE', 'CARD_BIN')),
      CONSTRAINT allocations_capacity CHECK (capacity >= 0),
      CONSTRAINT allocations_window CHECK (closes_at IS NULL OR closes_at > opens_at)
    )`.execute(db);
  await sql`CREATE INDEX allocations_roll_idx ON allocations (rolls_forward_at) WHERE rolls_into IS NOT NULL`.execute(db);

  // A seat's tier (NULL: the event has no tiers) and a hold's (the tier whose admission made it).
  await sql`ALTER TABLE seats ADD COLUMN allocation text`.execute(db);
  await sql`ALTER TABLE holds ADD COLUMN allocation text`.execute(db);

  // A presale tier's queue is keyed by the tier's id, not an event's: the queue tables' key is a queue id.
  await sql`ALTER TABLE queue_state DROP CONSTRAINT IF EXISTS queue_state_event_id_fkey`.execute(db);
  await sql`ALTER TABLE queue_entries DROP CONSTRAINT IF EXISTS queue_entries_event_id_fkey`.execute(db);
  await sql`ALTER TABLE admission_minutes DROP CONSTRAINT IF EXISTS admission_minutes_event_id_fkey`.execute(db);

  // Access codes are signed (an edge verifies them without the origin); a code is single-account: its first
  // redemption binds it to that account.
  await sql`
    CREATE TABLE access_code_redemptions (
      event_id uuid NOT NULL REFERENCES events (id) ON DELETE CASCADE,
      code_id text NOT NULL,
      allocation text NOT NULL,
      account_id text NOT NULL,
      redeemed_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (event_id, code_id)
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS access_code_redemptions`.execute(db);
  await sql`ALTER TABLE holds DROP COLUMN IF EXISTS allocation`.execute(db);
  await sql`ALTER TABLE seats DROP COLUMN IF EXISTS allocation`.execute(db);
  await sql`DROP TABLE IF EXISTS allocations`.execute(db);
}
