import { sql } from 'kysely';
import type { Trx } from '../db/connect.js';
import type { ReturnedSeat } from '../waitlist/availability.js';

// Cancelling an order's SQL (cancel.ts).

/** The order, locked for this transaction. */
export function lockOrder(trx: Trx, orderId: string) {
  return trx.selectFrom('orders').selectAll().where('id', '=', orderId).forUpdate().executeTakeFirst();
}

export async function markOrderCancelled(trx: Trx, orderId: string): Promise<void> {
  await trx.updateTable('orders').set({ status: 'CANCELLED' }).where('id', '=', orderId).execute();
}

/** Marks a (cancelled) order refunded now; its time. */
export async function markOrderRefunded(trx: Trx, orderId: string): Promise<Date> {
  const r = await trx
    .updateTable('orders')
    .set({ refunded_at: sql<Date>`now()` })
    .where('id', '=', orderId)
    .returning('refunded_at')
    .executeTakeFirstOrThrow();
  return r.refunded_at!;
}

/** The hold's SOLD seats back to AVAILABLE; the seats returned. */
export async function returnSoldSeats(trx: Trx, holdId: string): Promise<ReturnedSeat[]> {
  const { rows } = await sql<ReturnedSeat>`
    UPDATE seats SET status = 'AVAILABLE', hold_id = NULL, expires_at = NULL, version = version + 1
    WHERE hold_id = ${holdId} AND status = 'SOLD'
    RETURNING id, section_code AS "sectionCode", row_index AS "rowIndex", seat_number AS "seatNumber"`.execute(trx);
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}
