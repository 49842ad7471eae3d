import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { z } from 'zod';
import { reviewOptionsSchema } from '@onsale/shared/support/schema';
import { fieldErrors } from '@onsale/shared/users/schema';
import { orderReference } from '@onsale/shared/checkout/schema';
import { formatMoney } from '@onsale/shared/words';
import { messageOf, useTRPC } from '../../../../trpc';
import { ErrorSummary } from '../../../-components/ErrorSummary';
import { EventLinks } from '../../../-components/EventLinks';
import { Field } from '../../../-components/Field';
import { ReasonAction } from '../../../-components/ReasonAction';
import { Forbidden } from '../../../-components/Status';
import { When } from '../../../-components/When';
import { GridTable } from '../../../-components/GridTable';
import { TicketFigures } from '../../../-components/TicketFigures';

// The post-sale review (the CLI's `review`): confirmed orders clustered by shared card, shared device and account
// signals, each cluster with its evidence, and cancelling a whole cluster (reason required, each order audited).
const searchSchema = z.object({
  within: z.number().int().min(0).optional().catch(undefined),
  min: z.number().int().min(2).optional().catch(undefined),
});

export const Route = createFileRoute('/_authed/events/$eventId_/review')({
  validateSearch: searchSchema,
  component: ReviewPage,
});

const SIGNAL_WORDS: Record<string, string> = {
  INSTRUMENT: 'the same payment card',
  DEVICE: 'the same device',
  ACCOUNT_SEQUENCE: 'account ids that differ only by a number',
  CREATED_TOGETHER: 'accounts created within seconds of each other',
};

