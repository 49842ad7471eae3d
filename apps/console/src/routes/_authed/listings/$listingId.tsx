import { useSuspenseQuery } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { RouterOutputs } from '@onsale/bff/root';
import { useTRPC } from '../../../trpc';
import { formatCount, formatDateTime } from '../../-components/format';
import '../../-components/event-form.css';
import { GridTable } from '../../-components/GridTable';
import { loadOrNotFound, notFoundOrForbidden } from '../../-components/route-loading';

type Report = RouterOutputs['waitlistReport']['get'];

// Offers expire in minutes and fan-outs finish in seconds: refresh often while the page is open.
const REFRESH_MS = 5_000;

export const Route = createFileRoute('/_authed/listings/$listingId')({
  loader: ({ context: { trpc, queryClient }, params: { listingId } }) =>
    loadOrNotFound(() => queryClient.ensureQueryData(trpc.waitlistReport.get.queryOptions({ listingId }))),
  notFoundComponent: notFoundOrForbidden('listing'),
  component: WaitlistPage,
});

const seconds = (v: number | null) => (v === null ? '—' : v < 10 ? `${v.toFixed(2)} s` : `${Math.round(v)} s`);

function WaitlistPage() {
  const { listingId } = Route.useParams();
  const trpc = useTRPC();
  const { data: r, dataUpdatedAt } = useSuspenseQuery(trpc.waitlistReport.get.queryOptions({ listingId }, { refetchInterval: REFRESH_MS }));
  const l = r.listing;
  const tiles = [
    { key: 'live', label: 'Live entries', value: r.entries.live },
    { key: 'matched', label: 'Matched', value: r.matches.matched },
    { key: 'notified', label: 'Notified', value: r.matches.notified },
    { key: 'offers', label: 'Offers out', value: r.offers.byStatus.OPEN },
    { key: 'delivered', label: 'Webhooks delivered', value: r.deliveries.byStatus.DELIVERED.deliveries },
    { key: 'dead', label: 'Webhooks dead', value: r.deliveries.byStatus.DEAD.deliveries },
  ];
  return (
    <section>
      <p className="crumbs">
        <Link to="/listings">Waitlists</Link> / {l.name}
      </p>
      <h1 data-testid="listing-name">Waitlist: {l.name}</h1>
      <p className="muted">
        Mode <strong>{l.mode}</strong> · entries last {Math.round(l.ttlSeconds / 86_400)} days · offers {Math.round(l.offerTtlSeconds / 60)}{' '}
        minutes to claim · updated{' '}
        <time dateTime={new Date(dataUpdatedAt).toISOString()}>{new Date(dataUpdatedAt).toLocaleTimeString()}</time>
      </p>
      <p className="page-links">
        Performances:{' '}
        {l.performances.map((p) => (
          <Link key={p.eventId} to="/events/$eventId" params={{ eventId: p.eventId }}>
            {p.name} ({p.date}){p.soldOut ? ' · sold out' : ''}
          </Link>
        ))}
      </p>

      <div className="tiles" aria-label="Waitlist totals">
        {tiles.map((t) => (
          <div key={t.key} className="tile">
            <span className="tile-label">{t.label}</span>
            <span className="tile-value" data-testid={`waitlist-${t.key}`}>
              {formatCount(t.value)}
            </span>
          </div>
        ))}
      </div>

      <Entries r={r} />
      <Matches r={r} />
      <Offers r={r} />
      <Deliveries r={r} />
    </section>
  );
}

function Entries({ r }: { r: Report }) {
  const e = r.entries;
  return (
    <>
      <h2>Entries</h2>
      <p className="muted">
        {formatCount(e.live)} live, {formatCount(e.expired)} expired (awaiting clean-up).{' '}
        {e.oldestLiveAt && <>Oldest live entry from {formatDateTime(e.oldestLiveAt)}. </>}
        {e.newestAt && <>Newest {formatDateTime(e.newestAt)}.</>}
      </p>
      <div className="two-col">
        <GridTable columns={['Live entries that ask for', { label: 'Entries', num: true }]} testId="entries-by-criteria">
          <tr>
            <td>dates (a range of performances)</td>
            <td className="num">{formatCount(e.criteria.dateRange)}</td>
          </tr>
          <tr>
            <td>a maximum price</td>
            <td className="num">{formatCount(e.criteria.maxPrice)}</td>
          </tr>
          <tr>
            <td>particular sections</td>
            <td className="num">{formatCount(e.criteria.sections)}</td>
          </tr>
          <tr>
            <td>particular price levels</td>
            <td className="num">{formatCount(e.criteria.priceLevels)}</td>
          </tr>
          {e.byPerformance.map((p) => (
            <tr key={p.date}>
              <td>would take the performance of {p.date}</td>
              <td className="num">{formatCount(p.entries)}</td>
            </tr>
          ))}
          {e.bySection.map((s) => (
            <tr key={`s-${s.section}`}>
              <td>
                section <code>{s.section}</code>
              </td>
              <td className="num">{formatCount(s.entries)}</td>
            </tr>
          ))}
          {e.byPriceLevel.map((p) => (
            <tr key={`p-${p.priceLevel}`}>
              <td>
                price level <code>{p.priceLevel}</code>
              </td>
              <td className="num">{formatCount(p.entries)}</td>
            </tr>
          ))}
        </GridTable>
        <figure className="chart" aria-label="Live entries by seats wanted">
          <ResponsiveContainer width="100%" height={220}>
            <BarChart data={e.byQuantity}>
              <CartesianGrid strokeDasharray="3 3" vertical={false} />
              <XAxis dataKey="quantity" label={{ value: 'seats wanted', position: 'insideBottom', offset: -2 }} />
              <YAxis allowDecimals={false} width={48} />
              <Tooltip />
              <Bar dataKey="entries" name="Entries" fill="#2b6cb0" isAnimationActive={false} />
            </BarChart>
          </ResponsiveContainer>
        </figure>
      </div>
    </>
  );
}

