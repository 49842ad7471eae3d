import type { ReactNode } from 'react';
import { Field } from '../Field';
import { QUEUE_STATES, type EventDraft } from '../event-draft';
import { DraftInput, type EventFormParts } from './parts';

/** Seats per account, card and device; how long a hold lasts. */
export function LimitsAndHolds({ parts }: { parts: EventFormParts }) {
  const { draft, set, err, disabled, hintOf, lockOf } = parts;
  return (
    <fieldset className="card">
      <legend>Limits and holds</legend>
      <div className="form-grid">
        <DraftInput
          parts={parts}
          setting="limits.perAccountSeats"
          label="Seats per account"
          draftKey="perAccountSeats"
          type="number"
          hint={lockOf('limits.perAccountSeats') ?? 'Held plus bought, per event.'}
        />
        <DraftInput
          parts={parts}
          setting="limits.perInstrumentSeats"
          label="Seats per payment card"
          draftKey="perInstrumentSeats"
          type="number"
        />
        <DraftInput
          parts={parts}
          setting="limits.perDeviceSeats"
          label="Seats per device"
          draftKey="perDeviceSeats"
          type="number"
          hint="Empty: the same as per account."
        />
        <DraftInput
          parts={parts}
          setting="holds.ttlSeconds"
          label="Hold lasts (seconds)"
          draftKey="ttlSeconds"
          type="number"
          hint="360 = 6 minutes."
        />
        <DraftInput
          parts={parts}
          setting="holds.extensionSeconds"
          label="One extension when payment starts (seconds)"
          draftKey="extensionSeconds"
          type="number"
          hint="0: no extension."
        />
        <Field
          label="Single seats"
          name="noSingleSeats"
          error={err('noSingleSeats')}
          hint={hintOf(
            'noSingleSeats',
            'Avoid: a hold may not leave one seat alone between taken seats or at the end of a row, unless nothing else fits.',
          )}
        >
          <select
            name="noSingleSeats"
            value={draft.noSingleSeats}
            disabled={disabled('noSingleSeats')}
            onChange={(e) => set('noSingleSeats', e.target.value as EventDraft['noSingleSeats'])}
          >
            <option value="true">Avoid single seats</option>
            <option value="false">Allow single seats</option>
          </select>
        </Field>
      </div>
    </fieldset>
  );
}

/** How fast the sale goes: the inputs of the admission plan, with `aside` (the plan's preview) beside them. */
export function Pacing({ parts, aside }: { parts: EventFormParts; aside?: ReactNode }) {
  return (
    <fieldset className="card">
      <legend>Pacing</legend>
      <div className={aside ? 'pacing-split' : undefined}>
        <div className="form-grid">
          <DraftInput
            parts={parts}
            setting="pacing.targetSaleMinutes"
            label="Target sale duration (minutes)"
            draftKey="targetSaleMinutes"
            type="number"
          />
          <DraftInput
            parts={parts}
            setting="pacing.ticketsPerOrder"
            label="Tickets per order"
            draftKey="ticketsPerOrder"
            type="number"
            step="any"
          />
          <DraftInput
            parts={parts}
            setting="pacing.checkoutMinutes"
            label="Checkout minutes"
            draftKey="checkoutMinutes"
            type="number"
            step="any"
          />
          <DraftInput
            parts={parts}
            setting="pacing.paymentTps"
            label="Payments per second the card processor accepts"
            draftKey="paymentTps"
            type="number"
            hint="The rate agreed with your payment provider; fans are let in no faster than it can charge them. (Technical term: payment TPS, pacing.paymentTps.)"
          />
          <DraftInput
            parts={parts}
            setting="pacing.overbookFactor"
            label="Let in extra fans for those who leave without buying (×)"
            draftKey="overbookFactor"
            type="number"
            step="any"
            hint="1.3 lets in 30% more fans than the seats left can serve, since some leave without buying; seats are never sold twice. (Technical term: overbooking factor, pacing.overbookFactor.)"
          />
        </div>
        {aside}
      </div>
    </fieldset>
  );
}

/** The words fans read in each queue state, when the defaults will not do. */
export function QueueMessages({ parts }: { parts: EventFormParts }) {
  const { draft, set, err, disabled } = parts;
  return (
    <details className="card">
      <summary>Queue messages fans read (optional)</summary>
      <p className="muted">Left empty, a state keeps the default words.</p>
      {QUEUE_STATES.map((s) => (
        <Field key={s} label={s} name={`queueCopy.${s}`} error={err(`queueCopy.${s}`)}>
          <input
            name={`queueCopy.${s}`}
            value={draft.queueCopy[s]}
            disabled={disabled('queueCopy')}
            onChange={(e) => set('queueCopy', { ...draft.queueCopy, [s]: e.target.value })}
          />
        </Field>
      ))}
    </details>
  );
}
