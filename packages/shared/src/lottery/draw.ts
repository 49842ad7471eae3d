// The lottery draw as a pure function: the registration list, the revealed seed and the published sizing in,
// winners with their purchase windows out. No I/O; the audit and the domain call the same function, and anyone can
// re-implement it from LOTTERY_VERIFICATION_RECIPE.
import { cohortPositions } from '../queue/fairness.js';

/** One published registration: a pseudonymous account, its dense 0-based sequence and the seats it asks for. */
export interface DrawRegistration {
  account: string;
  sequence: number;
  quantity: number;
}

/** Everything the draw depends on (all of it public once the seed is revealed). */
export interface DrawInput {
  seedHex: string;
  registrations: readonly DrawRegistration[];
  /** The seats on offer (the event's capacity). */
  seatsOffered: number;
  /** The share of invited seats expected to be bought, (0, 1]. */
  expectedConversion: number;
  cohorts: number;
  cohortMinutes: number;
  /** The on-sale opening, ms since the epoch: cohort 0's window opens then. */
  onsaleAtMs: number;
}

export interface DrawnWinner extends DrawRegistration {
  /** 1-based place in the draw order (= permuted slot + 1). */
  rank: number;
  /** 0-based purchase window. */
  cohort: number;
  windowOpensAtMs: number;
  windowClosesAtMs: number;
}

export interface DrawResult {
  /** floor(seatsOffered / expectedConversion): how many requested seats are invited. */
  targetRequestedSeats: number;
  /** Requested seats of the winners (at least the target unless every registration won; exceeds it by less than one registration). */
  invitedSeats: number;
  /** Winners in draw order (rank 1 first). */
  winners: DrawnWinner[];
  /** Everyone else, in draw order: they go to the listing's waitlist. */
  nonWinners: (DrawRegistration & { rank: number })[];
}

/** The registration list or the sizing does not allow a draw (the list must be dense, accounts distinct). */
export class LotteryInputError extends RangeError {
  readonly code = 'INVALID_LOTTERY_INPUT';
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message);
    this.name = 'LotteryInputError';
  }
}

/** How many requested seats the draw invites: floor(seatsOffered / expectedConversion), IEEE double division. */
export function targetRequestedSeats(seatsOffered: number, expectedConversion: number): number {
  if (!Number.isInteger(seatsOffered) || seatsOffered < 0)
    throw new LotteryInputError('seatsOffered must be a whole number >= 0', 'seatsOffered');
  if (!(expectedConversion > 0 && expectedConversion <= 1))
    throw new LotteryInputError('expectedConversion must be in (0, 1]', 'expectedConversion');
  return Math.floor(seatsOffered / expectedConversion);
}

/** The 0-based cohort of the winner at 1-based `rank` among `winners`: floor((rank - 1) x cohorts / winners). */
export function cohortOf(rank: number, winners: number, cohorts: number): number {
  return Math.floor(((rank - 1) * cohorts) / winners);
}

/**
 * Runs the draw. The draw order is the keyed permutation of the registrations' sequence numbers under the seed
 * (the queue's fairness permutation: `cohortPositions(seed, n)`), so a registration's rank is its slot + 1 and
 * when someone registered makes no difference. Winners are taken in draw order while the requested seats already
 * invited are below the target; the winners are split into `cohorts` equal runs in draw order, cohort k buying
 * in [onsaleAt + k x cohortMinutes, + cohortMinutes).
 */
export async function runDraw(input: DrawInput): Promise<DrawResult> {
  const n = input.registrations.length;
  const bySequence = new Array<DrawRegistration | undefined>(n);
  const accounts = new Set<string>();
  for (const r of input.registrations) {
    if (!Number.isInteger(r.sequence) || r.sequence < 0 || r.sequence >= n)
      throw new LotteryInputError(`sequence ${r.sequence} is outside 0..${n - 1}`, 'sequence');
    if (bySequence[r.sequence]) throw new LotteryInputError(`sequence ${r.sequence} appears twice`, 'sequence');
    if (accounts.has(r.account)) throw new LotteryInputError(`account ${r.account} appears twice`, 'account');
    if (!Number.isInteger(r.quantity) || r.quantity < 1)
      throw new LotteryInputError(`quantity ${r.quantity} of sequence ${r.sequence} is not a whole number >= 1`, 'quantity');
    bySequence[r.sequence] = r;
    accounts.add(r.account);
  }
  if (!Number.isInteger(input.cohorts) || input.cohorts < 1) throw new LotteryInputError('cohorts must be a whole number >= 1', 'cohorts');
  if (!Number.isInteger(input.cohortMinutes) || input.cohortMinutes < 1)
    throw new LotteryInputError('cohortMinutes must be a whole number >= 1', 'cohortMinutes');
  const target = targetRequestedSeats(input.seatsOffered, input.expectedConversion);

  const order = new Array<DrawRegistration & { rank: number }>(n);
  if (n > 0) {
    const slots = await cohortPositions(input.seedHex, n);
    for (let s = 0; s < n; s++) order[slots[s]!] = { ...bySequence[s]!, rank: slots[s]! + 1 };
  }

  let invited = 0;
  let winnersCount = 0;
  while (winnersCount < n && invited < target) invited += order[winnersCount++]!.quantity;
  const winners = order.slice(0, winnersCount).map((r): DrawnWinner => {
    const cohort = cohortOf(r.rank, winnersCount, input.cohorts);
    const w = cohortWindow(input.onsaleAtMs, input.cohortMinutes, cohort);
    return { ...r, cohort, windowOpensAtMs: w.opensAtMs, windowClosesAtMs: w.closesAtMs };
  });
  return { targetRequestedSeats: target, invitedSeats: invited, winners, nonWinners: order.slice(winnersCount) };
}

/** Cohort k's purchase window: from onsaleAt + k x cohortMinutes, for cohortMinutes. Times in ms since the epoch. */
export function cohortWindow(onsaleAtMs: number, cohortMinutes: number, cohort: number): { opensAtMs: number; closesAtMs: number } {
  const opensAtMs = onsaleAtMs + cohort * cohortMinutes * 60_000;
  return { opensAtMs, closesAtMs: opensAtMs + cohortMinutes * 60_000 };
}

/** The published recipe: enough to recompute the winners from the registration list and the revealed seed. */
export const LOTTERY_VERIFICATION_RECIPE = `How to check the lottery draw (format v1)

Published data (GET /events/<id>/lottery)
  seedCommitment        64 hex digits, published when the event was created, before registration opened
  seed                  64 hex digits, published by the draw
  registrations         [{ account, sequence, quantity }]: every registration, sequence 0..n-1 with no gaps;
                        account = SHA-256 hex of (event id text || account id), so you can find yourself
  seatsOffered          the event's capacity
  expectedConversion    c, the share of invited seats expected to be bought
  cohorts, cohortMinutes, onsaleAt

1. SHA-256 of the seed's 32 bytes must equal the commitment.
2. Draw order: slot(j) = the queue's fairness permutation of sequence j in a cohort of n under the seed (the
   recipe of GET /events/<id>/fairness, steps 2-5). rank = slot + 1: ranks 1..n, each exactly once.
3. target = floor(seatsOffered / c) requested seats. Walk the registrations by rank; while the seats of the
   winners so far are below the target, the next registration wins (the last winner may take the total past it).
4. With w winners, the winner at rank r buys in cohort k = floor((r - 1) x cohorts / w), whose window is
   [onsaleAt + k x cohortMinutes, onsaleAt + (k + 1) x cohortMinutes).
5. Everyone else is put on the listing's waitlist for this performance with their requested quantity.
`;
