import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { CartesianGrid, ComposedChart, Legend, Line, ResponsiveContainer, Tooltip, YAxis } from 'recharts';
import { inventoryAreas, timeAxis } from './charts';
import { messageOf, useTRPC } from '../../../trpc';
import { downloadText } from '../download';
import { formatCount } from '../format';

/** The whole sale's admissions per minute (darker than the live chart's, beside the inventory's blue). */
const ADMITTED = '#1a202c';
const clock = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
const day = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'short',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
  timeZoneName: 'short',
});

/**
 * The whole sale, one point a minute from the open (the worker records it whether or not anyone watches; the live
 * chart above keeps 15 minutes): inventory and admissions per minute, and the same minutes as CSV.
 */
export function WholeSale({ eventId }: { eventId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const series = useQuery(trpc.warRoom.series.queryOptions({ eventId }, { refetchInterval: 60_000 }));
  const [exporting, setExporting] = useState<{ busy: boolean; error?: string }>({ busy: false });
  const data = (series.data ?? []).map((m) => ({
    t: Date.parse(m.minute),
    available: m.available,
    held: m.held,
    sold: m.sold,
    admitted: m.admitted,
  }));
  const first = data[0];
  const last = data[data.length - 1];

  async function download() {
    setExporting({ busy: true });
    try {
      const r = await queryClient.fetchQuery({ ...trpc.warRoom.seriesCsv.queryOptions({ eventId }), staleTime: 0 });
      downloadText(r.filename, r.csv, 'text/csv');
      setExporting({ busy: false });
    } catch (e) {
      setExporting({ busy: false, error: `The export failed. ${messageOf(e)}` });
    }
  }

  return (
    <section
      className="wr-panel wr-whole-sale"
      aria-labelledby="wr-whole-sale-title"
      data-testid="wr-whole-sale"
      data-minutes={data.length}
    >
      <div className="wr-whole-sale-head">
        <h2 id="wr-whole-sale-title">The whole sale, minute by minute</h2>
        <button
          type="button"
          className="wr-button"
          onClick={() => void download()}
          disabled={exporting.busy || data.length === 0}
          data-testid="wr-series-csv"
        >
          {exporting.busy ? 'Preparing the CSV…' : 'Download CSV'}
        </button>
      </div>
      {exporting.error && (
        <p className="form-error" role="alert">
          {exporting.error}
        </p>
      )}
      {series.error ? (
        <p className="form-error" role="alert">
          Could not read the series. {messageOf(series.error)}
        </p>
      ) : data.length === 0 ? (
        <p className="muted" data-testid="wr-whole-sale-empty">
          {series.isPending ? 'Reading the series…' : 'Nothing recorded yet: the series starts when the sale opens (one point a minute).'}
        </p>
      ) : (
        <>
          <p className="muted">
            {formatCount(data.length)} minute{data.length === 1 ? '' : 's'} recorded, from {day.format(first!.t)} to {day.format(last!.t)};
            updated every minute.
          </p>
          <figure
            className="chart wr-chart"
            aria-label="Inventory and admissions per minute over the whole sale"
            data-testid="wr-whole-sale-chart"
          >
            <ResponsiveContainer width="100%" height={240}>
              <ComposedChart data={data} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
                <CartesianGrid strokeDasharray="3 3" vertical={false} />
                {timeAxis((t) => clock.format(t))}
                <YAxis yAxisId="seats" allowDecimals={false} width={56} />
                <YAxis yAxisId="admits" orientation="right" allowDecimals={false} width={48} />
                <Tooltip labelFormatter={(t) => day.format(Number(t))} />
                <Legend />
                {inventoryAreas('seats')}
                {/* A step line, not bars: on a time axis of hundreds of minutes bars are drawn a tick wide and overlap. */}
                <Line
                  yAxisId="admits"
                  type="stepAfter"
                  dataKey="admitted"
                  name="Let in that minute"
                  stroke={ADMITTED}
                  strokeWidth={2}
                  dot={false}
                  isAnimationActive={false}
                />
              </ComposedChart>
            </ResponsiveContainer>
          </figure>
        </>
      )}
    </section>
  );
}
