import { useState, type ChangeEvent } from 'react';
import { DEFAULT_LOOK_COLORS, MAX_LOGO_CHARS } from '@onsale/shared/sale-setup/schema';
import { DEFAULT_QUEUE_COPY_BY_LANGUAGE, QUEUE_STATES } from '@onsale/shared/queue/copy';
import { FanPagePreview, type FanLook, type QueueState } from '@onsale/fan/preview';
import { Field } from './Field';
import { errorAt, type EventDraft } from './event-draft';
import type { LookDraft } from './look-draft';
import './look-editor.css';

const COLOR_LABELS: { key: 'brand' | 'brandText' | 'background' | 'text'; label: string; hint: string }[] = [
  { key: 'brand', label: 'Brand colour', hint: 'Header and buttons.' },
  { key: 'brandText', label: 'Text on the brand colour', hint: 'Must be readable on it (4.5:1).' },
  { key: 'background', label: 'Page background', hint: 'Behind the cards.' },
  { key: 'text', label: 'Text on the background', hint: 'Must be readable on it (4.5:1).' },
];
const LANGUAGE_LABELS = { en: 'English', es: 'Spanish' } as const;
const STATE_LABELS: Record<QueueState, string> = {
  WAITING: 'Waiting',
  PAUSED: 'Paused',
  ADMITTED: 'Admitted',
  LAST_CHANCE: 'Last chance',
  SOLD_OUT: 'Sold out',
};

export interface LookEditorProps {
  draft: EventDraft;
  onChange: (look: LookDraft) => void;
  errors: Record<string, string>;
  disabled: boolean;
}

/**
 * The fans' page look: logo, colours, the words per state in Spanish (English is the queue messages above), and a
 * preview of the page in each state and language, rendered by the fans' page's own components.
 */
