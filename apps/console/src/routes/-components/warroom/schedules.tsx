import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { queueScheduleInputSchema, RATE_OVERRIDE_BOUNDS } from '@onsale/shared/warroom/schema';
import { fieldErrors } from '@onsale/shared/users/schema';
import { formatInstant, instantOfWallTime, wallTimeOf } from '@onsale/shared/words';
import type { RouterOutputs } from '@onsale/bff/root';
import { messageOf, useTRPC } from '../../../trpc';
import { ErrorSummary } from '../ErrorSummary';
import { Field } from '../Field';
import { formatCount } from '../format';
import { ReasonAction } from '../ReasonAction';
import { When } from '../When';
import { ConfirmActions, errorsOf, ModalDialog, ReasonField } from './dialog';

type Schedule = RouterOutputs['warRoom']['schedules'][number];
type Action = Schedule['action'];

const ACTION_LABEL: Record<Action, string> = { PAUSE: 'Pause admissions', RESUME: 'Resume admissions', RATE: 'Change the admission rate' };

/** What a scheduled control does, in words. */
export function scheduleWords(s: Pick<Schedule, 'action' | 'perMinute' | 'tier'>): string {
  const what =
    s.action === 'PAUSE'
      ? 'Pause admissions'
      : s.action === 'RESUME'
        ? 'Resume admissions'
        : s.perMinute === null
          ? 'Follow the plan’s rate again'
          : `Set the rate to ${formatCount(s.perMinute)} a minute`;
  return s.tier ? `${what} (presale ${s.tier})` : what;
}

const FIELD_LABELS = { action: 'What to do', tier: 'Which queue', runAt: 'When', perMinute: 'Admits per minute', reason: 'Reason' };

/**
 * Controls set for a time: a pause, a resume or a rate change that a worker job applies at its time through the
 * same functions as the buttons above, audited with who scheduled it. Everyone who sees the war room sees the list;
 * admins and operators schedule and cancel (the BFF checks the role again). Times are the venue's.
 */
