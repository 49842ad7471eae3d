import type { Db } from '../db/connect.js';
import { DomainError, invalid, notFound } from '../errors.js';
import { insertAudit } from '../audit/index.js';
import { isUuid } from '../ids.js';
import { cancelOrder } from './cancel.js';
import { lockOrder, markOrderRefunded } from './cancel.repository.js';
import type { PaymentProvider } from './payment.js';

/** What a refund did: the order (cancelled first when it was still confirmed), the amount back, the seats back. */
export interface RefundResult {
  orderId: string;
  eventId: string;
  status: 'CANCELLED';
  refundedAt: Date;
  amountCents: number;
  /** Whether this refund cancelled the order first (false: it was cancelled before). */
  cancelled: boolean;
  seatsReturned: number;
  toWaitlist: boolean;
}

/**
 * Refunds an order in full through the payment provider, with who and why (an operator's decision): seats before
 * money, so a confirmed order is cancelled first (its own audited step, its seats back, the waitlist told), then the
 * charge is refunded under the order's payment reference and the order marked refunded, audited with the amount, in
 * one transaction that holds the order's row: two refunds at once make one (the second is ORDER_ALREADY_REFUNDED).
 * A provider that fails leaves the order cancelled and not refunded: 503 PAYMENT_PROVIDER_UNAVAILABLE with
 * Retry-After, and the refund can be asked again. If the provider refunded but the commit was lost, asking again
 * repeats the refund call for the same payment reference, which providers (and the simulator) answer without paying
 * twice.
 */
export async function refundOrder(
  db: Db,
  payments: PaymentProvider,
  orderId: string,
  by: { actor: string; reason: string },
): Promise<RefundResult> {
  if (!isUuid(orderId)) throw notFound('ORDER_NOT_FOUND', `no order ${orderId}`, 'orderId');
  if (!by.reason.trim()) throw invalid('REASON_REQUIRED', 'a refund needs a reason', 'reason');
  let cancelled: Awaited<ReturnType<typeof cancelOrder>> | null = null;
  try {
    cancelled = await cancelOrder(db, orderId, { actor: by.actor, reason: `refund: ${by.reason}` });
  } catch (e) {
    // Cancelled already (before, or by a refund running beside this one): the money is what remains to do.
    if (!(e instanceof DomainError && e.code === 'ORDER_ALREADY_CANCELLED')) throw e;
  }
  return db.transaction().execute(async (trx) => {
    const order = await lockOrder(trx, orderId);
    if (!order) throw notFound('ORDER_NOT_FOUND', `no order ${orderId}`, 'orderId');
    if (order.refunded_at)
      throw new DomainError('conflict', 'ORDER_ALREADY_REFUNDED', 'this order has been refunded already', { field: 'orderId' });
    try {
      await payments.refund(order.payment_reference);
    } catch {
      throw new DomainError(
        'unavailable',
        'PAYMENT_PROVIDER_UNAVAILABLE',
        'the payment provider did not take the refund; the order is cancelled and can be refunded again shortly',
        { retryAfterSeconds: 10 },
      );
    }
    const refundedAt = await markOrderRefunded(trx, orderId);
    await insertAudit(trx, {
      actor: by.actor,
      action: 'order.refund',
      eventId: order.event_id,
      details: { orderId, reason: by.reason, amountCents: order.amount_cents, paymentReference: order.payment_reference },
    });
    return {
      orderId,
      eventId: order.event_id,
      status: 'CANCELLED' as const,
      refundedAt,
      amountCents: order.amount_cents,
      cancelled: cancelled !== null,
      seatsReturned: cancelled?.seatsReturned ?? 0,
      toWaitlist: cancelled?.toWaitlist ?? false,
    };
  });
}
