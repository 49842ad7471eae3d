import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import type { ScanResult, StoredTicketStatus, TicketRow } from './tickets.table.js';

type Q = Db | Trx;

/** What the tickets rules read of an event. */
export interface TicketEventRow {
  id: string;
  name: string;
  listing_id: string;
  starts_at: Date;
  currency: string;
  per_account_seat_limit: number;
  ticket_delivery_at: Date | null;
  ticket_delivery_hours_before: number | null;
  ticket_transfer_limit: number;
  resale_enabled: boolean;
  resale_fee_cap_percent: number;
}

const EVENT_SETTINGS = sql`e.listing_id, e.starts_at, e.currency, e.per_account_seat_limit, e.ticket_delivery_at,
  e.ticket_delivery_hours_before, e.ticket_transfer_limit, e.resale_enabled, e.resale_fee_cap_percent`;

export async function findEvent(db: Q, eventId: string): Promise<TicketEventRow | undefined> {
  const { rows } = await sql<TicketEventRow>`SELECT e.id, e.name, ${EVENT_SETTINGS} FROM events e WHERE e.id = ${eventId}`.execute(db);
  return rows[0];
}

/** The event's signing key, made on first use (concurrent first uses agree on one: the first insert wins). */
export async function ensureKey(db: Q, eventId: string, fresh: { publicKey: string; privateKey: string }) {
  await sql`INSERT INTO ticket_keys (event_id, public_key, private_key) VALUES (${eventId}, ${fresh.publicKey}, ${fresh.privateKey})
            ON CONFLICT (event_id) DO NOTHING`.execute(db);
  return db.selectFrom('ticket_keys').select(['public_key', 'private_key']).where('event_id', '=', eventId).executeTakeFirstOrThrow();
}

/** A ticket with its event's settings, the open resale and where the resold seat is now. */
export interface TicketWithEvent extends TicketRow, Omit<TicketEventRow, 'id' | 'name'> {
  event_name: string;
  resale_id: string | null;
  resale_price_cents: number | null;
  resale_cap_cents: number | null;
  resale_created_at: Date | null;
  /** Where a listed ticket's seat is: the waitlist's pool or offer, a buyer's live hold, or on open sale. */
  resale_stage: 'WAITLIST' | 'IN_CHECKOUT' | 'PUBLIC' | null;
  order_hold_id: string;
}

const TICKET_SELECT = sql`
  SELECT t.*, ${EVENT_SETTINGS}, e.name AS event_name, o.hold_id AS order_hold_id,
         r.id AS resale_id, r.price_cents AS resale_price_cents, r.cap_cents AS resale_cap_cents, r.created_at AS resale_created_at,
         CASE WHEN r.id IS NULL THEN NULL
              WHEN s.status = 'HELD' AND s.expires_at > now() AND h.status = 'WAITLIST' THEN 'WAITLIST'
              WHEN s.status = 'HELD' AND s.expires_at > now() THEN 'IN_CHECKOUT'
              ELSE 'PUBLIC' END AS resale_stage
  FROM tickets t
  JOIN events e ON e.id = t.event_id
  JOIN orders o ON o.id = t.order_id
  LEFT JOIN ticket_resales r ON r.ticket_id = t.id AND r.status = 'LISTED'
  LEFT JOIN seats s ON r.id IS NOT NULL AND s.event_id = t.event_id AND s.id = t.seat_id
  LEFT JOIN holds h ON h.id = s.hold_id`;

export async function ticketsOfAccount(db: Q, accountId: string): Promise<TicketWithEvent[]> {
  const { rows } = await sql<TicketWithEvent>`${TICKET_SELECT}
    WHERE t.holder_account_id = ${accountId} ORDER BY e.starts_at, t.section_code, t.row_label, t.seat_number, t.created_at`.execute(db);
  return rows;
}

export async function ticketsOfOrder(db: Q, orderId: string): Promise<TicketWithEvent[]> {
  const { rows } = await sql<TicketWithEvent>`${TICKET_SELECT}
    WHERE t.order_id = ${orderId} OR t.id IN (SELECT buyer_ticket_id FROM ticket_resales WHERE buyer_order_id = ${orderId})
    ORDER BY t.section_code, t.row_label, t.seat_number, t.created_at`.execute(db);
  return rows;
}

export async function findTicket(db: Q, ticketId: string): Promise<TicketWithEvent | undefined> {
  const { rows } = await sql<TicketWithEvent>`${TICKET_SELECT} WHERE t.id = ${ticketId}`.execute(db);
  return rows[0];
}

