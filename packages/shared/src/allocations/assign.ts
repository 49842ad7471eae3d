import type { SeatSpec } from '../events/layout.js';
import type { AllocationSpec } from './allocations.schema.js';

/**
 * Splits every reserved section between the tiers by share, in seat order (front row first, left to right):
 * tier i takes the seats from round(N x shares before it) to round(N x shares through it); the last tier (the
 * general sale) takes the rest. Earlier tiers therefore sit nearer the front, and each tier's seats in a section
 * are one run, so best-available still finds seats together. Pure: the same file always gives the same split.
 */
export function assignAllocations<S extends Pick<SeatSpec, 'sectionCode' | 'rowIndex' | 'seatNumber'>>(seats: S[], tiers: AllocationSpec[] | undefined): (S & { allocation: string | null })[] {
  if (!tiers || tiers.length === 0) return seats.map((s) => ({ ...s, allocation: null }));
  const bySection = new Map<string, S[]>();
  for (const s of seats) {
    let list = bySection.get(s.sectionCode);
    if (!list) bySection.set(s.sectionCode, (list = []));
    list.push(s);
  }
  const out: (S & { allocation: string | null })[] = [];
  for (const list of bySection.values()) {
    list.sort((a, b) => a.rowIndex - b.rowIndex || a.seatNumber - b.seatNumber);
    const n = list.length;
    let cumulative = 0;
    let start = 0;
    tiers.forEach((t, i) => {
      const last = i === tiers.length - 1;
      cumulative += last ? 0 : (t.share ?? 0);
      const end = last ? n : Math.min(n, Math.round(n * cumulative));
      for (let k = start; k < end; k++) out.push({ ...list[k]!, allocation: t.code });
      start = Math.max(start, end);
    });
  }
  return out;
}
