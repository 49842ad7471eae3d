import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { useSubscription } from '@trpc/tanstack-react-query';
import { appendPoint, toPoint, type WarRoomPoint } from '@onsale/shared/warroom/schema';
import { useTRPC } from '../../../../trpc';
import { EventLinks } from '../../../-components/EventLinks';
import '../../../-components/event-form.css';
import { formatDateTime } from '../../../-components/format';
import { SignOffNotice } from '../../../-components/SignOffNotice';
import { Forbidden } from '../../../-components/Status';
import { TiersPanel } from '../../../-components/TiersPanel';
import { LiveCharts } from '../../../-components/warroom/charts';
import { Controls } from '../../../-components/warroom/controls';
import { AdmissionWhy, AlertList, LinkBanner, LiveArea, type WarRoomSnapshot } from '../../../-components/warroom/parts';
import { Headline, listedAlerts, StateBanner } from '../../../-components/warroom/first-screen';
import { FigurePanels } from '../../../-components/warroom/panels';
import { useLinkState } from '../../../-components/warroom/useLiveStream';
import { useOnline, useServerReach } from '../../../-components/warroom/reach';
import { WholeSale } from '../../../-components/warroom/whole-sale';
import { AlertHistory } from '../../../-components/warroom/alert-history';
import { QueueWords } from '../../../-components/warroom/queue-words';
import { ScheduledControls } from '../../../-components/warroom/schedules';
import { loadOrNotFound, notFoundOrForbidden } from '../../../-components/route-loading';
import { TicketFigures } from '../../../-components/TicketFigures';

/** The inventory series the page keeps (the BFF keeps the same window, so a reload gets it back). */
const SERIES_MS = 15 * 60_000;

export const Route = createFileRoute('/_authed/events/$eventId_/war-room')({
  // The first paint comes from one query; the stream takes over at once.
  loader: ({ context: { trpc, queryClient }, params: { eventId } }) =>
    loadOrNotFound(() => queryClient.fetchQuery(trpc.warRoom.snapshot.queryOptions({ eventId }))),
  notFoundComponent: notFoundOrForbidden('event'),
  component: WarRoomPage,
});

/** Where the page sits (breadcrumbs, the event's links), its title, venue and on-sale time, and the keyboard's skip link. */
function WarRoomHeader({ snapshot: s, canControl }: { snapshot: WarRoomSnapshot; canControl: boolean }) {
  const eventId = s.eventId;
  return (
    <>
      {/* Keyboard: straight to pause, resume and the rate, past the links above them. */}
      {canControl && (
        <a className="skip-link" href="#wr-controls" data-testid="skip-to-controls">
          Skip to the war-room controls
        </a>
      )}
      <p className="crumbs">
        <Link to="/">Events</Link> /{' '}
        <Link to="/events/$eventId" params={{ eventId }}>
          {s.name}
        </Link>{' '}
        / War room · <Link to="/war-room">All on-sales</Link> ·{' '}
        <Link to="/events/$eventId/plan" params={{ eventId }}>
          Admission plan
        </Link>{' '}
        · <a href="#wr-talk">Schedules and fans’ words</a> · <a href="#wr-history">Alert history</a>
      </p>
      <h1 data-testid="wr-title">War room: {s.name}</h1>
      <EventLinks eventId={eventId} listingId={s.listingId} />
      <p className="muted">
        {s.venueName} · on sale <time dateTime={s.onsaleAt}>{formatDateTime(s.onsaleAt)}</time>
      </p>
    </>
  );
}

