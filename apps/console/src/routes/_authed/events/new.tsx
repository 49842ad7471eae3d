import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, Link, useNavigate } from '@tanstack/react-router';
import { eventCreateWarnings, listingWaitlistSchema, waitlistModes, type EventWarning } from '@onsale/shared/sale-setup/schema';
import { fieldErrors } from '@onsale/shared/users/schema';
import { fieldErrorsOf, messageOf, useTRPC } from '../../../trpc';
import { EventForm } from '../../-components/EventForm';
import { draftFromFile, listingOfFile, newEventDraft, type EventDraft } from '../../-components/event-draft';
import { ErrorSummary, eventRowOf } from '../../-components/ErrorSummary';
import { Field } from '../../-components/Field';
import { ImportEventFile } from '../../-components/ImportEventFile';
import { Forbidden } from '../../-components/Status';
import { validateEventDraft } from '../../-components/validate-event';

/** The waitlist modes in words (the stored value, OFFER or BROADCAST, stays the option's value). */
const WAITLIST_MODE_WORDS: Record<string, string> = {
  OFFER: 'Offer returned seats to fans in turn',
  BROADCAST: 'Tell every matching fan at once',
};

export const Route = createFileRoute('/_authed/events/new')({
  component: NewEventPage,
});

interface ListingChoice {
  kind: 'new' | 'existing';
  name: string;
  id: string;
}

interface WaitlistDraft {
  mode: string;
  ttlDays: string;
  offerTtlMinutes: string;
}

function NewEventPage() {
  const { me } = Route.useRouteContext();
  if (!me.permissions.includes('events.configure')) return <Forbidden what="page (events are configured by promoters and admins)" />;
  return <NewEventForm organisationName={me.organisationName} />;
}

