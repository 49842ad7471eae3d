import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, Link, useNavigate } from '@tanstack/react-router';
import { rehearsalLaunchSchema } from '@onsale/shared/rehearsal';
import { fieldErrors } from '@onsale/shared/users/schema';
import { fieldErrorsOf, messageOf, useTRPC } from '../../../trpc';
import { ErrorSummary } from '../../-components/ErrorSummary';
import { Field } from '../../-components/Field';
import { formatCount } from '../../-components/format';
import { When } from '../../-components/When';
import { GridTable } from '../../-components/GridTable';

// Rehearsals: synthetic on-sales (`onsale rehearse`) with virtual fans and bots on a rehearsal's own event, never a
// real one. Everyone who reads events reads their reports; operators and admins start one from here, against the
// product this console runs with, and watch its event in the war room while it runs.
export const Route = createFileRoute('/_authed/rehearsals/')({
  component: RehearsalsPage,
});

const VERDICT_TONE: Record<string, string> = { PASS: 'ok', FAIL: 'alarm', ERROR: 'alarm', RUNNING: 'warn' };
const LABELS = { example: 'Sale to rehearse', fans: 'Virtual fans', botsShare: 'Share of bots', timeScale: 'Clock speed' };

function RehearsalsPage() {
  const { me } = Route.useRouteContext();
  const trpc = useTRPC();
  const runs = useQuery(trpc.rehearsals.list.queryOptions(undefined, { refetchInterval: 3_000 }));
  const canStart = me.permissions.includes('warroom.control');
  return (
    <section>
      <h1>Rehearsals</h1>
      <p className="muted">
        A rehearsal is a synthetic on-sale: virtual fans and bots join, poll, hold, pay and join the waitlist over HTTP, on an event of its
        own marked as a rehearsal. Its report says whether anything was sold twice, ordered twice or lost, how fast the sell-out reached
        every fan, and how many seats bots bought.
      </p>
      {canStart ? (
        <StartRehearsal />
      ) : (
        <p className="muted" data-testid="rehearsal-readonly">
          Operators and admins start rehearsals; you can read their reports.
        </p>
      )}
      <h2>Runs</h2>
      {runs.data && runs.data.length === 0 && <p className="muted">No rehearsal has run yet.</p>}
      {runs.data && runs.data.length > 0 && (
        <div className="table-scroll">
          <GridTable
            columns={['Started', 'Sale', { label: 'Fans', num: true }, { label: 'Clock', num: true }, 'Seats sold', 'Verdict', '']}
            testId="rehearsal-runs"
          >
            {runs.data.map((r) => (
              <tr key={r.id} data-testid="rehearsal-run" data-status={r.status}>
                <td>
                  <When iso={r.startedAt} />
                </td>
                <td>{r.eventName}</td>
                <td className="num">{formatCount(r.fans)}</td>
                <td className="num">x{r.timeScale}</td>
                <td>{r.seats === null ? '—' : `${formatCount(r.seatsSold ?? 0)} of ${formatCount(r.seats)}`}</td>
                <td>
                  <span className={`pill pill-${VERDICT_TONE[r.status] ?? ''}`} data-testid="rehearsal-status">
                    {r.status === 'RUNNING'
                      ? 'running'
                      : r.status === 'PASS'
                        ? 'passed'
                        : r.status === 'FAIL'
                          ? 'failed'
                          : 'stopped with an error'}
                  </span>
                </td>
                <td className="actions">
                  <Link to="/rehearsals/$runId" params={{ runId: r.id }} data-testid="rehearsal-open">
                    Report
                  </Link>
                  {r.eventId && r.status === 'RUNNING' && (
                    <>
                      {' · '}
                      <Link to="/events/$eventId/war-room" params={{ eventId: r.eventId }} data-testid="rehearsal-war-room">
                        Watch in the war room
                      </Link>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </GridTable>
        </div>
      )}
    </section>
  );
}

function StartRehearsal() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const options = useQuery(trpc.rehearsals.options.queryOptions());
  const [example, setExample] = useState('club');
  const [fans, setFans] = useState('3000');
  const [botsShare, setBotsShare] = useState('0.3');
  const [timeScale, setTimeScale] = useState('30');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const start = useMutation(
    trpc.rehearsals.start.mutationOptions({
      onSuccess: async ({ runId }) => {
        await queryClient.invalidateQueries({ queryKey: trpc.rehearsals.pathKey() });
        await navigate({ to: '/rehearsals/$runId', params: { runId } });
      },
      onError: (error) => {
        const fields = fieldErrorsOf(error);
        setErrors(Object.keys(fields).length ? fields : { example: messageOf(error, { change: true }) });
      },
    }),
  );
  const num = (v: string) => (v.trim() === '' ? Number.NaN : Number(v));
  function submit(e: FormEvent) {
    e.preventDefault();
    const parsed = rehearsalLaunchSchema.safeParse({ example, fans: num(fans), botsShare: num(botsShare), timeScale: num(timeScale) });
    if (!parsed.success) return setErrors(fieldErrors(parsed.error));
    setErrors({});
    start.mutate(parsed.data);
  }
  if (options.data && options.data.target === null)
    return (
      <p className="muted" data-testid="rehearsal-unavailable">
        This console cannot start rehearsals: it was not started with the product. Start one with <code>npm run onsale -- rehearse</code>;
        its report shows here.
      </p>
    );
  return (
    <form className="card form" onSubmit={submit} noValidate data-testid="rehearsal-start">
      <h2>Start a rehearsal</h2>
      <ErrorSummary errors={errors} labels={LABELS} />
      <Field label={LABELS.example} name="example" error={errors.example} hint="A new rehearsal event is made from this example sale.">
        <select value={example} onChange={(e) => setExample(e.target.value)}>
          {(options.data?.examples ?? []).map((x) => (
            <option key={x.id} value={x.id}>
              {x.label}
            </option>
          ))}
        </select>
      </Field>
      <Field label={LABELS.fans} name="fans" error={errors.fans} hint="10 to 200,000, in one driver process on this machine.">
        <input value={fans} onChange={(e) => setFans(e.target.value)} inputMode="numeric" />
      </Field>
      <Field
        label={LABELS.botsShare}
        name="botsShare"
        error={errors.botsShare}
        hint="0 to 0.9 of the fans: operators of many accounts sharing devices and cards."
      >
        <input value={botsShare} onChange={(e) => setBotsShare(e.target.value)} inputMode="decimal" />
      </Field>
      <Field
        label={LABELS.timeScale}
        name="timeScale"
        error={errors.timeScale}
        hint="How many times faster the event's clock runs: 30 makes a 10-minute sale plan for 20 s."
      >
        <input value={timeScale} onChange={(e) => setTimeScale(e.target.value)} inputMode="decimal" />
      </Field>
      <button type="submit" className="primary" disabled={start.isPending} data-testid="rehearsal-start-button">
        {start.isPending ? 'Starting…' : 'Start rehearsal'}
      </button>
      {options.data?.target && <p className="muted">Its fans come to {options.data.target}.</p>}
    </form>
  );
}
