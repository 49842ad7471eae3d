import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute } from '@tanstack/react-router';
import { webhookEndpointInputSchema } from '@onsale/shared/notify/schema';
import { fieldErrors } from '@onsale/shared/users/schema';
import { sentence } from '@onsale/shared/words';
import { fieldErrorsOf, messageOf, useTRPC } from '../../trpc';
import { ErrorSummary } from '../-components/ErrorSummary';
import { Field } from '../-components/Field';
import { Forbidden } from '../-components/Status';
import { When } from '../-components/When';
import { GridTable } from '../-components/GridTable';

// Webhook endpoints of waitlist notifications (the CLI's webhook:* commands): add, disable and enable, the
// deliveries (DEAD is the dead-letter list), redeliver. Admins and operators; every change audited.
export const Route = createFileRoute('/_authed/webhooks')({
  component: WebhooksPage,
});

const STATUS_TONE: Record<string, string> = { DELIVERED: 'ok', PENDING: '', RETRYING: 'warn', DEAD: 'alarm' };

function WebhooksPage() {
  const { me } = Route.useRouteContext();
  if (!me.permissions.includes('webhooks.manage')) return <Forbidden what="page (webhooks are managed by admins and operators)" />;
  return <Webhooks />;
}

function Webhooks() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const endpoints = useQuery(trpc.webhooks.list.queryOptions(undefined, { refetchInterval: 5_000 }));
  const [status, setStatus] = useState<'' | 'DEAD' | 'RETRYING' | 'PENDING' | 'DELIVERED'>('');
  const [endpointId, setEndpointId] = useState('');
  const deliveries = useQuery(
    trpc.webhooks.deliveries.queryOptions(
      { ...(status ? { status } : {}), ...(endpointId ? { endpointId } : {}), limit: 50 },
      { refetchInterval: 5_000 },
    ),
  );
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.webhooks.pathKey() });
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const report = (ok: boolean, text: string) => {
    setMessage({ ok, text });
    void refresh();
  };
  const setActive = (active: boolean) => ({
    onSuccess: () =>
      report(true, active ? 'Endpoint enabled.' : 'Endpoint disabled: its pending deliveries go DEAD; redeliver them once it is back.'),
    onError: (e: unknown) => report(false, messageOf(e, { change: true })),
  });
  const disable = useMutation(trpc.webhooks.disable.mutationOptions(setActive(false)));
  const enable = useMutation(trpc.webhooks.enable.mutationOptions(setActive(true)));
  const redeliver = useMutation(
    trpc.webhooks.redeliver.mutationOptions({
      onSuccess: (d) => report(true, `Delivery ${d.id} queued again.`),
      onError: (e) => report(false, messageOf(e, { change: true })),
    }),
  );

  return (
    <section>
      <h1>Webhooks</h1>
      <p className="muted">
        Receivers of waitlist notifications (signed POSTs; the receiver checks X-Onsale-Signature with the endpoint's secret). Every change
        is in the audit log.
      </p>
      {message && (
        <p className={message.ok ? 'form-ok' : 'form-error'} role={message.ok ? 'status' : 'alert'} data-testid="webhook-message">
          {sentence(message.text)}
        </p>
      )}
      <h2>Endpoints</h2>
      {endpoints.data && endpoints.data.length === 0 && <p className="muted">No endpoints yet.</p>}
      {endpoints.data && endpoints.data.length > 0 && (
        <GridTable columns={['URL', 'Listing', 'State', 'Added', '']} testId="webhook-endpoints">
          {endpoints.data.map((e) => (
            <tr key={e.id} data-testid="webhook-endpoint-row" data-url={e.url}>
              <td className="secret">{e.url}</td>
              <td>{e.listingId ?? 'every listing'}</td>
              <td data-testid="webhook-endpoint-state">
                {!e.active ? (
                  <span className="pill pill-alarm">Disabled</span>
                ) : e.openUntil && Date.parse(e.openUntil) > Date.now() ? (
                  <span className="pill pill-warn">Backing off after {e.consecutiveFailures} failures</span>
                ) : (
                  <span className="pill pill-ok">Active</span>
                )}
              </td>
              <td>
                <When iso={e.createdAt} />
              </td>
              <td>
                {e.active ? (
                  <button
                    type="button"
                    className="secondary small danger"
                    onClick={() => disable.mutate({ endpointId: e.id })}
                    data-testid="webhook-disable"
                  >
                    Disable
                  </button>
                ) : (
                  <button
                    type="button"
                    className="secondary small"
                    onClick={() => enable.mutate({ endpointId: e.id })}
                    data-testid="webhook-enable"
                  >
                    Enable
                  </button>
                )}
              </td>
            </tr>
          ))}
        </GridTable>
      )}
      <h2>Add an endpoint</h2>
      <AddEndpoint onAdded={() => void refresh()} />

      <h2>Deliveries</h2>
      <div className="filters">
        <Field label="Status" name="delivery-status">
          <select value={status} onChange={(e) => setStatus(e.target.value as typeof status)}>
            <option value="">Any</option>
            <option value="DEAD">Dead (gave up)</option>
            <option value="RETRYING">Retrying</option>
            <option value="PENDING">Pending</option>
            <option value="DELIVERED">Delivered</option>
          </select>
        </Field>
        <Field label="Endpoint" name="delivery-endpoint">
          <select value={endpointId} onChange={(e) => setEndpointId(e.target.value)}>
            <option value="">Any</option>
            {(endpoints.data ?? []).map((e) => (
              <option key={e.id} value={e.id}>
                {e.url}
              </option>
            ))}
          </select>
        </Field>
      </div>
      {deliveries.data && deliveries.data.length === 0 && <p className="muted">No deliveries match.</p>}
      {deliveries.data && deliveries.data.length > 0 && (
        <GridTable
          columns={[{ label: '#', num: true }, 'Created', 'Status', { label: 'Attempts', num: true }, 'Last answer', '']}
          testId="webhook-deliveries"
        >
          {deliveries.data.map((d) => (
            <tr key={d.id} data-testid="webhook-delivery-row" data-status={d.status}>
              <td className="num">{d.id}</td>
              <td>
                <When iso={d.createdAt} />
              </td>
              <td>
                <span className={`pill pill-${STATUS_TONE[d.status] ?? ''}`}>{d.status.toLowerCase()}</span>
              </td>
              <td className="num">{d.attempts}</td>
              <td className="muted">{d.lastError ?? (d.lastStatusCode ? `HTTP ${d.lastStatusCode}` : '—')}</td>
              <td>
                {d.status === 'DEAD' && (
                  <button
                    type="button"
                    className="secondary small"
                    onClick={() => redeliver.mutate({ deliveryId: d.id })}
                    data-testid="webhook-redeliver"
                  >
                    Redeliver
                  </button>
                )}
              </td>
            </tr>
          ))}
        </GridTable>
      )}
    </section>
  );
}

