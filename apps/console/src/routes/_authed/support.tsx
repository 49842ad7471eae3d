import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, Link, useNavigate } from '@tanstack/react-router';
import { z } from 'zod';
import { supportSearchSchema } from '@onsale/shared/support/schema';
import { causeWords, formatMoney } from '@onsale/shared/words';
import { messageOf, useTRPC } from '../../trpc';
import { ErrorSummary } from '../-components/ErrorSummary';
import { Field } from '../-components/Field';
import { TableBlock } from '../-components/GridTable';
import { ReasonAction } from '../-components/ReasonAction';
import { TicketSupport } from '../-components/TicketSupport';
import { Forbidden } from '../-components/Status';
import { When } from '../-components/When';

// Fan support: find a fan by the order reference they read out, their e-mail or account id, and see everything
// the account has here; release a hold for the fan, cancel an order (on its page), block the account from an event.
// Admins and operators; every action audited.
const searchSchema = z.object({
  // A reference of digits only (`12345678`) reads from the URL as a number: it is still the reference.
  q: z
    .union([z.string(), z.number().transform(String)])
    .optional()
    .catch(undefined),
  account: z.string().optional().catch(undefined),
});

export const Route = createFileRoute('/_authed/support')({
  validateSearch: searchSchema,
  component: SupportPage,
});

const STATE_WORDS = {
  WAITING_FOR_OPEN: ['Waiting for the open (position drawn then)', ''],
  WAITING: ['Waiting', ''],
  ADMITTED: ['Admitted: their turn (no admission token taken yet)', 'ok'],
  ADMISSION_CLAIMED: ['Admitted: admission token issued', 'ok'],
  PAUSED: ['Paused (queue paused)', 'warn'],
  SOLD_OUT: ['Sold out', 'alarm'],
} as const;

function SupportPage() {
  const { me } = Route.useRouteContext();
  const { q, account } = Route.useSearch();
  const navigate = useNavigate({ from: Route.fullPath });
  const [typed, setTyped] = useState(q ?? account ?? '');
  const [errors, setErrors] = useState<Record<string, string>>({});
  if (!me.permissions.includes('support.read')) return <Forbidden what="page (fan support is for admins and operators)" />;

  function submit(e: FormEvent) {
    e.preventDefault();
    const parsed = supportSearchSchema.safeParse({ query: typed });
    if (!parsed.success) return setErrors({ query: parsed.error.issues[0]!.message });
    setErrors({});
    void navigate({ search: { q: parsed.data.query } });
  }

  return (
    <section>
      <h1>Fan support</h1>
      <p className="muted">
        Find a fan by the order reference on their confirmation, their name, their e-mail or their account id: where they stand in each
        queue, their holds, orders, waitlist entries and notifications. Release a hold for the fan, cancel an order from its page, or block
        the account from one event (it can no longer join, hold or pay there). Every action needs a reason and is audited.
      </p>
      <form className="card lookup-form" onSubmit={submit} noValidate data-testid="support-lookup">
        <ErrorSummary errors={errors} labels={{ query: 'Order reference, name, e-mail or account id' }} />
        <Field
          label="Order reference, name, e-mail or account id"
          name="query"
          error={errors.query}
          hint="The reference is the 8 characters on the fan's order confirmation, e.g. 05B0DD69. Part of a name or e-mail finds it too, in any case."
        >
          <input name="query" value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" />
        </Field>
        <div className="page-actions">
          <button type="submit" className="primary">
            Find
          </button>
        </div>
      </form>
      {q && !account && <SearchResults query={q} />}
      {account && (
        <AccountView
          accountId={account}
          canAct={me.permissions.includes('support.act')}
          canCancel={me.permissions.includes('orders.cancel')}
        />
      )}
      <TicketSupport canAct={me.permissions.includes('support.act')} />
    </section>
  );
}

