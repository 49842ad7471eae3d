import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient, useSuspenseQuery } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import type { RouterOutputs } from '@onsale/bff/root';
import { listingWaitlistSchema, waitlistModes } from '@onsale/shared/sale-setup/schema';
import { fieldErrors } from '@onsale/shared/users/schema';
import { domainCodeOf, fieldErrorsOf, messageOf, useTRPC } from '../../../../trpc';
import { EventForm, FAIRNESS_LABELS } from '../../../-components/EventForm';
import { EventLinks } from '../../../-components/EventLinks';
import { draftFromFile, type EventDraft } from '../../../-components/event-draft';
import { ErrorSummary, eventRowOf } from '../../../-components/ErrorSummary';
import { Field } from '../../../-components/Field';
import { formatDateTime } from '../../../-components/format';
import { ImportEventFile } from '../../../-components/ImportEventFile';
import { downloadText } from '../../../-components/download';
import { validateEventDraft } from '../../../-components/validate-event';
import { loadOrNotFound, notFoundOrForbidden } from '../../../-components/route-loading';

type Config = RouterOutputs['eventConfig']['get'];

export const Route = createFileRoute('/_authed/events/$eventId_/edit')({
  loader: ({ context: { trpc, queryClient }, params: { eventId } }) =>
    loadOrNotFound(() => queryClient.ensureQueryData(trpc.eventConfig.get.queryOptions({ id: eventId }))),
  notFoundComponent: notFoundOrForbidden('event'),
  component: EditEventPage,
});

function EditEventPage() {
  const { eventId } = Route.useParams();
  const trpc = useTRPC();
  const { data: config } = useSuspenseQuery(trpc.eventConfig.get.queryOptions({ id: eventId }));
  // The form is keyed by the version it was loaded from: loading a newer version starts it afresh.
  const [loaded, setLoaded] = useState(config.version);
  const [saved, setSaved] = useState<Saved | null>(null);
  return <EditEvent key={loaded} config={config} onReload={(v) => setLoaded(v)} saved={saved} setSaved={setSaved} />;
}

type Saved = RouterOutputs['eventConfig']['update'];

