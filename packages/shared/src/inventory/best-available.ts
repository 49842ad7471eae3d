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

/**
 * "No single seats", the rule seat-map vendors apply: a hold must not leave one seat alone between taken seats, or at
 * a row's end next to a taken seat (a run of one free seat that only a party of one can use), unless that seat cannot
 * be helped. Runs are judged on the seats a request can see (its view of the section, less the seats its process is
 * attempting): a seat that is not in the view is taken, and a row's end is where its seats stop.
 *
 * `fills` goes one step further: `fills[r]` is 1 when a run of `r` free seats can be filled exactly by the parties
 * still coming (see `fillableLengths`); best-available prefers blocks whose leftover runs can be, so a sale where
 * everyone wants two does not leave a seat in every odd run. Lengths past its end count as fillable; absent: every
 * run of two or more is. And a party of one takes a seat already alone, if there is one, before it breaks a run.
 */
export interface SingleSeatRule {
  fills?: Uint8Array;
}

/** Orders a block leaving a run no coming party fills behind every block of every tier that leaves none. */
const MISFIT_RANK = 1e7;
/** Orders a block by the seats it leaves alone before anything else (tiers stay well inside +-1e6). */
const ALONE_RANK = 1e8;
/** Orders a party of one's seat in a run of several behind every seat already alone, of any tier. */
const BREAK_RANK = 1e6;

const fillable = (fills: Uint8Array | undefined, r: number) => fills === undefined || r >= fills.length || fills[r] === 1;

/** The lengths of run, up to `max`, that parties of the given sizes can fill exactly (an unbounded subset sum). Pure. */
export function fillableLengths(sizes: Iterable<number>, max = 255): Uint8Array {
  const out = new Uint8Array(max + 1);
  out[0] = 1;
  const parts = [...new Set(sizes)].filter((q) => Number.isInteger(q) && q >= 1 && q <= max);
  for (let r = 1; r <= max; r++) for (const q of parts) if (q <= r && out[r - q] === 1) out[r] = 1;
  return out;
}

