import { useQueryClient, useSuspenseQuery } from '@tanstack/react-query';
import { createFileRoute, Link, notFound } from '@tanstack/react-router';
import { trpcCodeOf, useTRPC } from '../../../trpc';
import { EventLinks } from '../../-components/EventLinks';
import { formatDateTime } from '../../-components/format';
import { AddSeats } from '../../-components/AddSeats';
import { InventoryTotals } from '../../-components/InventoryTotals';
import { LotteryPanel } from '../../-components/LotteryPanel';
import { SectionChart } from '../../-components/SectionChart';
import { SectionTable } from '../../-components/SectionTable';
import { SignOffNotice } from '../../-components/SignOffNotice';
import { Forbidden, NotFound } from '../../-components/Status';
import { TiersPanel } from '../../-components/TiersPanel';

const REFRESH_MS = 3_000;

export const Route = createFileRoute('/_authed/events/$eventId')({
  loader: async ({ context: { trpc, queryClient }, params: { eventId } }) => {
    try {
      return await queryClient.ensureQueryData(trpc.events.byId.queryOptions({ id: eventId }));
    } catch (err) {
      // Unknown and malformed ids both read as "no such event", not as a failure.
      if (trpcCodeOf(err) === 'NOT_FOUND' || trpcCodeOf(err) === 'BAD_REQUEST') throw notFound();
      // The BFF refuses a promoter another organisation's event: an expected answer, not a failure.
      if (trpcCodeOf(err) === 'FORBIDDEN') throw notFound({ data: { forbidden: true } });
      throw err;
    }
  },
  notFoundComponent: ({ data }) =>
    (data as { forbidden?: boolean } | undefined)?.forbidden ? <Forbidden what="event" /> : <NotFound what="event" />,
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
