import type { EventSpec } from './events.schema.js';

export interface SeatSpec {
  sectionCode: string;
  rowLabel: string;
  rowIndex: number;
  seatNumber: number;
  /** Lower is better: front rows first, then seats nearer the centre of the row. */
  quality: number;
  /** The presale tier that owns the seat (allocations/assign.ts); absent or null: the event has no tiers. */
  allocation?: string | null;
}

/** Row labels A..Z, then AA, AB, ... */
export function rowLabel(index: number): string {
  let n = index;
  let label = '';
  do {
    label = String.fromCharCode(65 + (n % 26)) + label;
    n = Math.floor(n / 26) - 1;
  } while (n >= 0);
  return label;
}

/** Quality of a seat within its section: row distance dominates, centrality breaks ties within a row. */
export function seatQuality(rowIndex: number, seatNumber: number, seatsInRow: number): number {
  const centre = (seatsInRow + 1) / 2;
  const offCentre = Math.abs(seatNumber - centre) / Math.max(1, seatsInRow / 2); // 0..1
  return rowIndex * 100 + Math.round(offCentre * 50);
}

/** Expands the sections of an event file into seat rows. Pure. */
export function expandSeats(spec: Pick<EventSpec, 'sections'>): SeatSpec[] {
  const seats: SeatSpec[] = [];
  for (const s of spec.sections) {
    if (s.kind === 'GA') continue; // general admission is a counter (inventory/ga.ts), not seat rows
    const rows = s.rows ?? Array.from({ length: s.rowCount ?? 0 }, (_, i) => ({ label: rowLabel(i), seats: s.seatsPerRow ?? 0 }));
    rows.forEach((r, rowIndex) => {
      for (let n = 1; n <= r.seats; n++) {
        seats.push({ sectionCode: s.code, rowLabel: r.label, rowIndex, seatNumber: n, quality: seatQuality(rowIndex, n, r.seats) });
      }
    });
  }
  return seats;
}
