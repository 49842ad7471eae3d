import type { ReactNode } from 'react';
import { fairnessModes, type EventSetting } from '@onsale/shared/sale-setup/schema';
import { fairnessDescription, type FairnessMode } from '@onsale/shared/queue/fairness';
import { Field } from './Field';
import { LookEditor } from './LookEditor';
import { LotteryEditor } from './LotteryEditor';
import { TiersEditor } from './TiersEditor';
import type { EventDraft } from './event-draft';
import { EventBasics } from './event-form/EventBasics';
import { eventFormParts } from './event-form/parts';
import { PriceLevels } from './event-form/PriceLevels';
import { LimitsAndHolds, Pacing, QueueMessages } from './event-form/SaleSettings';
import { Sections } from './event-form/Sections';
import { TicketsEditor } from './TicketsEditor';
import './event-form.css';

export const FAIRNESS_LABELS: Record<FairnessMode, string> = {
  RANDOMIZED_PREOPEN_THEN_FIFO: 'Random order for everyone in before the open, then first come first served',
  FIFO: 'First come, first served',
  REGISTRATION_LOTTERY: 'Registration lottery',
};

export interface EventFormProps {
  draft: EventDraft;
  onChange: (draft: EventDraft) => void;
  /** Messages per field path (`sections.0.code`), from the shared schema or the BFF. */
  errors: Record<string, string>;
  /** Settings the change rules lock now, with the reason shown at the field. */
  locked?: Partial<Record<EventSetting, string>>;
  /** Everything read-only (a role that may not configure). */
  readOnly?: boolean;
  /** Creating (not editing): times that have passed are refused at their fields, and the sale can open now. */
  newEvent?: boolean;
  /** Shown beside the pacing inputs (the admission plan preview can live here). */
  pacingAside?: ReactNode;
  /** Shown under the fairness mode's description (the sign-off). */
  fairnessFooter?: ReactNode;
}

/**
 * The event's settings, one field per path of the event file, errors at each field. Used to create and to edit.
 * Each fieldset is a part under ./event-form/ sharing `EventFormParts`; a new group of settings is a new part.
 */
export function EventForm({
  draft,
  onChange,
  errors,
  locked = {},
  readOnly = false,
  newEvent = false,
  pacingAside,
  fairnessFooter,
}: EventFormProps) {
  const parts = eventFormParts(draft, onChange, errors, locked, readOnly);
  const { set, lockOf, disabled, err } = parts;
  const mode = (fairnessModes as readonly string[]).includes(draft.fairnessMode) ? (draft.fairnessMode as FairnessMode) : null;

  return (
    <div className="event-form">
      <EventBasics parts={parts} newEvent={newEvent} />

      <fieldset className="card">
        <legend>Venue: prices and sections</legend>
        {lockOf('priceLevels') && <p className="muted lock-note">Prices: {lockOf('priceLevels')}</p>}
        <PriceLevels
          currency={draft.currency}
          levels={draft.priceLevels}
          onChange={(v) => set('priceLevels', v)}
          errors={errors}
          disabled={disabled('priceLevels')}
        />
        {lockOf('sections') && <p className="muted lock-note">Sections: {lockOf('sections')}</p>}
        <Sections
          sections={draft.sections}
          priceLevels={draft.priceLevels}
          onChange={(v) => set('sections', v)}
          errors={errors}
          disabled={disabled('sections')}
        />
      </fieldset>

      <fieldset className="card">
        <legend>Fairness</legend>
        <Field label="Fairness mode" name="fairnessMode" error={err('fairnessMode')} hint={lockOf('fairnessMode')}>
          <select
            name="fairnessMode"
            value={draft.fairnessMode}
            disabled={disabled('fairnessMode')}
            onChange={(e) => set('fairnessMode', e.target.value)}
          >
            {fairnessModes.map((m) => (
              <option key={m} value={m}>
                {FAIRNESS_LABELS[m]}
              </option>
            ))}
          </select>
        </Field>
        {mode && (
          <blockquote className="fairness-description" data-testid="fairness-description">
            {fairnessDescription(mode)}
          </blockquote>
        )}
        <p className="muted">
          This description is published to fans as it reads here. The promoter signs it off; a change of mode needs a new sign-off.
        </p>
        {fairnessFooter}
      </fieldset>

      {mode === 'REGISTRATION_LOTTERY' && (
        <LotteryEditor
          draft={draft}
          onChange={(v) => set('lottery', v)}
          errors={errors}
          disabled={disabled('lottery')}
          lockNote={lockOf('lottery')}
        />
      )}

      {/* A lottery sells through its draw, not presale tiers (the schema says so at `allocations` if some are left). */}
      {(mode !== 'REGISTRATION_LOTTERY' || draft.allocations.length > 0) && (
        <TiersEditor
          draft={draft}
          onChange={(v) => set('allocations', v)}
          errors={errors}
          disabled={disabled('allocations')}
          lockNote={lockOf('allocations')}
        />
      )}

      <LimitsAndHolds parts={parts} />
      <TicketsEditor
        tickets={draft.tickets}
        timeZone={draft.timeZone}
        onChange={(v) => set('tickets', v)}
        errors={errors}
        readOnly={readOnly}
        lockOf={lockOf}
      />
      <Pacing parts={parts} aside={pacingAside} />
      <QueueMessages parts={parts} />
      <LookEditor draft={draft} onChange={(v) => set('look', v)} errors={errors} disabled={disabled('look')} />
    </div>
  );
}
