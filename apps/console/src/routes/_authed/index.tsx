import { useSuspenseQuery } from '@tanstack/react-query';
import { createFileRoute, Link, redirect, useNavigate } from '@tanstack/react-router';
import { z } from 'zod';
import { useTRPC } from '../../trpc';
import { formatCount } from '../-components/format';
import { When } from '../-components/When';
import { SignOffNotice } from '../-components/SignOffNotice';
import { GridTable } from '../-components/GridTable';

// Counts and states move during a sale: poll while the page is open.
const REFRESH_MS = 5_000;

const STATES = ['PAUSED', 'LIVE', 'OPENING_SOON', 'SCHEDULED', 'DRAFT', 'SOLD_OUT', 'ENDED'] as const;
const STATE_FILTER_WORDS: Record<(typeof STATES)[number], string> = {
  PAUSED: 'Paused',
  LIVE: 'Live',
  OPENING_SOON: 'Opening within the hour',
  SCHEDULED: 'Scheduled',
  DRAFT: 'Draft (not signed off)',
  SOLD_OUT: 'Sold out',
  ENDED: 'Ended',
};
const STATE_TONE: Record<string, string> = {
  PAUSED: 'alarm',
  LIVE: 'ok',
  OPENING_SOON: 'warn',
  SCHEDULED: '',
  DRAFT: 'warn',
  SOLD_OUT: '',
  ENDED: '',
};

// The filters live in the URL, so a filtered board can be shared; anything unusable is dropped.
const searchSchema = z.object({
  state: z.enum(STATES).optional().catch(undefined),
  organisation: z.string().optional().catch(undefined),
  q: z.string().optional().catch(undefined),
});

export const Route = createFileRoute('/_authed/')({
  validateSearch: searchSchema,
  // Door staff read no events: their start page is the doors they may scan at.
  beforeLoad: ({ context }) => {
    if (!context.me.permissions.includes('events.read')) throw redirect({ to: '/door' });
  },
  loader: ({ context: { trpc, queryClient } }) => queryClient.ensureQueryData(trpc.events.list.queryOptions()),
  component: EventsPage,
});

