import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute } from '@tanstack/react-router';
import { alertEndpointInputSchema } from '@onsale/shared/warroom/schema';
import { fieldErrors } from '@onsale/shared/users/schema';
import { sentence } from '@onsale/shared/words';
import type { RouterOutputs } from '@onsale/bff/root';
import { fieldErrorsOf, messageOf, useTRPC } from '../../trpc';
import { ErrorSummary } from '../-components/ErrorSummary';
import { Field } from '../-components/Field';
import { formatCount } from '../-components/format';
import { Forbidden } from '../-components/Status';
import { When } from '../-components/When';
import '../-components/warroom/warroom.css';

// Where the war room's alerts go outside the browser: receivers (Slack-compatible incoming webhooks) for every
// event or one, from a severity up, told when an alert fires, becomes critical and resolves, once each. Admins and
// operators; every change is in the audit log.
export const Route = createFileRoute('/_authed/alerts')({
  component: AlertsPage,
});

type Receiver = RouterOutputs['warRoom']['alertReceivers'][number];

const SEVERITY_WORDS = { warning: 'every alert (warnings and critical)', critical: 'critical alerts only' } as const;
const KIND_WORDS: Record<string, string> = { FIRING: 'fired', ESCALATED: 'became critical', RESOLVED: 'resolved' };
const STATUS_WORDS: Record<string, { text: string; tone: string }> = {
  DELIVERED: { text: 'delivered', tone: 'ok' },
  PENDING: { text: 'waiting to send', tone: '' },
  RETRYING: { text: 'retrying', tone: 'warn' },
  DEAD: { text: 'gave up', tone: 'alarm' },
};

function AlertsPage() {
  const { me } = Route.useRouteContext();
  if (!me.permissions.includes('warroom.control')) return <Forbidden what="page (alert receivers are managed by admins and operators)" />;
  return <AlertReceivers />;
}

function AlertReceivers() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const receivers = useQuery(trpc.warRoom.alertReceivers.queryOptions(undefined, { refetchInterval: 5_000 }));
  const [shown, setShown] = useState<string | null>(null);
  /** A turn-off or turn-on sent: confirmed when the server's list shows the receiver so. */
  const [change, setChange] = useState<{ id: string; active: boolean; url: string; error?: string } | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.warRoom.alertReceivers.queryKey() });
  const setActive = useMutation(
    trpc.warRoom.setAlertReceiverActive.mutationOptions({
      onSuccess: () => void refresh(),
      onError: (e) => setChange((c) => (c ? { ...c, error: messageOf(e, { change: true }) } : c)),
    }),
  );
  const list = receivers.data ?? [];
  const changed = change ? list.find((r) => r.id === change.id) : undefined;
  const confirmed = change !== null && !change.error && changed?.active === change.active && !setActive.isPending;

  return (
    <section>
      <h1>Alert receivers</h1>
      <p className="muted">
        Where the war room’s alerts go outside the browser: a Slack incoming webhook (or anything that takes the same JSON) hears when an
        alert fires, when it becomes critical and when it resolves, once each. Every change is in the audit log.
      </p>
      {change && (
        <p
          className={change.error ? 'form-error' : confirmed ? 'form-ok' : 'muted'}
          role={change.error ? 'alert' : 'status'}
          data-testid="alert-receiver-outcome"
          data-status={change.error ? 'refused' : confirmed ? 'confirmed' : 'sent'}
        >
          {change.error
            ? sentence(change.error)
            : confirmed
              ? `The server lists ${change.url} as ${change.active ? 'on: it hears of alerts again' : 'off: it hears of no alerts until turned on'}.`
              : 'Sent. Waiting for the server to confirm…'}
        </p>
      )}
      <h2>Receivers</h2>
      {receivers.error && (
        <p className="form-error" role="alert">
          Could not read the receivers. {messageOf(receivers.error)}
        </p>
      )}
      {receivers.data && list.length === 0 && (
        <p className="muted" data-testid="alert-receivers-empty">
          No receivers yet: alerts show only in the war room.
        </p>
      )}
      {list.length > 0 && (
        <table className="grid wr-stack" data-testid="alert-receivers">
          <thead>
            <tr>
              <th>Receiver</th>
              <th>Hears of</th>
              <th>State</th>
              <th className="num">Messages</th>
              <th>Added</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {list.map((r) => (
              <ReceiverRow
                key={r.id}
                r={r}
                shown={shown === r.id}
                onShow={() => setShown(shown === r.id ? null : r.id)}
                onActive={(active) => {
                  setChange({ id: r.id, active, url: r.url });
                  setActive.mutate({ id: r.id, active });
                }}
                busy={setActive.isPending}
              />
            ))}
          </tbody>
        </table>
      )}
      {shown && <Deliveries id={shown} url={list.find((r) => r.id === shown)?.url ?? ''} />}
      <h2>Add a receiver</h2>
      <AddReceiver onAdded={() => void refresh()} />
    </section>
  );
}

