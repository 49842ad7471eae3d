import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';

// SQL of fan support: account blocks, and what one account has done across events. Rules are in support.service.ts.

/** Every account blocked from an event (the store API keeps the set with the event's cached settings). */
export function findBlock(db: Db | Trx, eventId: string, accountId: string) {
  return db.selectFrom('account_blocks').selectAll().where('event_id', '=', eventId).where('account_id', '=', accountId).executeTakeFirst();
}

/** Inserts the block; false when the account was blocked from the event already. */
export async function insertBlock(
  trx: Trx,
  row: { eventId: string; accountId: string; reason: string; blockedBy: string },
): Promise<boolean> {
  const r = await trx
    .insertInto('account_blocks')
    .values({ event_id: row.eventId, account_id: row.accountId, reason: row.reason, blocked_by: row.blockedBy })
    .onConflict((oc) => oc.columns(['event_id', 'account_id']).doNothing())
    .returning('account_id')
    .executeTakeFirst();
  return r !== undefined;
}

export async function deleteBlock(trx: Trx, eventId: string, accountId: string) {
  return trx
    .deleteFrom('account_blocks')
    .where('event_id', '=', eventId)
    .where('account_id', '=', accountId)
    .returning(['reason', 'blocked_by', 'blocked_at'])
    .executeTakeFirst();
}

export function findBlocksOfAccount(db: Db | Trx, accountId: string) {
  return db
    .selectFrom('account_blocks as b')
    .innerJoin('events as e', 'e.id', 'b.event_id')
    .select(['b.event_id', 'e.name as event_name', 'b.reason', 'b.blocked_by', 'b.blocked_at'])
    .where('b.account_id', '=', accountId)
    .orderBy('b.blocked_at', 'desc')
    .execute();
}

export function findAccount(db: Db | Trx, accountId: string) {
  return db.selectFrom('accounts').select(['id', 'display_name', 'created_at']).where('id', '=', accountId).executeTakeFirst();
}

/** The account's places in every queue (an event's own or a presale tier's), with the queue's watermark and seed. */
export async function findQueueEntries(db: Db | Trx, accountId: string) {
  const { rows } = await sql<{
    queue_id: string;
    event_id: string;
    event_name: string;
    time_zone: string;
    tier: string | null;
    join_index: number;
    cohort: 'PREOPEN' | 'FIFO';
    joined_at: Date;
    claimed_at: Date | null;
    admitted_through: number;
    paused: boolean;
    cohort_size: number | null;
    seed_hex: string | null;
    sealed: boolean;
    inventory_state: string;
  }>`
    SELECT q.event_id AS queue_id, COALESCE(a.event_id, q.event_id) AS event_id, e.name AS event_name, e.time_zone,
           a.code AS tier, q.join_index, q.cohort, q.joined_at, q.claimed_at,
           s.admitted_through, s.paused, s.cohort_size, s.seed_hex, s.sealed_at IS NOT NULL AS sealed, s.inventory_state
    FROM queue_entries q
    JOIN queue_state s ON s.event_id = q.event_id
    LEFT JOIN allocations a ON a.queue_id = q.event_id AND NOT a.general
    JOIN events e ON e.id = COALESCE(a.event_id, q.event_id)
    WHERE q.account_id = ${accountId}
    ORDER BY q.joined_at DESC
    LIMIT 100`.execute(db);
  return rows;
}

export async function findHolds(db: Db | Trx, accountId: string) {
  const { rows } = await sql<{
    id: string;
    event_id: string;
    event_name: string;
    time_zone: string;
    section_code: string | null;
    quantity: number;
    status: string;
    expires_at: Date;
    created_at: Date;
    live: boolean;
  }>`
    SELECT h.id, h.event_id, e.name AS event_name, e.time_zone, h.section_code, h.quantity, h.status, h.expires_at, h.created_at,
           (h.status IN ('HELD', 'PAYING') AND h.expires_at > now()) AS live
    FROM holds h JOIN events e ON e.id = h.event_id
    WHERE h.account_id = ${accountId}
    ORDER BY h.created_at DESC
    LIMIT 100`.execute(db);
  return rows;
}

export async function findOrders(db: Db | Trx, accountId: string) {
  const { rows } = await sql<{
    id: string;
    event_id: string;
    event_name: string;
    time_zone: string;
    currency: string;
    seat_count: number;
    amount_cents: number;
    status: string;
    created_at: Date;
  }>`
    SELECT o.id, o.event_id, e.name AS event_name, e.time_zone, e.currency, o.seat_count, o.amount_cents, o.status, o.created_at
    FROM orders o JOIN events e ON e.id = o.event_id
    WHERE o.account_id = ${accountId}
    ORDER BY o.created_at DESC
    LIMIT 100`.execute(db);
  return rows;
}