export function LookEditor({ draft, onChange, errors, disabled }: LookEditorProps) {
  const look = draft.look;
  const set = (patch: Partial<LookDraft>) => onChange({ ...look, ...patch });
  const [state, setState] = useState<QueueState>('WAITING');
  const [language, setLanguage] = useState<'en' | 'es'>('en');
  const [uploadError, setUploadError] = useState<string | null>(null);
  const err = (path: string) => errorAt(errors, path);

  function upload(e: ChangeEvent<HTMLInputElement>) {
    const file = e.target.files?.[0];
    if (!file) return;
    setUploadError(null);
    const reader = new FileReader();
    reader.onload = () => {
      const url = typeof reader.result === 'string' ? reader.result : '';
      if (url.length > MAX_LOGO_CHARS)
        setUploadError(
          `This image is too large (${Math.round(file.size / 1024)} KB): use one under ${Math.floor((MAX_LOGO_CHARS * 3) / 4 / 1024)} KB, or an https:// address.`,
        );
      else set({ logoUrl: url });
    };
    reader.readAsDataURL(file);
  }

  const previewLook: FanLook = {
    ...(look.logoUrl ? { logoUrl: look.logoUrl } : {}),
    ...(look.logoAlt ? { logoAlt: look.logoAlt } : {}),
    colors: Object.fromEntries(COLOR_LABELS.filter(({ key }) => /^#[0-9a-fA-F]{6}$/.test(look[key])).map(({ key }) => [key, look[key]])),
  };
  const words = language === 'en' ? draft.queueCopy[state] : look.copyEs[state];
  const message = words.trim() || DEFAULT_QUEUE_COPY_BY_LANGUAGE[language][state];
  const event = {
    name: draft.name || 'Your event',
    venueName: draft.venueName || 'Venue',
    startsAt: draft.startsAtIso ?? (draft.startsAt ? new Date(draft.startsAt).toISOString() : new Date().toISOString()),
    onsaleAt: draft.onsaleAtIso ?? new Date().toISOString(),
    fairnessMode: draft.fairnessMode,
  };
  const validStart = !Number.isNaN(Date.parse(event.startsAt));

  return (
    <fieldset className="card look-editor" data-testid="look-editor">
      <legend>Fans&rsquo; page: logo, colours and words</legend>
      <div className="look-split">
        <div>
          <Field
            label="Logo address"
            name="look.logoUrl"
            error={err('look.logoUrl') ?? uploadError ?? undefined}
            hint="An https:// address, or upload an image."
          >
            <input
              name="look.logoUrl"
              value={look.logoUrl.startsWith('data:') ? '(uploaded image)' : look.logoUrl}
              disabled={disabled || look.logoUrl.startsWith('data:')}
              onChange={(e) => set({ logoUrl: e.target.value })}
            />
          </Field>
          <div className="look-upload">
            <label className="secondary-like">
              Upload a logo
              <input
                type="file"
                accept="image/png,image/jpeg,image/gif,image/webp,image/svg+xml"
                onChange={upload}
                disabled={disabled}
                data-testid="look-logo-file"
              />
            </label>
            {look.logoUrl && !disabled && (
              <button type="button" className="link-like" onClick={() => set({ logoUrl: '' })}>
                Remove the logo
              </button>
            )}
          </div>
          <Field
            label="Logo description"
            name="look.logoAlt"
            error={err('look.logoAlt')}
            hint="What a screen reader says: usually your name."
          >
            <input name="look.logoAlt" value={look.logoAlt} disabled={disabled} onChange={(e) => set({ logoAlt: e.target.value })} />
          </Field>
          <div className="look-colors">
            {COLOR_LABELS.map(({ key, label, hint }) => (
              <Field key={key} label={label} name={`look.colors.${key}`} error={err(`look.colors.${key}`)} hint={hint}>
                <input
                  type="color"
                  name={`look.colors.${key}`}
                  value={look[key] || DEFAULT_LOOK_COLORS[key]}
                  disabled={disabled}
                  onChange={(e) => set({ [key]: e.target.value })}
                />
              </Field>
            ))}
          </div>
          <details>
            <summary>Words per state in Spanish (optional)</summary>
            <p className="muted">
              Fans whose browser asks for Spanish read these; left empty, a state keeps the default Spanish words. English words are the
              queue messages below.
            </p>
            {QUEUE_STATES.map((s) => (
              <Field key={s} label={`${STATE_LABELS[s]} (Spanish)`} name={`look.copy.es.${s}`} error={err(`look.copy.es.${s}`)}>
                <input
                  name={`look.copy.es.${s}`}
                  value={look.copyEs[s]}
                  disabled={disabled}
                  placeholder={DEFAULT_QUEUE_COPY_BY_LANGUAGE.es[s]}
                  onChange={(e) => set({ copyEs: { ...look.copyEs, [s]: e.target.value } })}
                />
              </Field>
            ))}
          </details>
        </div>
        <div className="look-preview-col">
          <div className="look-preview-controls" role="group" aria-label="Preview">
            <div className="segmented" role="radiogroup" aria-label="State">
              {QUEUE_STATES.map((s) => (
                <button
                  type="button"
                  key={s}
                  role="radio"
                  aria-checked={state === s}
                  className={state === s ? 'on' : ''}
                  onClick={() => setState(s)}
                  data-testid={`preview-state-${s}`}
                >
                  {STATE_LABELS[s]}
                </button>
              ))}
            </div>
            <div className="segmented" role="radiogroup" aria-label="Language">
              {(['en', 'es'] as const).map((l) => (
                <button
                  type="button"
                  key={l}
                  role="radio"
                  aria-checked={language === l}
                  className={language === l ? 'on' : ''}
                  onClick={() => setLanguage(l)}
                  data-testid={`preview-language-${l}`}
                >
                  {LANGUAGE_LABELS[l]}
                </button>
              ))}
            </div>
          </div>
          <div className="look-preview" data-testid="look-preview">
            {validStart && <FanPagePreview event={event} look={previewLook} state={state} language={language} message={message} />}
          </div>
        </div>
      </div>
    </fieldset>
  );
}