function EventsPage() {
  const trpc = useTRPC();
  const { data: events } = useSuspenseQuery(trpc.events.list.queryOptions(undefined, { refetchInterval: REFRESH_MS }));
  const { me } = Route.useRouteContext();
  const search = Route.useSearch();
  const navigate = useNavigate({ from: Route.fullPath });
  const set = (patch: Partial<z.infer<typeof searchSchema>>) =>
    void navigate({ search: (s) => Object.fromEntries(Object.entries({ ...s, ...patch }).filter(([, v]) => v !== undefined && v !== '')) });
  const organisations = [...new Set(events.map((e) => e.organisationName ?? 'House'))].sort();
  const q = (search.q ?? '').trim().toLowerCase();
  const shown = events.filter(
    (e) =>
      (!search.state || e.state === search.state) &&
      (!search.organisation || (e.organisationName ?? 'House') === search.organisation) &&
      (!q || `${e.name} ${e.venueName}`.toLowerCase().includes(q)),
  );
  const attention = events.filter((e) => e.state === 'PAUSED' || e.state === 'LIVE' || e.state === 'OPENING_SOON').length;

  return (
    <section>
      <h1>Events</h1>
      {events.length === 0 ? (
        <p className="muted" data-testid="no-events">
          {me.role === 'promoter' ? (
            <>
              No events of {me.organisationName} yet. <Link to="/events/new">Create one</Link>, or an operator gives an event to your
              organisation.
            </>
          ) : (
            <>
              No events yet. Create one with the CLI (<code>npm run onsale -- event:create --file &lt;event.json&gt;</code>)
              {me.permissions.includes('events.configure') ? (
                <>
                  {' '}
                  or the <Link to="/events/new">New event</Link> form
                </>
              ) : null}
              .
            </>
          )}
        </p>
      ) : (
        <>
          <p className="muted">
            Live and paused on-sales first, then the soonest to open. {attention} need{attention === 1 ? 's' : ''} watching now. Times are
            each venue's, in its own zone (hover for yours).
          </p>
          <div className="card filters" role="search" data-testid="events-filters">
            <div className="field">
              <label htmlFor="filter-state">State</label>
              <select
                id="filter-state"
                value={search.state ?? ''}
                onChange={(e) => set({ state: (e.target.value || undefined) as (typeof STATES)[number] | undefined })}
              >
                <option value="">Any</option>
                {STATES.map((s) => (
                  <option key={s} value={s}>
                    {STATE_FILTER_WORDS[s]}
                  </option>
                ))}
              </select>
            </div>
            {me.role !== 'promoter' && organisations.length > 1 && (
              <div className="field">
                <label htmlFor="filter-organisation">Organisation</label>
                <select
                  id="filter-organisation"
                  value={search.organisation ?? ''}
                  onChange={(e) => set({ organisation: e.target.value || undefined })}
                >
                  <option value="">Any</option>
                  {organisations.map((o) => (
                    <option key={o} value={o}>
                      {o}
                    </option>
                  ))}
                </select>
              </div>
            )}
            <div className="field">
              <label htmlFor="filter-q">Name or venue</label>
              <input id="filter-q" type="search" defaultValue={search.q ?? ''} onChange={(e) => set({ q: e.target.value || undefined })} />
            </div>
          </div>
          {shown.length === 0 ? (
            <p className="muted" data-testid="events-none-match">
              No events match these filters.{' '}
              <Link to="/" search={{}}>
                Show all
              </Link>
            </p>
          ) : (
            <GridTable
              columns={[
                'Event',
                'State',
                'Organisation',
                'On sale',
                { label: 'Capacity', num: true },
                { label: 'Available', num: true },
                { label: 'Held', num: true },
                { label: 'Sold', num: true },
              ]}
              testId="events-table"
            >
              {shown.map((e) => (
                <tr key={e.id} data-testid="event-row" data-event-id={e.id} data-state={e.state}>
                  <td>
                    <Link to="/events/$eventId" params={{ eventId: e.id }} data-testid="event-link">
                      {e.name}
                    </Link>
                    <div className="muted">{e.venueName}</div>
                    {e.rehearsalTimeScale !== null && (
                      <span
                        className="pill pill-warn"
                        data-testid="event-rehearsal"
                        title={`A synthetic on-sale's event: its clock runs ${e.rehearsalTimeScale} times fast`}
                      >
                        Rehearsal
                      </span>
                    )}
                    <SignOffNotice eventId={e.id} onsaleAt={e.onsaleAt} awaitingSignOff={e.awaitingSignOff} compact />
                  </td>
                  <td data-testid="event-state">
                    <span className={`pill pill-${STATE_TONE[e.state]}`}>{e.stateWords}</span>
                    {(e.state === 'LIVE' || e.state === 'PAUSED') && (
                      <div>
                        <Link to="/events/$eventId/war-room" params={{ eventId: e.id }}>
                          War room
                        </Link>
                      </div>
                    )}
                  </td>
                  <td>{e.organisationName ?? <span className="muted">House</span>}</td>
                  <td>
                    <When iso={e.onsaleAt} zone={e.timeZone} />
                  </td>
                  <td className="num" data-testid="event-capacity">
                    {formatCount(e.capacity)}
                  </td>
                  <td className="num" data-testid="event-available">
                    {formatCount(e.counts.available)}
                  </td>
                  <td className="num" data-testid="event-held">
                    {formatCount(e.counts.held)}
                  </td>
                  <td className="num" data-testid="event-sold">
                    {formatCount(e.counts.sold)}
                  </td>
                </tr>
              ))}
            </GridTable>
          )}
        </>
      )}
    </section>
  );
}
