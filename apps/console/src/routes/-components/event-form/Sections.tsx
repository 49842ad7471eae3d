import { Field } from '../Field';
import { emptySection, errorAt, type PriceLevelDraft, type SectionDraft, type SectionLayout } from '../event-draft';

const LAYOUT_LABELS: Record<SectionLayout, string> = { grid: 'Rows × seats', rows: 'Row by row', ga: 'General admission' };

/** The sections: rows x seats, row by row, or general admission, each on a price level. */
export function Sections({
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