function NewEventForm({ organisationName }: { organisationName: string | null }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const listings = useQuery(trpc.eventConfig.listings.queryOptions());
  const [draft, setDraft] = useState<EventDraft>(newEventDraft);
  const [listing, setListing] = useState<ListingChoice>({ kind: 'new', name: '', id: '' });
  const [waitlist, setWaitlist] = useState<WaitlistDraft>({ mode: 'OFFER', ttlDays: '28', offerTtlMinutes: '15' });
  const [signOff, setSignOff] = useState(false);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [imported, setImported] = useState<string | null>(null);
  // Asked before Create (a free price level, no sign-off): shown until confirmed or the form changes.
  const [warnings, setWarnings] = useState<EventWarning[] | null>(null);
  const warningsRef = useRef<HTMLDivElement>(null);
  useEffect(() => setWarnings(null), [draft, signOff]);
  useEffect(() => warningsRef.current?.focus(), [warnings]);

  const signOffFairness = useMutation(trpc.eventConfig.signOffFairness.mutationOptions());
  const create = useMutation(
    trpc.eventConfig.create.mutationOptions({
      onError: (error) => {
        const fields = fieldErrorsOf(error);
        setErrors(fields);
        setFormError(Object.keys(fields).length ? 'The server refused some fields; see below.' : messageOf(error, { change: true }));
      },
    }),
  );

  function onImport(file: unknown, source: string) {
    const next = draftFromFile(file);
    setDraft(next);
    const l = listingOfFile(file);
    setListing(l && 'id' in l ? { kind: 'existing', name: '', id: l.id } : { kind: 'new', name: l?.name ?? '', id: '' });
    setImported(source);
    // Show at once what the schema finds wrong with the file.
    setErrors(validateEventDraft(next, { newEvent: true }).errors);
    setFormError(null);
  }

  async function submit(e: FormEvent | null, confirmed = false) {
    e?.preventDefault();
    setFormError(null);
    const { file, errors: eventErrors } = validateEventDraft(draft, { newEvent: true });
    const w = { mode: waitlist.mode, ttlDays: Number(waitlist.ttlDays), offerTtlMinutes: Number(waitlist.offerTtlMinutes) };
    const parsedWaitlist = listingWaitlistSchema.safeParse(w);
    const waitlistErrors = parsedWaitlist.success
      ? {}
      : Object.fromEntries(Object.entries(fieldErrors(parsedWaitlist.error)).map(([k, v]) => [`waitlist.${k}`, v]));
    const listingErrors: Record<string, string> =
      listing.kind === 'existing' && listing.id === '' ? { 'listing.id': 'choose a listing' } : {};
    const all = { ...eventErrors, ...waitlistErrors, ...listingErrors };
    setErrors(all);
    if (Object.keys(all).length > 0) {
      setFormError(`${Object.keys(all).length} field(s) need attention; each says what is wrong.`);
      return;
    }
    const asked = eventCreateWarnings(file, { signOff });
    if (asked.length > 0 && !confirmed) {
      setWarnings(asked);
      return;
    }
    setWarnings(null);
    const withListing = {
      ...file,
      ...(listing.kind === 'existing'
        ? { listing: { id: listing.id } }
        : listing.name.trim()
          ? { listing: { name: listing.name.trim() } }
          : {}),
    };
    // Handled: a refused create is shown by the mutation's onError (the fields at fault, or the message); the form stays.
    const created = await create.mutateAsync({ event: withListing, waitlist: parsedWaitlist.data }).catch(() => null);
    if (!created) return;
    // Ignored on purpose: the event exists either way; if the sign-off failed, the event's page it opens next says it
    // is not signed off (SignOffNotice) and links to signing it off there.
    if (signOff)
      await signOffFairness
        .mutateAsync({ eventId: created.eventId, fairnessMode: file.fairnessMode ?? 'RANDOMIZED_PREOPEN_THEN_FIFO' })
        .catch(() => null);
    await Promise.all([
      queryClient.invalidateQueries({ queryKey: trpc.events.list.queryKey() }),
      queryClient.invalidateQueries({ queryKey: trpc.eventConfig.listings.queryKey() }),
    ]);
    await navigate({ to: '/events/$eventId', params: { eventId: created.eventId } });
  }

  const existing = listings.data ?? [];
  return (
    <section>
      <p className="crumbs">
        <Link to="/">Events</Link> / New event
      </p>
      <h1>New event</h1>
      <p className="muted">
        Checked with the same rules as an imported event file; each problem shows at its field.
        {organisationName
          ? ` The event will belong to ${organisationName}.`
          : ' As an admin you create a house event, which belongs to no organisation.'}
      </p>
      <ImportEventFile onLoad={onImport} />
      {imported && (
        <p className="banner banner-ok" role="status" data-testid="imported">
          Loaded {imported}. Check the fields below{Object.keys(errors).length ? ': some need attention' : ''}, then create the event.
        </p>
      )}

      <form onSubmit={(e) => void submit(e)} noValidate data-testid="event-form">
        <ErrorSummary errors={errors} prefixOf={eventRowOf} />
        <EventForm
          draft={draft}
          onChange={setDraft}
          errors={errors}
          newEvent
          fairnessFooter={
            <label className="signoff">
              <input type="checkbox" checked={signOff} onChange={(e) => setSignOff(e.target.checked)} data-testid="sign-off-on-create" /> I
              have read this description and sign it off as what fans will be told (recorded with my e-mail and the time).
            </label>
          }
        />

        <fieldset className="card">
          <legend>Listing and waitlist</legend>
          <p className="muted">A listing is the show a waitlist follows; several performances can share one.</p>
          <div className="form-grid">
            <Field label="Listing" name="listing.kind">
              <select value={listing.kind} onChange={(e) => setListing({ ...listing, kind: e.target.value as ListingChoice['kind'] })}>
                <option value="new">A new listing</option>
                <option value="existing" disabled={existing.length === 0}>
                  An existing listing
                </option>
              </select>
            </Field>
            {listing.kind === 'new' ? (
              <Field
                label="New listing's name"
                name="listing.name"
                error={errors['listing.name'] ?? errors.listing}
                hint="Empty: the event's name."
              >
                <input value={listing.name} onChange={(e) => setListing({ ...listing, name: e.target.value })} />
              </Field>
            ) : (
              <Field label="Existing listing" name="listing.id" error={errors['listing.id'] ?? errors.listing}>
                <select
                  value={listing.id}
                  onChange={(e) => {
                    const chosen = existing.find((l) => l.id === e.target.value);
                    setListing({ ...listing, id: e.target.value });
                    if (chosen)
                      setWaitlist({
                        mode: chosen.waitlist.mode,
                        ttlDays: String(chosen.waitlist.ttlDays),
                        offerTtlMinutes: String(chosen.waitlist.offerTtlMinutes),
                      });
                  }}
                >
                  <option value="">—</option>
                  {existing.map((l) => (
                    <option key={l.id} value={l.id}>
                      {l.name} ({l.eventCount} event{l.eventCount === 1 ? '' : 's'})
                    </option>
                  ))}
                </select>
              </Field>
            )}
            <Field
              label="Waitlist mode"
              name="waitlist.mode"
              error={errors['waitlist.mode']}
              hint={
                waitlist.mode === 'OFFER'
                  ? 'Returned seats are offered to the first matching fans in turn.'
                  : 'Every matching fan is told; first to claim wins.'
              }
            >
              <select value={waitlist.mode} onChange={(e) => setWaitlist({ ...waitlist, mode: e.target.value })}>
                {waitlistModes.map((m) => (
                  <option key={m} value={m}>
                    {WAITLIST_MODE_WORDS[m] ?? m}
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Waitlist entries last (days)" name="waitlist.ttlDays" error={errors['waitlist.ttlDays']}>
              <input inputMode="numeric" value={waitlist.ttlDays} onChange={(e) => setWaitlist({ ...waitlist, ttlDays: e.target.value })} />
            </Field>
            <Field label="Time to claim an offer (minutes)" name="waitlist.offerTtlMinutes" error={errors['waitlist.offerTtlMinutes']}>
              <input
                inputMode="numeric"
                value={waitlist.offerTtlMinutes}
                onChange={(e) => setWaitlist({ ...waitlist, offerTtlMinutes: e.target.value })}
              />
            </Field>
          </div>
        </fieldset>

        {formError && (
          <p className="form-error" role="alert" data-testid="form-error">
            {formError}
          </p>
        )}
        {warnings && (
          <div className="banner banner-warn create-warnings" role="alert" tabIndex={-1} ref={warningsRef} data-testid="create-warnings">
            <p>
              <strong>Before you create this event:</strong>
            </p>
            <ul>
              {warnings.map((w) => (
                <li key={w.path} data-testid="create-warning" data-code={w.code}>
                  {w.message}
                </li>
              ))}
            </ul>
            <div className="page-actions">
              <button
                type="button"
                className="primary"
                data-testid="create-anyway"
                disabled={create.isPending}
                onClick={() => void submit(null, true)}
              >
                Create anyway
              </button>
              <button type="button" className="secondary" onClick={() => setWarnings(null)}>
                Change the form
              </button>
            </div>
          </div>
        )}
        <div className="page-actions">
          <button type="submit" className="primary" disabled={create.isPending}>
            {create.isPending ? 'Creating…' : 'Create event'}
          </button>
          <Link to="/">Cancel</Link>
        </div>
      </form>
    </section>
  );
}