function WarRoomPage() {
  const { eventId } = Route.useParams();
  const { me } = Route.useRouteContext();
  const first = Route.useLoaderData();
  const trpc = useTRPC();
  const [snapshot, setSnapshot] = useState<WarRoomSnapshot>(first);
  const [series, setSeries] = useState<WarRoomPoint[]>(() => [toPoint(first)]);
  const [last, setLast] = useState<{ receivedAt: number; unavailable: boolean } | null>(null);

  const sub = useSubscription(
    trpc.warRoom.watch.subscriptionOptions(
      { eventId },
      {
        onData: (m) => {
          setLast({ receivedAt: Date.now(), unavailable: m.type === 'unavailable' });
          if (m.type !== 'snapshot') return;
          setSnapshot(m.snapshot);
          setSeries((prev) => {
            // The first message brings the BFF's kept series: merge it with what this page already has.
            const base = m.history ? [...m.history, ...prev].sort((a, b) => a.t - b.t) : prev;
            const merged = base.reduce<WarRoomPoint[]>((acc, p) => appendPoint(acc, p, SERIES_MS), []);
            return appendPoint(merged, toPoint(m.snapshot), SERIES_MS);
          });
        },
      },
    ),
  );
  // The venue's zone, for the times of schedules and alerts (the figures stream does not carry it).
  const event = useQuery(trpc.events.byId.queryOptions({ id: eventId }, { staleTime: 60_000 }));
  const venueZone = event.data?.timeZone;
  const stream = useLinkState(sub, last);
  // A browser that says it is offline has lost the link, even if the last figures arrived a moment ago.
  const online = useOnline();
  const link = !online && stream.state === 'live' ? { ...stream, state: 'lost' as const } : stream;
  const live = link.state === 'live';
  // Only the controls need to know whether plain requests still pass while the stream is down.
  const server = useServerReach(eventId, live || link.state === 'refused' || !me.permissions.includes('warroom.control'));
  if (link.state === 'refused') return <Forbidden what="event" />;
  const s = snapshot;
  const canControl = me.permissions.includes('warroom.control');

  return (
    <section className="wr">
      <WarRoomHeader snapshot={s} canControl={canControl} />
      <SignOffNotice eventId={eventId} onsaleAt={s.onsaleAt} awaitingSignOff={s.fairness.awaitingSignOff} />
      <LinkBanner state={link.state} receivedAt={link.receivedAt} at={s.at} />

      {/* The first screen, at any width: the state, then waiting, let in, sold, money and alerts, before any chart. */}
      <LiveArea live={live}>
        <StateBanner snapshot={s} />
        <Headline snapshot={s} />
        <AlertList alerts={listedAlerts(s)} />
      </LiveArea>

      {/* Outside the figures: while the stream is down the controls work if the server still answers plain requests, and say so when it does not. */}
      {canControl && (
        <div id="wr-controls" tabIndex={-1}>
          <Controls snapshot={s} reach={server.reach} serverError={server.serverError} />
        </div>
      )}

      <LiveArea live={live} testId="wr-area-figures">
        {s.state !== 'PAUSED' && <AdmissionWhy snapshot={s} />}
        <FigurePanels snapshot={s} />

        {/* Tier figures come with every snapshot; a roll shows in the next one. */}
        <TiersPanel
          eventId={eventId}
          eventName={s.name}
          tiers={s.tiers}
          permissions={me.permissions}
          offline={canControl && server.reach === 'unreachable'}
        />

        <LiveCharts snapshot={s} series={series} />
      </LiveArea>

      <TicketFigures eventId={eventId} />

      {venueZone && (
        <div className="wr-talk-grid" id="wr-talk">
          <ScheduledControls
            eventId={eventId}
            timeZone={venueZone}
            canControl={canControl}
            offline={canControl && server.reach === 'unreachable'}
            presales={s.tiers.filter((t) => !t.general).map((t) => ({ code: t.code, name: t.name }))}
          />
          <QueueWords
            eventId={eventId}
            fanState={s.fanState}
            offline={canControl && server.reach === 'unreachable'}
            canEdit={me.permissions.includes('warroom.control') || me.permissions.includes('events.configure')}
          />
        </div>
      )}

      <div id="wr-history">
        {venueZone && (
          <AlertHistory eventId={eventId} timeZone={venueZone} canManageReceivers={canControl} firingNow={s.alerts} at={s.at} />
        )}
      </div>

      <WholeSale eventId={eventId} />
    </section>
  );
}
