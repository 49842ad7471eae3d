import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { FAN_LANGUAGES, QUEUE_STATES, type FanLanguage } from '@onsale/shared/queue/copy';
import { queueCopyEditSchema } from '@onsale/shared/warroom/schema';
import { fieldErrors } from '@onsale/shared/users/schema';
import type { RouterOutputs } from '@onsale/bff/root';
import { domainCodeOf, messageOf, useTRPC } from '../../../trpc';
import { ErrorSummary } from '../ErrorSummary';
import { Field } from '../Field';
import { errorsOf } from './dialog';

type CopyView = RouterOutputs['warRoom']['queueCopy'];
type State = (typeof QUEUE_STATES)[number];
type Drafts = Record<FanLanguage, Record<State, string>>;

const LANGUAGE_NAME: Record<FanLanguage, string> = { en: 'English', es: 'Spanish (Español)' };
const STATE_WORDS: Record<State, string> = {
  WAITING: 'Waiting in line',
  PAUSED: 'Line paused',
  ADMITTED: 'Their turn (let in)',
  LAST_CHANCE: 'Every seat held (last chance)',
  SOLD_OUT: 'Sold out',
};

const fieldId = (lang: FanLanguage, s: State) => `words.${lang}.${s}`;
const draftsOf = (v: CopyView): Drafts =>
  Object.fromEntries(FAN_LANGUAGES.map((l) => [l, Object.fromEntries(QUEUE_STATES.map((s) => [s, v.words[l][s].text]))])) as Drafts;

/** The reason's field is named apart from the controls' dialogs (they may be open at the same time). */
const REASON_FIELD = 'words-reason';
const renameReason = (errors: Record<string, string>) =>
  Object.fromEntries(Object.entries(errors).map(([k, v]) => [k === 'reason' ? REASON_FIELD : k, v]));

/**
 * What waiting fans read in each state, per language, edited live: a save is one more version of the event,
 * audited with the reason, and every store-API instance picks the words up with the watermark, so fans read them
 * on their next poll. Everyone who sees the war room reads them; admins, operators and the event's promoters
 * change them (the BFF checks again). The state fans are in now is marked.
 */
