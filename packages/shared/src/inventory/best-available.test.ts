import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bestBlocks,
  bestSplit,
  fillableLengths,
  hasRunOf,
  leftAlone,
  longestRun,
  pickCandidates,
  rankBlocks,
  type Block,
  type SeatCell,
} from './best-available.js';
import { PartyMix } from './party-mix.js';
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
          expect(hasRunOf(seats, qty)).toBe(expected > 0);
          expect(hasRunOf([...seats].reverse(), qty)).toBe(expected > 0);
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

// "No single seats": the rule as best-available applies it, against brute force over every block of the view.
describe('the single-seat rule', () => {
  /** Seats the block leaves alone: the free seats right beside it whose other side is taken or the row's end. */
  const alone = (view: readonly SeatCell[], block: readonly SeatCell[]) => {
    const free = new Set(view.map((s) => `${s.rowIndex}:${s.seatNumber}`));
    const row = block[0]!.rowIndex;
    const lo = block[0]!.seatNumber;
    const hi = block[block.length - 1]!.seatNumber;
    let n = 0;
    if (free.has(`${row}:${lo - 1}`) && !free.has(`${row}:${lo - 2}`)) n++;
    if (free.has(`${row}:${hi + 1}`) && !free.has(`${row}:${hi + 2}`)) n++;
    return n;
  };
  const seeded = (seed: number) => {
    let x = seed | 1;
    return () => (x = (x * 48271) % 2147483647) / 2147483647;
  };
  const holesOf = (rows: number, perRow: number, holes: number[]) => {
    const holeSet = new Set(holes);
    return grid(rows, perRow, (r, n) => holeSet.has(r * perRow + n));
  };

  it('never offers a block that leaves a seat alone while another block leaves none; otherwise the fewest (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.nat(130)),
        fc.integer({ min: 0, max: 2 ** 31 }),
        (rows, perRow, qty, holes, seed) => {
          const seats = holesOf(rows, perRow, holes);
          const every = rankBlocks(seats, qty);
          const fewest = Math.min(...every.map((b) => alone(seats, b.seats)));
          const picked = bestBlocks(seats, qty, 8, 3, seeded(seed), {});
          expect(picked.length > 0).toBe(every.length > 0);
          for (const b of picked) expect(alone(seats, b.seats)).toBe(fewest);
          // Disjoint whole blocks, as without the rule.
          const ids = picked.flatMap((b) => b.seats.map((s) => s.id));
          expect(new Set(ids).size).toBe(ids.length);
        },
      ),
    );
  });

  it('prefers blocks whose leftover runs the coming parties can fill, before a better tier that strands one (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 2, max: 20 }),
        fc.array(fc.nat(130)),
        fc.integer({ min: 0, max: 2 ** 31 }),
        (rows, perRow, holes, seed) => {
          const seats = holesOf(rows, perRow, holes);
          const pairs = fillableLengths([2]);
          const leftovers = (b: Block) => {
            const free = new Set(seats.map((s) => `${s.rowIndex}:${s.seatNumber}`));
            const run = (from: number, step: number) => {
              let n = 0;
              while (free.has(`${b.seats[0]!.rowIndex}:${from + step * n}`)) n++;
              return n;
            };
            return [run(b.seats[0]!.seatNumber - 1, -1), run(b.seats[b.seats.length - 1]!.seatNumber + 1, 1)];
          };
          const fits = (b: Block) => leftovers(b).every((r) => r !== 1 && pairs[r] === 1);
          const [first] = bestBlocks(seats, 2, 1, 3, seeded(seed), { fills: pairs });
          const anyFits = rankBlocks(seats, 2).some(fits);
          if (anyFits) expect(fits(first!)).toBe(true);
        },
      ),
    );
  });

  it('leaves the row as without the rule when it is off: the centre seat of three, alone between two free ones', () => {
    const row = grid(1, 3);
    const zero = () => 0;
    expect(bestBlocks(row, 1, 1, 3, zero)[0]!.seats[0]!.seatNumber).toBe(2);
    expect([1, 3]).toContain(bestBlocks(row, 1, 1, 3, zero, {})[0]!.seats[0]!.seatNumber);
    // Two of three: either way one seat is left alone, and it cannot be helped.
    expect(bestBlocks(row, 2, 1, 3, zero, {})).toHaveLength(1);
  });

  it('gives a party of one a seat already alone before it breaks a run, whatever the tiers', () => {
    // Row 0 free but for seat 5 taken; row 9 has seat 3 alone (2 and 4 taken).
    const seats = grid(10, 10, (r, n) => (r === 0 && n === 5) || (r === 9 && n !== 3) || (r > 0 && r < 9));
    const [first] = bestBlocks(seats, 1, 1, 3, Math.random, {});
    expect([first!.seats[0]!.rowIndex, first!.seats[0]!.seatNumber]).toEqual([9, 3]);
    // Without the rule, the front row as before.
    expect(bestBlocks(seats, 1, 1, 3, Math.random)[0]!.seats[0]!.rowIndex).toBe(0);
  });

  /** A whole sale through bestBlocks: parties from `sizes` in turn, each taking the first candidate, until none fits. */
  const sell = (seats: SeatCell[], sizes: number[], rule: boolean, seed: number) => {
    const random = seeded(seed);
    const mix = new PartyMix();
    let view = [...seats];
    let refusedInARow = 0;
    for (let i = 0; refusedInARow < sizes.length; i++) {
      const q = sizes[i % sizes.length]!;
      const [block] = bestBlocks(view, q, 1, 3, random, rule ? { fills: mix.record('e', q) } : undefined);
      if (!block) {
        refusedInARow++;
        continue;
      }
      refusedInARow = 0;
      const taken = new Set(block.seats.map((s) => s.id));
      view = view.filter((s) => !taken.has(s.id));
    }
    return view.length;
  };

  it('sells every seat of a 300-seat event where everyone wants two; without the rule, seats are stranded', () => {
    const seats = grid(15, 20);
    expect(sell(seats, [2], true, 7)).toBe(0);
    // The same sale without the rule strands seats in odd runs (the same seed, so the same draws).
    const without = [1, 2, 3, 4, 5].map((seed) => sell(seats, [2], false, seed));
    expect(Math.max(...without)).toBeGreaterThan(0);
  });

  it('sells every seat when the party mix allows it, and leaves only seats that could not be helped otherwise (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 12 }),
        fc.constantFrom(2, 3, 4),
        fc.integer({ min: 0, max: 2 ** 31 }),
        (rows, multiple, k, seed) => {
          // Everyone wants k, and every row is a multiple of k: all sold.
          expect(sell(grid(rows, k * multiple), [k], true, seed)).toBe(0);
          // Everyone wants two and every row is odd: one seat a row cannot be helped, and no more is left.
          expect(sell(grid(rows, 2 * multiple + 1), [2], true, seed)).toBe(rows);
        },
      ),
      { numRuns: 60 },
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 25 }),
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 0, max: 2 ** 31 }),
        (rows, perRow, mix, seed) => {
          // Parties of 1-4 in any mix that includes a party of one: every seat sold.
          expect(sell(grid(rows, perRow), [...mix, 1], true, seed)).toBe(0);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('leftAlone (exact seats)', () => {
  const row = (free: number[]) => free.map((n) => ({ id: n, rowIndex: 0, seatNumber: n, quality: n }));

  it('refuses a pick that leaves a seat alone when as many seats elsewhere in the run would not, and says which', () => {
    // Seats 1-6 free; picking 2-3 leaves seat 1 alone; 1-2 (or 3-4, 5-6...) would not.
    const r = leftAlone(row([1, 2, 3, 4, 5, 6]), new Set([2, 3]));
    expect(r.avoidable.map((s) => s.seatNumber)).toEqual([1]);
    expect(r.instead.map((b) => b.map((s) => s.seatNumber))).toEqual([[1, 2]]);
    // At a row's end, and next to a taken seat: 5 is taken; picking 2-3 leaves 1 and 4 alone; 1-2 or 3-4 would not.
    const ends = leftAlone(row([1, 2, 3, 4, 6]), new Set([2, 3]));
    expect(ends.avoidable.map((s) => s.seatNumber)).toEqual([1, 4]);
    expect(ends.instead.map((b) => b.map((s) => s.seatNumber))).toEqual([[1, 2]]);
  });

  it('allows what cannot be helped: two of three free seats, or the seat between two seats the fan picked', () => {
    expect(leftAlone(row([4, 5, 6]), new Set([4, 5])).avoidable).toEqual([]);
    expect(leftAlone(row([1, 2, 3, 4, 5, 6]), new Set([2, 4])).avoidable.map((s) => s.seatNumber)).toEqual([1]);
    expect(leftAlone(row([1, 2, 3]), new Set([1, 3])).avoidable).toEqual([]);
    // A seat already alone before the pick is not the pick's doing.
    expect(leftAlone(row([1, 3, 4]), new Set([3, 4])).avoidable).toEqual([]);
  });

  it('a pick it allows leaves no seat alone that a pick of as many adjacent seats in that run would not (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.boolean(), { minLength: 1, maxLength: 20 }),
        fc.array(fc.nat(19), { minLength: 1, maxLength: 4 }),
        (freeMask, p) => {
          const free = freeMask.flatMap((f, i) => (f ? [i + 1] : []));
          const picks = new Set(p.map((i) => i + 1).filter((n) => free.includes(n)));
          if (picks.size === 0) return;
          const r = leftAlone(row(free), picks);
          const freeSet = new Set(free);
          // The run of free seats around a seat.
          const runOf = (n: number) => {
            let lo = n;
            let hi = n;
            while (freeSet.has(lo - 1)) lo--;
            while (freeSet.has(hi + 1)) hi++;
            return { lo, hi };
          };
          for (const b of r.instead) {
            // As many seats as the pick has in that run, adjacent, and leaving nobody alone there.
            const { lo, hi } = runOf(b[0]!.seatNumber);
            expect(b).toHaveLength([...picks].filter((n) => n >= lo && n <= hi).length);
            const left = b[0]!.seatNumber - lo;
            const right = hi - b[b.length - 1]!.seatNumber;
            expect([left, right]).not.toContain(1);
          }
          // A pick allowed in a run: either it leaves nobody alone there, or no placement of as many seats would.
          const allowed = new Set(r.avoidable.map((s) => s.seatNumber));
          for (const n of free) {
            if (picks.has(n) || allowed.has(n)) continue;
            const isAlone = !(freeSet.has(n - 1) && !picks.has(n - 1)) && !(freeSet.has(n + 1) && !picks.has(n + 1));
            if (!isAlone) continue;
            const { lo, hi } = runOf(n);
            if (lo === hi) continue; // alone before the pick
            if (picks.has(n - 1) && picks.has(n + 1)) continue; // between the fan's own seats
            const k = [...picks].filter((p2) => p2 >= lo && p2 <= hi).length;
            const len = hi - lo + 1;
            for (let o = 0; o + k <= len; o++) expect(o === 1 || len - o - k === 1).toBe(true);
          }
        },
      ),
    );
  });
});

