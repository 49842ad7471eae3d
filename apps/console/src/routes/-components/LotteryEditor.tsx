import { useMemo } from 'react';
import { cohortWindow, sectionCapacity, targetRequestedSeats, type EventSpec } from '@onsale/shared/sale-setup/schema';
import { Field } from './Field';
import { errorAt, fileFromDraft, type EventDraft, type LotteryDraft } from './event-draft';
import { formatCount, formatDateTime } from './format';

/**
 * A REGISTRATION_LOTTERY event's settings in the event form: the registration window, the expected conversion the
 * draw is sized by, and the purchase windows (cohorts) winners are spread over. Errors from the shared schema at
 * each field (`lottery.registrationClosesAt`, ...), the server's refusals at `lottery`, and a live summary of what
 * the settings amount to.
 */
export function LotteryEditor({
  draft,
  onChange,
  errors,
  disabled,
  lockNote,
}: {
  draft: EventDraft;
  onChange: (lottery: LotteryDraft) => void;
  errors: Record<string, string>;
  disabled: boolean;
  lockNote: string | undefined;
}) {
  const l = draft.lottery;
  const set = (patch: Partial<LotteryDraft>) => onChange({ ...l, ...patch });
  // A message at `lottery` itself (a refusal of the change rules, or settings missing) rather than at one input.
  const own = errors.lottery;
  return (
    <fieldset className="card" data-testid="lottery-settings">
      <legend>Registration lottery</legend>
      {lockNote && <p className="muted lock-note">Lottery: {lockNote}</p>}
      <p className="muted">
        Fans register in the window (one registration per account, with the seats they want). After it closes the draw picks winners under
        the seed committed now, enough to ask for about the seats on offer divided by the expected conversion; winners buy with an
        invitation in staggered purchase windows from the on-sale, and everyone else goes on the waitlist. The settings can change until
        registration opens.
      </p>
      <div className="form-grid">
        <Field
          label="Registration opens"
          name="lottery.registrationOpensAt"
          error={errorAt(errors, 'lottery.registrationOpensAt')}
          hint="On the venue's clock."
        >
          <input
            type="datetime-local"
            step="1"
            value={l.registrationOpensAt}
            disabled={disabled}
            onChange={(e) => set({ registrationOpensAt: e.target.value })}
          />
        </Field>
        <Field
          label="Registration closes"
          name="lottery.registrationClosesAt"
          error={errorAt(errors, 'lottery.registrationClosesAt')}
          hint="By the on-sale; the draw runs after it."
        >
          <input
            type="datetime-local"
            step="1"
            value={l.registrationClosesAt}
            disabled={disabled}
            onChange={(e) => set({ registrationClosesAt: e.target.value })}
          />
        </Field>
        <Field
          label="Expected conversion (%)"
          name="lottery.expectedConversion"
          error={errorAt(errors, 'lottery.expectedConversion')}
          hint="Share of winners expected to buy."
        >
          <input
            inputMode="decimal"
            value={l.expectedConversionPct}
            disabled={disabled}
            onChange={(e) => set({ expectedConversionPct: e.target.value })}
          />
        </Field>
        <Field
          label="Purchase windows (cohorts)"
          name="lottery.cohorts"
          error={errorAt(errors, 'lottery.cohorts')}
          hint="Winners are spread over these, in draw order."
        >
          <input inputMode="numeric" value={l.cohorts} disabled={disabled} onChange={(e) => set({ cohorts: e.target.value })} />
        </Field>
        <Field
          label="Minutes per purchase window"
          name="lottery.cohortMinutes"
          error={errorAt(errors, 'lottery.cohortMinutes')}
          hint="Window k opens k × this after the on-sale."
        >
          <input inputMode="numeric" value={l.cohortMinutes} disabled={disabled} onChange={(e) => set({ cohortMinutes: e.target.value })} />
        </Field>
      </div>
      {own && (
        <small className="field-error" data-testid="error-lottery" role="alert">
          {own}
        </small>
      )}
      <LotterySummary draft={draft} />
    </fieldset>
  );
}

/** What the settings amount to now: the seats on offer, the requested seats the draw invites, the purchase windows. */
function LotterySummary({ draft }: { draft: EventDraft }) {
  const summary = useMemo(() => {
    const { file } = fileFromDraft(draft);
    const lottery = file.lottery as { expectedConversion?: unknown; cohorts?: unknown; cohortMinutes?: unknown } | undefined;
    const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0;
    let seats = 0;
    for (const s of file.sections as EventSpec['sections']) {
      const n = sectionCapacity(s);
      if (!Number.isFinite(n)) return null;
      seats += n;
    }
    const onsale = Date.parse(String(file.onsaleAt));
    if (!lottery || !finite(lottery.expectedConversion) || !finite(lottery.cohorts) || !finite(lottery.cohortMinutes)) return null;
    // Out of range: the fields show the schema's error; there is nothing to sum up.
    if (lottery.expectedConversion > 1 || !Number.isInteger(seats)) return null;
    return {
      seats,
      invited: targetRequestedSeats(seats, lottery.expectedConversion),
      cohorts: lottery.cohorts,
      minutes: lottery.cohortMinutes,
      lastCloses: Number.isNaN(onsale)
        ? null
        : new Date(cohortWindow(onsale, lottery.cohortMinutes, lottery.cohorts - 1).closesAtMs).toISOString(),
    };
  }, [draft]);
  if (!summary) return null;
  return (
    <p className="muted" data-testid="lottery-summary">
      {formatCount(summary.seats)} seats on offer: the draw invites winners asking for about{' '}
      <strong data-testid="lottery-summary-invited">{formatCount(summary.invited)}</strong> seats, in {formatCount(summary.cohorts)}{' '}
      purchase window{summary.cohorts === 1 ? '' : 's'} of {formatCount(summary.minutes)} minutes from the on-sale
      {summary.lastCloses ? `, the last closing ${formatDateTime(summary.lastCloses)}` : ''}.
    </p>
  );
}
