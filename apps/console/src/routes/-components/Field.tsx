import { cloneElement, type ReactElement } from 'react';
import { sentence } from '@onsale/shared/words';

/**
 * A labelled form control with its error beneath it, at the field (`data-testid="error-<name>"`), written as a
 * sentence. The control is marked invalid and described by the error, so screen readers say it too.
 */
export function Field({
  label,
  name,
  error,
  hint,
  children,
}: {
  label: string;
  name: string;
  error?: string | undefined;
  hint?: string | undefined;
  children: ReactElement<Record<string, unknown>>;
}) {
  const errorId = `${name}-error`;
  const control = cloneElement(children, {
    id: name,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': error ? errorId : undefined,
  });
  return (
    <div className={`field${error ? ' invalid' : ''}`}>
      <label htmlFor={name}>{label}</label>
      {control}
      {hint && !error && <small className="muted">{hint}</small>}
      {error && (
        <small className="field-error" id={errorId} data-testid={`error-${name}`}>
          {sentence(error)}
        </small>
      )}
    </div>
  );
}
