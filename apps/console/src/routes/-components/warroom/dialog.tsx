import { useEffect, useRef, type ReactNode } from 'react';
import { fieldErrorsOf, messageOf } from '../../../trpc';
import { Field } from '../Field';

/** A mutation's refusal as form errors: the fields it names, else one form-level message. */
export const errorsOf = (e: unknown): Record<string, string> =>
  Object.keys(fieldErrorsOf(e)).length ? fieldErrorsOf(e) : { form: messageOf(e, { change: true }) };

/** A modal <dialog>, open while mounted (Escape calls `onClose`). */
export function ModalDialog({
  testId,
  title,
  onClose,
  children,
}: {
  testId: string;
  title: string;
  onClose: () => void;
  children: ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);
  return (
    <dialog ref={ref} className="wr-dialog" onCancel={onClose} data-testid={testId} aria-labelledby={`${testId}-title`}>
      <h2 id={`${testId}-title`}>{title}</h2>
      {children}
    </dialog>
  );
}

/** The reason an operator gives for an action (it goes to the audit log). */
export function ReasonField({
  label,
  value,
  onChange,
  error,
}: {
  label: string;
  value: string;
  onChange: (v: string) => void;
  error?: string;
}) {
  return (
    <Field label={label} name="reason" error={error}>
      <textarea rows={2} value={value} onChange={(e) => onChange(e.target.value)} maxLength={600} />
    </Field>
  );
}

/** A confirmation dialog's foot: the form-level error, Cancel, and the confirming submit button. */
export function ConfirmActions({
  error,
  pending,
  onClose,
  confirm,
}: {
  error?: string;
  pending: boolean;
  onClose: () => void;
  confirm: { label: string; className: string; testId: string };
}) {
  return (
    <>
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      <div className="wr-dialog-actions">
        <button type="button" className="wr-button" onClick={onClose} disabled={pending}>
          Cancel
        </button>
        <button type="submit" className={`wr-button ${confirm.className}`} disabled={pending} data-testid={confirm.testId}>
          {confirm.label}
        </button>
      </div>
    </>
  );
}
