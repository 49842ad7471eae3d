import { sql, type Kysely } from 'kysely';

// Frozen once landed: never import application code here, never edit; add a new migration instead.

/**
 * Tickets (issue 29): one per seat or GA unit of a confirmed order, bound to a device at delivery, with rotating
 * codes signed by the event's Ed25519 key; transfers and face-value resales keep the chain (parent_ticket_id); the
 * door's scanners and every scan. The event settings: delivery time, transfer limit, resale on/off and its fee cap.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE events
      ADD COLUMN ticket_delivery_at timestamptz,
      ADD COLUMN ticket_delivery_hours_before integer,
      ADD COLUMN ticket_transfer_limit integer NOT NULL DEFAULT 1,
      ADD COLUMN resale_enabled boolean NOT NULL DEFAULT true,
      ADD COLUMN resale_fee_cap_percent integer NOT NULL DEFAULT 10,
      ADD CONSTRAINT events_ticket_delivery CHECK (ticket_delivery_at IS NULL OR ticket_delivery_hours_before IS NULL),
      ADD CONSTRAINT events_ticket_delivery_hours CHECK (ticket_delivery_hours_before IS NULL OR ticket_delivery_hours_before > 0),
      ADD CONSTRAINT events_ticket_transfer_limit CHECK (ticket_transfer_limit BETWEEN 0 AND 10),
      ADD CONSTRAINT events_resale_fee_cap CHECK (resale_fee_cap_percent BETWEEN 0 AND 100)`.execute(db);

  // Each event's signing key for ticket codes: the scanners get the public half (the offline manifest).
  await sql`
    CREATE TABLE ticket_keys (
      event_id uuid PRIMARY KEY REFERENCES events(id) ON DELETE CASCADE,
      public_key text NOT NULL,
      private_key text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);

  await sql`
    CREATE TABLE tickets (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      event_id uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
      order_id uuid NOT NULL REFERENCES orders(id),
      slot text NOT NULL,
      seat_id bigint,
      section_code text NOT NULL,
      row_label text,
      seat_number integer,
      face_value_cents integer NOT NULL,
      holder_account_id text NOT NULL REFERENCES accounts(id),
      status text NOT NULL DEFAULT 'ACTIVE',
      generation integer NOT NULL DEFAULT 0,
      device_hash text,
      device_moves integer NOT NULL DEFAULT 0,
      transfer_count integer NOT NULL DEFAULT 0,
      parent_ticket_id uuid REFERENCES tickets(id),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      admitted_at timestamptz,
      admitted_by text,
      ended_at timestamptz,
      end_reason text,
      CHECK (status IN ('ACTIVE', 'LISTED', 'ADMITTED', 'TRANSFERRED', 'RESOLD', 'REVOKED')),
      CHECK ((status = 'ADMITTED') = (admitted_at IS NOT NULL))
    )`.execute(db);
  // One live ticket per seat (or GA unit): whatever the races, a seat has exactly one holder.
  await sql`CREATE UNIQUE INDEX tickets_live_slot ON tickets (event_id, slot) WHERE status IN ('ACTIVE', 'LISTED', 'ADMITTED')`.execute(db);
  await sql`CREATE INDEX tickets_holder_idx ON tickets (holder_account_id, event_id)`.execute(db);
  await sql`CREATE INDEX tickets_order_idx ON tickets (order_id)`.execute(db);
  await sql`CREATE INDEX tickets_event_idx ON tickets (event_id, status)`.execute(db);

  await sql`
    CREATE TABLE ticket_resales (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      ticket_id uuid NOT NULL REFERENCES tickets(id),
      event_id uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
      seat_id bigint,
      seller_account_id text NOT NULL,
      price_cents integer NOT NULL CHECK (price_cents > 0),
      face_value_cents integer NOT NULL,
      cap_cents integer NOT NULL,
      status text NOT NULL DEFAULT 'LISTED' CHECK (status IN ('LISTED', 'SOLD', 'WITHDRAWN')),
      buyer_order_id uuid REFERENCES orders(id),
      buyer_ticket_id uuid REFERENCES tickets(id),
      created_at timestamptz NOT NULL DEFAULT now(),
      ended_at timestamptz,
      CHECK (price_cents <= cap_cents)
    )`.execute(db);
  await sql`CREATE UNIQUE INDEX ticket_resales_listed ON ticket_resales (ticket_id) WHERE status = 'LISTED'`.execute(db);
  await sql`CREATE INDEX ticket_resales_seat_idx ON ticket_resales (event_id, seat_id) WHERE status = 'LISTED'`.execute(db);

  // The seller's payout of a sold resale: one per resale (money recorded once), written with the sale.
  await sql`
    CREATE TABLE ticket_payouts (
      resale_id uuid PRIMARY KEY REFERENCES ticket_resales(id),
      account_id text NOT NULL,
      amount_cents integer NOT NULL,
      currency text NOT NULL,
      reference text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);

  await sql`
    CREATE TABLE ticket_scanners (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      event_id uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
      name text NOT NULL,
      token_hash text NOT NULL UNIQUE,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    )`.execute(db);

  await sql`
    CREATE TABLE ticket_scans (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      event_id uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
      scanner_id uuid NOT NULL REFERENCES ticket_scanners(id),
      gate text NOT NULL,
      ticket_id uuid REFERENCES tickets(id),
      result text NOT NULL CHECK (result IN ('ADMIT', 'ALREADY_ADMITTED', 'EXPIRED_CODE', 'INVALID', 'REVOKED')),
      scanned_at timestamptz NOT NULL,
      recorded_at timestamptz NOT NULL DEFAULT now(),
      offline boolean NOT NULL DEFAULT false,
      client_scan_id text
    )`.execute(db);
  await sql`CREATE UNIQUE INDEX ticket_scans_upload ON ticket_scans (scanner_id, client_scan_id) WHERE client_scan_id IS NOT NULL`.execute(
    db,
  );
  await sql`CREATE INDEX ticket_scans_event_idx ON ticket_scans (event_id, scanned_at)`.execute(db);

  // A listed resale seat goes to the waitlist as a release of its own.
  await sql`ALTER TABLE availability_events DROP CONSTRAINT availability_events_cause_check`.execute(db);
  await sql`
    ALTER TABLE availability_events ADD CONSTRAINT availability_events_cause_check
      CHECK (cause IN ('HOLD_RELEASED', 'HOLD_EXPIRED', 'ORDER_CANCELLED', 'INVENTORY_ADDED', 'ALLOCATION_ROLLED', 'OFFER_RETURNED', 'RESALE'))`.execute(
    db,
  );

  // Door staff: a console role that may make scanner tokens and use the scanner page, nothing else.
  await sql`ALTER TABLE console_users DROP CONSTRAINT console_users_role`.execute(db);
  await sql`ALTER TABLE console_users ADD CONSTRAINT console_users_role CHECK (role IN ('admin', 'operator', 'promoter', 'viewer', 'scanner'))`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE console_users DROP CONSTRAINT console_users_role`.execute(db);
  await sql`ALTER TABLE console_users ADD CONSTRAINT console_users_role CHECK (role IN ('admin', 'operator', 'promoter', 'viewer'))`.execute(
    db,
  );
  await sql`ALTER TABLE availability_events DROP CONSTRAINT availability_events_cause_check`.execute(db);
  await sql`
    ALTER TABLE availability_events ADD CONSTRAINT availability_events_cause_check
      CHECK (cause IN ('HOLD_RELEASED', 'HOLD_EXPIRED', 'ORDER_CANCELLED', 'INVENTORY_ADDED', 'ALLOCATION_ROLLED', 'OFFER_RETURNED'))`.execute(
    db,
  );
  await sql`DROP TABLE ticket_scans, ticket_scanners, ticket_payouts, ticket_resales, tickets, ticket_keys`.execute(db);
  await sql`
    ALTER TABLE events DROP COLUMN ticket_delivery_at, DROP COLUMN ticket_delivery_hours_before, DROP COLUMN ticket_transfer_limit,
      DROP COLUMN resale_enabled, DROP COLUMN resale_fee_cap_percent`.execute(db);
}
