import { useState, type FormEvent } from 'react';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, Link, useNavigate } from '@tanstack/react-router';
import { z } from 'zod';
import { auditLogQuerySchema } from '@onsale/shared/sale-setup/schema';
import { actionWords, actorWords, auditDetailsWords } from '@onsale/shared/words';
import { fieldErrors } from '@onsale/shared/users/schema';
import { fieldErrorsOf, messageOf, useTRPC } from '../../trpc';
import { downloadText } from '../-components/download';
import { localInputOf } from '../-components/event-draft';
import { Field } from '../-components/Field';
import { formatDateTime } from '../-components/format';
import '../-components/event-form.css';
import { GridTable } from '../-components/GridTable';

const PAGE_SIZE = 50;

// The URL carries the filters, so a filtered view can be shared. Anything unusable in it is dropped, not fatal.
const searchSchema = z.object({
  eventId: z.string().optional().catch(undefined),
  actor: z.string().optional().catch(undefined),
  action: z.string().optional().catch(undefined),
  from: z.string().optional().catch(undefined),
  to: z.string().optional().catch(undefined),
  before: z.number().int().positive().optional().catch(undefined),
});
type AuditSearch = z.infer<typeof searchSchema>;

export const Route = createFileRoute('/_authed/audit-log')({
  validateSearch: searchSchema,
  component: AuditLogPage,
});

const clean = (s: AuditSearch): AuditSearch => Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined && v !== ''));

function AuditLogPage() {
  const search = Route.useSearch();
  const navigate = useNavigate({ from: Route.fullPath });
  const trpc = useTRPC();
  const events = useQuery(trpc.events.list.queryOptions());
  const facets = useQuery(trpc.auditLog.facets.queryOptions());
  const query = { ...clean(search), limit: PAGE_SIZE };
  const page = useQuery(trpc.auditLog.list.queryOptions(query, { placeholderData: keepPreviousData, refetchInterval: 10_000 }));

  return (
    <section>
      <h1>Audit log</h1>
      <p className="muted">
        Who changed what, and when: configuration, sign-offs, pauses and rate overrides, waitlist settings, users. Newest first.
      </p>
      <ExportCsv search={search} />
      <Filters
        key={JSON.stringify(search)}
        search={search}
        events={events.data ?? []}
        actions={facets.data?.actions ?? []}
        actors={facets.data?.actors ?? []}
        serverErrors={page.error ? fieldErrorsOf(page.error) : {}}
        onApply={(next) => void navigate({ search: clean(next) })}
      />
      {page.error && Object.keys(fieldErrorsOf(page.error)).length === 0 && (
        <p className="form-error" role="alert">
          {messageOf(page.error)}
        </p>
      )}
      {page.data && (
        <>
          {page.data.entries.length === 0 ? (
            <p className="muted" data-testid="audit-empty">
              No entries match.
            </p>
          ) : (
            <GridTable columns={['When', 'Who', 'What', 'Event', 'Details']} testId="audit-table">
              {page.data.entries.map((e) => (
                <tr key={e.id} data-testid="audit-row" data-action={e.action} data-actor={e.actor}>
                  <td>
                    <time dateTime={e.at}>{formatDateTime(e.at)}</time>
                  </td>
                  <td title={e.actor}>{actorWords(e.actor)}</td>
                  <td title={e.action}>{actionWords(e.action)}</td>
                  <td>
                    {e.eventId ? (
                      <Link to="/audit-log" search={{ eventId: e.eventId }}>
                        {e.eventName ?? e.eventId}
                      </Link>
                    ) : (
                      '—'
                    )}
                  </td>
                  <td className="details-cell">{auditDetailsWords(e.action, e.details, e.eventTimeZone ?? 'UTC', e.eventCurrency)}</td>
                </tr>
              ))}
            </GridTable>
          )}
          <div className="pager">
            {search.before !== undefined && (
              <button
                type="button"
                className="secondary"
                onClick={() => void navigate({ search: clean({ ...search, before: undefined }) })}
                data-testid="audit-newest"
              >
                ← Newest
              </button>
            )}
            {page.data.nextBefore !== null && (
              <button
                type="button"
                className="secondary"
                onClick={() => void navigate({ search: clean({ ...search, before: page.data.nextBefore ?? undefined }) })}
                data-testid="audit-older"
              >
                Older →
              </button>
            )}
          </div>
        </>
      )}
    </section>
  );
}

/**
 * Downloads every entry the current filters select as CSV (all pages, not only the one shown): who, what and the
 * details in words beside the raw values, for the operator's records.
 */
