import type { RouterOutputs } from '@onsale/bff/root';
import { formatCents } from './format';
import { CountCells, GridTable } from './GridTable';

export type Section = RouterOutputs['events']['byId']['sections'][number];

export function SectionTable({ sections }: { sections: Section[] }) {
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
            {formatCents(s.priceCents)} <span className="muted">{s.priceLevelName}</span>
          </td>
          <CountCells prefix="section" of={s} />
        </tr>
      ))}
    </GridTable>
  );
}
