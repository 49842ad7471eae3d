import type { ReactNode } from 'react';
import { formatCount } from './format';

/** A column heading; `num` right-aligns a column of figures, and '' heads a column of actions. */
export type Column = string | { label: string; num?: boolean };

/** The console's data table: one heading row, then the caller's rows. */
export function GridTable({ columns, testId, children }: { columns: Column[]; testId?: string; children: ReactNode }) {
  return (
    <table className="grid" data-testid={testId}>
      <thead>
        <tr>
          {columns.map((c, i) => {
            const col = typeof c === 'string' ? { label: c } : c;
            return (
              <th key={i} className={col.num ? 'num' : undefined}>
                {col.label}
              </th>
            );
          })}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}

/** A titled block of one table, or of `empty` in its place while there are no rows. */
export function TableBlock<T>(p: {
  title: string;
  items: T[];
  empty: string;
  columns: Column[];
  testId: string;
  row: (item: T) => ReactNode;
}) {
  return (
    <div className="section-block">
      <h3>{p.title}</h3>
      {p.items.length === 0 ? (
        <p className="muted">{p.empty}</p>
      ) : (
        <GridTable columns={p.columns} testId={p.testId}>
          {p.items.map(p.row)}
        </GridTable>
      )}
    </div>
  );
}

type Figure = 'capacity' | 'available' | 'held' | 'sold';

/** An inventory line's figures as number cells, each with the test id `<prefix>-<figure>`. */
export function CountCells({ prefix, of }: { prefix: string; of: Record<Figure, number> }) {
  return (
    <>
      {(['capacity', 'available', 'held', 'sold'] as const).map((f) => (
        <td key={f} className="num" data-testid={`${prefix}-${f}`}>
          {formatCount(of[f])}
        </td>
      ))}
    </>
  );
}