/** Locks the ticket row (FOR UPDATE): transfers, listings, moves and scans of one ticket go one at a time. */
export async function lockTicket(trx: Trx, ticketId: string): Promise<TicketRow | undefined> {
  const { rows } = await sql<TicketRow>`SELECT * FROM tickets WHERE id = ${ticketId} FOR UPDATE`.execute(trx);
  return rows[0];
}

/** Binds a ticket to its first device (only if still unbound); returns the row as it is after. */
export async function bindDevice(db: Q, ticketId: string, deviceHash: string): Promise<TicketRow> {
  await sql`UPDATE tickets SET device_hash = ${deviceHash}, updated_at = now() WHERE id = ${ticketId} AND device_hash IS NULL`.execute(db);
  return db.selectFrom('tickets').selectAll().where('id', '=', ticketId).executeTakeFirstOrThrow();
}

/** Moves a ticket to another device: the generation goes up, so the old device's codes read REVOKED. */
export async function moveDevice(trx: Trx, ticketId: string, deviceHash: string | null, countsAsMove: boolean): Promise<TicketRow> {
  const { rows } = await sql<TicketRow>`
    UPDATE tickets SET device_hash = ${deviceHash}, generation = generation + 1,
                       device_moves = device_moves + ${countsAsMove ? 1 : 0}, updated_at = now()
    WHERE id = ${ticketId} RETURNING *`.execute(trx);
  return rows[0]!;
}

export async function endTicket(trx: Trx, ticketId: string, status: StoredTicketStatus, reason: string): Promise<void> {
  await sql`UPDATE tickets SET status = ${status}, ended_at = now(), end_reason = ${reason}, updated_at = now() WHERE id = ${ticketId}`.execute(
    trx,
  );
}

export async function setTicketStatus(trx: Trx, ticketId: string, status: 'ACTIVE' | 'LISTED'): Promise<void> {
  await sql`UPDATE tickets SET status = ${status}, updated_at = now() WHERE id = ${ticketId}`.execute(trx);
}

export interface NewTicket {
  eventId: string;
  orderId: string;
  slot: string;
  seatId: number | null;
  section: string;
  row: string | null;
  number: number | null;
  faceValueCents: number;
  holder: string;
  transferCount: number;
  parent: string | null;
}

/**
 * Inserts tickets; a slot that still has a live ticket gets none (see issueTicketsForOrder). Returns the new ids by
 * slot. One SQL text whatever the number of tickets (arrays through unnest): one prepared statement, and no query
 * builder on the checkout's path.
 */
export async function insertTickets(trx: Trx, tickets: NewTicket[]): Promise<Map<string, string>> {
  if (tickets.length === 0) return new Map();
  // The index's predicate as literals: with parameters there ($1) PostgreSQL cannot prove the partial index matches
  // once the prepared statement runs on a generic plan (after its fifth run), and refuses the insert (42P10).
  const { rows } = await sql<{ id: string; slot: string }>`
    INSERT INTO tickets (event_id, order_id, slot, seat_id, section_code, row_label, seat_number, face_value_cents,
                         holder_account_id, transfer_count, parent_ticket_id)
    SELECT * FROM unnest(${tickets.map((t) => t.eventId)}::uuid[], ${tickets.map((t) => t.orderId)}::uuid[],
                         ${tickets.map((t) => t.slot)}::text[], ${tickets.map((t) => t.seatId)}::bigint[],
                         ${tickets.map((t) => t.section)}::text[], ${tickets.map((t) => t.row)}::text[],
                         ${tickets.map((t) => t.number)}::int[], ${tickets.map((t) => t.faceValueCents)}::int[],
                         ${tickets.map((t) => t.holder)}::text[], ${tickets.map((t) => t.transferCount)}::int[],
                         ${tickets.map((t) => t.parent)}::uuid[])
    ON CONFLICT (event_id, slot) WHERE status IN ('ACTIVE', 'LISTED', 'ADMITTED') DO NOTHING
    RETURNING id, slot`.execute(trx);
  return new Map(rows.map((r) => [r.slot, r.id]));
}

/** The seats a hold bought (SOLD under it), with their face value. */
export async function soldSeatsOfHold(trx: Trx, holdId: string) {
  const { rows } = await sql<{ id: number; section: string; row: string; number: number; price_cents: number }>`
    SELECT s.id, s.section_code AS section, s.row_label AS row, s.seat_number AS number, p.price_cents
    FROM seats s JOIN sections c ON c.event_id = s.event_id AND c.code = s.section_code
    JOIN price_levels p ON p.event_id = c.event_id AND p.code = c.price_level
    WHERE s.hold_id = ${holdId} AND s.status = 'SOLD' ORDER BY s.section_code, s.row_index, s.seat_number`.execute(trx);
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}

