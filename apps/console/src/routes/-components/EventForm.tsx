import type { ReactNode } from 'react';
import { fairnessModes, type EventSetting } from '@onsale/shared/events/schema';
import { fairnessDescription, type FairnessMode } from '@onsale/shared/queue/fairness';
import { Field } from './Field';
import { LookEditor } from './LookEditor';
import { currencies, formatInstant, timeZones } from '@onsale/shared/words';
import { LotteryEditor } from './LotteryEditor';
import { TiersEditor } from './TiersEditor';
import { TicketsEditor } from './TicketsEditor';
import {
  emptyPriceLevel,
  emptySection,
  errorAt,
  QUEUE_STATES,
  type EventDraft,
  type PriceLevelDraft,
  type SectionDraft,
  type SectionLayout,
} from './event-draft';
import './event-form.css';

export const FAIRNESS_LABELS: Record<FairnessMode, string> = {
  RANDOMIZED_PREOPEN_THEN_FIFO: 'Random order for everyone in before the open, then first come first served',
  FIFO: 'First come, first served',
  REGISTRATION_LOTTERY: 'Registration lottery',
};

const LAYOUT_LABELS: Record<SectionLayout, string> = { grid: 'Rows × seats', rows: 'Row by row', ga: 'General admission' };

export interface EventFormProps {
  draft: EventDraft;
  onChange: (draft: EventDraft) => void;
  /** Messages per field path (`sections.0.code`), from the shared schema or the BFF. */
  errors: Record<string, string>;
  /** Settings the change rules lock now, with the reason shown at the field. */
  locked?: Partial<Record<EventSetting, string>>;
  /** Everything read-only (a role that may not configure). */
  readOnly?: boolean;
  /** Shown beside the pacing inputs (the admission plan preview can live here). */
  pacingAside?: ReactNode;
  /** Shown under the fairness mode's description (the sign-off). */
  fairnessFooter?: ReactNode;
}

const zones = timeZones();
const currencyList = currencies();

