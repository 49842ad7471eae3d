import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { ReviewOrder } from './review.js';

/** An event's confirmed orders with what the review links on: card, the hold's device, the account's age. */
export async function confirmedOrdersForReview(db: Db, eventId: string): Promise<ReviewOrder[]> {
  const { rows } = await sql<{
    order_id: string;
    account_id: string;
    seat_count: number;
    amount_cents: number;
    instrument_fingerprint: string;
    device_hash: string | null;
    account_created_at: Date;
    created_at: Date;
    transfers: number;
    listings: number;
  }>`
    SELECT o.id AS order_id, o.account_id, o.seat_count, o.amount_cents, o.instrument_fingerprint, h.device_hash,
           a.created_at AS account_created_at, o.created_at,
           -- The order's tickets the buyer passed on, and those they listed on the exchange: a reseller's signature.
           (SELECT count(*) FROM tickets t WHERE t.order_id = o.id AND t.holder_account_id = o.account_id AND t.status = 'TRANSFERRED')::int AS transfers,
           (SELECT count(*) FROM ticket_resales r JOIN tickets t ON t.id = r.ticket_id
             WHERE t.order_id = o.id AND r.seller_account_id = o.account_id)::int AS listings
    FROM orders o
    JOIN holds h ON h.id = o.hold_id
    JOIN accounts a ON a.id = o.account_id
    WHERE o.event_id = ${eventId} AND o.status = 'CONFIRMED'
    ORDER BY o.created_at, o.id`.execute(db);
  return rows.map((r) => ({
    orderId: r.order_id,
    accountId: r.account_id,
    seats: r.seat_count,
    amountCents: r.amount_cents,
    instrument: r.instrument_fingerprint,
    deviceHash: r.device_hash,
    accountCreatedAt: r.account_created_at,
    orderedAt: r.created_at,
    transfers: r.transfers,
    listings: r.listings,
  }));
}

/** Whether the account already holds a place in the event's queue (one indexed read; only for flagged joins). */
export async function hasQueuePosition(db: Db, eventId: string, accountId: string): Promise<boolean> {
  const { rows } = await sql<{
    one: number;
  }>`SELECT 1 AS one FROM queue_entries WHERE event_id = ${eventId} AND account_id = ${accountId}`.execute(db);
  return rows.length > 0;
}
