import { useState, type FormEvent, type ReactNode } from 'react';
import { useMutation } from '@tanstack/react-query';
import { pauseQueueSchema, rateOverrideSchema, RATE_OVERRIDE_BOUNDS, resumeQueueSchema } from '@onsale/shared/warroom/schema';
import { fieldErrors } from '@onsale/shared/users/schema';
import { useTRPC } from '../../../trpc';
import { ConfirmActions, errorsOf, ModalDialog, ReasonField } from './dialog';
import { Field } from '../Field';
import { formatCount } from '../format';
import type { WarRoomSnapshot } from './parts';

type Kind = 'pause' | 'resume' | 'rate';

/**
 * Pause, resume and the rate override. Each opens a dialog that says what will happen, asks for a reason (it goes
 * to the audit log with the signed-in e-mail) and needs an explicit confirmation. The inputs are checked with the
 * schemas the BFF enforces; the BFF checks the role again.
 */
export function Controls({ snapshot }: { snapshot: WarRoomSnapshot }) {
  const [open, setOpen] = useState<Kind | null>(null);
  const paused = snapshot.queue.paused;
  return (
    <section className="wr-controls" aria-label="Queue controls" data-testid="wr-controls">
      {paused ? (
        <button type="button" className="wr-button wr-button-go" onClick={() => setOpen('resume')} data-testid="wr-resume">
          Resume admissions…
        </button>
      ) : (
        <button type="button" className="wr-button wr-button-stop" onClick={() => setOpen('pause')} data-testid="wr-pause">
          Pause admissions…
        </button>
      )}
      <button type="button" className="wr-button" onClick={() => setOpen('rate')} data-testid="wr-rate">
        Rate override…
      </button>
      <span className="muted wr-controls-note">
        Rate: {snapshot.queue.rateOverridePerMin === null ? 'following the plan' : `${formatCount(snapshot.queue.rateOverridePerMin)}/min set by an operator`}
      </span>
      {open && <ControlDialog kind={open} snapshot={snapshot} onClose={() => setOpen(null)} />}
    </section>
  );
}

