import { useSuspenseQuery } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { Bar, BarChart, CartesianGrid, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { RouterOutputs } from '@onsale/bff/root';
import { useTRPC } from '../../../trpc';
import { formatCount } from '../../-components/format';
import { loadOrNotFound, notFoundOrForbidden } from '../../-components/route-loading';
import { When } from '../../-components/When';
import { GridTable } from '../../-components/GridTable';

type Run = RouterOutputs['rehearsals']['get'];
type Report = NonNullable<Run['report']>;
type Judgement = NonNullable<Run['judgement']>;

// One rehearsal: while it runs, a link to its event's war room; once done, its report: the verdict and the figures
// that decide it first, then the charts (seats stranded in abandoned holds over the sale, admissions per minute
// against the plan, sold-out propagation), the faults and the answers fans got.
export const Route = createFileRoute('/_authed/rehearsals/$runId')({
  loader: ({ context: { trpc, queryClient }, params: { runId } }) =>
    loadOrNotFound(() => queryClient.ensureQueryData(trpc.rehearsals.get.queryOptions({ id: runId }))),
  notFoundComponent: notFoundOrForbidden('rehearsal'),
  component: RehearsalPage,
});

const ms = (v: number | null | undefined) =>
  v === null || v === undefined ? '—' : v < 1000 ? `${Math.round(v)} ms` : `${(v / 1000).toFixed(2)} s`;
const pct = (v: number) => `${(v * 100).toFixed(1)}%`;

function RehearsalPage() {
  const { runId } = Route.useParams();
  const trpc = useTRPC();
  const { data: run } = useSuspenseQuery(
    trpc.rehearsals.get.queryOptions({ id: runId }, { refetchInterval: (q) => (q.state.data?.status === 'RUNNING' ? 2_000 : false) }),
  );
  return (
    <section>
      <p>
        <Link to="/rehearsals">All rehearsals</Link>
      </p>
      <h1>
        Rehearsal of {run.eventName}{' '}
        <span
          className={`pill pill-${run.status === 'PASS' ? 'ok' : run.status === 'RUNNING' ? 'warn' : 'alarm'}`}
          data-testid="rehearsal-verdict"
        >
          {run.status === 'RUNNING' ? 'running' : run.status === 'PASS' ? 'PASS' : run.status === 'FAIL' ? 'FAIL' : 'stopped with an error'}
        </span>
      </h1>
      <p className="muted">
        {formatCount(run.fans)} virtual fans, the event's clock {run.timeScale} times fast, against {run.target}; started{' '}
        <When iso={run.startedAt} />
        {run.finishedAt && (
          <>
            , finished <When iso={run.finishedAt} />
          </>
        )}
        . A rehearsal's event is its own, marked as a rehearsal: no real event's data is touched.
      </p>
      {run.status === 'RUNNING' && (
        <div className="form-ok" role="status" data-testid="rehearsal-running">
          <p>
            Running: its report appears here when it ends.{' '}
            {run.eventId && (
              <Link to="/events/$eventId/war-room" params={{ eventId: run.eventId }} data-testid="rehearsal-war-room">
                Watch its event in the war room
              </Link>
            )}
          </p>
          {run.progress ? (
            <Progress p={run.progress} />
          ) : (
            <p>{run.eventId ? 'Its progress cannot be read right now; trying again in 2 s.' : 'Setting up its event and its fans…'}</p>
          )}
        </div>
      )}
      {run.report ? (
        <ReportView
          r={run.report}
          // A report from an older driver that lacks the figures today's rule reads keeps its own verdict.
          j={run.judgement ?? { verdict: run.report.verdict, checks: [], reasons: run.report.reasons ?? [], warnings: [] }}
        />
      ) : (
        run.status !== 'RUNNING' && <p className="form-error">This run ended without a report (see the driver's output).</p>
      )}
    </section>
  );
}

/** A running rehearsal's progress, from its event's figures (refreshed every 2 s): fans joined, seats sold. */
function Progress({ p }: { p: NonNullable<Run['progress']> }) {
  const joined = Math.min(p.joined, p.fans);
  return (
    <div className="rehearsal-progress" data-testid="rehearsal-progress" data-sold={p.sold} data-joined={p.joined}>
      <label>
        Fans joined: {formatCount(joined)} of {formatCount(p.fans)}
        <progress max={p.fans} value={joined} />
      </label>
      <label>
        Seats sold: {formatCount(p.sold)} of {formatCount(p.seats)} ({formatCount(p.held)} held, {formatCount(p.orders)} orders)
        <progress max={Math.max(1, p.seats)} value={p.sold} />
      </label>
      <p className="muted">
        {formatCount(p.waiting)} waiting · {formatCount(p.admittedLastMinute)} let in last minute · as of <When iso={p.at} />
      </p>
    </div>
  );
}

function ReportView({ r, j }: { r: Report; j: Judgement }) {
  // The targets first, as the verdict judged them (rehearsal/verdict.ts), then the figures it does not judge.
  const checks: { key: string; label: string; value: string; bad: boolean; warn?: boolean; title?: string }[] = [
    ...j.checks.map((c) => ({
      key: c.key,
      label: c.label,
      value: c.value,
      bad: c.outcome === 'fail',
      warn: c.outcome === 'warn',
      title: `Target: ${c.target}${c.reason ? `. ${c.reason}` : ''}`,
    })),
    {
      key: 'sold',
      label: 'Seats sold',
      value: `${formatCount(r.seatsSold)} of ${formatCount(r.seats)}${r.soldOut ? ' (sold out)' : ''}`,
      bad: false,
    },
    { key: 'orders', label: 'Orders', value: formatCount(r.orders), bad: false },
    { key: 'bots', label: 'Seats bought by bots', value: pct(r.botSeatShare), bad: r.botSeatShare >= 0.1 },
    {
      key: 'rank',
      label: 'Did earlier arrivals get earlier places?',
      value:
        r.rankCorrelation === null
          ? '—'
          : Math.abs(r.rankCorrelation) < 0.1
            ? `No: shuffled (${r.rankCorrelation.toFixed(3)})`
            : `Yes (${r.rankCorrelation.toFixed(3)})`,
      bad: r.rankCorrelation !== null && Math.abs(r.rankCorrelation) >= 0.1,
      title:
        "Spearman rank correlation between a pre-open fan's arrival and their place: near 0 means arriving early gave no edge, as the fair shuffle promises.",
    },
  ];
  const stranded = r.strandedSeats.map(([at, seats]) => ({ s: Math.round(at / 100) / 10, seats }));
  const admitted = [
    { name: 'plan', perMinute: r.admittedPerMinute.plan },
    { name: 'actual', perMinute: r.admittedPerMinute.actual ?? 0 },
  ];
  const propagation = [
    { name: 'p50', ms: r.soldOutPropagationMs.p50 ?? 0 },
    { name: 'p99', ms: r.soldOutPropagationMs.p99 ?? 0 },
    { name: 'max', ms: r.soldOutPropagationMs.max ?? 0 },
  ];
  return (
    <>
      {j.reasons.length > 0 && (
        <p className="form-error" role="alert" data-testid="rehearsal-reasons">
          Not a pass: {j.reasons.join('; ')}.
        </p>
      )}
      {j.warnings.length > 0 && (
        <div className="form-warn" data-testid="rehearsal-warnings">
          <p>{j.verdict === 'PASS' ? 'A pass, with what to look at:' : 'Also look at:'}</p>
          <ul>
            {j.warnings.map((w) => (
              <li key={w} data-testid="rehearsal-warning">
                {w}
              </li>
            ))}
          </ul>
        </div>
      )}
      <div className="tiles tiles-compact" data-testid="rehearsal-checks">
        {checks.map((c) => (
          <div
            key={c.key}
            className={`tile${c.bad ? ' tile-alarm' : c.warn ? ' tile-warn' : ''}`}
            data-testid={`rehearsal-${c.key}`}
            data-outcome={c.bad ? 'fail' : c.warn ? 'warn' : 'ok'}
            title={c.title}
          >
            <span className="tile-label">{c.label}</span>
            <span className="tile-value">{c.value}</span>
          </div>
        ))}
      </div>
      <h2>Speed</h2>
      <ul>
        <li>
          Sold-out reached the polling fans in {ms(r.soldOutPropagationMs.p50)} (median), {ms(r.soldOutPropagationMs.p99)} (p99),{' '}
          {ms(r.soldOutPropagationMs.max)} at most ({formatCount(r.soldOutPropagationMs.count)} fans).
        </li>
        <li>
          Holds took {ms(r.holdLatencyMs.p50)} (median) and {ms(r.holdLatencyMs.p99)} (p99) over {formatCount(r.holdLatencyMs.count)} holds.
        </li>
      </ul>
      <div className="charts">
        <figure className="card" data-testid="rehearsal-stranded-chart">
          <figcaption>Seats stranded in abandoned holds, by seconds after the open</figcaption>
          <ResponsiveContainer width="100%" height={220}>
            <LineChart data={stranded}>
              <CartesianGrid strokeDasharray="3 3" />
              <XAxis dataKey="s" unit=" s" />
              <YAxis allowDecimals={false} />
              <Tooltip />
              <Line type="stepAfter" dataKey="seats" stroke="#b45309" dot={false} isAnimationActive={false} />
            </LineChart>
          </ResponsiveContainer>
        </figure>
        <figure className="card" data-testid="rehearsal-admitted-chart">
          <figcaption>Fans admitted per minute: the plan and what happened</figcaption>
          <ResponsiveContainer width="100%" height={220}>
            <BarChart data={admitted}>
              <CartesianGrid strokeDasharray="3 3" />
              <XAxis dataKey="name" />
              <YAxis />
              <Tooltip />
              <Bar dataKey="perMinute" fill="#2563eb" isAnimationActive={false} />
            </BarChart>
          </ResponsiveContainer>
        </figure>
        <figure className="card" data-testid="rehearsal-propagation-chart">
          <figcaption>Sold-out propagation to polling fans (ms)</figcaption>
          <ResponsiveContainer width="100%" height={220}>
            <BarChart data={propagation}>
              <CartesianGrid strokeDasharray="3 3" />
              <XAxis dataKey="name" />
              <YAxis />
              <Tooltip />
              <Bar dataKey="ms" fill="#059669" isAnimationActive={false} />
            </BarChart>
          </ResponsiveContainer>
        </figure>
      </div>
      {r.faults.length > 0 && (
        <>
          <h2>Faults</h2>
          <div className="table-scroll">
            <GridTable
              columns={[
                'Fault',
                'What was done',
                { label: 'At', num: true },
                { label: 'Recovered after', num: true },
                'What fans read meanwhile',
              ]}
              testId="rehearsal-faults"
            >
              {r.faults.map((f) => (
                <tr key={f.fault}>
                  <td>{f.fault}</td>
                  <td>{f.action}</td>
                  <td className="num">{(f.startedAtMs / 1000).toFixed(1)} s</td>
                  <td className="num">{f.recoveryMs === null ? 'never' : `${(f.recoveryMs / 1000).toFixed(1)} s`}</td>
                  <td>
                    {Object.entries(f.fansRead)
                      .sort((a, b) => b[1] - a[1])
                      .map(([k, v]) => `${k}: ${formatCount(v)}`)
                      .join(', ') || 'nothing'}
                  </td>
                </tr>
              ))}
            </GridTable>
          </div>
        </>
      )}
      <h2>Answers fans got</h2>
      <div className="table-scroll">
        <GridTable columns={['Answer', { label: 'Count', num: true }]} testId="rehearsal-answers">
          {Object.entries(r.answers)
            .sort((a, b) => b[1] - a[1])
            .map(([k, v]) => (
              <tr key={k}>
                <td>{k}</td>
                <td className="num">{formatCount(v)}</td>
              </tr>
            ))}
        </GridTable>
      </div>
      <p className="muted">
        The driver: {formatCount(r.driver.requests)} requests in {r.driver.wallSeconds.toFixed(1)} s, its own CPU{' '}
        {r.driver.cpuSeconds.toFixed(1)} s, peak memory {formatCount(r.driver.peakRssMb)} MB.
      </p>
    </>
  );
}