/** What a search found: orders by reference (each to its page) and accounts (each to its whole picture). */
function SearchResults({ query }: { query: string }) {
  const trpc = useTRPC();
  const search = useQuery(trpc.support.search.queryOptions({ query }));
  if (search.error)
    return (
      <p className="form-error" role="alert">
        {messageOf(search.error)}
      </p>
    );
  if (!search.data) return <p className="muted">Searching…</p>;
  const { orders, accounts } = search.data;
  return (
    <div data-testid="support-results">
      {orders.length === 0 && accounts.length === 0 && (
        <p data-testid="support-no-match">
          Nothing matches <strong>{query}</strong>: no order has this reference and no account's id or name contains it.
        </p>
      )}
      {orders.length > 0 && (
        <TableBlock
          title="Orders with this reference"
          items={orders}
          empty=""
          testId="support-found-orders"
          columns={['Reference', 'Event', 'Account', 'Ordered', { label: 'Amount', num: true }, 'Status']}
          row={(o) => (
            <tr key={o.id} data-testid="support-found-order" data-order-id={o.id}>
              <td>
                <Link to="/orders/$orderId" params={{ orderId: o.id }} data-testid="order-reference">
                  {o.reference}
                </Link>
              </td>
              <td>{o.eventName}</td>
              <td>
                <Link to="/support" search={{ account: o.accountId }}>
                  {o.accountName ?? o.accountId}
                </Link>
                {o.accountName && <span className="muted"> {o.accountId}</span>}
              </td>
              <td>
                <When iso={o.createdAt} zone={o.timeZone} />
              </td>
              <td className="num">{formatMoney(o.amountCents, o.currency)}</td>
              <td>{o.status === 'CONFIRMED' ? 'Confirmed' : 'Cancelled'}</td>
            </tr>
          )}
        />
      )}
      {accounts.length > 0 && (
        <div className="section-block">
          <h3>Accounts</h3>
          <ul data-testid="support-found-accounts">
            {accounts.map((a) => (
              <li key={a.accountId}>
                <Link to="/support" search={{ account: a.accountId }} data-testid="support-found-account">
                  {a.displayName ? `${a.displayName} (${a.accountId})` : a.accountId}
                </Link>{' '}
                <span className="muted">
                  first seen <When iso={a.createdAt} />
                </span>
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}

function AccountView({ accountId, canAct, canCancel }: { accountId: string; canAct: boolean; canCancel: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const lookup = useQuery(trpc.support.lookup.queryOptions({ accountId }, { refetchInterval: 5_000 }));
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.support.lookup.queryKey({ accountId }) });
  const release = useMutation(trpc.support.releaseHold.mutationOptions({ onSuccess: refresh }));
  const cancel = useMutation(trpc.operations.cancelOrder.mutationOptions({ onSuccess: refresh }));
  const block = useMutation(trpc.support.block.mutationOptions({ onSuccess: refresh }));
  const unblock = useMutation(trpc.support.unblock.mutationOptions({ onSuccess: refresh }));

  if (lookup.error)
    return (
      <p className="form-error" role="alert">
        {messageOf(lookup.error)}
      </p>
    );
  if (!lookup.data) return <p className="muted">Loading…</p>;
  const a = lookup.data;
  const blocked = new Set(a.blocks.map((b) => b.eventId));
  const events = new Map<string, { name: string }>();
  for (const x of [...a.queues, ...a.holds, ...a.orders]) events.set(x.eventId, { name: x.eventName });
  const empty = a.queues.length + a.holds.length + a.orders.length + a.waitlist.length + a.notifications.length + a.blocks.length === 0;

  return (
    <div data-testid="support-account">
      <h2>
        {a.displayName ? (
          <>
            <span data-testid="support-account-name">{a.displayName}</span> <code>{a.accountId}</code>
          </>
        ) : (
          <>
            Account <code>{a.accountId}</code>
          </>
        )}
      </h2>
      <p className="muted">
        {a.createdAt ? (
          <>
            First seen <When iso={a.createdAt} />.
          </>
        ) : (
          'This account has not signed in to the store yet.'
        )}
      </p>
      {empty && <p data-testid="support-empty">Nothing on record for this account.</p>}

      {a.blocks.length > 0 && (
        <div className="section-block">
          <h3>Blocks</h3>
          <ul data-testid="support-blocks">
            {a.blocks.map((b) => (
              <li key={b.eventId}>
                Blocked from <strong>{b.eventName}</strong> by {b.blockedBy} (<When iso={b.blockedAt} />
                ): {b.reason}{' '}
                {canAct && (
                  <ReasonAction
                    label="Lift the block"
                    what={`The account may join, hold and pay for ${b.eventName} again.`}
                    testId="unblock"
                    run={async (reason) => {
                      await unblock.mutateAsync({ eventId: b.eventId, accountId: a.accountId, reason });
                      return 'Block lifted.';
                    }}
                  />
                )}
              </li>
            ))}
          </ul>
        </div>
      )}

      <TableBlock
        title="Queues"
        items={a.queues}
        empty="In no queue."
        testId="support-queues"
        columns={['Event', 'Joined', { label: 'Position', num: true }, { label: 'Admitted through', num: true }, 'State', '']}
        row={(q) => (
          <tr key={`${q.eventId}-${q.tier ?? ''}`} data-testid="support-queue-row">
            <td>
              <Link to="/events/$eventId" params={{ eventId: q.eventId }}>
                {q.eventName}
              </Link>
              {q.tier && <span className="muted"> · presale {q.tier}</span>}
            </td>
            <td>
              <When iso={q.joinedAt} zone={q.timeZone} />{' '}
              <span className="muted">({q.cohort === 'PREOPEN' ? 'before the open' : 'after the open'})</span>
            </td>
            <td className="num">{q.position ?? '—'}</td>
            <td className="num">{q.admittedThrough}</td>
            <td data-testid="support-queue-state">
              <span className={`pill pill-${STATE_WORDS[q.state][1]}`}>{STATE_WORDS[q.state][0]}</span>
            </td>
            <td>
              {canAct && !blocked.has(q.eventId) && (
                <ReasonAction
                  label="Block from this event"
                  danger
                  what={`The account can no longer join, hold or pay for ${q.eventName}; its live holds there go back now.`}
                  testId="block"
                  run={async (reason) => {
                    const r = await block.mutateAsync({ eventId: q.eventId, accountId: a.accountId, reason });
                    return `Blocked; ${r.holdsReleased} live hold(s) released.`;
                  }}
                />
              )}
            </td>
          </tr>
        )}
      />

      <TableBlock
        title="Holds"
        items={a.holds}
        empty="No holds."
        testId="support-holds"
        columns={['Event', 'Seats', 'Status', 'Expires', '']}
        row={(h) => (
          <tr key={h.id} data-testid="support-hold-row" data-hold-id={h.id}>
            <td>{h.eventName}</td>
            <td>
              {h.quantity}
              {h.section ? ` in ${h.section}` : ''}
            </td>
            <td>
              {h.live ? (
                <span className="pill pill-warn">{h.status === 'PAYING' ? 'Paying' : 'Held'}</span>
              ) : h.status === 'HELD' ? (
                'Lapsed'
              ) : (
                h.status.toLowerCase()
              )}
            </td>
            <td>
              <When iso={h.expiresAt} zone={h.timeZone} />
            </td>
            <td>
              {canAct && h.live && h.status === 'HELD' && (
                <ReasonAction
                  label="Release hold"
                  what="The seats go back on sale now (to the waitlist after a sell-out); the fan loses them."
                  testId="release-hold"
                  run={async (reason) => {
                    await release.mutateAsync({ holdId: h.id, reason });
                    return 'Released.';
                  }}
                />
              )}
            </td>
          </tr>
        )}
      />

      <TableBlock
        title="Orders"
        items={a.orders}
        empty="No orders."
        testId="support-orders"
        columns={['Reference', 'Event', 'Ordered', { label: 'Seats', num: true }, { label: 'Amount', num: true }, 'Status', '']}
        row={(o) => (
          <tr key={o.id} data-testid="support-order-row" data-order-id={o.id}>
            <td>
              <Link to="/orders/$orderId" params={{ orderId: o.id }} data-testid="order-reference">
                {o.reference}
              </Link>
            </td>
            <td>{o.eventName}</td>
            <td>
              <When iso={o.createdAt} zone={o.timeZone} />
            </td>
            <td className="num">{o.seats}</td>
            <td className="num">{formatMoney(o.amountCents, o.currency)}</td>
            <td>{o.status === 'CONFIRMED' ? 'Confirmed' : 'Cancelled'}</td>
            <td>
              {canCancel && o.status === 'CONFIRMED' && (
                <ReasonAction
                  label="Cancel order"
                  danger
                  what="The order is cancelled and its seats come back (to the waitlist after a sell-out). The money is not refunded: the order's page refunds it."
                  testId="cancel-order"
                  run={async (reason) => {
                    const r = await cancel.mutateAsync({ orderId: o.id, reason });
                    return `Cancelled; ${r.seatsReturned} seat(s) back${r.toWaitlist ? ' to the waitlist' : ''}.`;
                  }}
                />
              )}
            </td>
          </tr>
        )}
      />

      <TableBlock
        title="Waitlist entries"
        items={a.waitlist}
        empty="On no waitlist."
        testId="support-waitlist"
        columns={['Listing', 'Joined', 'Wants', 'Until']}
        row={(w) => (
          <tr key={w.id}>
            <td>
              <Link to="/listings/$listingId" params={{ listingId: w.listingId }}>
                {w.listingName}
              </Link>
            </td>
            <td>
              <When iso={w.createdAt} />
            </td>
            <td>
              {w.quantity} seat(s), shows {w.dateFrom} to {w.dateTo}
              {w.maxPriceCents !== null ? `, at most ${formatMoney(w.maxPriceCents, w.currency)}` : ''}
              {w.sections ? `, in ${w.sections.join(', ')}` : ''}
            </td>
            <td>{w.live ? <When iso={w.expiresAt} /> : 'expired'}</td>
          </tr>
        )}
      />

      <TableBlock
        title="Notifications"
        items={a.notifications}
        empty="None sent."
        testId="support-notifications"
        columns={['Sent', 'Listing', 'What', 'Read']}
        row={(n) => (
          <tr key={n.id}>
            <td>
              <When iso={n.createdAt} />
            </td>
            <td>{n.listingName}</td>
            <td>
              {KIND_WORDS[n.kind] ?? n.kind}
              {n.cause ? ` (${causeWords(n.cause)})` : ''}
              {n.offerStatus ? `; offer ${n.offerStatus.toLowerCase()}` : ''}
            </td>
            <td>{n.readAt ? <When iso={n.readAt} /> : 'not yet'}</td>
          </tr>
        )}
      />
    </div>
  );
}

const KIND_WORDS: Record<string, string> = {
  OFFER: 'Offered seats to claim',
  BROADCAST: 'Told seats came back',
  ON_SALE: 'Told the sale opened',
  OFFER_EXPIRED: 'Offer ran out',
  LOTTERY_WON: 'Won the lottery',
  LOTTERY_NOT_DRAWN: 'Not drawn in the lottery',
};