export function QueueWords({
  eventId,
  fanState,
  canEdit,
  offline = false,
}: {
  eventId: string;
  fanState: string;
  canEdit: boolean;
  offline?: boolean;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const copy = useQuery(trpc.warRoom.queueCopy.queryOptions({ eventId }));
  const [lang, setLang] = useState<FanLanguage>('en');
  const [drafts, setDrafts] = useState<Drafts | null>(null);
  const [version, setVersion] = useState(0);
  const [reason, setReason] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [stale, setStale] = useState(false);
  /** The save the server answered: confirmed once the words read back carry its version. */
  const [saved, setSaved] = useState<{ version: number; changed: number } | null>(null);
  const save = useMutation(
    trpc.warRoom.setQueueCopy.mutationOptions({
      onSuccess: (r) => {
        setSaved({ version: r.version, changed: r.changed });
        setDrafts(null);
        setReason('');
        void queryClient.invalidateQueries({ queryKey: trpc.warRoom.queueCopy.queryKey({ eventId }) });
      },
      onError: (e) => {
        setStale(domainCodeOf(e) === 'STALE_EVENT_VERSION');
        const errs = renameReason(errorsOf(e));
        // The version is not a field anyone edits: its refusal is the form's.
        if (errs.version) errs.form = errs.version;
        delete errs.version;
        setErrors(errs);
      },
    }),
  );
  const v = copy.data;
  const editing = drafts !== null;
  const confirmed = saved !== null && v !== undefined && v.version >= saved.version;

  function edit() {
    if (!v) return;
    setDrafts(draftsOf(v));
    setVersion(v.version);
    setErrors({});
    setSaved(null);
    setStale(false);
  }

  async function reload() {
    await queryClient.invalidateQueries({ queryKey: trpc.warRoom.queueCopy.queryKey({ eventId }) });
    const fresh = await queryClient.fetchQuery({ ...trpc.warRoom.queueCopy.queryOptions({ eventId }), staleTime: 0 });
    setDrafts(draftsOf(fresh));
    setVersion(fresh.version);
    setErrors({});
    setStale(false);
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    if (!drafts) return;
    const parsed = queueCopyEditSchema.safeParse({ eventId, expectedVersion: version, words: drafts, reason });
    if (!parsed.success) {
      const errs = renameReason(fieldErrors(parsed.error));
      // A problem in the other language's words: show that language, so its field is on the page.
      const other = FAN_LANGUAGES.find(
        (l) =>
          l !== lang &&
          Object.keys(errs).some((k) => k.startsWith(`words.${l}.`)) &&
          !Object.keys(errs).some((k) => k.startsWith(`words.${lang}.`)),
      );
      if (other) setLang(other);
      return setErrors(errs);
    }
    setErrors({});
    save.mutate(parsed.data);
  }

  const { form, ...fieldErrs } = errors;
  const labels: Record<string, string> = { [REASON_FIELD]: 'Reason' };
  for (const l of FAN_LANGUAGES) for (const s of QUEUE_STATES) labels[fieldId(l, s)] = `${STATE_WORDS[s]} (${LANGUAGE_NAME[l]})`;

  return (
    <section className="wr-panel wr-talk" aria-labelledby="wr-words-title" data-testid="wr-words" data-version={v?.version ?? ''}>
      <div className="wr-talk-head">
        <h2 id="wr-words-title">What waiting fans read</h2>
        {canEdit && !editing && (
          <button type="button" className="wr-button" onClick={edit} disabled={!v || offline} data-testid="wr-words-edit">
            Change the words…
          </button>
        )}
      </div>
      <p className="muted">
        The words on the fans’ page in each state of the line. A change reaches every fan on their next poll (within a few seconds) and goes
        to the audit log.
        {canEdit ? '' : ' Admins, operators and the event’s promoters change them.'}
      </p>
      {saved && (
        <p
          className={`wr-outcome ${confirmed ? 'wr-outcome-ok' : 'wr-outcome-wait'}`}
          role="status"
          data-testid="wr-words-outcome"
          data-status={confirmed ? 'confirmed' : 'sent'}
        >
          {!confirmed
            ? 'Saved. Reading the words back from the server…'
            : saved.changed === 0
              ? 'Nothing changed: the words were already these.'
              : `Saved and read back from the server: ${saved.changed === 1 ? 'one state’s words changed' : `${saved.changed} states’ words changed`}. Fans read them on their next poll.`}
        </p>
      )}
      {copy.error && (
        <p className="form-error" role="alert">
          Could not read the words. {messageOf(copy.error)}
        </p>
      )}
      <div className="field wr-words-language">
        <label htmlFor="wr-words-language">Language</label>
        <select
          id="wr-words-language"
          value={lang}
          onChange={(e) => setLang(e.target.value as FanLanguage)}
          data-testid="wr-words-language"
        >
          {FAN_LANGUAGES.map((l) => (
            <option key={l} value={l}>
              {LANGUAGE_NAME[l]}
            </option>
          ))}
        </select>
      </div>
      {v && !editing && (
        <dl className="wr-words-list">
          {QUEUE_STATES.map((s) => (
            <div key={s} className={fanState === s ? 'wr-words-now' : ''} data-testid="wr-words-state" data-state={s}>
              <dt>
                {STATE_WORDS[s]}
                {fanState === s && <span className="pill pill-ok"> fans read this now</span>}
                {!v.words[lang][s].custom && <span className="muted"> · the default</span>}
              </dt>
              <dd data-testid="wr-words-text">{v.words[lang][s].text}</dd>
            </div>
          ))}
        </dl>
      )}
      {v && drafts && (
        <form onSubmit={submit} noValidate data-testid="wr-words-form">
          <ErrorSummary errors={fieldErrs} labels={labels} testId="wr-words-errors" />
          {QUEUE_STATES.map((s) => {
            const id = fieldId(lang, s);
            const def = v.words[lang][s].defaultText;
            return (
              <div key={id} className="wr-words-field">
                <Field label={`${STATE_WORDS[s]}${fanState === s ? ' (fans read this now)' : ''}`} name={id} error={errors[id]}>
                  <textarea
                    rows={2}
                    maxLength={500}
                    value={drafts[lang][s]}
                    onChange={(e) => setDrafts({ ...drafts, [lang]: { ...drafts[lang], [s]: e.target.value } })}
                  />
                </Field>
                {drafts[lang][s] !== def && (
                  <button
                    type="button"
                    className="wr-link-button"
                    onClick={() => setDrafts({ ...drafts, [lang]: { ...drafts[lang], [s]: def } })}
                  >
                    Use the default words
                  </button>
                )}
              </div>
            );
          })}
          <Field label="Reason (goes to the audit log)" name={REASON_FIELD} error={errors[REASON_FIELD]}>
            <input value={reason} onChange={(e) => setReason(e.target.value)} maxLength={600} />
          </Field>
          {offline && (
            <p className="wr-controls-offline" role="alert" data-testid="wr-words-offline">
              Cannot reach the server: saving is off until it answers again. Your words stay here meanwhile.
            </p>
          )}
          {form && (
            <p className="form-error" role="alert" data-testid="wr-words-error">
              {form}
              {stale && (
                <>
                  {' '}
                  <button type="button" className="wr-link-button" onClick={() => void reload()} data-testid="wr-words-reload">
                    Load the current words
                  </button>{' '}
                  (your changes here are dropped).
                </>
              )}
            </p>
          )}
          <div className="wr-dialog-actions">
            <button type="button" className="wr-button" onClick={() => (setDrafts(null), setErrors({}))} disabled={save.isPending}>
              Cancel
            </button>
            <button type="submit" className="wr-button wr-button-go" disabled={save.isPending || offline} data-testid="wr-words-save">
              {save.isPending ? 'Saving…' : 'Save the words'}
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
