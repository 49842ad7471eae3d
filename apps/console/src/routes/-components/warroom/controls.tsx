import { useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { pauseQueueSchema, rateOverrideSchema, RATE_OVERRIDE_BOUNDS, resumeQueueSchema } from '@onsale/shared/warroom/schema';
import { fieldErrorsOf, messageOf, useTRPC } from '../../../trpc';
import { fieldErrors } from '@onsale/shared/users/schema';
import type { RouterOutputs } from '@onsale/bff/root';
import { ConfirmActions, ModalDialog, ReasonField } from './dialog';
import { Field } from '../Field';
import { formatCount } from '../format';
import { formatTime, type WarRoomSnapshot } from './parts';
import type { Reach } from './reach';

type Kind = 'pause' | 'resume' | 'rate';
type ControlsState = RouterOutputs['warRoom']['controls'];

/**
 * What an operator asked for, and what the server says about it. A control is confirmed only by reading the
 * queue's state back from the server (`warRoom.controls`), never by the request's own answer or by guessing: a
 * request that could not reach the server leaves the outcome unknown until the server answers again.
 */
interface Outcome {
  kind: Kind;
  /** Whether the server's state shows the control applied. */
  applied: (c: ControlsState) => boolean;
  /** The state asked for, and the opposite, in words ("admissions are paused"). */
  wanted: string;
  sentAt: number;
  status: 'sending' | 'sent' | 'unknown' | 'confirmed' | 'not-applied';
  /** The server's words for the state when it answered (confirmed / not-applied). */
  serverSays?: string;
  serverAt?: string;
}

const describeState = (c: ControlsState) =>
  `${c.paused ? `admissions are paused (by ${c.pausedBy ?? 'someone'})` : 'admissions are running'}; the rate ${c.rateOverridePerMin === null ? 'follows the plan' : `is ${formatCount(c.rateOverridePerMin)}/min, set by an operator`}`;

/**
 * Pause, resume and the rate override. Each opens a dialog that says what will happen, asks for a reason (it goes
 * to the audit log with the signed-in e-mail) and needs an explicit confirmation. The inputs are checked with the
 * schemas the BFF enforces; the BFF checks the role again. While the server cannot be reached the controls say so
 * and are off; what a control did is confirmed by reading the state back from the server.
 */
export function Controls({ snapshot, reach, serverError = false }: { snapshot: WarRoomSnapshot; reach: Reach; serverError?: boolean }) {
  const trpc = useTRPC();
  const [open, setOpen] = useState<Kind | null>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const paused = snapshot.queue.paused;
  const offline = reach === 'unreachable';
  const checking = outcome !== null && (outcome.status === 'sent' || outcome.status === 'unknown');
  const readBack = useQuery({
    ...trpc.warRoom.controls.queryOptions({ eventId: snapshot.eventId }),
    enabled: checking,
    refetchInterval: 1_500,
    refetchIntervalInBackground: true,
    retry: false,
    staleTime: 0,
  });
  useEffect(() => {
    if (!checking || !outcome || !readBack.data || readBack.dataUpdatedAt < outcome.sentAt) return;
    const c = readBack.data;
    setOutcome({ ...outcome, status: outcome.applied(c) ? 'confirmed' : 'not-applied', serverSays: describeState(c), serverAt: c.at });
  }, [checking, outcome, readBack.data, readBack.dataUpdatedAt]);

  useEffect(() => {
    if (offline) setOpen(null);
  }, [offline]);
  return (
    <section className="wr-controls" aria-label="Queue controls" data-testid="wr-controls" data-reach={reach}>
      {paused ? (
        <button
          type="button"
          className="wr-button wr-button-go"
          onClick={() => setOpen('resume')}
          disabled={offline}
          data-testid="wr-resume"
        >
          Resume admissions…
        </button>
      ) : (
        <button
          type="button"
          className="wr-button wr-button-stop"
          onClick={() => setOpen('pause')}
          disabled={offline}
          data-testid="wr-pause"
        >
          Pause admissions…
        </button>
      )}
      <button type="button" className="wr-button" onClick={() => setOpen('rate')} disabled={offline} data-testid="wr-rate">
        Rate override…
      </button>
      <span className="muted wr-controls-note">
        Rate:{' '}
        {snapshot.queue.rateOverridePerMin === null
          ? 'following the plan'
          : `${formatCount(snapshot.queue.rateOverridePerMin)}/min set by an operator`}
      </span>
      {offline && (
        <p className="wr-controls-offline" role="alert" data-testid="wr-controls-offline">
          {serverError
            ? 'The server cannot apply controls right now (it cannot reach its database): the controls are off until it can (checking every few seconds).'
            : 'Cannot reach the server: the controls are off until it answers again (checking every few seconds). Nothing is sent from this page meanwhile.'}
        </p>
      )}
      {outcome && <OutcomeLine outcome={outcome} />}
      {open && !offline && (
        <ControlDialog
          kind={open}
          snapshot={snapshot}
          onClose={() => setOpen(null)}
          onSending={(o) => setOutcome({ ...o, status: 'sending', sentAt: Date.now() })}
          onSent={(ok) => setOutcome((o) => (o ? { ...o, status: ok ? 'sent' : 'unknown', sentAt: Date.now() } : o))}
          onRefused={() => setOutcome(null)}
        />
      )}
    </section>
  );
}

function OutcomeLine({ outcome: o }: { outcome: Outcome }) {
  const verb = { pause: 'pause admissions', resume: 'resume admissions', rate: 'change the rate' }[o.kind];
  let text: ReactNode;
  let tone = 'wr-outcome-wait';
  if (o.status === 'sending') text = `Sending: ${verb}…`;
  else if (o.status === 'sent') text = `Sent. Waiting for the server to confirm that ${o.wanted}…`;
  else if (o.status === 'unknown') {
    tone = 'wr-outcome-unknown';
    text = `Could not reach the server: it is not known whether the request to ${verb} arrived. The page shows what the server last reported and checks again as soon as the server answers.`;
  } else if (o.status === 'confirmed') {
    tone = 'wr-outcome-ok';
    text = `Confirmed by the server at ${formatTime(o.serverAt!)}: ${o.wanted}.`;
  } else {
    tone = 'wr-outcome-bad';
    text = `The server reports at ${formatTime(o.serverAt!)} that ${o.serverSays}: the request to ${verb} did not take effect. Try again.`;
  }
  return (
    <p
      className={`wr-outcome ${tone}`}
      role={o.status === 'unknown' || o.status === 'not-applied' ? 'alert' : 'status'}
      data-testid="wr-control-outcome"
      data-status={o.status}
    >
      {text}
    </p>
  );
}

/** A refusal the server gave at a field (it answered: nothing changed), as opposed to no answer at all. */
function fieldRefusal(e: unknown): Record<string, string> | null {
  const fields = fieldErrorsOf(e);
  if (Object.keys(fields).length > 0) return fields;
  const data = (e as { data?: { httpStatus?: number } } | null)?.data;
  // A 4xx is the server's answer (no access, stale, bad input): nothing changed, and it says why.
  if (data?.httpStatus !== undefined && data.httpStatus >= 400 && data.httpStatus < 500) return { form: (e as Error).message };
  return null;
}

function ControlDialog({
  kind,
  snapshot,
  onClose,
  onSending,
  onSent,
  onRefused,
}: {
  kind: Kind;
  snapshot: WarRoomSnapshot;
  onClose: () => void;
  onSending: (o: Omit<Outcome, 'status' | 'sentAt'>) => void;
  onSent: (reachedServer: boolean) => void;
  onRefused: () => void;
}) {
  const trpc = useTRPC();
  const [reason, setReason] = useState('');
  const [publicNote, setPublicNote] = useState('');
  const [rate, setRate] = useState(snapshot.queue.rateOverridePerMin === null ? '' : String(snapshot.queue.rateOverridePerMin));
  const [followPlan, setFollowPlan] = useState(false);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const done = {
    onSuccess: () => {
      onSent(true);
      onClose();
    },
    onError: (e: unknown) => {
      const refused = fieldRefusal(e);
      if (refused) {
        onRefused();
        setErrors(refused);
        return;
      }
      // No answer (or a 5xx): whether it took effect is unknown until the state is read back.
      onSent(false);
      setErrors({
        form: `${(e as { data?: unknown }).data ? messageOf(e) : 'Could not reach the server.'} It is not known whether this took effect: the war room checks with the server and says so below. Close this and watch the result, or try again.`,
      });
    },
  };
  const pause = useMutation(trpc.warRoom.pause.mutationOptions(done));
  const resume = useMutation(trpc.warRoom.resume.mutationOptions(done));
  const setRateOverride = useMutation(trpc.warRoom.setRate.mutationOptions(done));
  const pending = pause.isPending || resume.isPending || setRateOverride.isPending;

  const plan = snapshot.admission.plan?.admitsPerMinute ?? null;
  const rateNumber = rate.trim() === '' ? Number.NaN : Number(rate);

  function submit(e: FormEvent) {
    e.preventDefault();
    setErrors({});
    const eventId = snapshot.eventId;
    if (kind === 'pause') {
      const parsed = pauseQueueSchema.safeParse({ eventId, reason, publicNote });
      if (!parsed.success) return setErrors(fieldErrors(parsed.error));
      onSending({ kind, applied: (c) => c.paused, wanted: 'admissions are paused' });
      pause.mutate(parsed.data);
    } else if (kind === 'resume') {
      const parsed = resumeQueueSchema.safeParse({ eventId, reason });
      if (!parsed.success) return setErrors(fieldErrors(parsed.error));
      onSending({ kind, applied: (c) => !c.paused, wanted: 'admissions are running again' });
      resume.mutate(parsed.data);
    } else {
      const parsed = rateOverrideSchema.safeParse({
        eventId,
        reason,
        perMinute: followPlan ? null : rate.trim() === '' ? undefined : rateNumber,
      });
      if (!parsed.success) return setErrors(fieldErrors(parsed.error));
      const perMinute = parsed.data.perMinute;
      onSending({
        kind,
        applied: (c) => c.rateOverridePerMin === perMinute,
        wanted: perMinute === null ? 'the rate follows the plan' : `the rate is ${formatCount(perMinute)}/min`,
      });
      setRateOverride.mutate(parsed.data);
    }
  }

  const title = { pause: 'Pause admissions', resume: 'Resume admissions', rate: 'Override the admission rate' }[kind];
  let what: ReactNode;
  if (kind === 'pause')
    what = (
      <>
        Nobody new is admitted to <strong>{snapshot.name}</strong> until someone resumes. The {formatCount(snapshot.queue.waiting)} fans
        waiting keep their places and read <strong>PAUSED</strong>. Fans already admitted can still buy.
        {snapshot.tiers.length > 0 && (
          <span data-testid="wr-pause-all-queues">
            {' '}
            This pauses every queue of the event: the general sale and each presale (
            {snapshot.tiers
              .filter((t) => !t.general)
              .map((t) => t.code)
              .join(', ')}
            ); to pause one presale only, use its Pause button in the tier table.
          </span>
        )}
      </>
    );
  else if (kind === 'resume')
    what = (
      <>
        Admissions to <strong>{snapshot.name}</strong>
        {snapshot.tiers.length > 0 ? ' (every queue: the general sale and each presale)' : ''} start again at{' '}
        {snapshot.queue.rateOverridePerMin === null
          ? `the plan's rate (${plan === null ? 'no plan' : `${formatCount(Math.round(plan))}/min`})`
          : `the operator's ${formatCount(snapshot.queue.rateOverridePerMin)}/min`}
        . Paused by {snapshot.queue.pausedBy}: “{snapshot.queue.pausedReason}”.
      </>
    );
  else
    what = (
      <>
        The plan admits {plan === null ? '—' : `${formatCount(Math.round(plan))}/min`}. An override replaces it (whole admits per minute,{' '}
        {RATE_OVERRIDE_BOUNDS.min} to {formatCount(RATE_OVERRIDE_BOUNDS.max)}); the controller still slows it when checkouts fail and never
        admits past the plausible seats.
      </>
    );

  return (
    <ModalDialog testId={`wr-dialog-${kind}`} title={title} onClose={onClose}>
      <form onSubmit={submit} noValidate>
        <p>{what}</p>
        {kind === 'rate' && (
          <>
            <label className="wr-check">
              <input type="checkbox" checked={followPlan} onChange={(e) => setFollowPlan(e.target.checked)} data-testid="wr-follow-plan" />{' '}
              Clear the override: follow the plan
            </label>
            {!followPlan && (
              <Field label="Admits per minute" name="perMinute" error={errors.perMinute}>
                <input
                  type="number"
                  inputMode="numeric"
                  min={RATE_OVERRIDE_BOUNDS.min}
                  max={RATE_OVERRIDE_BOUNDS.max}
                  step={1}
                  value={rate}
                  onChange={(e) => setRate(e.target.value)}
                />
              </Field>
            )}
            {!followPlan && plan !== null && Number.isFinite(rateNumber) && rateNumber > plan * 2 && (
              <p className="wr-warning" data-testid="wr-rate-warning">
                That is {(rateNumber / plan).toFixed(1)}× the plan: the store will see more shoppers than it was sized for.
              </p>
            )}
          </>
        )}
        <ReasonField
          label={kind === 'pause' ? 'Why pause? (goes to the audit log)' : 'Reason (goes to the audit log)'}
          value={reason}
          onChange={setReason}
          error={errors.reason}
        />
        {kind === 'pause' && (
          <Field
            label="Note for the public summary (optional)"
            name="publicNote"
            error={errors.publicNote}
            hint="The published summary shows this instead of the reason, e.g. “Paused while the payment provider recovered”."
          >
            <input value={publicNote} onChange={(e) => setPublicNote(e.target.value)} maxLength={300} data-testid="wr-public-note" />
          </Field>
        )}
        <ConfirmActions
          error={errors.form}
          pending={pending}
          onClose={onClose}
          confirm={{
            label:
              kind === 'pause'
                ? 'Pause admissions'
                : kind === 'resume'
                  ? 'Resume admissions'
                  : followPlan
                    ? 'Follow the plan'
                    : 'Set the rate',
            className: kind === 'pause' ? 'wr-button-stop' : 'wr-button-go',
            testId: 'wr-confirm',
          }}
        />
      </form>
    </ModalDialog>
  );
}
