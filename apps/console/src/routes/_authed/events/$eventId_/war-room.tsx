import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { useSubscription } from '@trpc/tanstack-react-query';
import { appendPoint, toPoint, type WarRoomPoint } from '@onsale/shared/warroom/schema';
import { useTRPC } from '../../../../trpc';
import { EventLinks } from '../../../-components/EventLinks';
import '../../../-components/event-form.css';
import { formatCount, formatDateTime } from '../../../-components/format';
import { SignOffNotice } from '../../../-components/SignOffNotice';
import { Forbidden } from '../../../-components/Status';
import { TiersPanel } from '../../../-components/TiersPanel';
import { AdmissionChart, InventoryChart } from '../../../-components/warroom/charts';
import { Controls } from '../../../-components/warroom/controls';
import {
  AdmissionWhy,
  AlertList,
  formatPct,
  formatRate,
  formatTime,
  LinkBanner,
  LiveArea,
  Metric,
  Panel,
  STATE_LOOK,
  type WarRoomSnapshot,
} from '../../../-components/warroom/parts';
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
  const look = STATE_LOOK[s.state];
  const plan = s.admission.plan;
  const canControl = me.permissions.includes('warroom.control');

  return (
    <section className="wr">
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

      <SignOffNotice eventId={eventId} onsaleAt={s.onsaleAt} awaitingSignOff={s.fairness.awaitingSignOff} />
      <LinkBanner state={link.state} sinceMs={link.sinceMs} at={s.at} />
      {/* Outside the figures: while the stream is down the controls work if the server still answers plain requests, and say so when it does not. */}
      {canControl && (
        <div id="wr-controls" tabIndex={-1}>
          <Controls snapshot={s} reach={server.reach} serverError={server.serverError} />
        </div>
      )}

      <LiveArea live={live}>
        <div
          className={`wr-state wr-state-${look.tone}`}
          data-testid="wr-state-banner"
          data-state={s.state}
          role={look.tone === 'alarm' ? 'alert' : undefined}
        >
          <span className="wr-state-label" data-testid="wr-state">
            {look.label}
          </span>
          <span className="wr-state-fan">
            Fans read <strong data-testid="wr-fan-state">{s.fanState}</strong>: {look.fan}.
          </span>
          {s.queue.paused && (
            <span className="wr-state-who" data-testid="wr-paused-by">
              Paused by {s.queue.pausedBy} at {s.queue.pausedAt ? formatTime(s.queue.pausedAt) : '?'}: “{s.queue.pausedReason}”
            </span>
          )}
        </div>

        <AdmissionWhy snapshot={s} />

        <AlertList alerts={s.alerts} />

        <div className="wr-grid">
          <Panel title="Queue" testId="wr-queue">
            <Metric label="Joined" value={formatCount(s.queue.joined)} testId="wr-joined" note="positions issued" />
            <Metric label="Waiting" value={formatCount(s.queue.waiting)} testId="wr-waiting" note="beyond the watermark" />
            <Metric
              label="Watermark"
              value={formatCount(s.queue.admittedThrough)}
              testId="wr-watermark"
              note={`admitted through; moves ${formatRate(s.queue.publishedRatePerMin)}/min`}
            />
            <Metric
              label="Admitted / min"
              value={formatCount(s.admission.admittedLastMinute)}
              testId="wr-admitted-per-min"
              note={
                <>
                  plan <span data-testid="wr-plan-per-min">{plan ? formatRate(plan.admitsPerMinute) : '—'}</span>/min · controller{' '}
                  {formatRate(s.admission.controllerRatePerMin)}/min
                  {s.queue.rateOverridePerMin !== null && <> · override {formatCount(s.queue.rateOverridePerMin)}/min</>} · this minute{' '}
                  {formatCount(s.admission.admittedThisMinute)}
                </>
              }
              alerts={s.alerts}
              metric="admittedPerMin"
            />
          </Panel>

          <Panel title="Inventory" testId="wr-inventory">
            <Metric
              label="Available"
              value={formatCount(s.inventory.available)}
              testId="wr-available"
              alerts={s.alerts}
              metric="inventory"
            />
            <Metric
              label="Held"
              value={formatCount(s.inventory.held)}
              testId="wr-held"
              note={`hold TTL ${Math.round(s.inventory.holdTtlSeconds / 60)} min`}
            />
            <Metric label="Sold" value={formatCount(s.inventory.sold)} testId="wr-sold" note={`of ${formatCount(s.inventory.capacity)}`} />
            <Metric
              label="Invariant drift"
              value={formatCount(s.inventory.drift)}
              testId="wr-drift"
              note={`available + held + sold − capacity${s.inventory.orderDrift !== null ? ` · orders ${formatCount(s.inventory.orderDrift)}` : ''}`}
              alerts={s.alerts}
              metric="drift"
            />
          </Panel>

          <Panel title="Store health" testId="wr-store">
            <Metric
              label="Holds per admitted fan"
              value={s.holds.perAdmittedFan === null ? '—' : s.holds.perAdmittedFan.toFixed(2)}
              testId="wr-holds-per-fan"
              note={`${formatCount(s.holds.createdLastMinute)} holds / ${formatCount(s.admission.admittedLastMinute)} admitted last minute; ≤ 1.2`}
              alerts={s.alerts}
              metric="holdsPerAdmitted"
            />
            <Metric
              label="Holds lost"
              value={formatCount(s.holds.lost)}
              testId="wr-holds-lost"
              note={`answered, then lost to a database crash (HOLD_COMMIT=async); those fans were told to hold again · ${formatCount(s.holds.lostLast5Minutes)} in the last 5 min`}
            />
            <Metric
              label="Hold latency p99"
              value={s.holdLatency.p99Ms === null ? '—' : `${formatCount(Math.round(s.holdLatency.p99Ms))} ms`}
              testId="wr-hold-p99"
              note={
                s.store.configured
                  ? `platform-wide, last ${s.holdLatency.windowSeconds} s, ${formatCount(s.holdLatency.observed)} holds; SLO < 500 ms${s.store.reachable < s.store.instances ? ` · ${s.store.instances - s.store.reachable} store API instance(s) not answering` : ''}`
                  : 'not measured: the BFF has no STORE_API_URL'
              }
              alerts={s.alerts}
              metric="holdLatencyP99"
            />
            <Metric
              label="Payment failures"
              value={s.checkout.errorRate === null ? '—' : formatPct(s.checkout.errorRate)}
              testId="wr-checkout-errors"
              note={
                <>
                  {formatCount(s.checkout.failed2m)} of {formatCount(s.checkout.attempts2m)} checkouts in 2 min failed at the gateway or
                  timed out · <span data-testid="wr-checkout-declined">{formatCount(s.checkout.declined2m)}</span> cards declined by their
                  issuers (the fan's outcome, not counted)
                </>
              }
              alerts={s.alerts}
              metric="checkoutErrorRate"
            />
            <Metric
              label="Payment attempts / s"
              value={formatRate(s.payment.attemptsPerSecond)}
              testId="wr-payment-tps"
              note={
                <>
                  ceiling {formatCount(s.payment.ceilingTps)} TPS contracted
                  <meter
                    min={0}
                    max={s.payment.ceilingTps}
                    low={s.payment.ceilingTps * 0.7}
                    high={s.payment.ceilingTps * 0.9}
                    optimum={0}
                    value={Math.min(s.payment.attemptsPerSecond, s.payment.ceilingTps)}
                  />
                </>
              }
              alerts={s.alerts}
              metric="paymentTps"
            />
          </Panel>

          <Panel title="Sold-out and waitlist" testId="wr-soldout-waitlist">
            <Metric
              label="Sold-out propagation p99"
              value={s.soldOut.propagationP99Seconds === null ? '—' : `${s.soldOut.propagationP99Seconds} s`}
              testId="wr-soldout"
              note={s.soldOut.soldOutAt ? `sold out at ${formatTime(s.soldOut.soldOutAt)}; SLO < 60 s` : 'not sold out; SLO < 60 s'}
              alerts={s.alerts}
              metric="soldOutPropagation"
            />
            <Metric
              label="Waitlist entries"
              value={formatCount(s.waitlist.entries)}
              testId="wr-waitlist-entries"
              note={`${formatCount(s.waitlist.openOffers)} offers open`}
              alerts={s.alerts}
              metric="waitlist"
            />
            <Metric
              label="Notifications"
              value={formatCount(s.waitlist.notified)}
              testId="wr-notifications"
              note={`${formatCount(s.waitlist.notifiedLast10Min)} in 10 min · ${formatCount(s.waitlist.pendingAvailabilityEvents)} fan-outs pending${s.waitlist.lastFanoutSeconds !== null ? ` · last took ${s.waitlist.lastFanoutSeconds} s` : ''}`}
            />
          </Panel>
        </div>

        {/* Tier figures come with every snapshot; a roll shows in the next one. */}
        <TiersPanel
          eventId={eventId}
          eventName={s.name}
          tiers={s.tiers}
          permissions={me.permissions}
          offline={canControl && server.reach === 'unreachable'}
        />

        <div className="split wr-charts">
          <InventoryChart series={series} />
          <AdmissionChart minutes={s.admission.minutes} planPerMin={plan?.admitsPerMinute ?? null} />
        </div>
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

      <div id="wr-history">{venueZone && <AlertHistory eventId={eventId} timeZone={venueZone} canManageReceivers={canControl} />}</div>

      <WholeSale eventId={eventId} />
    </section>
  );
}
