import type { Db } from '../db/connect.js';
import { DomainError, invalid, notFound } from '../errors.js';
import { insertAudit } from '../audit/index.js';
import { isUuid } from '../ids.js';
import { moveGaUnits } from '../inventory/ga.service.js';
import { emitAvailability } from '../waitlist/availability.js';
import { lockOrder, markOrderCancelled, returnSoldSeats } from './cancel.repository.js';
import { revokeTicketsOfOrder } from '../tickets/index.js';

/**
 * Cancels a confirmed order (an operator's decision, audited with who and why): the order is marked CANCELLED,
 * its seats come back, and the availability event is emitted in the same transaction, so after a sell-out the
 * seats go to the waitlist rather than to whoever refreshes first. Refunds are the payment provider's concern.
 */
export async function cancelOrder(db: Db, orderId: string, by: { actor: string; reason: string }) {
  if (!isUuid(orderId)) throw notFound('ORDER_NOT_FOUND', `no order ${orderId}`, 'orderId');
  if (!by.reason.trim()) throw invalid('REASON_REQUIRED', 'a cancellation needs a reason', 'reason');
  return db.transaction().execute(async (trx) => {
    const order = await lockOrder(trx, orderId);
    if (!order) throw notFound('ORDER_NOT_FOUND', `no order ${orderId}`, 'orderId');
    if (order.status === 'CANCELLED')
      throw new DomainError('conflict', 'ORDER_ALREADY_CANCELLED', 'this order is already cancelled', { field: 'orderId' });
    await markOrderCancelled(trx, orderId);
    const seats = await returnSoldSeats(trx, order.hold_id);
    // General admission: the order's units go back to their shards (there are no seats to tell the waitlist of).
    const units = seats.length === 0 ? await moveGaUnits(trx, [order.hold_id], 'SOLD', 'RETURNED') : 0;
    // The order's tickets stop at once (their codes read REVOKED at the door); a listing of one ends.
    const ticketsRevoked = await revokeTicketsOfOrder(trx, orderId, `order cancelled: ${by.reason}`);
    await insertAudit(trx, {
      actor: by.actor,
      action: 'order.cancel',
      eventId: order.event_id,
      details: {
        orderId,
        reason: by.reason,
        seats: seats.length,
        amountCents: order.amount_cents,
        ...(units > 0 ? { units } : {}),
        ...(ticketsRevoked > 0 ? { ticketsRevoked } : {}),
      },
    });
    const emitted = await emitAvailability(trx, order.event_id, 'ORDER_CANCELLED', seats);
    return {
      orderId,
      eventId: order.event_id,
      status: 'CANCELLED' as const,
      seatsReturned: seats.length + units,
      availabilityId: emitted?.availabilityId ?? null,
      toWaitlist: emitted?.pooled ?? false,
    };
  });
}
