// The confirmations of the tier controls: roll a tier forward, issue its access codes, pause or resume its queue.
import { useState, type FormEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import { fieldErrors } from '@onsale/shared/users/schema';
import { ACCESS_CODES_MAX, accessCodesSchema, pauseQueueSchema, resumeQueueSchema, tierRollSchema } from '@onsale/shared/warroom/schema';
import { useTRPC } from '../../../trpc';
import { ConfirmActions, errorsOf, ModalDialog, ReasonField } from '../warroom/dialog';
import { downloadText } from '../download';
import { Field } from '../Field';
import { formatCount, formatDateTime } from '../format';
import type { TierPanelRow, TierQueue, TierRow } from './tier-rows';

export function RollDialog({
  eventId,
  eventName,
  tier,
  onClose,
  onDone,
}: {
  eventId: string;
  eventName: string;
  tier: TierRow;
  onClose: () => void;
  onDone: () => void;
}) {
  const trpc = useTRPC();
  const [reason, setReason] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const roll = useMutation(trpc.tiers.roll.mutationOptions({ onSuccess: onDone, onError: (e) => setErrors(errorsOf(e)) }));

  function submit(e: FormEvent) {
    e.preventDefault();
    const parsed = tierRollSchema.safeParse({ eventId, tier: tier.code, reason });
    if (!parsed.success) return setErrors(fieldErrors(parsed.error));
    roll.mutate(parsed.data);
  }

  return (
    <ModalDialog testId="tier-dialog-roll" title={`Roll ${tier.name} forward now`} onClose={onClose}>
      <form onSubmit={submit} noValidate>
        <p>
          The {formatCount(tier.available)} unsold seats of <strong>{tier.name}</strong> ({tier.code}) move to{' '}
          <strong>{tier.rollsInto}</strong> now, in one step, instead of{' '}
          {tier.rollsForwardAt ? `at ${formatDateTime(tier.rollsForwardAt)}` : 'at its roll time'}; the waitlist of {eventName} hears of
          them.
          {tier.held > 0 &&
            ` The ${formatCount(tier.held)} seats held now stay with their holds; if they come back, the next roll moves them.`}{' '}
          The {tier.name} presale closes to new fans.
        </p>
        <ReasonField label="Reason (goes to the audit log)" value={reason} onChange={setReason} error={errors.reason} />
        <ConfirmActions
          error={errors.form ?? errors.tier}
          pending={roll.isPending}
          onClose={onClose}
          confirm={{ label: 'Roll forward now', className: 'wr-button-stop', testId: 'tier-confirm-roll' }}
        />
      </form>
    </ModalDialog>
  );
}

export function CodesDialog({ eventId, tier, onClose }: { eventId: string; tier: TierRow; onClose: () => void }) {
  const trpc = useTRPC();
  const [count, setCount] = useState('10');
  const [accountId, setAccountId] = useState('');
  const [validUntil, setValidUntil] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const issue = useMutation(
    trpc.tiers.issueCodes.mutationOptions({ onSuccess: () => setErrors({}), onError: (e) => setErrors(errorsOf(e)) }),
  );
  const issued = issue.data;

  function submit(e: FormEvent) {
    e.preventDefault();
    const until = validUntil.trim() === '' ? undefined : new Date(validUntil);
    const parsed = accessCodesSchema.safeParse({
      eventId,
      tier: tier.code,
      count: count.trim() === '' ? Number.NaN : Number(count),
      ...(accountId.trim() === '' ? {} : { accountId: accountId.trim() }),
      ...(until === undefined ? {} : { validUntil: Number.isNaN(until.getTime()) ? validUntil : until.toISOString() }),
    });
    if (!parsed.success) return setErrors(fieldErrors(parsed.error));
    issue.mutate(parsed.data);
  }

  return (
    <ModalDialog testId="tier-dialog-codes" title={`Access codes for ${tier.name}`} onClose={onClose}>
      {issued ? (
        <>
          <p role="status" data-testid="codes-issued">
            {formatCount(issued.codes.length)} code{issued.codes.length === 1 ? '' : 's'} for {tier.code}, valid until{' '}
            {formatDateTime(issued.expiresAt)}. They are shown this once (the platform keeps no list): download or copy them now. Each works
            for one account.
          </p>
          <textarea className="codes-list mono" readOnly rows={6} value={issued.codes.join('\n')} data-testid="codes-list" />
          <div className="wr-dialog-actions">
            <button
              type="button"
              className="wr-button"
              onClick={() => downloadText(`access-codes-${tier.code}.csv`, `code\n${issued.codes.join('\n')}\n`, 'text/csv')}
              data-testid="codes-download"
            >
              Download CSV
            </button>
            <button type="button" className="wr-button wr-button-go" onClick={onClose}>
              Done
            </button>
          </div>
        </>
      ) : (
        <form onSubmit={submit} noValidate>
          <p>
            Signed codes for the <strong>{tier.name}</strong> presale queue, checked without the platform&apos;s database. Each is
            single-account: bound to the account given, or else to the first account that joins with it. Issuing is audited (how many, for
            whom, until when; not the codes).
          </p>
          <Field
            label="How many"
            name="count"
            error={errors.count}
            hint={`At most ${formatCount(ACCESS_CODES_MAX)}; 1 when bound to an account.`}
          >
            <input
              type="number"
              inputMode="numeric"
              min={1}
              max={ACCESS_CODES_MAX}
              value={count}
              onChange={(e) => setCount(e.target.value)}
            />
          </Field>
          <Field label="For account (optional)" name="accountId" error={errors.accountId} hint="Empty: the first account to use each code.">
            <input value={accountId} onChange={(e) => setAccountId(e.target.value)} />
          </Field>
          <Field
            label="Valid until (optional)"
            name="validUntil"
            error={errors.validUntil}
            hint={`Empty: when the tier closes${tier.closesAt ? ` (${formatDateTime(tier.closesAt)})` : ''}.`}
          >
            <input type="datetime-local" value={validUntil} onChange={(e) => setValidUntil(e.target.value)} />
          </Field>
          <ConfirmActions
            error={errors.form ?? errors.tier}
            pending={issue.isPending}
            onClose={onClose}
            confirm={{ label: 'Issue codes', className: 'wr-button-go', testId: 'tier-confirm-codes' }}
          />
        </form>
      )}
    </ModalDialog>
  );
}

/** Pause or resume one presale tier's queue: says what happens, asks for a reason (audited) and an explicit confirmation. */
export function QueueDialog({
  kind,
  eventId,
  tier,
  queue,
  onClose,
  onDone,
}: {
  kind: 'pause' | 'resume';
  eventId: string;
  tier: TierPanelRow;
  queue: TierQueue;
  onClose: () => void;
  onDone: () => void;
}) {
  const trpc = useTRPC();
  const [reason, setReason] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const done = { onSuccess: onDone, onError: (e: unknown) => setErrors(errorsOf(e)) };
  const pause = useMutation(trpc.warRoom.pause.mutationOptions(done));
  const resume = useMutation(trpc.warRoom.resume.mutationOptions(done));
  const pending = pause.isPending || resume.isPending;

  function submit(e: FormEvent) {
    e.preventDefault();
    const input = { eventId, tier: tier.code, reason };
    if (kind === 'pause') {
      const parsed = pauseQueueSchema.safeParse(input);
      if (!parsed.success) return setErrors(fieldErrors(parsed.error));
      pause.mutate(parsed.data);
    } else {
      const parsed = resumeQueueSchema.safeParse(input);
      if (!parsed.success) return setErrors(fieldErrors(parsed.error));
      resume.mutate(parsed.data);
    }
  }

  return (
    <ModalDialog
      testId={`tier-dialog-${kind}`}
      title={kind === 'pause' ? `Pause the ${tier.name} queue` : `Resume the ${tier.name} queue`}
      onClose={onClose}
    >
      <form onSubmit={submit} noValidate>
        <p>
          {kind === 'pause' ? (
            <>
              Nobody new is admitted from the <strong>{tier.name}</strong> ({tier.code}) presale queue until someone resumes it. Its{' '}
              {formatCount(queue.waiting)} fans waiting keep their places and read <strong>PAUSED</strong>; fans already admitted can still
              buy. The event&apos;s other queues (the general sale and the other presales) keep admitting.
            </>
          ) : (
            <>
              Admissions from the <strong>{tier.name}</strong> ({tier.code}) presale queue start again ({formatCount(queue.waiting)} fans
              waiting). Paused by {queue.pausedBy}: “{queue.pausedReason}”.
            </>
          )}
        </p>
        <ReasonField
          label={kind === 'pause' ? 'Why pause? (goes to the audit log)' : 'Reason (goes to the audit log)'}
          value={reason}
          onChange={setReason}
          error={errors.reason}
        />
        <ConfirmActions
          error={errors.form ?? errors.tier}
          pending={pending}
          onClose={onClose}
          confirm={{
            label: kind === 'pause' ? `Pause ${tier.code}` : `Resume ${tier.code}`,
            className: kind === 'pause' ? 'wr-button-stop' : 'wr-button-go',
            testId: 'tier-confirm-queue',
          }}
        />
      </form>
    </ModalDialog>
  );
}
