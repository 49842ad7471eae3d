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
 * the same section land on different blocks. Pure apart from `random`. The rule in its plainest form: the hold
 * path runs `bestBlocks`, which is tested against this with `pickCandidates`.
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
        blocks.push({ seats: block, score, tier: tierOf(rowIndex, score, quantity) });
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

/** A block's tier, from its total quality (the same rule as rankBlocks). */
function tierOf(rowIndex: number, score: number, quantity: number): number {
  return Math.floor(rowIndex / ROWS_PER_TIER) * 100 + Math.floor((score / quantity - rowIndex * 100) / BAND_WIDTH);
}

/** Seat order: by row, then seat number. */
export const bySeat = (a: SeatCell, b: SeatCell) => a.rowIndex - b.rowIndex || a.seatNumber - b.seatNumber;

function inSeatOrder(seats: readonly SeatCell[]): boolean {
  for (let i = 1; i < seats.length; i++) if (bySeat(seats[i - 1]!, seats[i]!) > 0) return false;
  return true;
}

/**
 * `pickCandidates(rankBlocks(available, quantity, random), max, perTier)` without ranking every block: the hold
 * path's version. Blocks are found in one pass over the seats in seat order (the availability cache keeps its
 * views so; other input is sorted first) with a running sum, and kept as a start index until picked; tiers are
 * visited best first (a pass each) and each is shuffled only as far as it is walked (a lazy Fisher-Yates), so a request that
 * finds its candidates in the front tiers costs a few random draws instead of a shuffle and a sort of every block
 * of the section. The order it tries blocks in has the reference's distribution (uniform within a tier, tiers best
 * first); with a `random` that always returns 0 both pick exactly the same blocks from seats in seat order.
 */
export function bestBlocks<S extends SeatCell>(
  available: readonly S[],
  quantity: number,
  max: number,
  perTier = Infinity,
  random: () => number = Math.random,
): Block<S>[] {
  if (quantity < 1 || max < 1) return [];
  const seats = inSeatOrder(available) ? available : [...available].sort(bySeat);
  // Every block by its first seat's index, with its score and tier, in seat order.
  const starts: number[] = [];
  const scores: number[] = [];
  const tiers: number[] = [];
  let runStart = 0;
  for (let i = 1; i <= seats.length; i++) {
    const prev = seats[i - 1]!;
    const cur = seats[i];
    if (cur && cur.rowIndex === prev.rowIndex && cur.seatNumber === prev.seatNumber + 1) continue;
    if (i - runStart >= quantity) {
      let score = 0;
      for (let k = runStart; k < runStart + quantity; k++) score += seats[k]!.quality;
      for (let first = runStart; ; first++) {
        starts.push(first);
        scores.push(score);
        tiers.push(tierOf(prev.rowIndex, score, quantity));
        if (first + quantity >= i) break;
        score += seats[first + quantity]!.quality - seats[first]!.quality;
      }
    }
    runStart = i;
  }
  const n = starts.length;
  const used = new Set<number>();
  const out: Block<S>[] = [];
  const group: number[] = [];
  // Tier by tier, best first: each a pass for the next tier up and its blocks (in seat order). A request rarely
  // walks more than two or three tiers, so this beats sorting every block.
  for (let floor = -Infinity; out.length < max;) {
    let tier = Infinity;
    for (let i = 0; i < n; i++) if (tiers[i]! > floor && tiers[i]! < tier) tier = tiers[i]!;
    if (tier === Infinity) break;
    floor = tier;
    group.length = 0;
    for (let i = 0; i < n; i++) if (tiers[i] === tier) group.push(i);
    let taken = 0;
    for (let i = 0; i < group.length && taken < perTier && out.length < max; i++) {
      const j = i + Math.floor(random() * (group.length - i));
      const x = group[j]!;
      group[j] = group[i]!;
      group[i] = x;
      const first = starts[x]!;
      let free = true;
      for (let k = first; k < first + quantity && free; k++) free = !used.has(seats[k]!.id);
      if (!free) continue;
      const block = seats.slice(first, first + quantity);
      for (const seat of block) used.add(seat.id);
      out.push({ seats: block, score: scores[x]!, tier });
      taken++;
    }
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
