import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bestBlocks, longestRun, pickCandidates, rankBlocks, type SeatCell } from './best-available.js';
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
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 25 }),
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.nat(200)),
        (rows, perRow, qty, holes) => {
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
        },
      ),
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

describe('bestBlocks', () => {
  const holesOf = (rows: number, perRow: number, holes: number[]) => {
    const holeSet = new Set(holes);
    return grid(rows, perRow, (r, n) => holeSet.has(r * perRow + n));
  };

  it('picks exactly what ranking every block and picking from the ranking picks, with the randomness taken out, whatever the input order (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.nat(260)),
        fc.integer({ min: 1, max: 12 }),
        fc.oneof(fc.constant(Infinity), fc.integer({ min: 1, max: 4 })),
        (rows, perRow, qty, holes, max, perTier) => {
          const seats = holesOf(rows, perRow, holes);
          // Input out of seat order is sorted first: the picks are the reference's on the seats in seat order.
          const shuffled = [...seats].sort((a, b) => ((a.id * 7919) % 101) - ((b.id * 7919) % 101));
          const zero = () => 0;
          expect(bestBlocks(shuffled, qty, max, perTier, zero)).toEqual(pickCandidates(rankBlocks(seats, qty, zero), max, perTier));
        },
      ),
    );
  });

  it("with real randomness: disjoint whole blocks, tiers best first from the reference's best, at most perTier from a tier", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.nat(260)),
        fc.integer({ min: 0, max: 2 ** 31 }),
        (rows, perRow, qty, holes, seed) => {
          const seats = holesOf(rows, perRow, holes);
          let x = seed | 1;
          const random = () => (x = (x * 48271) % 2147483647) / 2147483647;
          const picked = bestBlocks(seats, qty, 8, 3, random);
          const ids = picked.flatMap((b) => b.seats.map((s) => s.id));
          expect(new Set(ids).size).toBe(ids.length);
          for (const b of picked) {
            expect(b.seats).toHaveLength(qty);
            b.seats.forEach(
              (s, i) => i > 0 && expect([s.rowIndex, s.seatNumber]).toEqual([b.seats[i - 1]!.rowIndex, b.seats[i - 1]!.seatNumber + 1]),
            );
          }
          for (let i = 1; i < picked.length; i++) expect(picked[i]!.tier).toBeGreaterThanOrEqual(picked[i - 1]!.tier);
          const perTierCount = new Map<number, number>();
          for (const b of picked) perTierCount.set(b.tier, (perTierCount.get(b.tier) ?? 0) + 1);
          for (const c of perTierCount.values()) expect(c).toBeLessThanOrEqual(3);
          // The best tier with any block is always where it starts.
          const ranked = rankBlocks(seats, qty);
          expect(picked.length > 0).toBe(ranked.length > 0);
          if (ranked.length > 0) expect(picked[0]!.tier).toBe(ranked[0]!.tier);
        },
      ),
    );
  });

  it('spreads equally good blocks across calls, as the reference does', () => {
    const seats = grid(2, 30);
    const firsts = new Set<number>();
    for (let i = 0; i < 50; i++) firsts.add(bestBlocks(seats, 2, 1)[0]!.seats[0]!.id);
    expect(firsts.size).toBeGreaterThan(3);
  });
});
