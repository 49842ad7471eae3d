import { pastTimeIssues } from '@onsale/shared/sale-setup/schema';
import { currencies, formatInstant, instantOfWallTime, timeZones, wallTimeOf } from '@onsale/shared/words';
import { Field } from '../Field';
import { DraftInput, type EventFormParts } from './parts';

const zones = timeZones();
const currencyList = currencies();

/**
 * The event itself: name, venue, its time zone and currency, the show's start and the on-sale. For a new event
 * (`newEvent`) a time that has passed is refused here as it is typed (the rule the BFF and the CLI apply,
 * create-checks.ts), and the sale can be opened at once instead of at a time.
 */
export function EventBasics({ parts, newEvent }: { parts: EventFormParts; newEvent: boolean }) {
  const { draft, set, err, disabled, hintOf } = parts;
  const now = Date.now();
  const past = newEvent
    ? Object.fromEntries(
        pastTimeIssues(
          {
            startsAt: instantOfWallTime(draft.startsAt, draft.timeZone) ?? undefined,
            onsaleAt: draft.onsaleNow ? undefined : (instantOfWallTime(draft.onsaleAt, draft.timeZone) ?? undefined),
          },
          now,
        ).map((i) => [i.path, i.message]),
      )
    : {};
  // The browser's own hint (its picker greys out the past); the check above is what refuses.
  const min = newEvent ? wallTimeOf(new Date(now).toISOString(), draft.timeZone).slice(0, 16) : undefined;

  return (
    <fieldset className="card">
      <legend>Event</legend>
      <div className="form-grid">
        <DraftInput parts={parts} setting="name" label="Event name" draftKey="name" />
        <DraftInput parts={parts} setting="venueName" label="Venue" draftKey="venueName" />
        <Field
          label="Venue time zone"
          name="timeZone"
          error={err('timeZone')}
          hint={hintOf(
            'timeZone',
            `Every time of the event is on this clock (now ${formatInstant(now, draft.timeZone, { date: false })} there).`,
          )}
        >
          <select name="timeZone" value={draft.timeZone} disabled={disabled('timeZone')} onChange={(e) => set('timeZone', e.target.value)}>
            {(zones.includes(draft.timeZone) ? zones : [draft.timeZone, ...zones]).map((z) => (
              <option key={z} value={z}>
                {z}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Currency" name="currency" error={err('currency')} hint={hintOf('currency', 'The prices below are in it.')}>
          <select name="currency" value={draft.currency} disabled={disabled('currency')} onChange={(e) => set('currency', e.target.value)}>
            {(currencyList.includes(draft.currency) ? currencyList : [draft.currency, ...currencyList]).map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </Field>
        <DraftInput
          parts={parts}
          setting="startsAt"
          label="Show starts"
          draftKey="startsAt"
          type="datetime-local"
          step="1"
          min={min}
          error={past.startsAt}
          hint={`On the venue's clock (${draft.timeZone}).`}
        />
        {draft.onsaleNow ? (
          <div className="field" data-testid="onsale-now">
            <label htmlFor="onsaleAt">On sale from</label>
            <input id="onsaleAt" name="onsaleAt" value="Now" readOnly disabled />
            <small className="muted">The sale opens as soon as you create the event: nobody waits for an open.</small>
            <button type="button" className="link-like" onClick={() => set('onsaleNow', false)}>
              Choose a time instead
            </button>
          </div>
        ) : (
          <div className="field-with-action">
            <DraftInput
              parts={parts}
              setting="onsaleAt"
              label="On sale from"
              draftKey="onsaleAt"
              type="datetime-local"
              step="1"
              min={min}
              error={past.onsaleAt}
              hint={`On the venue's clock (${draft.timeZone}). The pre-open cohort is drawn then.`}
            />
            {newEvent && !disabled('onsaleAt') && (
              <button type="button" className="link-like" data-testid="open-now" onClick={() => set('onsaleNow', true)}>
                Open the sale now
              </button>
            )}
          </div>
        )}
        <DraftInput
          parts={parts}
          setting="seatPickingOpensAfterMinutes"
          label="Seat picking opens after (minutes)"
          draftKey="seatPickingOpensAfterMinutes"
          type="number"
          hint="Best-available only until then."
        />
      </div>
    </fieldset>
  );
}
