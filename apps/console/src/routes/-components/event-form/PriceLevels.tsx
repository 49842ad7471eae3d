import { Field } from '../Field';
import { emptyPriceLevel, errorAt, type PriceLevelDraft } from '../event-draft';

/** The price levels, in the event's currency; a free one says so at its price. */
export function PriceLevels({
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
          <Field
            label={`Price (${currency})`}
            name={`priceLevels.${i}.priceCents`}
            error={errorAt(errors, `priceLevels.${i}.priceCents`)}
            hint={l.price.trim() !== '' && Number(l.price) === 0 ? 'Free: fans get these seats for nothing.' : undefined}
          >
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