function ExportCsv({ search }: { search: AuditSearch }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [state, setState] = useState<{ busy: boolean; note?: string; error?: string }>({ busy: false });
  async function download() {
    setState({ busy: true });
    try {
      const r = await queryClient.fetchQuery({
        ...trpc.auditLog.exportCsv.queryOptions({ ...clean({ ...search, before: undefined }) }),
        staleTime: 0,
      });
      downloadText(r.filename, r.csv, 'text/csv');
      setState({
        busy: false,
        note: r.truncated
          ? `Downloaded the newest ${r.rows.toLocaleString('en-US')} entries: the export stops there. Narrow the filters (an event, a time range) for the rest.`
          : `Downloaded ${r.rows.toLocaleString('en-US')} ${r.rows === 1 ? 'entry' : 'entries'}.`,
      });
    } catch (e) {
      setState({ busy: false, error: `The export failed. ${messageOf(e)}` });
    }
  }
  return (
    <div className="page-actions">
      <button type="button" className="secondary" onClick={() => void download()} disabled={state.busy} data-testid="audit-export-csv">
        {state.busy ? 'Preparing the CSV…' : 'Download CSV (every entry these filters select)'}
      </button>
      {state.note && (
        <span className="muted" role="status" data-testid="audit-export-note">
          {state.note}
        </span>
      )}
      {state.error && (
        <span className="form-error" role="alert">
          {state.error}
        </span>
      )}
    </div>
  );
}

function Filters({
  search,
  events,
  actions,
  actors,
  serverErrors,
  onApply,
}: {
  search: AuditSearch;
  events: { id: string; name: string }[];
  actions: string[];
  actors: string[];
  serverErrors: Record<string, string>;
  onApply: (s: AuditSearch) => void;
}) {
  const [eventId, setEventId] = useState(search.eventId ?? '');
  const [actor, setActor] = useState(search.actor ?? '');
  const [action, setAction] = useState(search.action ?? '');
  const [from, setFrom] = useState(localInputOf(search.from));
  const [to, setTo] = useState(localInputOf(search.to));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const prefixes = [...new Set(actions.map((a) => `${a.split('.')[0]}.`))];
  const shown = { ...serverErrors, ...errors };

  function apply(e: FormEvent) {
    e.preventDefault();
    const iso = (v: string) => (v.trim() === '' ? undefined : Number.isNaN(new Date(v).getTime()) ? v : new Date(v).toISOString());
    const next = { eventId: eventId || undefined, actor: actor || undefined, action: action || undefined, from: iso(from), to: iso(to) };
    // The schema the BFF checks with: a mistake shows here, at its field.
    const parsed = auditLogQuerySchema.safeParse(next);
    if (!parsed.success) {
      setErrors(fieldErrors(parsed.error));
      return;
    }
    setErrors({});
    onApply(next);
  }

  return (
    <form className="card filters" onSubmit={apply} noValidate data-testid="audit-filters">
      <Field label="Event" name="eventId" error={shown.eventId}>
        <select value={eventId} onChange={(e) => setEventId(e.target.value)}>
          <option value="">Any event</option>
          {events.map((ev) => (
            <option key={ev.id} value={ev.id}>
              {ev.name}
            </option>
          ))}
          {eventId && !events.some((ev) => ev.id === eventId) && <option value={eventId}>{eventId}</option>}
        </select>
      </Field>
      <Field label="Actor" name="actor" error={shown.actor} hint="Any part of the e-mail.">
        <input value={actor} list="audit-actors" onChange={(e) => setActor(e.target.value)} />
      </Field>
      <datalist id="audit-actors">
        {actors.map((a) => (
          <option key={a} value={a} />
        ))}
      </datalist>
      <Field label="Action" name="action" error={shown.action}>
        <select value={action} onChange={(e) => setAction(e.target.value)}>
          <option value="">Any action</option>
          {prefixes.map((p) => (
            <option key={p} value={p}>
              {p}* (all)
            </option>
          ))}
          {actions.map((a) => (
            <option key={a} value={a}>
              {actionWords(a)}
            </option>
          ))}
          {action && !actions.includes(action) && !prefixes.includes(action) && <option value={action}>{action}</option>}
        </select>
      </Field>
      <Field label="From" name="from" error={shown.from}>
        <input type="datetime-local" step="1" value={from} onChange={(e) => setFrom(e.target.value)} />
      </Field>
      <Field label="To" name="to" error={shown.to}>
        <input type="datetime-local" step="1" value={to} onChange={(e) => setTo(e.target.value)} />
      </Field>
      <div className="page-actions">
        <button type="submit" className="primary">
          Filter
        </button>
        <Link to="/audit-log" search={{}}>
          Clear
        </Link>
      </div>
    </form>
  );
}