/** A general-admission hold's section and unit price. */
export async function gaSectionOfHold(trx: Trx, holdId: string) {
  const { rows } = await sql<{ section: string; price_cents: number }>`
    SELECT c.code AS section, p.price_cents FROM holds h
    JOIN sections c ON c.event_id = h.event_id AND c.code = coalesce(h.section_code,
      (SELECT u.section_code FROM ga_hold_units u WHERE u.hold_id = h.id LIMIT 1))
    JOIN price_levels p ON p.event_id = c.event_id AND p.code = c.price_level
    WHERE h.id = ${holdId}`.execute(trx);
  return rows[0];
}

/** Revokes the live tickets of slots about to be issued again (a seat sold again while an old ticket was live). */
export async function revokeLiveSlots(trx: Trx, eventId: string, slots: string[], reason: string): Promise<void> {
  if (slots.length === 0) return;
  await sql`UPDATE tickets SET status = 'REVOKED', ended_at = now(), end_reason = ${reason}, updated_at = now()
            WHERE event_id = ${eventId} AND slot = ANY(${slots}::text[]) AND status IN ('ACTIVE', 'LISTED')`.execute(trx);
}

export interface ResaleRow {
  id: string;
  ticket_id: string;
  seller_account_id: string;
  price_cents: number;
  seat_id: number;
}

/** The open resales of these seats, locked. */
export async function lockListedResales(trx: Trx, eventId: string, seatIds: number[]): Promise<ResaleRow[]> {
  if (seatIds.length === 0) return [];
  const { rows } = await sql<ResaleRow>`
    SELECT id, ticket_id, seller_account_id, price_cents, seat_id FROM ticket_resales
    WHERE event_id = ${eventId} AND status = 'LISTED' AND seat_id = ANY(${seatIds}::bigint[]) FOR UPDATE`.execute(trx);
  return rows.map((r) => ({ ...r, seat_id: Number(r.seat_id) }));
}

/**
 * A seated hold's price in one statement: how many seats it has and their sum, each seat at its listed price on the
 * exchange when it is listed there, else its face value (what `priceOfSeats` sums from `seatsOfHold` and
 * `listedPrices` in two). No seats: a general-admission hold (priced by its units).
 */
export async function priceOfHoldSeats(db: Q, holdId: string): Promise<{ seats: number; amountCents: number }> {
  const { rows } = await sql<{ seats: number; amount_cents: number }>`
    SELECT count(*)::int AS seats, coalesce(sum(coalesce(r.price_cents, p.price_cents)), 0)::bigint AS amount_cents
    FROM seats s
    JOIN sections c ON c.event_id = s.event_id AND c.code = s.section_code
    JOIN price_levels p ON p.event_id = c.event_id AND p.code = c.price_level
    LEFT JOIN LATERAL (SELECT price_cents FROM ticket_resales x
                       WHERE x.event_id = s.event_id AND x.seat_id = s.id AND x.status = 'LISTED' LIMIT 1) r ON true
    WHERE s.hold_id = ${holdId}`.execute(db);
  return { seats: rows[0]?.seats ?? 0, amountCents: Number(rows[0]?.amount_cents ?? 0) };
}

/** The listed price of each seat on the exchange (the checkout charges it instead of the face value). */
export async function listedPrices(db: Q, seatIds: number[]): Promise<Map<number, number>> {
  if (seatIds.length === 0) return new Map();
  const { rows } = await sql<{ seat_id: number; price_cents: number }>`
    SELECT seat_id, price_cents FROM ticket_resales WHERE status = 'LISTED' AND seat_id = ANY(${seatIds}::bigint[])`.execute(db);
  return new Map(rows.map((r) => [Number(r.seat_id), r.price_cents]));
}

export async function finishResale(trx: Trx, resaleId: string, sale: { orderId: string; ticketId: string | null }): Promise<void> {
  await sql`UPDATE ticket_resales SET status = 'SOLD', buyer_order_id = ${sale.orderId}, buyer_ticket_id = ${sale.ticketId}, ended_at = now()
            WHERE id = ${resaleId}`.execute(trx);
}

export async function insertPayout(
  trx: Trx,
  p: { resaleId: string; accountId: string; amountCents: number; currency: string; reference: string },
): Promise<void> {
  await sql`INSERT INTO ticket_payouts (resale_id, account_id, amount_cents, currency, reference)
            VALUES (${p.resaleId}, ${p.accountId}, ${p.amountCents}, ${p.currency}, ${p.reference})`.execute(trx);
}

