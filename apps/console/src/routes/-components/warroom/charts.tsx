import { memo } from 'react';
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

// The charts' props that do not change are made once: recharts keeps each axis's and series' settings in a store of
// its own and dispatches an update to it whenever one of those props is a new object or function, so an inline
// `margin={{...}}` or `tickFormatter={(t) => ...}` cost a round of store updates and effects on every render.
const MARGIN = { top: 8, right: 12, bottom: 0, left: 0 };
const TIME_DOMAIN = ['dataMin', 'dataMax'];
const clockTime = (t: number) => formatTime(t);
const clockMinute = (t: number) => formatTime(t).slice(0, 5);
const tooltipTime = (t: unknown) => formatTime(Number(t));

type Minutes = WarRoomSnapshot['admission']['minutes'];
/** The same minutes, figure for figure (each snapshot brings a new array of them, mostly unchanged). */
const sameMinutes = (a: Minutes, b: Minutes) => a === b || JSON.stringify(a) === JSON.stringify(b);

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
  return <XAxis dataKey="t" type="number" domain={TIME_DOMAIN} scale="time" tickFormatter={format} minTickGap={40} />;
}

/**
 * Available / held / sold over time, from the rolling series (stacked: the top edge is the capacity). Drawn again
 * only when the series gains or loses a point (its points never change once taken).
 */
export const InventoryChart = memo(function InventoryChart({ series }: { series: WarRoomPoint[] }) {
  return (
    <figure className="chart wr-chart" aria-label="Inventory over time" data-testid="wr-inventory-chart" data-points={series.length}>
      <figcaption>Inventory over time</figcaption>
      <ResponsiveContainer width="100%" height={220}>
        <AreaChart data={series} margin={MARGIN}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} />
          {timeAxis(clockTime)}
          <YAxis allowDecimals={false} width={56} />
          <Tooltip labelFormatter={tooltipTime} />
          <Legend />
          {inventoryAreas()}
        </AreaChart>
      </ResponsiveContainer>
    </figure>
  );
}, samePoints);

function samePoints(a: { series: WarRoomPoint[] }, b: { series: WarRoomPoint[] }): boolean {
  const [x, y] = [a.series, b.series];
  return x === y || (x.length === y.length && x[0]?.t === y[0]?.t && x[x.length - 1]?.t === y[y.length - 1]?.t);
}

/**
 * Fans admitted per minute (bars) against the plan and the controller's live rate (lines), last 30 minutes. Drawn
 * again only when a figure changes.
 */
export const AdmissionChart = memo(
  function AdmissionChart({ minutes, planPerMin }: { minutes: Minutes; planPerMin: number | null }) {
    const data = minutes.map((m) => ({ ...m, t: Date.parse(m.minute), plan: planPerMin }));
    return (
      <figure className="chart wr-chart" aria-label="Admitted per minute against plan" data-testid="wr-admission-chart">
        <figcaption>Admitted per minute against plan</figcaption>
        <ResponsiveContainer width="100%" height={220}>
          <ComposedChart data={data} margin={MARGIN}>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            {timeAxis(clockMinute)}
            <YAxis allowDecimals={false} width={56} />
            <Tooltip labelFormatter={tooltipTime} />
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
  },
  (a, b) => a.planPerMin === b.planPerMin && sameMinutes(a.minutes, b.minutes),
);

/**
 * Money taken a minute (confirmed orders), in the event's currency, over the same minutes as the admissions. Drawn
 * again only when a figure changes.
 */
export const SalesChart = memo(
  function SalesChart({ minutes, currency }: { minutes: Minutes; currency: string }) {
    const data = minutes.map((m) => ({ t: Date.parse(m.minute), grossCents: m.grossCents, orders: m.orders }));
    const money = (cents: number) => formatMoney(cents, currency);
    return (
      <figure className="chart wr-chart" aria-label="Sales per minute" data-testid="wr-sales-chart" data-minutes={data.length}>
        <figcaption>Sales per minute ({currency})</figcaption>
        <ResponsiveContainer width="100%" height={220}>
          <ComposedChart data={data} margin={MARGIN}>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            {timeAxis(clockMinute)}
            <YAxis width={72} tickFormatter={money} />
            <Tooltip labelFormatter={tooltipTime} formatter={(v, name) => (name === 'Gross sales' ? money(Number(v)) : v)} />
            <Legend />
            <Bar dataKey="grossCents" name="Gross sales" fill={COLORS.sales} isAnimationActive={false} />
          </ComposedChart>
        </ResponsiveContainer>
      </figure>
    );
  },
  (a, b) => a.currency === b.currency && sameMinutes(a.minutes, b.minutes),
);

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
