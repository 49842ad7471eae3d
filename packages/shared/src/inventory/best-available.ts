/** A seat as best-available sees it: where it is and how good it is (lower quality is better). */
export interface SeatCell {
  id: number;
  rowIndex: number;
  seatNumber: number;
  quality: number;
}

/** A contiguous block of seats in one row, and the tier it belongs to. */
export interface Block<S extends SeatCell = SeatCell> {
  seats: S[];
  score: number;
  tier: number;
}

/**
 * Blocks within the same pair of rows and the same centrality band are "equally good" and are shuffled:
 * tiers wide enough that concurrent requests for one section land on different blocks.
 */
const ROWS_PER_TIER = 2;
const BAND_WIDTH = 25;

/**
 * Every block of `quantity` adjacent available seats (same row, consecutive seat numbers), ranked best
 * first: by tier (row, then centrality band), randomized within a tier so that concurrent requests for
 * the same section land on different blocks. Pure apart from `random`.
 */
export function rankBlocks<S extends SeatCell>(available: readonly S[], quantity: number, random: () => number = Math.random): Block<S>[] {
  if (quantity < 1) return [];
  const rows = new Map<number, S[]>();
  for (const s of available) {
    const row = rows.get(s.rowIndex);
    if (row) row.push(s);
    else rows.set(s.rowIndex, [s]);
  }
  const blocks: Block<S>[] = [];
  for (const [rowIndex, seats] of rows) {
    seats.sort((a, b) => a.seatNumber - b.seatNumber);
    let runStart = 0;
    for (let i = 1; i <= seats.length; i++) {
      const broken = i === seats.length || seats[i]!.seatNumber !== seats[i - 1]!.seatNumber + 1;
      if (!broken) continue;
      for (let s = runStart; s + quantity <= i; s++) {
        const block = seats.slice(s, s + quantity);
        const score = block.reduce((acc, x) => acc + x.quality, 0);
        const meanOffCentre = score / quantity - rowIndex * 100;
        blocks.push({ seats: block, score, tier: Math.floor(rowIndex / ROWS_PER_TIER) * 100 + Math.floor(meanOffCentre / BAND_WIDTH) });
      }
      runStart = i;
    }
  }
  // Sort by tier, then shuffle inside each tier (decorate with a random key).
  const keyed = blocks.map((b) => ({ b, k: random() }));
  keyed.sort((x, y) => x.b.tier - y.b.tier || x.k - y.k);
  return keyed.map((x) => x.b);
}

/**
 * Picks up to `max` candidate blocks to try in order: best tiers first, at most `perTier` from one tier (so
 * a contended tier is left for the next one quickly), never two blocks that share a seat.
 */
export function pickCandidates<S extends SeatCell>(ranked: readonly Block<S>[], max: number, perTier = Infinity): Block<S>[] {
  const used = new Set<number>();
  const out: Block<S>[] = [];
  const tiers = new Map<number, number>();
  for (const b of ranked) {
    if (out.length >= max) break;
    if ((tiers.get(b.tier) ?? 0) >= perTier) continue;
    if (b.seats.some((s) => used.has(s.id))) continue;
    tiers.set(b.tier, (tiers.get(b.tier) ?? 0) + 1);
    for (const s of b.seats) used.add(s.id);
    out.push(b);
  }
  return out;
}

/** The longest run of adjacent available seats in any row: tells "sold out" from "not together". */
export function longestRun(available: readonly SeatCell[]): number {
  const rows = new Map<number, number[]>();
  for (const s of available) (rows.get(s.rowIndex) ?? rows.set(s.rowIndex, []).get(s.rowIndex)!).push(s.seatNumber);
  let best = 0;
  for (const nums of rows.values()) {
    nums.sort((a, b) => a - b);
    let run = 0;
    for (let i = 0; i < nums.length; i++) {
      run = i > 0 && nums[i] === nums[i - 1]! + 1 ? run + 1 : 1;
      best = Math.max(best, run);
    }
  }
  return best;
}