function EditEvent({
  config,
  onReload,
  saved,
  setSaved,
}: {
  config: Config;
  onReload: (version: number) => void;
  saved: Saved | null;
  setSaved: (s: Saved | null) => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const readOnly = !config.canConfigure;
  const [draft, setDraft] = useState<EventDraft>(() => draftFromFile(config.file));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [stale, setStale] = useState<string | null>(null);
  // The version this form was loaded from: what an edit is checked against, however the page refreshes meanwhile.
  const [baseVersion] = useState(config.version);

  const invalidate = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: trpc.eventConfig.get.queryKey({ id: config.eventId }) }),
      queryClient.invalidateQueries({ queryKey: trpc.events.byId.queryKey({ id: config.eventId }) }),
      queryClient.invalidateQueries({ queryKey: trpc.events.list.queryKey() }),
    ]);

  const update = useMutation(
    trpc.eventConfig.update.mutationOptions({
      onSuccess: async (result) => {
        setErrors({});
        await invalidate();
        setSaved(result);
        if (result.version !== baseVersion) onReload(result.version);
      },
      onError: (error) => {
        if (domainCodeOf(error) === 'STALE_EVENT_VERSION') {
          setStale(error.message);
          return;
        }
        const fields = fieldErrorsOf(error);
        setErrors(fields);
        setFormError(
          Object.keys(fields).length
            ? 'Not saved: the server refused some changes; each says why at its field.'
            : messageOf(error, { change: true }),
        );
      },
    }),
  );

  async function reloadLatest() {
    setSaved(null);
    await invalidate();
    const latest = await queryClient.fetchQuery(trpc.eventConfig.get.queryOptions({ id: config.eventId }));
    onReload(latest.version);
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    setFormError(null);
    setSaved(null);
    setStale(null);
    const { file, errors: found } = validateEventDraft(draft);
    setErrors(found);
    if (Object.keys(found).length > 0) {
      setFormError(`${Object.keys(found).length} field(s) need attention; each says what is wrong.`);
      return;
    }
    update.mutate({ eventId: config.eventId, expectedVersion: baseVersion, event: file });
  }

  return (
    <section>
      <p className="crumbs">
        <Link to="/">Events</Link> /{' '}
        <Link to="/events/$eventId" params={{ eventId: config.eventId }}>
          {config.file.name}
        </Link>{' '}
        / Configuration
      </p>
      <h1 data-testid="config-title">{config.file.name}</h1>
      <EventLinks eventId={config.eventId} listingId={config.listing.id} />
      <p className="muted">
        Version <strong data-testid="config-version">{baseVersion}</strong>, last changed{' '}
        <time dateTime={config.updatedAt}>{formatDateTime(config.updatedAt)}</time>. Listing{' '}
        <Link to="/listings/$listingId" params={{ listingId: config.listing.id }}>
          {config.listing.name}
        </Link>
        . {config.capacity} seats.
      </p>
      {config.phase === 'OPEN' ? (
        <p className="banner banner-warn" data-testid="phase-open">
          The on-sale has opened: only what is safe for fans already in it can change. Locked fields say why; limits can only be lowered.
        </p>
      ) : (
        <p className="banner" data-testid="phase-before-open">
          Before the open everything can change{config.queueHasFans ? ', except the fairness mode (fans have joined the queue)' : ''}.
        </p>
      )}
      {readOnly && (
        <p className="banner" data-testid="read-only">
          Read-only: your role does not configure events.
        </p>
      )}
      {!stale && !update.isPending && config.version !== baseVersion && (
        <p className="banner banner-warn" role="alert" data-testid="newer-version">
          Someone saved version {config.version} since you opened this form (version {baseVersion}): saving will be refused.{' '}
          <button type="button" className="link-like" onClick={() => void reloadLatest()}>
            Load the latest version
          </button>
        </p>
      )}
      {stale && (
        <div className="banner banner-alarm" role="alert" data-testid="stale-version">
          <p>
            <strong>Not saved.</strong> {stale}
          </p>
          <button type="button" className="secondary" onClick={() => void reloadLatest()} data-testid="reload-latest">
            Load the latest version (your unsaved changes here are discarded)
          </button>
        </div>
      )}
      {saved && (
        <p className="banner banner-ok" role="status" data-testid="saved">
          {saved.changes.length === 0
            ? 'Nothing to save: no setting changed.'
            : `Saved as version ${saved.version}: ${saved.changes.map((c) => c.setting).join(', ')}.`}
          {saved.signOffRequired && ' The fairness mode needs a sign-off.'}
        </p>
      )}

      <div className="page-actions">
        <button
          type="button"
          className="secondary"
          onClick={() =>
            downloadText(
              `${config.file.name.replace(/[^\w-]+/g, '-')}.event.json`,
              `${JSON.stringify(config.file, null, 2)}\n`,
              'application/json',
            )
          }
        >
          Download as an event file (JSON)
        </button>
      </div>
      {!readOnly && (
        <ImportEventFile
          onLoad={(file) => {
            const next = draftFromFile(file);
            setDraft(next);
            setErrors(validateEventDraft(next).errors);
          }}
        />
      )}

      <form onSubmit={submit} noValidate data-testid="event-form">
        <ErrorSummary errors={errors} prefixOf={eventRowOf} />
        <EventForm
          draft={draft}
          onChange={setDraft}
          errors={errors}
          locked={config.locked}
          readOnly={readOnly}
          fairnessFooter={<SignOff config={config} formMode={draft.fairnessMode} />}
        />
        {formError && (
          <p className="form-error" role="alert" data-testid="form-error">
            {formError}
          </p>
        )}
        {!readOnly && (
          <div className="page-actions">
            <button type="submit" className="primary" disabled={update.isPending}>
              {update.isPending ? 'Saving…' : 'Save changes'}
            </button>
            <span className="muted">Saved only if nobody else changed the event since version {baseVersion}.</span>
          </div>
        )}
      </form>

      <WaitlistSettings config={config} readOnly={readOnly} />
    </section>
  );
}