/** The runs of adjacent available seats, row by row, each in seat order. `seats` in seat order. */
function runsOf<S extends SeatCell>(seats: readonly S[]): S[][] {
  const runs: S[][] = [];
  let run: S[] = [];
  for (const s of seats) {
    const last = run[run.length - 1];
    if (last && (last.rowIndex !== s.rowIndex || last.seatNumber + 1 !== s.seatNumber)) {
      runs.push(run);
      run = [];
    }
    run.push(s);
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

/** What holding exact seats would leave alone, as the single-seat rule judges it. */
export interface LeftAlone<S extends SeatCell> {
  /** Seats the pick would leave alone that a pick of as many seats in the same run would not: the pick is refused. */
  avoidable: S[];
  /** For each run with an avoidable single: the same number of adjacent seats there that leave none, nearest the pick. */
  instead: S[][];
}

/**
 * Exact seats: which seats a pick leaves alone that it need not. `available` is the seats of the rows concerned that
 * are free now, the picked ones among them. A seat left alone cannot be helped, and is allowed, when no placement of
 * the pick's seats in its run of free seats would leave none (two seats picked of three left), or when the seats on
 * both sides of it are the fan's own pick (the fan asks for exactly the seats around it). Pure.
 */
export function leftAlone<S extends SeatCell>(available: readonly S[], picked: ReadonlySet<number>): LeftAlone<S> {
  const seats = inSeatOrder(available) ? available : [...available].sort(bySeat);
  const out: LeftAlone<S> = { avoidable: [], instead: [] };
  for (const run of runsOf(seats)) {
    const k = run.reduce((n, s) => n + (picked.has(s.id) ? 1 : 0), 0);
    if (k === 0) continue;
    const alone: S[] = [];
    for (let i = 0; i < run.length; i++) {
      if (picked.has(run[i]!.id)) continue;
      const leftTaken = i === 0 || picked.has(run[i - 1]!.id);
      const rightTaken = i === run.length - 1 || picked.has(run[i + 1]!.id);
      const between = i > 0 && i < run.length - 1 && picked.has(run[i - 1]!.id) && picked.has(run[i + 1]!.id);
      if (leftTaken && rightTaken && !between) alone.push(run[i]!);
    }
    if (alone.length === 0) continue;
    // A placement of k adjacent seats in this run that leaves no seat alone, nearest where the pick starts.
    const from = run.findIndex((s) => picked.has(s.id));
    let best = -1;
    for (let o = 0; o + k <= run.length; o++) {
      if (o === 1 || run.length - o - k === 1) continue;
      if (best < 0 || Math.abs(o - from) < Math.abs(best - from)) best = o;
    }
    if (best < 0) continue; // the row has no other way to fill: it cannot be helped
    out.avoidable.push(...alone);
    out.instead.push(run.slice(best, best + k));
  }
  return out;
}

/**
 * The best way to seat a party that cannot sit together in `available`: in as few blocks as can be found, sized as
 * evenly as possible (four as two pairs before three and one), the first where best-available would put it and the
 * rest as near it as they can be (a row behind or in front counting as two seats along the row), each under the single-seat rule. Null
 * when the party can sit together, or the section has fewer seats than the party. Pure apart from `random`.
 */
export function bestSplit<S extends SeatCell>(
  available: readonly S[],
  quantity: number,
  random: () => number = Math.random,
  rule?: SingleSeatRule,
): Block<S>[] | null {
  if (quantity < 2 || available.length < quantity) return null;
  const seats = inSeatOrder(available) ? available : [...available].sort(bySeat);
  const longest = longestRun(seats);
  if (longest >= quantity) return null;
  for (let k = 2; k <= quantity; k++) {
    const sizes = Array.from({ length: k }, (_, i) => Math.floor(quantity / k) + (i < quantity % k ? 1 : 0));
    if (sizes[0]! > longest) continue;
    let view: readonly S[] = seats;
    const blocks: Block<S>[] = [];
    for (const size of sizes) {
      const block = blocks.length === 0 ? bestBlocks(view, size, 1, Infinity, random, rule)[0] : nearestBlock(view, size, blocks[0]!, rule);
      if (!block) break;
      blocks.push(block);
      const taken = new Set(block.seats.map((s) => s.id));
      view = view.filter((s) => !taken.has(s.id));
    }
    if (blocks.length === k) return blocks;
  }
  return null;
}

/** The block of `quantity` seats nearest `anchor` (a row away counting as two seats along), under the single-seat rule. */
function nearestBlock<S extends SeatCell>(
  seats: readonly S[],
  quantity: number,
  anchor: Block<S>,
  rule?: SingleSeatRule,
): Block<S> | undefined {
  const row = anchor.seats[0]!.rowIndex;
  const centre = (anchor.seats[0]!.seatNumber + anchor.seats[anchor.seats.length - 1]!.seatNumber) / 2;
  let best: { seats: S[]; cost: number } | undefined;
  for (const run of runsOf(seats)) {
    for (let o = 0; o + quantity <= run.length; o++) {
      const left = o;
      const right = run.length - o - quantity;
      const alone = rule ? (left === 1 ? 1 : 0) + (right === 1 ? 1 : 0) : 0;
      const misfit = rule ? (left > 1 && !fillable(rule.fills, left) ? 1 : 0) + (right > 1 && !fillable(rule.fills, right) ? 1 : 0) : 0;
      const mid = run[o]!.seatNumber + (quantity - 1) / 2;
      // A row behind or in front counts as two seats along: a pair right behind the first sits nearer than one four
      // seats down the same row.
      const cost = alone * 1e9 + misfit * 1e6 + Math.abs(run[o]!.rowIndex - row) * 2 + Math.abs(mid - centre);
      if (!best || cost < best.cost) best = { seats: run.slice(o, o + quantity), cost };
    }
  }
  if (!best) return undefined;
  const score = best.seats.reduce((a, s) => a + s.quality, 0);
  return { seats: best.seats, score, tier: tierOf(best.seats[0]!.rowIndex, score, quantity) };
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
  rule?: SingleSeatRule,
): Block<S>[] {
  if (quantity < 1 || max < 1) return [];
  const seats = inSeatOrder(available) ? available : [...available].sort(bySeat);
  // Every block by its first seat's index, with its score and tier, in seat order; under the single-seat rule, with
  // the seats it leaves alone and the runs it leaves that the parties still coming cannot fill.
  const starts: number[] = [];
  const scores: number[] = [];
  const tiers: number[] = [];
  // Under the rule, each block's key orders it by the seats it leaves alone, then by the leftover runs the coming
  // parties cannot fill, then by tier: one number, so the walk below is the same with the rule or without it.
  const keys: number[] = rule ? [] : tiers;
  const fills = rule?.fills;
  let runStart = 0;
  for (let i = 1; i <= seats.length; i++) {
    const prev = seats[i - 1]!;
    const cur = seats[i];
    if (cur && cur.rowIndex === prev.rowIndex && cur.seatNumber === prev.seatNumber + 1) continue;
    if (i - runStart >= quantity) {
      let score = 0;
      for (let k = runStart; k < runStart + quantity; k++) score += seats[k]!.quality;
      for (let first = runStart; ; first++) {
        const tier = tierOf(prev.rowIndex, score, quantity);
        starts.push(first);
        scores.push(score);
        tiers.push(tier);
        if (rule) {
          const left = first - runStart;
          const right = i - first - quantity;
          const alone = (left === 1 ? 1 : 0) + (right === 1 ? 1 : 0);
          const misfit = (left > 1 && !fillable(fills, left) ? 1 : 0) + (right > 1 && !fillable(fills, right) ? 1 : 0);
          // A party of one takes a seat already alone before it breaks a run: only a party of one can ever use it.
          const breaks = quantity === 1 && i - runStart > 1 ? 1 : 0;
          keys.push(alone * ALONE_RANK + misfit * MISFIT_RANK + breaks * BREAK_RANK + tier);
        }
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
  // The rule offers only blocks that leave as few seats alone as the best one: none, unless no block can help it.
  let fewestAlone = -1;
  for (let floor = -Infinity; out.length < max;) {
    let key = Infinity;
    for (let i = 0; i < n; i++) if (keys[i]! > floor && keys[i]! < key) key = keys[i]!;
    if (key === Infinity) break;
    if (rule) {
      const alone = Math.floor((key + ALONE_RANK / 2) / ALONE_RANK);
      if (fewestAlone < 0) fewestAlone = alone;
      else if (alone > fewestAlone) break;
    }
    floor = key;
    group.length = 0;
    for (let i = 0; i < n; i++) if (keys[i] === key) group.push(i);
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
      out.push({ seats: block, score: scores[x]!, tier: tiers[x]! });
      taken++;
    }
  }
  return out;
}

/** Whether `quantity` adjacent available seats exist in any row: one pass over seats in seat order, stopping at the first. */
export function hasRunOf(available: readonly SeatCell[], quantity: number): boolean {
  const seats = inSeatOrder(available) ? available : [...available].sort(bySeat);
  let run = 0;
  for (let i = 0; i < seats.length; i++) {
    const prev = seats[i - 1];
    const cur = seats[i]!;
    run = prev && prev.rowIndex === cur.rowIndex && prev.seatNumber + 1 === cur.seatNumber ? run + 1 : 1;
    if (run >= quantity) return true;
  }
  return quantity <= 0;
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