/** The event's settings, one field per path of the event file, errors at each field. Used to create and to edit. */
export function EventForm({ draft, onChange, errors, locked = {}, readOnly = false, pacingAside, fairnessFooter }: EventFormProps) {
  const set = <K extends keyof EventDraft>(key: K, value: EventDraft[K]) => onChange({ ...draft, [key]: value });
  const lockOf = (setting: EventSetting) => locked[setting];
  const disabled = (setting: EventSetting) => readOnly || lockOf(setting) !== undefined;
  const hintOf = (setting: EventSetting, hint?: string) => lockOf(setting) ?? hint;
  const err = (path: string) => errorAt(errors, path);

  const text = (
    setting: EventSetting,
    label: string,
    key: keyof EventDraft,
    opts: { hint?: string; type?: string; step?: string; path?: string } = {},
  ) => (
    <Field label={label} name={opts.path ?? setting} error={err(opts.path ?? setting)} hint={hintOf(setting, opts.hint)}>
      <input
        name={opts.path ?? setting}
        type={opts.type ?? 'text'}
        step={opts.step}
        inputMode={opts.type === 'number' ? 'decimal' : undefined}
        value={draft[key] as string}
        disabled={disabled(setting)}
        onChange={(e) => set(key, e.target.value as never)}
      />
    </Field>
  );
  const mode = (fairnessModes as readonly string[]).includes(draft.fairnessMode) ? (draft.fairnessMode as FairnessMode) : null;

  return (
    <div className="event-form">
      <fieldset className="card">
        <legend>Event</legend>
        <div className="form-grid">
          {text('name', 'Event name', 'name')}
          {text('venueName', 'Venue', 'venueName')}
          <Field
            label="Venue time zone"
            name="timeZone"
            error={err('timeZone')}
            hint={hintOf(
              'timeZone',
              `Every time of the event is on this clock (now ${formatInstant(Date.now(), draft.timeZone, { date: false })} there).`,
            )}
          >
            <select
              name="timeZone"
              value={draft.timeZone}
              disabled={disabled('timeZone')}
              onChange={(e) => set('timeZone', e.target.value)}
            >
              {(zones.includes(draft.timeZone) ? zones : [draft.timeZone, ...zones]).map((z) => (
                <option key={z} value={z}>
                  {z}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Currency" name="currency" error={err('currency')} hint={hintOf('currency', 'The prices below are in it.')}>
            <select
              name="currency"
              value={draft.currency}
              disabled={disabled('currency')}
              onChange={(e) => set('currency', e.target.value)}
            >
              {(currencyList.includes(draft.currency) ? currencyList : [draft.currency, ...currencyList]).map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </select>
          </Field>
          {text('startsAt', 'Show starts', 'startsAt', {
            type: 'datetime-local',
            step: '1',
            hint: `On the venue's clock (${draft.timeZone}).`,
          })}
          {text('onsaleAt', 'On sale from', 'onsaleAt', {
            type: 'datetime-local',
            step: '1',
            hint: `On the venue's clock (${draft.timeZone}). The pre-open cohort is drawn then.`,
          })}
          {text('seatPickingOpensAfterMinutes', 'Seat picking opens after (minutes)', 'seatPickingOpensAfterMinutes', {
            type: 'number',
            hint: 'Best-available only until then.',
          })}
        </div>
      </fieldset>

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

      <fieldset className="card">
        <legend>Limits and holds</legend>
        <div className="form-grid">
          {text('limits.perAccountSeats', 'Seats per account', 'perAccountSeats', {
            type: 'number',
            hint: lockOf('limits.perAccountSeats') ?? 'Held plus bought, per event.',
          })}
          {text('limits.perInstrumentSeats', 'Seats per payment card', 'perInstrumentSeats', { type: 'number' })}
          {text('limits.perDeviceSeats', 'Seats per device', 'perDeviceSeats', { type: 'number', hint: 'Empty: the same as per account.' })}
          {text('holds.ttlSeconds', 'Hold lasts (seconds)', 'ttlSeconds', { type: 'number', hint: '360 = 6 minutes.' })}
          {text('holds.extensionSeconds', 'One extension when payment starts (seconds)', 'extensionSeconds', {
            type: 'number',
            hint: '0: no extension.',
          })}
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

      <TicketsEditor
        tickets={draft.tickets}
        timeZone={draft.timeZone}
        onChange={(v) => set('tickets', v)}
        errors={errors}
        readOnly={readOnly}
        lockOf={lockOf}
      />

      <fieldset className="card">
        <legend>Pacing</legend>
        <div className={pacingAside ? 'pacing-split' : undefined}>
          <div className="form-grid">
            {text('pacing.targetSaleMinutes', 'Target sale duration (minutes)', 'targetSaleMinutes', { type: 'number' })}
            {text('pacing.ticketsPerOrder', 'Tickets per order', 'ticketsPerOrder', { type: 'number', step: 'any' })}
            {text('pacing.checkoutMinutes', 'Checkout minutes', 'checkoutMinutes', { type: 'number', step: 'any' })}
            {text('pacing.paymentTps', 'Payment TPS', 'paymentTps', { type: 'number', hint: 'Payments per second the gateway takes.' })}
            {text('pacing.overbookFactor', 'Overbooking factor', 'overbookFactor', {
              type: 'number',
              step: 'any',
              hint: 'Admissions per plausible order.',
            })}
          </div>
          {pacingAside}
        </div>
      </fieldset>

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

      <LookEditor draft={draft} onChange={(v) => set('look', v)} errors={errors} disabled={disabled('look')} />
    </div>
  );
}

function PriceLevels({
  currency,
  levels,
  onChange,
  errors,
  disabled,
}: {
  currency: string;
  levels: PriceLevelDraft[];
  onChange: (v: PriceLevelDraft[]) => void;
  errors: Record<string, string>;
  disabled: boolean;
}) {
  const update = (i: number, patch: Partial<PriceLevelDraft>) => onChange(levels.map((l, j) => (j === i ? { ...l, ...patch } : l)));
  const listError = errors.priceLevels;
  return (
    <div className="repeat" data-testid="price-levels">
      <h3>Price levels</h3>
      {levels.map((l, i) => (
        <div className="repeat-row" key={l.key} data-testid="price-level-row">
          <Field label="Code" name={`priceLevels.${i}.code`} error={errorAt(errors, `priceLevels.${i}.code`)}>
            <input value={l.code} disabled={disabled} onChange={(e) => update(i, { code: e.target.value })} />
          </Field>
          <Field label="Name" name={`priceLevels.${i}.name`} error={errorAt(errors, `priceLevels.${i}.name`)}>
            <input value={l.name} disabled={disabled} onChange={(e) => update(i, { name: e.target.value })} />
          </Field>
          <Field label={`Price (${currency})`} name={`priceLevels.${i}.priceCents`} error={errorAt(errors, `priceLevels.${i}.priceCents`)}>
            <input inputMode="decimal" value={l.price} disabled={disabled} onChange={(e) => update(i, { price: e.target.value })} />
          </Field>
          {!disabled && levels.length > 1 && (
            <button type="button" className="link-like" onClick={() => onChange(levels.filter((_, j) => j !== i))}>
              Remove
            </button>
          )}
        </div>
      ))}
      {listError && (
        <small className="field-error" data-testid="error-priceLevels">
          {listError}
        </small>
      )}
      {!disabled && (
        <button type="button" className="secondary" onClick={() => onChange([...levels, emptyPriceLevel()])}>
          Add a price level
        </button>
      )}
    </div>
  );
}

function Sections({
  sections,
  priceLevels,
  onChange,
  errors,
  disabled,
}: {
  sections: SectionDraft[];
  priceLevels: PriceLevelDraft[];
  onChange: (v: SectionDraft[]) => void;
  errors: Record<string, string>;
  disabled: boolean;
}) {
  const update = (i: number, patch: Partial<SectionDraft>) => onChange(sections.map((s, j) => (j === i ? { ...s, ...patch } : s)));
  const codes = priceLevels.map((p) => p.code).filter((c) => c.trim() !== '');
  const listError = errors.sections;
  return (
    <div className="repeat" data-testid="sections">
      <h3>Sections</h3>
      {sections.map((s, i) => {
        const p = `sections.${i}`;
        return (
          <div className="repeat-row section-row" key={s.key} data-testid="section-editor">
            <Field label="Code" name={`${p}.code`} error={errorAt(errors, `${p}.code`)}>
              <input value={s.code} disabled={disabled} onChange={(e) => update(i, { code: e.target.value })} />
            </Field>
            <Field label="Name" name={`${p}.name`} error={errorAt(errors, `${p}.name`)}>
              <input value={s.name} disabled={disabled} onChange={(e) => update(i, { name: e.target.value })} />
            </Field>
            <Field label="Price level" name={`${p}.priceLevel`} error={errorAt(errors, `${p}.priceLevel`)}>
              <select value={s.priceLevel} disabled={disabled} onChange={(e) => update(i, { priceLevel: e.target.value })}>
                <option value="">—</option>
                {[...new Set([...codes, ...(s.priceLevel && !codes.includes(s.priceLevel) ? [s.priceLevel] : [])])].map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Quality rank" name={`${p}.qualityRank`} error={errorAt(errors, `${p}.qualityRank`)} hint="1 = best">
              <input
                inputMode="numeric"
                value={s.qualityRank}
                disabled={disabled}
                onChange={(e) => update(i, { qualityRank: e.target.value })}
              />
            </Field>
            <Field label="Layout" name={`${p}.layout`}>
              <select value={s.layout} disabled={disabled} onChange={(e) => update(i, { layout: e.target.value as SectionLayout })}>
                {(Object.keys(LAYOUT_LABELS) as SectionLayout[]).map((l) => (
                  <option key={l} value={l}>
                    {LAYOUT_LABELS[l]}
                  </option>
                ))}
              </select>
            </Field>
            {s.layout === 'grid' && (
              <>
                <Field label="Rows" name={`${p}.rowCount`} error={errorAt(errors, `${p}.rowCount`) ?? errorAt(errors, `${p}.rows`)}>
                  <input
                    inputMode="numeric"
                    value={s.rowCount}
                    disabled={disabled}
                    onChange={(e) => update(i, { rowCount: e.target.value })}
                  />
                </Field>
                <Field label="Seats per row" name={`${p}.seatsPerRow`} error={errorAt(errors, `${p}.seatsPerRow`)}>
                  <input
                    inputMode="numeric"
                    value={s.seatsPerRow}
                    disabled={disabled}
                    onChange={(e) => update(i, { seatsPerRow: e.target.value })}
                  />
                </Field>
              </>
            )}
            {s.layout === 'rows' && (
              <Field label="Rows, front to back (LABEL SEATS per line)" name={`${p}.rows`} error={errorAt(errors, `${p}.rows`)}>
                <textarea
                  rows={4}
                  value={s.rowsText}
                  disabled={disabled}
                  onChange={(e) => update(i, { rowsText: e.target.value })}
                  placeholder={'A 12\nB 14'}
                />
              </Field>
            )}
            {s.layout === 'ga' && (
              <>
                <Field label="Capacity" name={`${p}.capacity`} error={errorAt(errors, `${p}.capacity`)}>
                  <input
                    inputMode="numeric"
                    value={s.capacity}
                    disabled={disabled}
                    onChange={(e) => update(i, { capacity: e.target.value })}
                  />
                </Field>
                <Field label="Shards" name={`${p}.shards`} error={errorAt(errors, `${p}.shards`)} hint="Empty: the default.">
                  <input inputMode="numeric" value={s.shards} disabled={disabled} onChange={(e) => update(i, { shards: e.target.value })} />
                </Field>
              </>
            )}
            {!disabled && sections.length > 1 && (
              <button type="button" className="link-like" onClick={() => onChange(sections.filter((_, j) => j !== i))}>
                Remove
              </button>
            )}
          </div>
        );
      })}
      {listError && (
        <small className="field-error" data-testid="error-sections">
          {listError}
        </small>
      )}
      {!disabled && (
        <button type="button" className="secondary" onClick={() => onChange([...sections, emptySection(codes[0] ?? '')])}>
          Add a section
        </button>
      )}
    </div>
  );
}
