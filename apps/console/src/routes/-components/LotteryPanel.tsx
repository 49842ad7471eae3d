import { useEffect, useRef, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RouterOutputs } from '@onsale/bff/root';
import { domainCodeOf, messageOf, useTRPC } from '../../trpc';
import { formatCount, formatDateTime } from './format';
import './warroom/warroom.css';
import './event-form.css';
import './lottery.css';
import { GridTable } from './GridTable';

type Summary = RouterOutputs['lottery']['summary'];
type Phase = 'NOT_OPEN' | 'OPEN' | 'DRAW_DUE' | 'DRAWN';

const PHASE_LOOK: Record<Phase, { label: string; tone: string }> = {
  NOT_OPEN: { label: 'REGISTRATION NOT OPEN', tone: '' },
  OPEN: { label: 'REGISTRATION OPEN', tone: 'wr-badge-ok' },
  DRAW_DUE: { label: 'REGISTRATION CLOSED, DRAW DUE', tone: 'wr-badge-warn' },
  DRAWN: { label: 'DRAWN', tone: 'wr-badge-done' },
};

function phaseOf(s: Summary, now: number): Phase {
  if (s.draw) return 'DRAWN';
  if (now < Date.parse(s.registrationOpensAt)) return 'NOT_OPEN';
  return now < Date.parse(s.registrationClosesAt) ? 'OPEN' : 'DRAW_DUE';
}

/** A refusal of the draw in the operator's words, with the domain's code beside it. */
function refusalText(error: unknown): { code: string | undefined; text: string } {
  const code = domainCodeOf(error);
  const message = messageOf(error, { change: true });
  if (code === 'DRAW_TOO_EARLY') return { code, text: `Not drawn: registration is still open. ${message}` };
  if (code === 'EVENT_FORBIDDEN' || code === 'ROLE_FORBIDDEN')
    return { code, text: `Not drawn: your role may not run this draw. ${message}` };
  return { code, text: `Not drawn. ${message}` };
}

/**
 * A registration lottery on the event page: the registration window and count, the seats on offer and the
 * requested seats the draw invites, the seed commitment (and, once drawn, the revealed seed), the winners per
 * purchase window and the public audit re-run by the BFF. "Run the draw" (confirmed) only for roles with the
 * `lottery.draw` permission; the BFF checks again, and its refusals (DRAW_TOO_EARLY, ...) are shown as they come.
 */
export function LotteryPanel({ eventId, permissions, refreshMs }: { eventId: string; permissions: readonly string[]; refreshMs: number }) {
  const trpc = useTRPC();
  const summary = useQuery(trpc.lottery.summary.queryOptions({ eventId }, { refetchInterval: refreshMs }));
  const drawn = !!summary.data?.draw;
  const verify = useQuery(trpc.lottery.verify.queryOptions({ eventId }, { enabled: drawn }));
  const [confirming, setConfirming] = useState(false);
  const canDraw = permissions.includes('lottery.draw');

  if (summary.error)
    return (
      <section className="card lottery-panel" data-testid="lottery-panel" aria-label="Registration lottery">
        <h2>Registration lottery</h2>
        <p className="form-error" role="alert" data-testid="lottery-error">
          {domainCodeOf(summary.error) === 'LOTTERY_NOT_CONFIGURED'
            ? 'This event is a registration lottery without its settings: give them in the event’s configuration.'
            : messageOf(summary.error)}
        </p>
      </section>
    );
  if (!summary.data) return <p className="muted">Loading the lottery…</p>;
  const s = summary.data;
  const phase = phaseOf(s, Date.now());
  const look = PHASE_LOOK[phase];

  return (
    <section className="card lottery-panel" data-testid="lottery-panel" data-phase={phase} aria-label="Registration lottery">
      <h2>
        Registration lottery{' '}
        <span className={`wr-badge ${look.tone}`} data-testid="lottery-phase">
          {look.label}
        </span>
      </h2>
      <dl className="kv">
        <dt>Registration</dt>
        <dd data-testid="lottery-window">
          <time dateTime={s.registrationOpensAt}>{formatDateTime(s.registrationOpensAt)}</time> to{' '}
          <time dateTime={s.registrationClosesAt}>{formatDateTime(s.registrationClosesAt)}</time>
        </dd>
        <dt>Registered</dt>
        <dd data-testid="lottery-registrations">{formatCount(s.registrationCount)}</dd>
        <dt>Seats offered</dt>
        <dd data-testid="lottery-seats-offered">{formatCount(s.seatsOffered)}</dd>
        <dt>Target requested seats</dt>
        <dd>
          <span data-testid="lottery-target">{formatCount(s.targetRequestedSeats)}</span>{' '}
          <span className="muted">(seats offered ÷ {Math.round(s.expectedConversion * 1000) / 10}% expected conversion)</span>
        </dd>
        <dt>Purchase windows</dt>
        <dd>
          {formatCount(s.cohorts)} of {formatCount(s.cohortMinutes)} minutes from the on-sale (
          <time dateTime={s.onsaleAt}>{formatDateTime(s.onsaleAt)}</time>)
        </dd>
        <dt>Seed commitment</dt>
        <dd className="mono" data-testid="lottery-commitment">
          {s.seedCommitment}
        </dd>
        <dt>Seed</dt>
        <dd className="mono" data-testid="lottery-seed">
          {s.seed ?? <span className="muted">not revealed yet (the draw reveals it)</span>}
        </dd>
      </dl>

      {s.draw ? (
        <>
          <p data-testid="lottery-drawn">
            Drawn <time dateTime={s.draw.drawnAt}>{formatDateTime(s.draw.drawnAt)}</time> by {s.draw.drawnBy}:{' '}
            <strong data-testid="lottery-winners">{formatCount(s.draw.winners)}</strong> winners asking for{' '}
            {formatCount(s.draw.invitedSeats)} seats; <span data-testid="lottery-non-winners">{formatCount(s.draw.nonWinners)}</span> not
            drawn, now on the waitlist. Every registered fan has been told.
          </p>
          <GridTable
            columns={['Purchase window', 'Opens', 'Closes', { label: 'Winners', num: true }, { label: 'Seats asked for', num: true }]}
            testId="lottery-cohorts"
          >
            {s.draw.cohorts.map((c) => (
              <tr key={c.cohort} data-testid="lottery-cohort" data-cohort={c.cohort}>
                <td>{c.cohort + 1}</td>
                <td>
                  <time dateTime={c.opensAt}>{formatDateTime(c.opensAt)}</time>
                </td>
                <td>
                  <time dateTime={c.closesAt}>{formatDateTime(c.closesAt)}</time>
                </td>
                <td className="num" data-testid="lottery-cohort-winners">
                  {formatCount(c.winners)}
                </td>
                <td className="num">{formatCount(c.seats)}</td>
              </tr>
            ))}
          </GridTable>
          <Verification data={verify.data} error={verify.error} />
        </>
      ) : (
        <p className="muted">
          {phase === 'DRAW_DUE'
            ? 'Registration has closed: the draw can run.'
            : `The draw runs after registration closes (${formatDateTime(s.registrationClosesAt)}); it reveals the seed, so anyone can check the winners.`}
        </p>
      )}

      {canDraw && !s.draw && (
        <div className="page-actions">
          <button type="button" className="wr-button wr-button-go" onClick={() => setConfirming(true)} data-testid="lottery-draw">
            Run the draw…
          </button>
        </div>
      )}
      {confirming && <DrawDialog eventId={eventId} summary={s} phase={phase} onClose={() => setConfirming(false)} />}
    </section>
  );
}

