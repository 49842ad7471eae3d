import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { longestRun, pickCandidates, rankBlocks, type SeatCell } from './best-available.js';
import { seatQuality } from '../events/layout.js';

function grid(rows: number, perRow: number, skip: (r: number, n: number) => boolean = () => false): SeatCell[] {
  const out: SeatCell[] = [];
  let id = 1;
  for (let r = 0; r < rows; r++)
    for (let n = 1; n <= perRow; n++) {
      if (!skip(r, n)) out.push({ id, rowIndex: r, seatNumber: n, quality: seatQuality(r, n, perRow) });
      id++;
    }
  return out;
}

describe('rankBlocks', () => {
  it('returns only contiguous blocks within one row', () => {
    const seats = grid(3, 10, (r, n) => n === 5);
    for (const b of rankBlocks(seats, 3)) {
      expect(new Set(b.seats.map((s) => s.rowIndex)).size).toBe(1);
      b.seats.forEach((s, i) => i > 0 && expect(s.seatNumber).toBe(b.seats[i - 1]!.seatNumber + 1));
    }
  });

  it('prefers the front rows, central seats first', () => {
    const [first] = rankBlocks(grid(5, 20), 2);
    expect(first!.seats[0]!.rowIndex).toBeLessThanOrEqual(1); // the front tier is two rows deep
    expect(Math.abs(first!.seats[0]!.seatNumber - 10)).toBeLessThanOrEqual(4);
  });

  it('spreads equally good blocks across calls (randomized within a tier)', () => {
    const seats = grid(2, 30);
    const firsts = new Set<number>();
    for (let i = 0; i < 50; i++) firsts.add(rankBlocks(seats, 2)[0]!.seats[0]!.id);
    expect(firsts.size).toBeGreaterThan(3);
  });

  it('has tiers in non-decreasing order and finds every block (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 25 }), fc.integer({ min: 1, max: 8 }), fc.array(fc.nat(200)), (rows, perRow, qty, holes) => {
        const holeSet = new Set(holes);
        const seats = grid(rows, perRow, (r, n) => holeSet.has(r * perRow + n));
        const blocks = rankBlocks(seats, qty);
        for (let i = 1; i < blocks.length; i++) expect(blocks[i]!.tier).toBeGreaterThanOrEqual(blocks[i - 1]!.tier);
        // reference count: windows of qty consecutive available seats
        let expected = 0;
        const avail = new Set(seats.map((s) => `${s.rowIndex}:${s.seatNumber}`));
        for (let r = 0; r < rows; r++)
          for (let n = 1; n + qty - 1 <= perRow; n++) {
            let ok = true;
            for (let k = 0; k < qty; k++) ok &&= avail.has(`${r}:${n + k}`);
            if (ok) expected++;
          }
        expect(blocks.length).toBe(expected);
        expect(longestRun(seats) >= qty).toBe(expected > 0);
      }),
    );
  });
});

describe('pickCandidates', () => {
  it('never returns two blocks sharing a seat', () => {
    const picked = pickCandidates(rankBlocks(grid(2, 10), 3), 5);
    const ids = picked.flatMap((b) => b.seats.map((s) => s.id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(picked.length).toBeGreaterThanOrEqual(4); // greedy over random order: at least 2 disjoint blocks per row
  });
});
