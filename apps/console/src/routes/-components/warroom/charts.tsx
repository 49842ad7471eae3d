import { Area, AreaChart, Bar, CartesianGrid, ComposedChart, Legend, Line, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { WarRoomPoint } from '@onsale/shared/warroom/schema';
import { formatMoney } from '@onsale/shared/words';
import { formatTime, type WarRoomSnapshot } from './parts';

// Same colours as the inventory tiles elsewhere in the console.
const COLORS = {
  available: '#2f855a',
  held: '#c05621',
  sold: '#2b6cb0',
  admitted: '#2b6cb0',
  plan: '#1a202c',
  controller: '#c05621',
  sales: '#276749',
} as const;

const INVENTORY_AREAS = [
  { key: 'sold', name: 'Sold', opacity: 0.7 },
  { key: 'held', name: 'Held', opacity: 0.7 },
  { key: 'available', name: 'Available', opacity: 0.35 },
] as const;

/** Available / held / sold as stacked step areas (the top edge is the capacity), on the y axis named, if any. */
export function inventoryAreas(yAxisId?: string) {
  return INVENTORY_AREAS.map(({ key, name, opacity }) => (
    <Area
      key={key}
      {...(yAxisId ? { yAxisId } : {})}
      type="stepAfter"
      dataKey={key}
      name={name}
      stackId="inv"
      stroke={COLORS[key]}
      fill={COLORS[key]}
      fillOpacity={opacity}
      isAnimationActive={false}
    />
  ));
}

/** The x axis of a chart over time: `t` in ms, ticks written by `format`. */
export function timeAxis(format: (t: number) => string) {
  return <XAxis dataKey="t" type="number" domain={['dataMin', 'dataMax']} scale="time" tickFormatter={format} minTickGap={40} />;
}

/** Available / held / sold over time, from the rolling series (stacked: the top edge is the capacity). */
export function InventoryChart({ series }: { series: WarRoomPoint[] }) {
  return (
    <figure className="chart wr-chart" aria-label="Inventory over time" data-testid="wr-inventory-chart" data-points={series.length}>
      <figcaption>Inventory over time</figcaption>
      <ResponsiveContainer width="100%" height={220}>
        <AreaChart data={series} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} />
          {timeAxis((t) => formatTime(t))}
          <YAxis allowDecimals={false} width={56} />
          <Tooltip labelFormatter={(t) => formatTime(Number(t))} />
          <Legend />
          {inventoryAreas()}
        </AreaChart>
      </ResponsiveContainer>
    </figure>
  );
}

/** Fans admitted per minute (bars) against the plan and the controller's live rate (lines), last 30 minutes. */
export function AdmissionChart({ minutes, planPerMin }: { minutes: WarRoomSnapshot['admission']['minutes']; planPerMin: number | null }) {
  const data = minutes.map((m) => ({ ...m, t: Date.parse(m.minute), plan: planPerMin }));
  return (
    <figure className="chart wr-chart" aria-label="Admitted per minute against plan" data-testid="wr-admission-chart">
      <figcaption>Admitted per minute against plan</figcaption>
      <ResponsiveContainer width="100%" height={220}>
        <ComposedChart data={data} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} />
          {timeAxis((t) => formatTime(t).slice(0, 5))}
          <YAxis allowDecimals={false} width={56} />
          <Tooltip labelFormatter={(t) => formatTime(Number(t))} />
          <Legend />
          <Bar dataKey="admitted" name="Admitted" fill={COLORS.admitted} isAnimationActive={false} />
          <Line
            type="stepAfter"
            dataKey="controllerRatePerMin"
            name="Controller rate"
            stroke={COLORS.controller}
            dot={false}
            isAnimationActive={false}
          />
          {planPerMin !== null && (
            <Line
              type="linear"
              dataKey="plan"
              name="Plan"
              stroke={COLORS.plan}
              strokeDasharray="6 4"
              dot={false}
              isAnimationActive={false}
            />
          )}
        </ComposedChart>
      </ResponsiveContainer>
    </figure>
  );
}

/** Money taken a minute (confirmed orders), in the event's currency, over the same minutes as the admissions. */
export function SalesChart({ minutes, currency }: { minutes: WarRoomSnapshot['admission']['minutes']; currency: string }) {
  const data = minutes.map((m) => ({ t: Date.parse(m.minute), grossCents: m.grossCents, orders: m.orders }));
  const money = (cents: number) => formatMoney(cents, currency);
  return (
    <figure className="chart wr-chart" aria-label="Sales per minute" data-testid="wr-sales-chart" data-minutes={data.length}>
      <figcaption>Sales per minute ({currency})</figcaption>
      <ResponsiveContainer width="100%" height={220}>
        <ComposedChart data={data} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} />
          {timeAxis((t) => formatTime(t).slice(0, 5))}
          <YAxis width={72} tickFormatter={(v: number) => money(v)} />
          <Tooltip labelFormatter={(t) => formatTime(Number(t))} formatter={(v, name) => (name === 'Gross sales' ? money(Number(v)) : v)} />
          <Legend />
          <Bar dataKey="grossCents" name="Gross sales" fill={COLORS.sales} isAnimationActive={false} />
        </ComposedChart>
      </ResponsiveContainer>
    </figure>
  );
}

/**
 * The live charts, each from the open (or the start of its window, if the sale opened earlier) to now; before the
 * open, one line saying when they start.
 */
export function LiveCharts({ snapshot: s, series }: { snapshot: WarRoomSnapshot; series: WarRoomPoint[] }) {
  const openMs = Date.parse(s.onsaleAt);
  if (Date.parse(s.at) < openMs)
    return (
      <p className="muted wr-charts-before" data-testid="wr-charts-before-open">
        The charts start when the sale opens, at {formatTime(s.onsaleAt)}.
      </p>
    );
  const openMinute = Math.floor(openMs / 60_000) * 60_000;
  const minutes = s.admission.minutes.filter((m) => Date.parse(m.minute) >= openMinute);
  const points = series.filter((p) => p.t >= openMs);
  return (
    <div
      className="wr-charts"
      data-testid="wr-charts"
      data-from={new Date(Math.max(openMinute, Date.parse(minutes[0]?.minute ?? s.at))).toISOString()}
    >
      <InventoryChart series={points} />
      <AdmissionChart minutes={minutes} planPerMin={s.admission.plan?.admitsPerMinute ?? null} />
      <SalesChart minutes={minutes} currency={s.sales.currency} />
    </div>
  );
}
