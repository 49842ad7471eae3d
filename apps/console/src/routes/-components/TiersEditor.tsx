import { useMemo } from 'react';
import { assignAllocations, expandSeats, fairnessModes, seatCount, tierCapacities, type EventSpec } from '@onsale/shared/sale-setup/schema';
import { Field } from './Field';
import { emptyTier, errorAt, fileFromDraft, starterTiers, TIER_ACCESS, type EventDraft, type TierDraft } from './event-draft';
import { formatCount } from './format';

export const ACCESS_LABELS: Record<(typeof TIER_ACCESS)[number], string> = {
  OPEN: 'Open to anyone',
  ACCESS_CODE: 'Access code (one account per code)',
  CARD_BIN: 'Partner card at checkout',
};

const TIER_FAIRNESS_LABELS: Record<string, string> = {
  RANDOMIZED_PREOPEN_THEN_FIFO: 'Random order before the tier opens, then first come first served',
  FIFO: 'First come, first served',
};

/**
 * The presale tiers of the event form: add, remove and reorder tiers; each presale's share, access rule, window,
 * roll time and fairness mode; the last tier is the general sale. Errors from the shared schema at each field,
 * and a live summary of the seats each tier would own (the domain's own split, run here).
 */
export function TiersEditor({
  draft,
  onChange,
  errors,
  disabled,
  lockNote,
}: {
  draft: EventDraft;
  onChange: (tiers: TierDraft[]) => void;
  errors: Record<string, string>;
  disabled: boolean;
  lockNote: string | undefined;
}) {
  const tiers = draft.allocations;
  const update = (i: number, patch: Partial<TierDraft>) => onChange(tiers.map((t, j) => (j === i ? { ...t, ...patch } : t)));
  const move = (i: number, by: -1 | 1) => {
    const next = [...tiers];
    const [t] = next.splice(i, 1);
    next.splice(i + by, 0, t!);
    onChange(next);
  };
  const listError = errors.allocations;

  return (
    <fieldset className="card" data-testid="tiers">
      <legend>Presale tiers</legend>
      {lockNote && <p className="muted lock-note">Tiers: {lockNote}</p>}
      {tiers.length === 0 ? (
        <p className="muted" data-testid="no-tiers">
          One general sale of every seat. Presale tiers split each section between sales with their own windows, queues and access rules (a
          fan club by access code, a card partner by card range); unsold seats roll forward to the next tier.
        </p>
      ) : (
        <p className="muted">
          In sale order. Each presale takes its share of every section (front rows first) and sells in its own window through its own queue;
          its unsold seats roll forward into the next tier when it closes (or at the roll time). The last tier is the general sale: it opens
          at the on-sale, under the event&apos;s fairness mode, with the seats the others leave.
        </p>
      )}
      {tiers.map((t, i) => {
        const p = `allocations.${i}`;
        const general = i === tiers.length - 1;
        return (
          <div
            className={`repeat-row tier-row${general ? ' tier-general' : ''}`}
            key={t.key}
            data-testid="tier-editor"
            data-general={general ? 'true' : 'false'}
          >
            <div className="tier-head">
              <strong>{general ? 'General sale' : `Presale ${i + 1}`}</strong>
              {!disabled && (
                <span className="tier-actions">
                  <button
                    type="button"
                    className="link-like"
                    disabled={i === 0}
                    onClick={() => move(i, -1)}
                    aria-label={`Move tier ${i + 1} up`}
                  >
                    ↑ Up
                  </button>
                  <button
                    type="button"
                    className="link-like"
                    disabled={general}
                    onClick={() => move(i, 1)}
                    aria-label={`Move tier ${i + 1} down`}
                  >
                    ↓ Down
                  </button>
                  {tiers.length > 2 && (
                    <button type="button" className="link-like" onClick={() => onChange(tiers.filter((_, j) => j !== i))}>
                      Remove
                    </button>
                  )}
                </span>
              )}
            </div>
            <Field label="Code" name={`${p}.code`} error={errorAt(errors, `${p}.code`)} hint="Capitals, digits, - and _.">
              <input value={t.code} disabled={disabled} onChange={(e) => update(i, { code: e.target.value })} />
            </Field>
            <Field label="Name" name={`${p}.name`} error={errorAt(errors, `${p}.name`)}>
              <input value={t.name} disabled={disabled} onChange={(e) => update(i, { name: e.target.value })} />
            </Field>
            {!general && (
              <Field label="Share (%)" name={`${p}.share`} error={errorAt(errors, `${p}.share`)} hint="Of every section.">
                <input
                  inputMode="decimal"
                  value={t.sharePct}
                  disabled={disabled}
                  onChange={(e) => update(i, { sharePct: e.target.value })}
                />
              </Field>
            )}
            <Field label="Access" name={`${p}.access`} error={errorAt(errors, `${p}.access`)}>
              <select value={t.access} disabled={disabled} onChange={(e) => update(i, { access: e.target.value })}>
                {TIER_ACCESS.map((a) => (
                  <option key={a} value={a}>
                    {ACCESS_LABELS[a]}
                  </option>
                ))}
              </select>
            </Field>
            {t.access === 'CARD_BIN' && (
              <Field
                label="Card ranges (FROM-TO per line)"
                name={`${p}.binRanges`}
                error={errorAt(errors, `${p}.binRanges`)}
                hint="First 6-8 digits of the card."
              >
                <textarea
                  rows={2}
                  value={t.binRangesText}
                  disabled={disabled}
                  onChange={(e) => update(i, { binRangesText: e.target.value })}
                  placeholder="411100-411199"
                />
              </Field>
            )}
            {general ? (
              <p className="muted tier-general-note">
                Opens at the on-sale, under the event&apos;s fairness mode; sells what the presales leave.
              </p>
            ) : (
              <>
                <Field label="Opens" name={`${p}.opensAt`} error={errorAt(errors, `${p}.opensAt`)} hint="On the venue's clock.">
                  <input
                    type="datetime-local"
                    step="1"
                    value={t.opensAt}
                    disabled={disabled}
                    onChange={(e) => update(i, { opensAt: e.target.value })}
                  />
                </Field>
                <Field label="Closes" name={`${p}.closesAt`} error={errorAt(errors, `${p}.closesAt`)}>
                  <input
                    type="datetime-local"
                    step="1"
                    value={t.closesAt}
                    disabled={disabled}
                    onChange={(e) => update(i, { closesAt: e.target.value })}
                  />
                </Field>
                <Field
                  label="Unsold seats roll forward at"
                  name={`${p}.rollsForwardAt`}
                  error={errorAt(errors, `${p}.rollsForwardAt`)}
                  hint="Empty: when it closes."
                >
                  <input
                    type="datetime-local"
                    step="1"
                    value={t.rollsForwardAt}
                    disabled={disabled}
                    onChange={(e) => update(i, { rollsForwardAt: e.target.value })}
                  />
                </Field>
                <Field label="Queue order" name={`${p}.fairnessMode`} error={errorAt(errors, `${p}.fairnessMode`)}>
                  <select value={t.fairnessMode} disabled={disabled} onChange={(e) => update(i, { fairnessMode: e.target.value })}>
                    {fairnessModes
                      .filter((m) => m !== 'REGISTRATION_LOTTERY')
                      .map((m) => (
                        <option key={m} value={m}>
                          {TIER_FAIRNESS_LABELS[m]}
                        </option>
                      ))}
                  </select>
                </Field>
              </>
            )}
          </div>
        );
      })}
      {listError && (
        <small className="field-error" data-testid="error-allocations">
          {listError}
        </small>
      )}
      {!disabled && (
        <div className="tier-buttons">
          {tiers.length === 0 ? (
            <button type="button" className="secondary" onClick={() => onChange(starterTiers())} data-testid="add-tiers">
              Add presale tiers
            </button>
          ) : (
            <>
              {tiers.length < 10 && (
                <button
                  type="button"
                  className="secondary"
                  onClick={() => onChange([...tiers.slice(0, -1), emptyTier(), tiers[tiers.length - 1]!])}
                  data-testid="add-tier"
                >
                  Add a presale tier
                </button>
              )}
              <button type="button" className="secondary" onClick={() => onChange([])} data-testid="remove-tiers">
                No presale tiers
              </button>
            </>
          )}
        </div>
      )}
      {tiers.length > 0 && <TierSummary draft={draft} />}
    </fieldset>
  );
}

