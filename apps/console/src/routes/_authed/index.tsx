import { useSuspenseQuery } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { useTRPC } from '../../trpc';
import { formatCount, formatDateTime } from '../-components/format';
import { SignOffNotice } from '../-components/SignOffNotice';

// Counts move during a sale: poll while the page is open.
const REFRESH_MS = 5_000;

export const Route = createFileRoute('/_authed/')({
  loader: ({ context: { trpc, queryClient } }) => queryClient.ensureQueryData(trpc.events.list.queryOptions()),
  component: EventsPage,
});

function EventsPage() {
  const trpc = useTRPC();
  const { data: events } = useSuspenseQuery(trpc.events.list.queryOptions(undefined, { refetchInterval: REFRESH_MS }));
  const { me } = Route.useRouteContext();

  return (
    <section>
      <h1>Events</h1>
      {events.length === 0 ? (
        <p className="muted" data-testid="no-events">
          {me.role === 'promoter' ? (
            <>
              No events of {me.organisationName} yet. <Link to="/events/new">Create one</Link>, or an operator gives an event to your organisation.
            </>
          ) : (
            <>
              No events yet. Create one with the CLI (<code>npm run onsale -- event:create --file &lt;event.json&gt;</code>).
            </>
          )}
        </p>
      ) : (
        <table className="grid" data-testid="events-table">
          <thead>
            <tr>
              <th>Event</th>
              <th>Venue</th>
              <th>On sale</th>
              <th className="num">Capacity</th>
              <th className="num">Available</th>
              <th className="num">Held</th>
              <th className="num">Sold</th>
            </tr>
          </thead>
          <tbody>
            {events.map((e) => (
              <tr key={e.id} data-testid="event-row" data-event-id={e.id}>
                <td>
                  <Link to="/events/$eventId" params={{ eventId: e.id }} data-testid="event-link">
                    {e.name}
                  </Link>
                  <SignOffNotice eventId={e.id} onsaleAt={e.onsaleAt} awaitingSignOff={e.awaitingSignOff} compact />
                </td>
                <td>{e.venueName}</td>
                <td>
                  <time dateTime={e.onsaleAt}>{formatDateTime(e.onsaleAt)}</time>
                </td>
                <td className="num" data-testid="event-capacity">{formatCount(e.capacity)}</td>
                <td className="num" data-testid="event-available">{formatCount(e.counts.available)}</td>
                <td className="num" data-testid="event-held">{formatCount(e.counts.held)}</td>
                <td className="num" data-testid="event-sold">{formatCount(e.counts.sold)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
