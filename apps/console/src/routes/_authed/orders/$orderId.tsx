import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { formatMoney } from '@onsale/shared/words';
import { messageOf, useTRPC } from '../../../trpc';
import { ReasonAction } from '../../-components/ReasonAction';
import { Forbidden } from '../../-components/Status';
import { When } from '../../-components/When';

// One order, as support finds it by the reference the fan reads out: who, which event, which seats, how much (in
// the event's currency), its cancellation and its refund (each with a confirmation and a reason, audited), read back
// from the BFF after each.
export const Route = createFileRoute('/_authed/orders/$orderId')({
  component: OrderPage,
});

function OrderPage() {
  const { me } = Route.useRouteContext();
  const { orderId } = Route.useParams();
  if (!me.permissions.includes('support.read')) return <Forbidden what="page (orders are for fan support: admins and operators)" />;
  return <OrderView orderId={orderId} canCancel={me.permissions.includes('orders.cancel')} />;
}

function OrderView({ orderId, canCancel }: { orderId: string; canCancel: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const order = useQuery(trpc.support.order.queryOptions({ orderId }));
  const reread = () => queryClient.invalidateQueries({ queryKey: trpc.support.order.queryKey({ orderId }) });
  const cancel = useMutation(trpc.operations.cancelOrder.mutationOptions({ onSuccess: reread }));
  const refund = useMutation(trpc.operations.refundOrder.mutationOptions({ onSuccess: reread }));
  if (order.error)
    return (
      <section>
        <p className="crumbs">
          <Link to="/support">Fan support</Link> / Order
        </p>
        <p className="form-error" role="alert">
          {messageOf(order.error)}
        </p>
      </section>
    );
  if (!order.data) return <p className="muted">Loading…</p>;
  const o = order.data;
  const confirmed = o.status === 'CONFIRMED';
  const refunded = o.refundedAt !== null;
  const amount = formatMoney(o.amountCents, o.currency);
  return (
    <section data-testid="order-page" data-order-id={o.id}>
      <p className="crumbs">
        <Link to="/support">Fan support</Link> / Order {o.reference}
      </p>
      <h1>
        Order <span data-testid="order-page-reference">{o.reference}</span>
      </h1>
      <dl className="facts card">
        <dt>Status</dt>
        <dd data-testid="order-status">
          <span className={`pill ${confirmed ? 'pill-ok' : 'pill-alarm'}`}>
            {confirmed ? 'Confirmed' : refunded ? 'Cancelled and refunded' : 'Cancelled'}
          </span>
        </dd>
        {o.refundedAt && (
          <>
            <dt>Refunded</dt>
            <dd data-testid="order-refunded">
              {amount} on <When iso={o.refundedAt} zone={o.timeZone} />
            </dd>
          </>
        )}
        <dt>Event</dt>
        <dd>
          <Link to="/events/$eventId" params={{ eventId: o.eventId }}>
            {o.eventName}
          </Link>
        </dd>
        <dt>Account</dt>
        <dd>
          <Link to="/support" search={{ account: o.accountId }} data-testid="order-account">
            {o.accountName ?? o.accountId}
          </Link>
          {o.accountName && <span className="muted"> {o.accountId}</span>}
        </dd>
        <dt>Ordered</dt>
        <dd>
          <When iso={o.createdAt} zone={o.timeZone} />
        </dd>
        <dt>Amount</dt>
        <dd data-testid="order-amount">{amount}</dd>
        <dt>Seats</dt>
        <dd>
          {o.seats}
          {o.seatList.length > 0 && (
            <span className="muted" data-testid="order-seats">
              {' '}
              ({o.seatList.map((s) => `${s.section} ${s.row ?? ''}${s.seat}`.replace(/\s+/g, ' ')).join(', ')})
            </span>
          )}
        </dd>
        <dt>Payment</dt>
        <dd>
          <code>{o.paymentReference}</code> <span className="muted">(the payment provider's reference)</span>
        </dd>
        <dt>Order id</dt>
        <dd>
          <code>{o.id}</code>
        </dd>
      </dl>
      {canCancel && !refunded && (
        <div className="page-actions">
          {confirmed && (
            <ReasonAction
              label="Cancel order"
              danger
              what="The order is cancelled and its seats come back (to the waitlist after a sell-out). The money is not refunded: Cancel and refund does both."
              testId="cancel-order"
              run={async (reason) => {
                const r = await cancel.mutateAsync({ orderId: o.id, reason });
                return `Cancelled; ${r.seatsReturned} seat(s) back${r.toWaitlist ? ' to the waitlist' : ''}.`;
              }}
            />
          )}
          <ReasonAction
            label={confirmed ? 'Cancel and refund' : `Refund ${amount}`}
            danger
            what={`${confirmed ? 'The order is cancelled and its seats come back (to the waitlist after a sell-out); then ' : ''}${amount} goes back to the fan's card through the payment provider (payment ${o.paymentReference}). This cannot be undone.`}
            testId="refund-order"
            run={async (reason) => {
              const r = await refund.mutateAsync({ orderId: o.id, reason });
              return `Refunded ${formatMoney(r.amountCents, o.currency)}${r.cancelled ? `; cancelled, ${r.seatsReturned} seat(s) back${r.toWaitlist ? ' to the waitlist' : ''}` : ''}.`;
            }}
          />
        </div>
      )}
    </section>
  );
}
