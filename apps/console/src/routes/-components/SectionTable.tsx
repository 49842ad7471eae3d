import type { RouterOutputs } from '@onsale/bff/root';
import { formatCents, formatCount } from './format';

export type Section = RouterOutputs['events']['byId']['sections'][number];

export function SectionTable({ sections }: { sections: Section[] }) {
  return (
    <table className="grid" data-testid="sections-table">
      <thead>
        <tr>
          <th>Section</th>
          <th>Price</th>
          <th className="num">Capacity</th>
          <th className="num">Available</th>
          <th className="num">Held</th>
          <th className="num">Sold</th>
        </tr>
      </thead>
      <tbody>
        {sections.map((s) => (
          <tr key={s.code} data-testid="section-row" data-section={s.code}>
            <td>
              <strong>{s.code}</strong> <span className="muted">{s.name}</span>
            </td>
            <td>
              {formatCents(s.priceCents)} <span className="muted">{s.priceLevelName}</span>
            </td>
            <td className="num">{formatCount(s.capacity)}</td>
            <td className="num" data-testid="section-available">
              {formatCount(s.available)}
            </td>
            <td className="num" data-testid="section-held">
              {formatCount(s.held)}
            </td>
            <td className="num" data-testid="section-sold">
              {formatCount(s.sold)}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