function Matches({ r }: { r: Report }) {
  const m = r.matches;
  return (
    <>
      <h2>Matches</h2>
      <p className="muted">
        {formatCount(m.availabilityEvents)} times seats came back ({formatCount(m.seatsReturned)} seats): {formatCount(m.byStatus.DONE)}{' '}
        done, {formatCount(m.byStatus.FANNING_OUT)} fanning out, {formatCount(m.byStatus.PENDING)} pending. Fan-out latency p50{' '}
        {seconds(r.latency.fanout.p50Seconds)}, p95 {seconds(r.latency.fanout.p95Seconds)}, worst {seconds(r.latency.fanout.maxSeconds)};
        availability to webhook delivery p50 {seconds(r.latency.webhookDelivery.p50Seconds)}, p95{' '}
        {seconds(r.latency.webhookDelivery.p95Seconds)}, worst {seconds(r.latency.webhookDelivery.maxSeconds)}.
      </p>
      {m.recent.length > 0 && (
        <GridTable
          columns={[
            'When',
            'Performance',
            'Why',
            'Mode',
            { label: 'Seats', num: true },
            'Status',
            { label: 'Matched', num: true },
            { label: 'Notified', num: true },
            { label: 'Fan-out', num: true },
          ]}
          testId="availability-events"
        >
          {m.recent.map((a) => (
            <tr key={a.id}>
              <td>{formatDateTime(a.createdAt)}</td>
              <td>{a.eventName}</td>
              <td>{a.cause}</td>
              <td>{a.mode}</td>
              <td className="num">{formatCount(a.seats)}</td>
              <td>{a.status}</td>
              <td className="num">{formatCount(a.matched)}</td>
              <td className="num">{formatCount(a.notified)}</td>
              <td className="num">{a.completedAt ? seconds((Date.parse(a.completedAt) - Date.parse(a.createdAt)) / 1000) : '—'}</td>
            </tr>
          ))}
        </GridTable>
      )}
    </>
  );
}

function Offers({ r }: { r: Report }) {
  const o = r.offers;
  return (
    <>
      <h2>Offers</h2>
      <p className="muted" data-testid="offers-by-status">
        {(Object.keys(o.byStatus) as (keyof typeof o.byStatus)[]).map((s) => `${s} ${formatCount(o.byStatus[s])}`).join(' · ')}
      </p>
      {o.open.length === 0 ? (
        <p className="muted">No offer is out now.</p>
      ) : (
        <GridTable
          columns={['Fan account', { label: 'Seats', num: true }, 'Offered', 'Expires', { label: 'Left', num: true }]}
          testId="open-offers"
        >
          {o.open.map((x) => (
            <tr key={x.id}>
              <td className="mono">{x.accountId}</td>
              <td className="num">{x.quantity}</td>
              <td>{formatDateTime(x.createdAt)}</td>
              <td>{formatDateTime(x.expiresAt)}</td>
              <td className="num">{Math.max(0, Math.round((Date.parse(x.expiresAt) - Date.now()) / 60_000))} min</td>
            </tr>
          ))}
        </GridTable>
      )}
    </>
  );
}

function Deliveries({ r }: { r: Report }) {
  const d = r.deliveries;
  return (
    <>
      <h2>Webhook deliveries</h2>
      <GridTable
        columns={['Status', { label: 'Deliveries', num: true }, { label: 'Notifications in them', num: true }]}
        testId="deliveries-by-status"
      >
        {(Object.keys(d.byStatus) as (keyof typeof d.byStatus)[]).map((s) => (
          <tr key={s} data-status={s}>
            <td>{s}</td>
            <td className="num">{formatCount(d.byStatus[s].deliveries)}</td>
            <td className="num">{formatCount(d.byStatus[s].notifications)}</td>
          </tr>
        ))}
      </GridTable>
      {d.failing.length > 0 && (
        <>
          <h3>Being retried or given up on</h3>
          <GridTable columns={['Endpoint', 'Status', { label: 'Attempts', num: true }, 'Last answer', 'Updated']}>
            {d.failing.map((x) => (
              <tr key={x.id}>
                <td className="mono">{x.url}</td>
                <td>{x.status}</td>
                <td className="num">{x.attempts}</td>
                <td>{x.lastStatusCode ?? x.lastError ?? '—'}</td>
                <td>{formatDateTime(x.updatedAt)}</td>
              </tr>
            ))}
          </GridTable>
          <p className="muted">
            Redeliver a dead one with <code>npm run onsale -- webhook:redeliver &lt;id&gt;</code>.
          </p>
        </>
      )}
    </>
  );
}
