import { firstBlock, sectionServes, type Criteria } from './criteria.js';
import type { PoolSeat } from './pool.repository.js';

export { poolSeats, type PoolSeat } from './pool.repository.js';

/** The best block of the fan's quantity in the pool that their criteria accept (best section first), or null. */
export function blockFor(c: Criteria, pool: PoolSeat[]): PoolSeat[] | null {
  const bySection = new Map<string, PoolSeat[]>();
  for (const s of pool) bySection.set(s.sectionCode, [...(bySection.get(s.sectionCode) ?? []), s]);
  const sections = [...bySection.values()].sort((a, b) => a[0]!.qualityRank - b[0]!.qualityRank || a[0]!.priceCents - b[0]!.priceCents);
  for (const seats of sections) {
    const first = seats[0]!;
    const s = { section: first.sectionCode, priceLevel: first.priceLevel, priceCents: first.priceCents, longestRun: seats.length };
    if (!sectionServes({ ...c, quantity: 1 }, s)) continue;
    const block = firstBlock(seats, c.quantity);
    if (block) return block;
  }
  return null;
}