function AddEndpoint({ onAdded }: { onAdded: () => void }) {
  const trpc = useTRPC();
  const [url, setUrl] = useState('');
  const [listingId, setListingId] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [added, setAdded] = useState<{ url: string; secret: string } | null>(null);
  const add = useMutation(
    trpc.webhooks.add.mutationOptions({
      onSuccess: (e) => {
        setAdded({ url: e.url, secret: e.secret });
        setUrl('');
        setListingId('');
        onAdded();
      },
      onError: (error) => {
        const fields = fieldErrorsOf(error);
        setErrors(Object.keys(fields).length ? fields : { url: messageOf(error, { change: true }) });
      },
    }),
  );
  function submit(e: FormEvent) {
    e.preventDefault();
    setAdded(null);
    const parsed = webhookEndpointInputSchema.safeParse({ url: url.trim(), ...(listingId.trim() ? { listingId: listingId.trim() } : {}) });
    if (!parsed.success) return setErrors(fieldErrors(parsed.error));
    setErrors({});
    add.mutate(parsed.data);
  }
  return (
    <form className="card form" onSubmit={submit} noValidate data-testid="webhook-add">
      <ErrorSummary errors={errors} labels={{ url: 'Receiver URL', listingId: 'Listing id' }} />
      <Field label="Receiver URL" name="url" error={errors.url} hint="http:// or https://; it receives signed JSON POSTs.">
        <input name="url" value={url} onChange={(e) => setUrl(e.target.value)} inputMode="url" />
      </Field>
      <Field label="Listing id" name="listingId" error={errors.listingId} hint="Empty: notifications of every listing.">
        <input name="listingId" value={listingId} onChange={(e) => setListingId(e.target.value)} />
      </Field>
      <button type="submit" className="primary" disabled={add.isPending}>
        Add endpoint
      </button>
      {added && (
        <p className="form-ok" role="status" data-testid="webhook-added">
          Added {added.url}. Its signing secret, shown only now:{' '}
          <code className="secret" data-testid="webhook-secret">
            {added.secret}
          </code>
        </p>
      )}
    </form>
  );
}
