import type { RouterOutputs } from '@onsale/bff/root';
import { formatCount } from './format';

type Counts = RouterOutputs['events']['byId']['counts'];

/** The invariant made visible: available + held + sold = capacity, with drift that must stay 0. */
export function InventoryTotals({ counts }: { counts: Counts }) {
  const tiles = [
    { key: 'available', label: 'Available', value: counts.available },
    { key: 'held', label: 'Held', value: counts.held },
    { key: 'sold', label: 'Sold', value: counts.sold },
    { key: 'capacity', label: 'Capacity', value: counts.capacity },
  ] as const;
  return (
    <div className="tiles" aria-label="Inventory totals">
      {tiles.map((t) => (
        <div key={t.key} className={`tile tile-${t.key}`}>
          <span className="tile-label">{t.label}</span>
          <span className="tile-value" data-testid={`count-${t.key}`}>
            {formatCount(t.value)}
          </span>
        </div>
      ))}
      <div className={`tile ${counts.drift === 0 ? 'tile-ok' : 'tile-alarm'}`}>
        <span className="tile-label">Drift</span>
        <span className="tile-value" data-testid="count-drift">
          {formatCount(counts.drift)}
        </span>
        <span className="tile-note">{counts.drift === 0 ? 'invariant holds' : 'invariant broken'}</span>
      </div>
    </div>
  );
}