export async function insertResale(
  trx: Trx,
  r: { ticketId: string; eventId: string; seatId: number; seller: string; priceCents: number; faceValueCents: number; capCents: number },
): Promise<{ id: string; created_at: Date }> {
  const { rows } = await sql<{ id: string; created_at: Date }>`
    INSERT INTO ticket_resales (ticket_id, event_id, seat_id, seller_account_id, price_cents, face_value_cents, cap_cents)
    VALUES (${r.ticketId}, ${r.eventId}, ${r.seatId}, ${r.seller}, ${r.priceCents}, ${r.faceValueCents}, ${r.capCents})
    RETURNING id, created_at`.execute(trx);
  return rows[0]!;
}

export async function withdrawResales(trx: Trx, ticketIds: string[]): Promise<void> {
  if (ticketIds.length === 0) return;
  await sql`UPDATE ticket_resales SET status = 'WITHDRAWN', ended_at = now() WHERE status = 'LISTED' AND ticket_id = ANY(${ticketIds}::uuid[])`.execute(
    trx,
  );
}

/** Takes the seller's SOLD seat off the seller's hold (AVAILABLE in this transaction, for the waitlist's pool to take). */
export async function releaseSoldSeat(trx: Trx, eventId: string, seatId: number, holdId: string) {
  const { rows } = await sql<{ id: number; sectionCode: string; rowIndex: number; seatNumber: number }>`
    UPDATE seats SET status = 'AVAILABLE', hold_id = NULL, expires_at = NULL, version = version + 1
    WHERE event_id = ${eventId} AND id = ${seatId} AND status = 'SOLD' AND hold_id = ${holdId}
    RETURNING id, section_code AS "sectionCode", row_index AS "rowIndex", seat_number AS "seatNumber"`.execute(trx);
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}

/**
 * Gives a listed seat back to its seller's hold (a withdrawal), unless a fan holds it now (an offer's or a buyer's
 * live hold): true when it moved. The waitlist's pool of the release, or an expired hold, gives it up.
 */
export async function reclaimListedSeat(trx: Trx, eventId: string, seatId: number, sellerHoldId: string): Promise<boolean> {
  const { rows } = await sql<{ id: number }>`
    UPDATE seats s SET status = 'SOLD', hold_id = ${sellerHoldId}, expires_at = NULL, version = s.version + 1
    WHERE s.event_id = ${eventId} AND s.id = ${seatId}
      AND (s.status = 'AVAILABLE' OR (s.status = 'HELD' AND (s.expires_at <= now()
           OR EXISTS (SELECT 1 FROM availability_events a WHERE a.pool_hold_id = s.hold_id))))
    RETURNING s.id`.execute(trx);
  return rows.length === 1;
}

/** Serializes ticket changes that count an account's tickets for an event (transfers to it). */
export async function lockAccountTickets(trx: Trx, eventId: string, accountId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`tickets:${eventId}:${accountId}`}, 0))`.execute(trx);
}

export async function liveTicketsOf(trx: Trx, eventId: string, accountId: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM tickets WHERE event_id = ${eventId} AND holder_account_id = ${accountId}
      AND status IN ('ACTIVE', 'LISTED', 'ADMITTED')`.execute(trx);
  return rows[0]!.n;
}

export async function accountExists(db: Q, accountId: string): Promise<boolean> {
  const r = await db.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
  return r !== undefined;
}