function ControlDialog({ kind, snapshot, onClose }: { kind: Kind; snapshot: WarRoomSnapshot; onClose: () => void }) {
  const trpc = useTRPC();
  const [reason, setReason] = useState('');
  const [publicNote, setPublicNote] = useState('');
  const [rate, setRate] = useState(snapshot.queue.rateOverridePerMin === null ? '' : String(snapshot.queue.rateOverridePerMin));
  const [followPlan, setFollowPlan] = useState(false);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const done = { onSuccess: onClose, onError: (e: unknown) => setErrors(errorsOf(e)) };
  const pause = useMutation(trpc.warRoom.pause.mutationOptions(done));
  const resume = useMutation(trpc.warRoom.resume.mutationOptions(done));
  const setRateOverride = useMutation(trpc.warRoom.setRate.mutationOptions(done));
  const pending = pause.isPending || resume.isPending || setRateOverride.isPending;

  const plan = snapshot.admission.plan?.admitsPerMinute ?? null;
  const rateNumber = rate.trim() === '' ? Number.NaN : Number(rate);

  function submit(e: FormEvent) {
    e.preventDefault();
    const eventId = snapshot.eventId;
    if (kind === 'pause') {
      const parsed = pauseQueueSchema.safeParse({ eventId, reason, publicNote });
      if (!parsed.success) return setErrors(fieldErrors(parsed.error));
      pause.mutate(parsed.data);
    } else if (kind === 'resume') {
      const parsed = resumeQueueSchema.safeParse({ eventId, reason });
      if (!parsed.success) return setErrors(fieldErrors(parsed.error));
      resume.mutate(parsed.data);
    } else {
      const parsed = rateOverrideSchema.safeParse({ eventId, reason, perMinute: followPlan ? null : rate.trim() === '' ? undefined : rateNumber });
      if (!parsed.success) return setErrors(fieldErrors(parsed.error));
      setRateOverride.mutate(parsed.data);
    }
  }

  const title = { pause: 'Pause admissions', resume: 'Resume admissions', rate: 'Override the admission rate' }[kind];
  let what: ReactNode;
  if (kind === 'pause')
    what = (
      <>
        Nobody new is admitted to <strong>{snapshot.name}</strong> until someone resumes. The {formatCount(snapshot.queue.waiting)} fans waiting keep their places and read{' '}
        <strong>PAUSED</strong>. Fans already admitted can still buy.
        {snapshot.tiers.length > 0 && (
          <span data-testid="wr-pause-all-queues">
            {' '}
            This pauses every queue of the event: the general sale and each presale ({snapshot.tiers.filter((t) => !t.general).map((t) => t.code).join(', ')}); to pause one presale
            only, use its Pause button in the tier table.
          </span>
        )}
      </>
    );
  else if (kind === 'resume')
    what = (
      <>
        Admissions to <strong>{snapshot.name}</strong>{snapshot.tiers.length > 0 ? ' (every queue: the general sale and each presale)' : ''} start again at{' '}
        {snapshot.queue.rateOverridePerMin === null ? `the plan's rate (${plan === null ? 'no plan' : `${formatCount(Math.round(plan))}/min`})` : `the operator's ${formatCount(snapshot.queue.rateOverridePerMin)}/min`}. Paused by{' '}
        {snapshot.queue.pausedBy}: “{snapshot.queue.pausedReason}”.
      </>
    );
  else
    what = (
      <>
        The plan admits {plan === null ? '—' : `${formatCount(Math.round(plan))}/min`}. An override replaces it (whole admits per minute, {RATE_OVERRIDE_BOUNDS.min} to{' '}
        {formatCount(RATE_OVERRIDE_BOUNDS.max)}); the controller still slows it when checkouts fail and never admits past the plausible seats.
      </>
    );

  return (
    <ModalDialog testId={`wr-dialog-${kind}`} title={title} onClose={onClose}>
      <form onSubmit={submit} noValidate>
        <p>{what}</p>
        {kind === 'rate' && (
          <>
            <label className="wr-check">
              <input type="checkbox" checked={followPlan} onChange={(e) => setFollowPlan(e.target.checked)} data-testid="wr-follow-plan" /> Clear the override: follow the plan
            </label>
            {!followPlan && (
              <Field label="Admits per minute" name="perMinute" error={errors.perMinute}>
                <input type="number" inputMode="numeric" min={RATE_OVERRIDE_BOUNDS.min} max={RATE_OVERRIDE_BOUNDS.max} step={1} value={rate} onChange={(e) => setRate(e.target.value)} />
              </Field>
            )}
            {!followPlan && plan !== null && Number.isFinite(rateNumber) && rateNumber > plan * 2 && (
              <p className="wr-warning" data-testid="wr-rate-warning">
                That is {(rateNumber / plan).toFixed(1)}× the plan: the store will see more shoppers than it was sized for.
              </p>
            )}
          </>
        )}
        <ReasonField label={kind === 'pause' ? 'Why pause? (goes to the audit log)' : 'Reason (goes to the audit log)'} value={reason} onChange={setReason} error={errors.reason} />
        {kind === 'pause' && (
          <Field label="Note for the public summary (optional)" name="publicNote" error={errors.publicNote} hint="The published summary shows this instead of the reason, e.g. “Paused while the payment provider recovered”.">
            <input value={publicNote} onChange={(e) => setPublicNote(e.target.value)} maxLength={300} data-testid="wr-public-note" />
          </Field>
        )}
        <ConfirmActions
          error={errors.form}
          pending={pending}
          onClose={onClose}
          confirm={{
            label: kind === 'pause' ? 'Pause admissions' : kind === 'resume' ? 'Resume admissions' : followPlan ? 'Follow the plan' : 'Set the rate',
            className: kind === 'pause' ? 'wr-button-stop' : 'wr-button-go',
            testId: 'wr-confirm',
          }}
        />
      </form>
    </ModalDialog>
  );
}