describe('bestSplit', () => {
  it('seats four who cannot sit together as two pairs near each other, and offers nothing when they can', () => {
    // Two rows of six, seats 3 and 4 taken in each: runs of two only.
    const seats = grid(2, 6, (_r, n) => n === 3 || n === 4);
    const split = bestSplit(seats, 4, () => 0, {})!;
    expect(split.map((b) => b.seats.length)).toEqual([2, 2]);
    const rows = split.map((b) => b.seats[0]!.rowIndex);
    expect(Math.abs(rows[0]! - rows[1]!)).toBeLessThanOrEqual(1);
    expect(bestSplit(grid(1, 6), 4, () => 0, {})).toBeNull();
    // Fewer seats than the party: no split.
    expect(
      bestSplit(
        grid(1, 3, (_r, n) => n === 2),
        3,
        () => 0,
        {},
      ),
    ).toBeNull();
  });

  it('splits as evenly and into as few blocks as the section allows (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.nat(70)),
        fc.integer({ min: 2, max: 6 }),
        (rows, perRow, holes, qty) => {
          const holeSet = new Set(holes);
          const seats = grid(rows, perRow, (r, n) => holeSet.has(r * perRow + n));
          const split = bestSplit(seats, qty, () => 0, {});
          if (seats.length < qty || longestRun(seats) >= qty) {
            expect(split).toBeNull();
            return;
          }
          expect(split).not.toBeNull();
          const ids = split!.flatMap((b) => b.seats.map((s) => s.id));
          expect(ids).toHaveLength(qty);
          expect(new Set(ids).size).toBe(qty);
          const sizes = split!.map((b) => b.seats.length);
          expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
          for (const b of split!) b.seats.forEach((s, i) => i > 0 && expect(s.seatNumber).toBe(b.seats[i - 1]!.seatNumber + 1));
        },
      ),
    );
  });
});
