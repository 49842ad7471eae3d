import type { RouterOutputs } from '@onsale/bff/root';
import { formatMoney } from '@onsale/shared/words';
import { CountCells, GridTable } from './GridTable';

export type Section = RouterOutputs['events']['byId']['sections'][number];

/** The event's sections with their prices in the event's `currency` (for the viewer's locale) and live counts. */
export function SectionTable({ sections, currency }: { sections: Section[]; currency: string }) {
  return (
    <GridTable
      columns={[
        'Section',
        'Price',
        { label: 'Capacity', num: true },
        { label: 'Available', num: true },
        { label: 'Held', num: true },
        { label: 'Sold', num: true },
      ]}
      testId="sections-table"
    >
      {sections.map((s) => (
        <tr key={s.code} data-testid="section-row" data-section={s.code}>
          <td>
            <strong>{s.code}</strong> <span className="muted">{s.name}</span>
          </td>
          <td>
            <span data-testid="section-price">{formatMoney(s.priceCents, currency)}</span> <span className="muted">{s.priceLevelName}</span>
          </td>
          <CountCells prefix="section" of={s} />
        </tr>
      ))}
    </GridTable>
  );
}