/** Past this many reserved seats the form does not lay every seat out to preview the split. */
const PREVIEW_MAX_SEATS = 250_000;

/**
 * Seats each tier would own, per section and in all, by the domain's own split (assignAllocations over
 * expandSeats; GA counters split by share too), from whatever the form holds now.
 */
function TierSummary({ draft }: { draft: EventDraft }) {
  const summary = useMemo(() => {
    const { file } = fileFromDraft(draft);
    const finite = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
    // Only what can be laid out: a section with a typo is left out until it is fixed (the form says where).
    const sections = (file.sections as Record<string, unknown>[]).filter((s) =>
      s.kind === 'GA'
        ? finite(s.capacity)
        : Array.isArray(s.rows)
          ? (s.rows as { seats: unknown }[]).every((r) => finite(r.seats))
          : finite(s.rowCount) && finite(s.seatsPerRow),
    ) as unknown as EventSpec['sections'];
    const reserved = seatCount(sections.filter((s) => s.kind !== 'GA'));
    if (reserved > PREVIEW_MAX_SEATS) return null;
    const tiers = (file.allocations ?? []).map((t) => ({
      ...t,
      share: typeof t.share === 'number' && Number.isFinite(t.share) ? t.share : 0,
    })) as NonNullable<EventSpec['allocations']>;
    const seats = assignAllocations(expandSeats({ sections }), tiers);
    const total = tierCapacities(seats, { allocations: tiers, sections });
    const bySection = new Map<string, Map<string, number>>();
    for (const s of seats) {
      const tier = s.allocation ?? '';
      const m = bySection.get(tier) ?? new Map<string, number>();
      m.set(s.sectionCode, (m.get(s.sectionCode) ?? 0) + 1);
      bySection.set(tier, m);
    }
    return { tiers, total, bySection, capacity: seatCount(sections) };
  }, [draft]);

  if (!summary) return <p className="muted">Too many seats to preview the split here; it is made when the event is saved.</p>;
  const sum = [...summary.total.values()].reduce((a, n) => a + n, 0);
  return (
    <table className="grid tier-summary" data-testid="tier-summary">
      <caption>Seats per tier, as the split would give them now</caption>
      <thead>
        <tr>
          <th>Tier</th>
          <th className="num">Share</th>
          <th>By section</th>
          <th className="num">Seats</th>
        </tr>
      </thead>
      <tbody>
        {summary.tiers.map((t, i) => {
          const general = i === summary.tiers.length - 1;
          const sections = [...(summary.bySection.get(t.code)?.entries() ?? [])];
          return (
            <tr key={`${t.code}-${i}`} data-testid="tier-summary-row" data-tier={t.code}>
              <td>
                <strong>{t.code || '—'}</strong> <span className="muted">{t.name}</span>
              </td>
              <td className="num">{general ? 'the rest' : `${Math.round((t.share ?? 0) * 1000) / 10}%`}</td>
              <td className="muted">{sections.length ? sections.map(([code, n]) => `${code} ${formatCount(n)}`).join(' · ') : '—'}</td>
              <td className="num" data-testid="tier-summary-seats">
                {formatCount(summary.total.get(t.code) ?? 0)}
              </td>
            </tr>
          );
        })}
      </tbody>
      <tfoot>
        <tr>
          <td colSpan={3}>All tiers</td>
          <td className="num" data-testid="tier-summary-total">
            {formatCount(sum)} of {formatCount(summary.capacity)}
          </td>
        </tr>
      </tfoot>
    </table>
  );
}
