import { useId, useState, type FormEvent } from 'react';
import { supportReasonSchema } from '@onsale/shared/support/schema';
import { sentence } from '@onsale/shared/words';
import { fieldErrorsOf, messageOf } from '../../trpc';
import { Field } from './Field';

/**
 * An action that needs a reason (it goes to the audit log with the user's e-mail): a button that opens a small
 * form saying what will happen, a reason field and a confirmation. `run` resolves with a sentence of what was done,
 * or rejects with the BFF's refusal, which is shown at the reason (or under the form).
 */
export function ReasonAction({
  label,
  what,
  run,
  testId,
  danger = false,
}: {
  label: string;
  what: string;
  run: (reason: string) => Promise<string>;
  testId: string;
  danger?: boolean;
}) {
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const id = useId().replace(/:/g, '');

  async function submit(e: FormEvent) {
    e.preventDefault();
    const parsed = supportReasonSchema.safeParse(reason);
    if (!parsed.success) return setError(parsed.error.issues[0]?.message ?? 'give a reason');
    setBusy(true);
    setError(null);
    try {
      setDone(await run(parsed.data));
      setOpen(false);
      setReason('');
    } catch (err) {
      const fields = fieldErrorsOf(err);
      setError(Object.values(fields)[0] ?? messageOf(err, { change: true }));
    } finally {
      setBusy(false);
    }
  }

  if (!open)
    return (
      <span className="reason-action">
        <button
          type="button"
          className={`secondary small${danger ? ' danger' : ''}`}
          onClick={() => (setOpen(true), setDone(null))}
          data-testid={testId}
        >
          {label}
        </button>
        {done && (
          <span className="form-ok inline" role="status" data-testid={`${testId}-done`}>
            {done}
          </span>
        )}
      </span>
    );
  return (
    <form className="reason-form" onSubmit={submit} noValidate data-testid={`${testId}-form`}>
      <p className="muted">{what}</p>
      <Field label="Reason (goes to the audit log)" name={`reason-${id}`} error={error ?? undefined}>
        <input value={reason} onChange={(e) => setReason(e.target.value)} autoFocus data-testid={`${testId}-reason`} />
      </Field>
      <div className="page-actions">
        <button type="submit" className={`primary${danger ? ' danger-primary' : ''}`} disabled={busy} data-testid={`${testId}-confirm`}>
          {busy ? 'Working…' : `Confirm: ${label.toLowerCase()}`}
        </button>
        <button type="button" className="secondary" onClick={() => (setOpen(false), setError(null))}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export { sentence };
