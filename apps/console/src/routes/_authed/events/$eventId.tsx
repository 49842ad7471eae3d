import { useQueryClient, useSuspenseQuery } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { useTRPC } from '../../../trpc';
import { EventLinks } from '../../-components/EventLinks';
import { formatDateTime } from '../../-components/format';
import { AddSeats } from '../../-components/AddSeats';
import { InventoryTotals } from '../../-components/InventoryTotals';
import { LotteryPanel } from '../../-components/LotteryPanel';
import { SectionChart } from '../../-components/SectionChart';
import { SectionTable } from '../../-components/SectionTable';
import { SignOffNotice } from '../../-components/SignOffNotice';
import { TiersPanel } from '../../-components/TiersPanel';
import { loadOrNotFound, notFoundOrForbidden } from '../../-components/route-loading';

const REFRESH_MS = 3_000;

export const Route = createFileRoute('/_authed/events/$eventId')({
  loader: ({ context: { trpc, queryClient }, params: { eventId } }) =>
    loadOrNotFound(() => queryClient.ensureQueryData(trpc.events.byId.queryOptions({ id: eventId }))),
  notFoundComponent: notFoundOrForbidden('event'),
  component: EventInventoryPage,
});

function EventInventoryPage() {
  const { eventId } = Route.useParams();
  const { me } = Route.useRouteContext();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { data: event } = useSuspenseQuery(trpc.events.byId.queryOptions({ id: eventId }, { refetchInterval: REFRESH_MS }));

  return (
    <section>
      <p className="crumbs">
        <Link to="/">Events</Link> / {event.name}
      </p>
      <h1 data-testid="event-name">{event.name}</h1>
      <EventLinks eventId={event.id} listingId={event.listingId} />
      <p className="muted">
        {event.venueName} · on sale <time dateTime={event.onsaleAt}>{formatDateTime(event.onsaleAt)}</time> · starts{' '}
        <time dateTime={event.startsAt}>{formatDateTime(event.startsAt)}</time>
      </p>

      <SignOffNotice eventId={event.id} onsaleAt={event.onsaleAt} awaitingSignOff={event.awaitingSignOff} />

      <InventoryTotals counts={event.counts} />

      {event.fairnessMode === 'REGISTRATION_LOTTERY' && (
        <LotteryPanel eventId={event.id} permissions={me.permissions} refreshMs={REFRESH_MS} />
      )}

      <TiersPanel
        eventId={event.id}
        eventName={event.name}
        tiers={event.tiers}
        permissions={me.permissions}
        onChanged={() => void queryClient.invalidateQueries({ queryKey: trpc.events.byId.queryKey({ id: eventId }) })}
      />

      {me.permissions.includes('inventory.add') && (
        <AddSeats
          eventId={event.id}
          sections={event.sections}
          onAdded={() => void queryClient.invalidateQueries({ queryKey: trpc.events.byId.queryKey({ id: eventId }) })}
        />
      )}

      <h2>Sections</h2>
      <div className="split">
        <SectionTable sections={event.sections} currency={event.currency} />
        <SectionChart sections={event.sections} />
      </div>
    </section>
  );
}
