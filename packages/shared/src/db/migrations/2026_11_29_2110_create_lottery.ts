import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  // A REGISTRATION_LOTTERY event's lottery: its settings from the event file, the draw's seed (secret until the
  // draw; its SHA-256 commitment is public from creation), and once drawn: when, by whom, and its sizing.
  // registration_count is the next registration's sequence number (registrations take this row's lock, so the
  // numbers are dense: 0..n-1 with no gaps).
  await sql`
    CREATE TABLE lotteries (
      event_id uuid PRIMARY KEY REFERENCES events(id) ON DELETE CASCADE,
      registration_opens_at timestamptz NOT NULL,
      registration_closes_at timestamptz NOT NULL,
      expected_conversion double precision NOT NULL,
      cohorts integer NOT NULL,
      cohort_minutes integer NOT NULL,
      seed_hex text NOT NULL,
      seed_commitment text NOT NULL,
      committed_at timestamptz NOT NULL DEFAULT now(),
      registration_count integer NOT NULL DEFAULT 0,
      drawn_at timestamptz,
      drawn_by text,
      seats_offered integer,
      target_requested_seats integer,
      winners_count integer,
      invited_seats integer,
      CONSTRAINT lotteries_window CHECK (registration_opens_at < registration_closes_at),
      CONSTRAINT lotteries_conversion CHECK (expected_conversion > 0 AND expected_conversion <= 1),
      CONSTRAINT lotteries_cohorts CHECK (cohorts >= 1 AND cohort_minutes >= 1),
      CONSTRAINT lotteries_seed CHECK (seed_hex ~ '^[0-9a-f]{64}$' AND seed_commitment ~ '^[0-9a-f]{64}$'),
      CONSTRAINT lotteries_count CHECK (registration_count >= 0),
      CONSTRAINT lotteries_drawn CHECK (
        (drawn_at IS NULL AND drawn_by IS NULL AND seats_offered IS NULL AND target_requested_seats IS NULL AND winners_count IS NULL AND invited_seats IS NULL)
        OR (drawn_at IS NOT NULL AND drawn_by IS NOT NULL AND seats_offered IS NOT NULL AND target_requested_seats IS NOT NULL AND winners_count IS NOT NULL AND invited_seats IS NOT NULL))
    )`.execute(db);

  // One registration per account per event; sequence is its dense 0-based number (the draw permutes these).
  await sql`
    CREATE TABLE lottery_registrations (
      event_id uuid NOT NULL REFERENCES lotteries(event_id) ON DELETE CASCADE,
      account_id text NOT NULL REFERENCES accounts(id),
      sequence integer NOT NULL,
      quantity smallint NOT NULL,
      registered_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (event_id, account_id),
      CONSTRAINT lottery_registrations_sequence_uq UNIQUE (event_id, sequence),
      CONSTRAINT lottery_registrations_sequence CHECK (sequence >= 0),
      CONSTRAINT lottery_registrations_quantity CHECK (quantity BETWEEN 1 AND 100)
    )`.execute(db);

  // The draw's winners: rank is the 1-based place in the draw order, cohort the 0-based purchase window
  // [window_opens_at, window_closes_at). Written once, by the draw, in the transaction that reveals the seed.
  await sql`
    CREATE TABLE lottery_winners (
      event_id uuid NOT NULL,
      account_id text NOT NULL,
      rank integer NOT NULL,
      sequence integer NOT NULL,
      quantity smallint NOT NULL,
      cohort integer NOT NULL,
      window_opens_at timestamptz NOT NULL,
      window_closes_at timestamptz NOT NULL,
      PRIMARY KEY (event_id, account_id),
      FOREIGN KEY (event_id, account_id) REFERENCES lottery_registrations(event_id, account_id) ON DELETE CASCADE,
      CONSTRAINT lottery_winners_rank_uq UNIQUE (event_id, rank),
      CONSTRAINT lottery_winners_rank CHECK (rank >= 1),
      CONSTRAINT lottery_winners_cohort CHECK (cohort >= 0),
      CONSTRAINT lottery_winners_window CHECK (window_opens_at < window_closes_at)
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['lottery_winners', 'lottery_registrations', 'lotteries']) await sql`DROP TABLE IF EXISTS ${sql.table(t)}`.execute(db);
}