/** Revokes the live tickets of an order (cancelled or refunded); returns their ids. */
export async function revokeTicketsOfOrder(trx: Trx, orderId: string, reason: string): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    UPDATE tickets SET status = 'REVOKED', ended_at = now(), end_reason = ${reason}, updated_at = now()
    WHERE order_id = ${orderId} AND status IN ('ACTIVE', 'LISTED') RETURNING id`.execute(trx);
  return rows.map((r) => r.id);
}

// --- the door ---

export async function insertScanner(db: Q, s: { eventId: string; name: string; tokenHash: string; createdBy: string }) {
  return db
    .insertInto('ticket_scanners')
    .values({ event_id: s.eventId, name: s.name, token_hash: s.tokenHash, created_by: s.createdBy })
    .returning(['id', 'created_at'])
    .executeTakeFirstOrThrow();
}

export async function findScanner(db: Q, tokenHash: string) {
  return db
    .selectFrom('ticket_scanners')
    .select(['id', 'event_id', 'name'])
    .where('token_hash', '=', tokenHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

/** The conditional admission: ACTIVE with this generation -> ADMITTED, once, whatever the number of gates at once. */
export async function admit(trx: Trx, t: { ticketId: string; eventId: string; generation: number; at: Date; by: string }) {
  const { rows } = await sql<TicketRow>`
    UPDATE tickets SET status = 'ADMITTED', admitted_at = ${t.at}, admitted_by = ${t.by}, updated_at = now()
    WHERE id = ${t.ticketId} AND event_id = ${t.eventId} AND status = 'ACTIVE' AND generation = ${t.generation}
    RETURNING *`.execute(trx);
  return rows[0];
}

export async function ticketOfEvent(db: Q, ticketId: string, eventId: string): Promise<TicketRow | undefined> {
  return db.selectFrom('tickets').selectAll().where('id', '=', ticketId).where('event_id', '=', eventId).executeTakeFirst();
}

/** Logs a scan; with a client scan id (an offline upload), a repeat logs nothing and returns null. */
export async function insertScan(
  db: Q,
  s: {
    eventId: string;
    scannerId: string;
    gate: string;
    ticketId: string | null;
    result: ScanResult;
    scannedAt: Date;
    offline: boolean;
    clientScanId: string | null;
  },
): Promise<number | null> {
  const { rows } = await sql<{ id: number }>`
    INSERT INTO ticket_scans (event_id, scanner_id, gate, ticket_id, result, scanned_at, offline, client_scan_id)
    VALUES (${s.eventId}, ${s.scannerId}, ${s.gate},
            (SELECT id FROM tickets WHERE id = ${s.ticketId}::uuid AND event_id = ${s.eventId}),
            ${s.result}, ${s.scannedAt}, ${s.offline}, ${s.clientScanId})
    ON CONFLICT (scanner_id, client_scan_id) WHERE client_scan_id IS NOT NULL DO NOTHING
    RETURNING id`.execute(db);
  return rows[0]?.id ?? null;
}

export async function setScanResult(trx: Trx, id: number, result: ScanResult, ticketId: string | null, eventId: string): Promise<void> {
  await sql`UPDATE ticket_scans SET result = ${result},
              ticket_id = (SELECT id FROM tickets WHERE id = ${ticketId}::uuid AND event_id = ${eventId}) WHERE id = ${id}`.execute(trx);
}

export async function manifestTickets(db: Q, eventId: string) {
  return db
    .selectFrom('tickets')
    .select(['id', 'generation', 'status', 'section_code', 'row_label', 'seat_number', 'device_hash', 'created_at'])
    .where('event_id', '=', eventId)
    .orderBy('created_at')
    .execute();
}

// --- operators ---

export async function countsOf(db: Q, eventId: string) {
  const { rows } = await sql<{
    total: number;
    transferred: number;
    listed: number;
    resold: number;
    revoked: number;
    admitted: number;
    pending: number;
    delivered: number;
    scanned: number;
    refused: number;
  }>`
    SELECT count(*)::int AS total,
           count(*) FILTER (WHERE t.status = 'TRANSFERRED')::int AS transferred,
           count(*) FILTER (WHERE t.status = 'LISTED')::int AS listed,
           count(*) FILTER (WHERE t.status = 'RESOLD')::int AS resold,
           count(*) FILTER (WHERE t.status = 'REVOKED')::int AS revoked,
           count(*) FILTER (WHERE t.status = 'ADMITTED')::int AS admitted,
           count(*) FILTER (WHERE t.status = 'ACTIVE' AND t.device_hash IS NULL AND d.at > now())::int AS pending,
           count(*) FILTER (WHERE t.status IN ('ACTIVE', 'LISTED', 'ADMITTED') AND (t.device_hash IS NOT NULL OR d.at IS NULL OR d.at <= now()))::int AS delivered,
           (SELECT count(*) FROM ticket_scans WHERE event_id = ${eventId})::int AS scanned,
           (SELECT count(*) FROM ticket_scans WHERE event_id = ${eventId} AND result <> 'ADMIT')::int AS refused
    FROM tickets t JOIN events e ON e.id = t.event_id
    CROSS JOIN LATERAL (SELECT coalesce(e.ticket_delivery_at, e.starts_at - make_interval(hours => e.ticket_delivery_hours_before)) AS at) d
    WHERE t.event_id = ${eventId}`.execute(db);
  return rows[0]!;
}

export async function ticketsByOrderReference(db: Q, reference: string): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    SELECT o.id FROM orders o WHERE o.id::text = ${reference} OR o.payment_reference = ${reference} LIMIT 5`.execute(db);
  return rows.map((r) => r.id);
}

/** The hold an order was bought from (its seats carry that hold's id while sold). */
export async function orderHoldOf(trx: Trx, orderId: string): Promise<{ hold_id: string }> {
  return trx.selectFrom('orders').select(['hold_id']).where('id', '=', orderId).executeTakeFirstOrThrow();
}