function ReceiverRow({
  r,
  shown,
  onShow,
  onActive,
  busy,
}: {
  r: Receiver;
  shown: boolean;
  onShow: () => void;
  onActive: (active: boolean) => void;
  busy: boolean;
}) {
  return (
    <tr data-testid="alert-receiver-row" data-url={r.url} data-active={r.active ? 'true' : 'false'}>
      <td data-label="Receiver">
        <span className="secret">{r.url}</span>
      </td>
      <td data-label="Hears of">
        {r.eventName ?? 'every event'}: {SEVERITY_WORDS[r.minSeverity]}
      </td>
      <td data-label="State" data-testid="alert-receiver-state">
        {r.active ? <span className="pill pill-ok">On</span> : <span className="pill pill-alarm">Off</span>}
        {r.lastError && (
          <>
            <br />
            <small className="muted">last failure: {r.lastError}</small>
          </>
        )}
      </td>
      <td className="num" data-label="Messages">
        {formatCount(r.delivered)} delivered
        {r.failing > 0 && <span className="pill pill-warn"> {formatCount(r.failing)} failing</span>}
      </td>
      <td data-label="Added">
        <When iso={r.createdAt} />
        <br />
        <small className="muted">by {r.createdBy}</small>
      </td>
      <td className="actions">
        <button type="button" className="secondary small" onClick={onShow} aria-expanded={shown} data-testid="alert-receiver-messages">
          {shown ? 'Hide messages' : 'Messages'}
        </button>{' '}
        {r.active ? (
          <button
            type="button"
            className="secondary small danger"
            onClick={() => onActive(false)}
            disabled={busy}
            data-testid="alert-receiver-off"
          >
            Turn off
          </button>
        ) : (
          <button type="button" className="secondary small" onClick={() => onActive(true)} disabled={busy} data-testid="alert-receiver-on">
            Turn on
          </button>
        )}
      </td>
    </tr>
  );
}