function SignOff({ config, formMode }: { config: Config; formMode: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const signOff = useMutation(
    trpc.eventConfig.signOffFairness.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.eventConfig.get.queryKey({ id: config.eventId }) }),
    }),
  );
  const live = config.fairness.signOff;
  return (
    <div className="signoff" data-testid="signoff">
      {live ? (
        <p className="banner banner-ok" data-testid="signed-off">
          Signed off by <strong>{live.signedOffBy}</strong> on <time dateTime={live.signedOffAt}>{formatDateTime(live.signedOffAt)}</time> (
          {FAIRNESS_LABELS[live.fairnessMode]}).
        </p>
      ) : (
        <div className="banner banner-warn" data-testid="not-signed-off">
          {config.fairness.openedAt ? (
            <p>
              <strong>Not signed off.</strong> This sale opened on{' '}
              <time dateTime={config.fairness.openedAt}>{formatDateTime(config.fairness.openedAt)}</time> without a sign-off (before
              sign-offs were required); a sign-off is given before the open and cannot be added now.
            </p>
          ) : (
            <p>
              <strong>Not signed off.</strong> The saved mode, {FAIRNESS_LABELS[config.fairness.mode]}, has no promoter sign-off yet, so the
              sale does not open: nobody is let in until it is signed off.
            </p>
          )}
          {config.canConfigure &&
            !config.fairness.openedAt &&
            (formMode === config.fairness.mode ? (
              <button
                type="button"
                className="secondary"
                disabled={signOff.isPending}
                onClick={() => signOff.mutate({ eventId: config.eventId, fairnessMode: config.fairness.mode })}
                data-testid="sign-off"
              >
                I have read the description and sign it off
              </button>
            ) : (
              <p className="muted">Save the new mode first, then sign its description off.</p>
            ))}
          {signOff.error && <p className="form-error">{messageOf(signOff.error, { change: true })}</p>}
        </div>
      )}
      {live && formMode !== config.fairness.mode && (
        <p className="muted">Saving another mode withdraws this sign-off; the new mode needs its own.</p>
      )}
      {config.fairness.history.some((s) => s.supersededAt) && (
        <details>
          <summary>Earlier sign-offs</summary>
          <ul>
            {config.fairness.history
              .filter((s) => s.supersededAt)
              .map((s) => (
                <li key={s.id}>
                  {s.fairnessMode} signed off by {s.signedOffBy} on {formatDateTime(s.signedOffAt)}; withdrawn{' '}
                  {formatDateTime(s.supersededAt!)} by {s.supersededBy}: {s.supersededReason}
                </li>
              ))}
          </ul>
        </details>
      )}
    </div>
  );
}

function WaitlistSettings({ config, readOnly }: { config: Config; readOnly: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [mode, setMode] = useState<string>(config.listing.waitlist.mode);
  const [ttlDays, setTtlDays] = useState(String(config.listing.waitlist.ttlDays));
  const [offerTtlMinutes, setOfferTtlMinutes] = useState(String(config.listing.waitlist.offerTtlMinutes));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const save = useMutation(
    trpc.eventConfig.setWaitlist.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.eventConfig.get.queryKey({ id: config.eventId }) }),
      onError: (error) => setErrors(fieldErrorsOf(error)),
    }),
  );

  function submit(e: FormEvent) {
    e.preventDefault();
    const parsed = listingWaitlistSchema.safeParse({ mode, ttlDays: Number(ttlDays), offerTtlMinutes: Number(offerTtlMinutes) });
    if (!parsed.success) {
      setErrors(Object.fromEntries(Object.entries(fieldErrors(parsed.error)).map(([k, v]) => [`waitlist.${k}`, v])));
      return;
    }
    setErrors({});
    save.mutate({ listingId: config.listing.id, ...parsed.data });
  }

  return (
    <form className="card" onSubmit={submit} noValidate data-testid="waitlist-settings">
      <h2>Listing and waitlist: {config.listing.name}</h2>
      <p className="muted">Applies to every performance of the listing. An event stays on the listing it was created on.</p>
      <div className="form-grid">
        <Field label="Waitlist mode" name="waitlist.mode" error={errors['waitlist.mode']}>
          <select value={mode} disabled={readOnly} onChange={(e) => setMode(e.target.value)}>
            {waitlistModes.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Entries last (days)" name="waitlist.ttlDays" error={errors['waitlist.ttlDays']}>
          <input inputMode="numeric" value={ttlDays} disabled={readOnly} onChange={(e) => setTtlDays(e.target.value)} />
        </Field>
        <Field label="Time to claim an offer (minutes)" name="waitlist.offerTtlMinutes" error={errors['waitlist.offerTtlMinutes']}>
          <input inputMode="numeric" value={offerTtlMinutes} disabled={readOnly} onChange={(e) => setOfferTtlMinutes(e.target.value)} />
        </Field>
      </div>
      {!readOnly && (
        <div className="page-actions">
          <button type="submit" className="secondary" disabled={save.isPending}>
            Save waitlist settings
          </button>
          {save.isSuccess && (
            <span className="muted" role="status">
              Saved.
            </span>
          )}
        </div>
      )}
    </form>
  );
}
