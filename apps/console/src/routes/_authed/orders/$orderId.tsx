import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { formatMoney } from '@onsale/shared/words';
import { messageOf, useTRPC } from '../../../trpc';
import { ReasonAction } from '../../-components/ReasonAction';
import { Forbidden } from '../../-components/Status';
import { When } from '../../-components/When';

// One order, as support finds it by the reference the fan reads out: who, which event, which seats, how much (in
// the event's currency), and the cancellation (with a reason, audited).
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
  const cancel = useMutation(
    trpc.operations.cancelOrder.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.support.order.queryKey({ orderId }) }),
    }),
  );
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
          <span className={`pill ${confirmed ? 'pill-ok' : 'pill-alarm'}`}>{confirmed ? 'Confirmed' : 'Cancelled'}</span>
        </dd>
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
        <dd data-testid="order-amount">{formatMoney(o.amountCents, o.currency)}</dd>
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
      {canCancel && confirmed && (
        <div className="page-actions">
          <ReasonAction
            label="Cancel order"
            danger
            what="The order is cancelled and its seats come back (to the waitlist after a sell-out). The money goes back through the payment provider, with the payment reference above."
            testId="cancel-order"
            run={async (reason) => {
              const r = await cancel.mutateAsync({ orderId: o.id, reason });
              return `Cancelled; ${r.seatsReturned} seat(s) back${r.toWaitlist ? ' to the waitlist' : ''}.`;
            }}
          />
        </div>
      )}
    </section>
  );
}