function Deliveries({ id, url }: { id: string; url: string }) {
  const trpc = useTRPC();
  const deliveries = useQuery(trpc.warRoom.alertDeliveries.queryOptions({ id }, { refetchInterval: 5_000 }));
  return (
    <section className="card" aria-labelledby="alert-deliveries-title" data-testid="alert-deliveries">
      <h3 id="alert-deliveries-title">
        Latest messages to <span className="secret">{url}</span>
      </h3>
      {deliveries.error && (
        <p className="form-error" role="alert">
          Could not read the messages. {messageOf(deliveries.error)}
        </p>
      )}
      {deliveries.data && deliveries.data.length === 0 && <p className="muted">No messages yet.</p>}
      {deliveries.data && deliveries.data.length > 0 && (
        <table className="grid wr-stack">
          <thead>
            <tr>
              <th>Sent</th>
              <th>Message</th>
              <th>Outcome</th>
              <th className="num">Tries</th>
            </tr>
          </thead>
          <tbody>
            {deliveries.data.map((d) => {
              const st = STATUS_WORDS[d.status] ?? { text: d.status.toLowerCase(), tone: '' };
              return (
                <tr key={d.id} data-testid="alert-delivery-row" data-status={d.status}>
                  <td data-label="Sent">
                    <When iso={d.deliveredAt ?? d.createdAt} />
                  </td>
                  <td data-label="Message">
                    {d.eventName}: “{d.title}” {KIND_WORDS[d.kind] ?? d.kind.toLowerCase()}
                  </td>
                  <td data-label="Outcome">
                    <span className={`pill pill-${st.tone}`}>{st.text}</span>
                    {(d.lastStatusCode || d.lastError) && (
                      <small className="muted"> {d.lastError ?? `the receiver answered HTTP ${d.lastStatusCode}`}</small>
                    )}
                  </td>
                  <td className="num" data-label="Tries">
                    {d.attempts}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}

function AddReceiver({ onAdded }: { onAdded: () => void }) {
  const trpc = useTRPC();
  const events = useQuery(trpc.events.list.queryOptions());
  const [url, setUrl] = useState('');
  const [eventId, setEventId] = useState('');
  const [minSeverity, setMinSeverity] = useState<'warning' | 'critical'>('warning');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [added, setAdded] = useState<{ url: string; secret: string } | null>(null);
  const add = useMutation(
    trpc.warRoom.addAlertReceiver.mutationOptions({
      onSuccess: (r) => {
        setAdded({ url: r.url, secret: r.secret });
        setUrl('');
        onAdded();
      },
      onError: (e) => {
        const fields = fieldErrorsOf(e);
        setErrors(Object.keys(fields).length ? fields : { form: messageOf(e, { change: true }) });
      },
    }),
  );
  function submit(e: FormEvent) {
    e.preventDefault();
    setAdded(null);
    const parsed = alertEndpointInputSchema.safeParse({ url: url.trim(), minSeverity, ...(eventId ? { eventId } : {}) });
    if (!parsed.success) return setErrors(fieldErrors(parsed.error));
    setErrors({});
    add.mutate(parsed.data);
  }
  const { form, ...fieldErrs } = errors;
  return (
    <form className="card form" onSubmit={submit} noValidate data-testid="alert-receiver-add">
      <ErrorSummary errors={fieldErrs} labels={{ url: 'Receiver URL', eventId: 'Event', minSeverity: 'Send' }} />
      <Field
        label="Receiver URL"
        name="url"
        error={errors.url}
        hint="A Slack incoming webhook, or any https:// address that takes JSON POSTs."
      >
        <input value={url} onChange={(e) => setUrl(e.target.value)} inputMode="url" />
      </Field>
      <Field label="Event" name="eventId" error={errors.eventId}>
        <select value={eventId} onChange={(e) => setEventId(e.target.value)}>
          <option value="">Every event</option>
          {(events.data ?? []).map((ev) => (
            <option key={ev.id} value={ev.id}>
              {ev.name}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Send" name="minSeverity" error={errors.minSeverity}>
        <select value={minSeverity} onChange={(e) => setMinSeverity(e.target.value as 'warning' | 'critical')}>
          <option value="warning">Every alert (warnings and critical)</option>
          <option value="critical">Critical alerts only</option>
        </select>
      </Field>
      {form && (
        <p className="form-error" role="alert">
          {form}
        </p>
      )}
      <button type="submit" className="primary" disabled={add.isPending} data-testid="alert-receiver-add-submit">
        Add the receiver
      </button>
      {added && (
        <p className="form-ok" role="status" data-testid="alert-receiver-added">
          Added <span className="secret">{added.url}</span>. Its signing secret, shown only now (a receiver that checks X-Onsale-Signature
          needs it; Slack does not):{' '}
          <code className="secret" data-testid="alert-receiver-secret">
            {added.secret}
          </code>
        </p>
      )}
    </form>
  );
}