export function ScheduledControls({
  eventId,
  timeZone,
  canControl,
  offline,
  presales = [],
}: {
  eventId: string;
  timeZone: string;
  canControl: boolean;
  offline: boolean;
  /** The event's presale tiers (not the general sale): a control may be set for one presale's queue. */
  presales?: { code: string; name: string }[];
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const schedules = useQuery(trpc.warRoom.schedules.queryOptions({ eventId }, { refetchInterval: 5_000 }));
  const cancel = useMutation(trpc.warRoom.cancelSchedule.mutationOptions());
  const [open, setOpen] = useState(false);
  /** The schedule just made: confirmed once the server's list has it. */
  const [made, setMade] = useState<Schedule | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.warRoom.schedules.queryKey({ eventId }) });
  const list = schedules.data ?? [];
  const pending = list.filter((s) => s.status === 'PENDING');
  const listed = made ? list.find((s) => s.id === made.id) : undefined;

  return (
    <section className="wr-panel wr-talk" aria-labelledby="wr-schedules-title" data-testid="wr-schedules" data-pending={pending.length}>
      <div className="wr-talk-head">
        <h2 id="wr-schedules-title">Scheduled controls</h2>
        {canControl && (
          <button
            type="button"
            className="wr-button"
            onClick={() => (setOpen(true), setMade(null))}
            disabled={offline}
            data-testid="wr-schedule-open"
          >
            Schedule a control…
          </button>
        )}
      </div>
      <p className="muted">
        A pause, a resume or a rate change set for a time in the venue’s zone ({timeZone}); it runs then, as if its scheduler pressed the
        button, and goes to the audit log.{canControl ? '' : ' Admins and operators schedule controls.'}
      </p>
      {made && (
        <p
          className={`wr-outcome ${listed ? 'wr-outcome-ok' : 'wr-outcome-wait'}`}
          role="status"
          data-testid="wr-schedule-outcome"
          data-status={listed ? 'confirmed' : 'sent'}
        >
          {listed
            ? `Scheduled, and listed by the server: ${scheduleWords(listed).toLowerCase()} at ${formatInstant(listed.runAt, timeZone)}.`
            : 'Sent. Waiting for the server’s list to show it…'}
        </p>
      )}
      {schedules.error && (
        <p className="form-error" role="alert">
          Could not read the scheduled controls. {messageOf(schedules.error)}
        </p>
      )}
      {schedules.data && list.length === 0 && (
        <p className="muted" data-testid="wr-schedules-empty">
          Nothing scheduled.
        </p>
      )}
      {list.length > 0 && (
        <table className="grid wr-stack" data-testid="wr-schedule-table">
          <thead>
            <tr>
              <th>When</th>
              <th>What</th>
              <th>Why</th>
              <th>State</th>
              {canControl && <th />}
            </tr>
          </thead>
          <tbody>
            {list.map((s) => (
              <tr key={s.id} data-testid="wr-schedule-row" data-id={s.id} data-status={s.status}>
                <td data-label="When">
                  <When iso={s.runAt} zone={timeZone} />
                </td>
                <td data-label="What" data-testid="wr-schedule-what">
                  {scheduleWords(s)}
                </td>
                <td data-label="Why">
                  {s.reason}
                  <br />
                  <small className="muted">by {s.createdBy}</small>
                </td>
                <td data-label="State" data-testid="wr-schedule-state">
                  <ScheduleState s={s} timeZone={timeZone} />
                </td>
                {canControl && (
                  <td>
                    {s.status === 'PENDING' && !offline && (
                      <ReasonAction
                        label="Cancel"
                        danger
                        what={`${scheduleWords(s)} at ${formatInstant(s.runAt, timeZone)} will not run.`}
                        testId="wr-schedule-cancel"
                        run={async (reason) => {
                          await cancel.mutateAsync({ eventId, id: s.id, reason });
                          await refresh();
                          return 'Cancelled.';
                        }}
                      />
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {open && !offline && (
        <ScheduleDialog
          eventId={eventId}
          timeZone={timeZone}
          presales={presales}
          onClose={() => setOpen(false)}
          onScheduled={(s) => {
            setMade(s);
            setOpen(false);
            void refresh();
          }}
        />
      )}
    </section>
  );
}

function ScheduleState({ s, timeZone }: { s: Schedule; timeZone: string }) {
  if (s.status === 'PENDING') return <span className="pill pill-warn">Waiting to run</span>;
  if (s.status === 'DONE')
    return (
      <span>
        <span className="pill pill-ok">Ran</span> <When iso={s.ranAt} zone={timeZone} date={false} />
      </span>
    );
  if (s.status === 'CANCELLED')
    return (
      <span>
        <span className="pill">Cancelled</span> <small className="muted">by {s.cancelledBy}</small>
      </span>
    );
  return (
    <span>
      <span className="pill pill-alarm">Did not run</span> <small>{s.result}</small>
    </span>
  );
}

function ScheduleDialog({
  eventId,
  timeZone,
  presales,
  onClose,
  onScheduled,
}: {
  eventId: string;
  timeZone: string;
  presales: { code: string; name: string }[];
  onClose: () => void;
  onScheduled: (s: Schedule) => void;
}) {
  const trpc = useTRPC();
  const [action, setAction] = useState<Action>('PAUSE');
  const [tier, setTier] = useState('');
  // Ten minutes from now on the venue's clock, to the minute: a starting point the operator changes.
  const [runAt, setRunAt] = useState(() =>
    wallTimeOf(new Date(Math.ceil((Date.now() + 10 * 60_000) / 60_000) * 60_000).toISOString(), timeZone),
  );
  const [rate, setRate] = useState('');
  const [followPlan, setFollowPlan] = useState(false);
  const [reason, setReason] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const schedule = useMutation(trpc.warRoom.schedule.mutationOptions({ onSuccess: onScheduled, onError: (e) => setErrors(errorsOf(e)) }));

  function submit(e: FormEvent) {
    e.preventDefault();
    const at = instantOfWallTime(runAt, timeZone);
    const input = {
      eventId,
      action,
      runAt: at ?? '',
      reason,
      ...(tier ? { tier } : {}),
      ...(action === 'RATE' ? { perMinute: followPlan ? null : rate.trim() === '' ? undefined : Number(rate) } : {}),
    };
    const parsed = queueScheduleInputSchema.safeParse(input);
    if (!parsed.success || at === null) {
      const fields = parsed.success ? {} : fieldErrors(parsed.error);
      if (at === null) fields.runAt = 'give the date and time it should happen, in the venue’s time';
      return setErrors(fields);
    }
    setErrors({});
    schedule.mutate(parsed.data);
  }

  const { form, ...fieldErrs } = errors;
  return (
    <ModalDialog testId="wr-dialog-schedule" title="Schedule a control" onClose={onClose}>
      <form onSubmit={submit} noValidate>
        <ErrorSummary errors={fieldErrs} labels={FIELD_LABELS} testId="wr-schedule-errors" />
        <Field label="What to do" name="action" error={errors.action}>
          <select value={action} onChange={(e) => setAction(e.target.value as Action)}>
            {(Object.keys(ACTION_LABEL) as Action[]).map((a) => (
              <option key={a} value={a}>
                {ACTION_LABEL[a]}
              </option>
            ))}
          </select>
        </Field>
        {presales.length > 0 && (
          <Field label="Which queue" name="tier" error={errors.tier}>
            <select value={tier} onChange={(e) => setTier(e.target.value)}>
              <option value="">The whole event (a pause or resume: every queue; a rate: the general sale’s)</option>
              {presales.map((t) => (
                <option key={t.code} value={t.code}>
                  Presale {t.code}: {t.name}
                </option>
              ))}
            </select>
          </Field>
        )}
        <Field
          label={`When (venue time, ${timeZone})`}
          name="runAt"
          error={errors.runAt}
          hint="A time still ahead, before the event starts; for a control needed now, use the buttons above."
        >
          <input type="datetime-local" value={runAt} onChange={(e) => setRunAt(e.target.value)} />
        </Field>
        {action === 'RATE' && (
          <>
            <label className="wr-check">
              <input
                type="checkbox"
                checked={followPlan}
                onChange={(e) => setFollowPlan(e.target.checked)}
                data-testid="wr-schedule-follow-plan"
              />{' '}
              Follow the plan’s rate again
            </label>
            {!followPlan && (
              <Field
                label="Admits per minute"
                name="perMinute"
                error={errors.perMinute}
                hint={`Whole admits a minute, ${RATE_OVERRIDE_BOUNDS.min} to ${formatCount(RATE_OVERRIDE_BOUNDS.max)}.`}
              >
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
          </>
        )}
        <ReasonField label="Reason (goes to the audit log)" value={reason} onChange={setReason} error={errors.reason} />
        <ConfirmActions
          error={form}
          pending={schedule.isPending}
          onClose={onClose}
          confirm={{ label: 'Schedule', className: 'wr-button-go', testId: 'wr-schedule-confirm' }}
        />
      </form>
    </ModalDialog>
  );
}