export async function findWaitlistEntries(db: Db | Trx, accountId: string) {
  const { rows } = await sql<{
    id: number;
    listing_id: string;
    listing_name: string;
    created_at: Date;
    expires_at: Date;
    date_from: string;
    date_to: string;
    max_price_cents: number | null;
    currency: string;
    quantity: number;
    sections: string[] | null;
    live: boolean;
  }>`
    SELECT w.id, w.listing_id, l.name AS listing_name, w.created_at, w.expires_at, w.date_from::text, w.date_to::text,
           w.max_price_cents, w.quantity, w.sections, w.expires_at > now() AS live,
           coalesce((SELECT e.currency FROM events e WHERE e.listing_id = l.id ORDER BY e.starts_at LIMIT 1), 'USD') AS currency
    FROM waitlist_entries w JOIN listings l ON l.id = w.listing_id
    WHERE w.account_id = ${accountId}
    ORDER BY w.created_at DESC
    LIMIT 100`.execute(db);
  return rows;
}

export async function findNotifications(db: Db | Trx, accountId: string) {
  const { rows } = await sql<{
    id: number;
    listing_id: string;
    listing_name: string;
    kind: string;
    cause: string | null;
    created_at: Date;
    read_at: Date | null;
    offer_status: string | null;
  }>`
    SELECT n.id, n.listing_id, l.name AS listing_name, n.kind, av.cause, n.created_at, n.read_at, o.status AS offer_status
    FROM notifications n
    JOIN listings l ON l.id = n.listing_id
    LEFT JOIN availability_events av ON av.id = n.availability_id
    LEFT JOIN waitlist_offers o ON o.id = n.offer_id
    WHERE n.account_id = ${accountId}
    ORDER BY n.created_at DESC
    LIMIT 100`.execute(db);
  return rows;
}

/** An order as support sees it in a search or on its page: who, what event, how much, in the event's currency. */
export interface SupportOrderRow {
  id: string;
  account_id: string;
  /** The fan's name as their identity provider gave it; null when no token with a name was seen. */
  account_name: string | null;
  event_id: string;
  event_name: string;
  time_zone: string;
  currency: string;
  seat_count: number;
  amount_cents: number;
  status: string;
  payment_reference: string;
  /** When the order's money went back (null: not refunded). */
  refunded_at: Date | null;
  created_at: Date;
}

const supportOrderColumns = sql`o.id, o.account_id, (SELECT a.display_name FROM accounts a WHERE a.id = o.account_id) AS account_name,
  o.event_id, e.name AS event_name, e.time_zone, e.currency, o.seat_count, o.amount_cents, o.status, o.payment_reference, o.refunded_at, o.created_at`;

/**
 * Orders whose id starts with these 8 hex digits (the reference the fan sees): a range of the primary key, so one
 * index scan however many orders there are.
 */
export async function findOrdersByIdPrefix(db: Db | Trx, prefix: string): Promise<SupportOrderRow[]> {
  const p = prefix.toLowerCase();
  const { rows } = await sql<SupportOrderRow>`
    SELECT ${supportOrderColumns}
    FROM orders o JOIN events e ON e.id = o.event_id
    WHERE o.id BETWEEN ${`${p}-0000-0000-0000-000000000000`}::uuid AND ${`${p}-ffff-ffff-ffff-ffffffffffff`}::uuid
    ORDER BY o.created_at DESC
    LIMIT 20`.execute(db);
  return rows;
}

export async function findSupportOrder(db: Db | Trx, orderId: string): Promise<SupportOrderRow | undefined> {
  const { rows } = await sql<SupportOrderRow>`
    SELECT ${supportOrderColumns}
    FROM orders o JOIN events e ON e.id = o.event_id
    WHERE o.id = ${orderId}::uuid`.execute(db);
  return rows[0];
}

/** The seats an order bought (none once cancelled: they went back), by section, row and number. */
export async function findOrderSeats(db: Db | Trx, orderId: string) {
  const { rows } = await sql<{ section_code: string; row_label: string | null; seat_number: number }>`
    SELECT s.section_code, s.row_label, s.seat_number
    FROM orders o JOIN seats s ON s.hold_id = o.hold_id AND s.status = 'SOLD'
    WHERE o.id = ${orderId}::uuid
    ORDER BY s.section_code, s.row_index, s.seat_number
    LIMIT 200`.execute(db);
  return rows;
}

/**
 * Accounts whose id (often the fan's e-mail) or display name contains `text` (case-insensitive). At most 20: an exact
 * id or name first, then by id.
 */
export async function findAccountsLike(db: Db | Trx, text: string) {
  const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const { rows } = await sql<{ id: string; display_name: string | null; created_at: Date }>`
    SELECT id, display_name, created_at FROM accounts
    WHERE (id ILIKE ${pattern} OR display_name ILIKE ${pattern}) AND id <> '~waitlist'
    ORDER BY (lower(id) = lower(${text}) OR lower(display_name) = lower(${text})) DESC, id
    LIMIT 20`.execute(db);
  return rows;
}