function Verification({ data: v, error }: { data: RouterOutputs['lottery']['verify'] | undefined; error: { message: string } | null }) {
  if (error)
    return (
      <p className="form-error" data-testid="lottery-verify">
        The audit could not run: {messageOf(error)}
      </p>
    );
  if (!v) return <p className="muted">Re-deriving the winners from the published data…</p>;
  return (
    <div data-testid="lottery-verify" data-ok={v.ok ? 'true' : 'false'}>
      <p className={v.ok ? 'check-ok' : 'check-fail'} data-testid="lottery-verify-result">
        {v.ok
          ? `Verified: the ${formatCount(v.winners)} winners re-derived from the revealed seed and the published list of ${formatCount(v.registrations)} registrations are the recorded ones.`
          : 'The public audit FAILS: the recorded draw does not match what the published data gives.'}
      </p>
      <ul className="muted">
        {v.checks.map((c) => (
          <li key={c.name} data-testid="lottery-check" data-ok={c.ok ? 'true' : 'false'}>
            <span className={c.ok ? 'check-ok' : 'check-fail'}>{c.ok ? '✓' : '✗'}</span> {c.name}: {c.detail}
          </li>
        ))}
      </ul>
    </div>
  );
}

function DrawDialog({ eventId, summary, phase, onClose }: { eventId: string; summary: Summary; phase: Phase; onClose: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);
  const draw = useMutation(
    trpc.lottery.draw.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries({ queryKey: trpc.lottery.summary.queryKey({ eventId }) });
        await queryClient.invalidateQueries({ queryKey: trpc.lottery.verify.queryKey({ eventId }) });
        onClose();
      },
    }),
  );
  const refusal = draw.error ? refusalText(draw.error) : null;
  return (
    <dialog ref={ref} className="wr-dialog" onCancel={onClose} data-testid="lottery-dialog-draw" aria-labelledby="lottery-dialog-title">
      <h2 id="lottery-dialog-title">Run the draw for {summary.name}</h2>
      <p>
        The draw reveals the seed committed to ({summary.seedCommitment.slice(0, 12)}…), picks winners from the{' '}
        {formatCount(summary.registrationCount)} registrations until they ask for {formatCount(summary.targetRequestedSeats)} seats, spreads
        them over {formatCount(summary.cohorts)} purchase windows, puts everyone else on the waitlist and tells every registered fan. It
        runs once: it cannot be undone or re-run with another seed.
      </p>
      {phase !== 'DRAW_DUE' && (
        <p className="banner banner-warn">
          Registration is open until {formatDateTime(summary.registrationClosesAt)}: the draw will be refused until then.
        </p>
      )}
      {refusal && (
        <p className="form-error" role="alert" data-testid="lottery-draw-error" data-code={refusal.code}>
          {refusal.code && <strong>{refusal.code}</strong>} {refusal.text}
        </p>
      )}
      <div className="wr-dialog-actions">
        <button type="button" className="wr-button" onClick={onClose} disabled={draw.isPending}>
          Cancel
        </button>
        <button
          type="button"
          className="wr-button wr-button-go"
          disabled={draw.isPending}
          onClick={() => draw.mutate({ eventId })}
          data-testid="lottery-confirm-draw"
        >
          {draw.isPending ? 'Drawing…' : 'Run the draw'}
        </button>
      </div>
    </dialog>
  );
}
