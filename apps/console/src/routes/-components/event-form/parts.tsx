// What every part of the event form shares: the draft, a setter, the errors at each path, and the change rules'
// locks. A part (a fieldset of the form) takes `EventFormParts` and renders its fields; a new part (ticket
// settings, say) is a new file here and one line in EventForm.tsx.
import type { EventSetting } from '@onsale/shared/sale-setup/schema';
import { Field } from '../Field';
import { errorAt, type EventDraft } from '../event-draft';

export interface EventFormParts {
  draft: EventDraft;
  set: <K extends keyof EventDraft>(key: K, value: EventDraft[K]) => void;
  errors: Record<string, string>;
  /** The first message at `path` or under it. */
  err: (path: string) => string | undefined;
  /** Why the change rules lock a setting now, or undefined. */
  lockOf: (setting: EventSetting) => string | undefined;
  disabled: (setting: EventSetting) => boolean;
  /** The lock's reason when locked, else the hint. */
  hintOf: (setting: EventSetting, hint?: string) => string | undefined;
}

export function eventFormParts(
  draft: EventDraft,
  onChange: (draft: EventDraft) => void,
  errors: Record<string, string>,
  locked: Partial<Record<EventSetting, string>>,
  readOnly: boolean,
): EventFormParts {
  const lockOf = (setting: EventSetting) => locked[setting];
  return {
    draft,
    set: (key, value) => onChange({ ...draft, [key]: value }),
    errors,
    err: (path) => errorAt(errors, path),
    lockOf,
    disabled: (setting) => readOnly || lockOf(setting) !== undefined,
    hintOf: (setting, hint) => lockOf(setting) ?? hint,
  };
}

/** One text or number input bound to a string field of the draft, its error and hint at the field. */
export function DraftInput({
  parts,
  setting,
  label,
  draftKey,
  hint,
  type,
  step,
  path,
  min,
  error,
}: {
  parts: EventFormParts;
  setting: EventSetting;
  label: string;
  draftKey: keyof EventDraft;
  hint?: string;
  type?: string;
  step?: string;
  /** The file path the errors use; the setting's name when the same. */
  path?: string;
  min?: string;
  /** An error found here rather than by the schema (shown when the schema has none). */
  error?: string;
}) {
  const name = path ?? setting;
  return (
    <Field label={label} name={name} error={parts.err(name) ?? error} hint={parts.hintOf(setting, hint)}>
      <input
        name={name}
        type={type ?? 'text'}
        step={step}
        min={min}
        inputMode={type === 'number' ? 'decimal' : undefined}
        value={parts.draft[draftKey] as string}
        disabled={parts.disabled(setting)}
        onChange={(e) => parts.set(draftKey, e.target.value)}
      />
    </Field>
  );
}