function ReviewPage() {
  const { me } = Route.useRouteContext();
  const { eventId } = Route.useParams();
  const search = Route.useSearch();
  const navigate = Route.useNavigate();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [within, setWithin] = useState(search.within === undefined ? '' : String(search.within));
  const [min, setMin] = useState(search.min === undefined ? '2' : String(search.min));
  const [errors, setErrors] = useState<Record<string, string>>({});
  // A cancelled cluster leaves the review (its orders are no longer confirmed): what was done is said above the list.
  const [cancelled, setCancelled] = useState<{ clusterId: string; text: string } | null>(null);
  const opts = { eventId, createdWithinSeconds: search.within ?? null, ...(search.min !== undefined ? { minAccounts: search.min } : {}) };
  const review = useQuery(trpc.operations.review.queryOptions(opts, { enabled: me.permissions.includes('review.read') }));
  const cancel = useMutation(
    trpc.operations.cancelCluster.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.operations.review.queryKey(opts) }),
    }),
  );
  if (!me.permissions.includes('review.read')) return <Forbidden what="page (the post-sale review is for admins and operators)" />;

  function apply(e: FormEvent) {
    e.preventDefault();
    const input = { eventId, createdWithinSeconds: within.trim() === '' ? null : Number(within), minAccounts: Number(min) };
    const parsed = reviewOptionsSchema.safeParse(input);
    if (!parsed.success) return setErrors(fieldErrors(parsed.error));
    setErrors({});
    void navigate({
      search: {
        ...(parsed.data.createdWithinSeconds != null ? { within: parsed.data.createdWithinSeconds } : {}),
        ...(parsed.data.minAccounts ? { min: parsed.data.minAccounts } : {}),
      },
    });
  }

  const r = review.data;
  return (
    <section>
      <p className="crumbs">
        <Link to="/">Events</Link> /{' '}
        {r ? (
          <Link to="/events/$eventId" params={{ eventId }}>
            {r.eventName}
          </Link>
        ) : (
          '…'
        )}{' '}
        / Post-sale review
      </p>
      <h1>Post-sale review</h1>
      <EventLinks eventId={eventId} permissions={me.permissions} />
      <p className="muted">
        Confirmed orders linked by a shared payment card, a shared device or account ids in a sequence (and, if asked, accounts created
        close together). A cluster is evidence, not proof: read it, then cancel its orders if they break the event's rules. Cancelled seats
        go back (to the waitlist after a sell-out); every order is audited with your reason.
      </p>
      <form className="card filters" onSubmit={apply} noValidate data-testid="review-options">
        <ErrorSummary
          errors={errors}
          labels={{ createdWithinSeconds: 'Accounts created within (seconds)', minAccounts: 'Fewest accounts in a cluster' }}
        />
        <Field
          label="Accounts created within (seconds)"
          name="createdWithinSeconds"
          error={errors.createdWithinSeconds}
          hint="Empty: do not link on creation time."
        >
          <input inputMode="numeric" value={within} onChange={(e) => setWithin(e.target.value)} />
        </Field>
        <Field label="Fewest accounts in a cluster" name="minAccounts" error={errors.minAccounts}>
          <input inputMode="numeric" value={min} onChange={(e) => setMin(e.target.value)} />
        </Field>
        <div className="page-actions">
          <button type="submit" className="primary">
            Review again
          </button>
        </div>
      </form>
      {review.error && (
        <p className="form-error" role="alert">
          {messageOf(review.error)}
        </p>
      )}
      {r && (
        <>
          <p data-testid="review-summary">
            {r.confirmedOrders} confirmed orders;{' '}
            {r.clusters.length === 0
              ? 'no clusters'
              : `${r.clusters.length} cluster(s) with ${r.clusteredOrders} orders and ${r.clusteredSeats} seats`}
            .
          </p>
          {cancelled && (
            <p
              className="form-ok"
              role="status"
              data-testid="cluster-cancelled"
              data-gone={r.clusters.some((c) => c.id === cancelled.clusterId) ? 'false' : 'true'}
            >
              {cancelled.text}
              {r.clusters.some((c) => c.id === cancelled.clusterId)
                ? ' Reading the review again…'
                : ' The review read again no longer lists that cluster.'}
            </p>
          )}
          {r.clusters.map((c) => (
            <div key={c.id} className="card cluster" data-testid="review-cluster" data-cluster-id={c.id}>
              <h3>
                {c.accounts.length} accounts, {c.orders.length} orders, {c.seats} seats, {formatMoney(c.amountCents, r.currency)}
              </h3>
              <p className="muted">
                Linked by {c.signals.map((s) => SIGNAL_WORDS[s] ?? s).join(', ')}; the accounts were created within{' '}
                {c.accountsCreatedWithinSeconds} s of each other.
              </p>
              <p data-testid="cluster-tickets">
                Their tickets: {c.transfers} transferred to other accounts, {c.listings} listed for resale.
              </p>
              <ul>
                {c.evidence.map((e, i) => (
                  <li key={i}>
                    {SIGNAL_WORDS[e.signal] ?? e.signal} ({e.value}): {e.accounts.join(', ')}
                  </li>
                ))}
              </ul>
              <GridTable columns={['Reference', 'Account', 'Ordered', { label: 'Seats', num: true }, { label: 'Amount', num: true }]}>
                {c.orders.map((o) => (
                  <tr key={o.orderId}>
                    <td>
                      {me.permissions.includes('support.read') ? (
                        <Link to="/orders/$orderId" params={{ orderId: o.orderId }}>
                          {orderReference(o.orderId)}
                        </Link>
                      ) : (
                        orderReference(o.orderId)
                      )}
                    </td>
                    <td>
                      {me.permissions.includes('support.read') ? (
                        <Link to="/support" search={{ account: o.accountId }}>
                          {o.accountId}
                        </Link>
                      ) : (
                        o.accountId
                      )}
                    </td>
                    <td>
                      <When iso={o.orderedAt} zone={r.timeZone} />
                    </td>
                    <td className="num">{o.seats}</td>
                    <td className="num">{formatMoney(o.amountCents, r.currency)}</td>
                  </tr>
                ))}
              </GridTable>
              {me.permissions.includes('review.cancel') && (
                <ReasonAction
                  label="Cancel this cluster's orders"
                  danger
                  what={`All ${c.orders.length} orders are cancelled and their ${c.seats} seats come back. This cannot be undone.`}
                  testId="cancel-cluster"
                  run={async (reason) => {
                    const done = await cancel.mutateAsync({ ...opts, clusterId: c.id, reason });
                    const text = `Cancelled ${done.cancelled.length} orders of ${c.accounts.join(', ')}; ${done.seatsReturned} seats back${done.skipped.length ? `; ${done.skipped.length} skipped` : ''}.`;
                    setCancelled({ clusterId: c.id, text });
                    return text;
                  }}
                />
              )}
            </div>
          ))}
        </>
      )}
      <TicketFigures eventId={eventId} refreshMs={30_000} />
    </section>
  );
}
