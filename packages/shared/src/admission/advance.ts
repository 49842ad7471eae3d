// The pure rules of one admission tick (no I/O): inventory state, the claim ratio, how far the watermark moves,
// and each event's share of the payment budget. controller.ts feeds them from the database.
import { POLL_SECONDS } from '../queue/edge.js';
import { shareAdmissionBudget } from './budget.js';
import { DEFAULT_PAYMENT_ATTEMPTS_PER_BUYER, planAdmission } from './plan.js';

/** The event's inventory state as fans see it (rule 6 in docs/architecture.md). */
export type InventoryState = 'AVAILABLE' | 'LAST_CHANCE' | 'SOLD_OUT';

/**
 * Truthful ends: `SOLD_OUT` only when nothing is available and nothing is held; `LAST_CHANCE` while nothing is
 * available but some seats are held (they may come back), or while only a few are available (`fewSeats` or fewer,
 * passed when fans are waiting for them: fewSeatsLeft); `AVAILABLE` otherwise.
 */
export function inventoryStateOf(counts: { available: number; held: number }, fewSeats = 0): InventoryState {
  if (counts.available > fewSeats) return 'AVAILABLE';
  if (counts.available > 0) return 'LAST_CHANCE';
  return counts.held > 0 ? 'LAST_CHANCE' : 'SOLD_OUT';
}

/** "Only a few seats left": 2% of the capacity, at least two orders' worth. */
export function fewSeatsLeft(capacity: number, ticketsPerOrder: number): number {
  return Math.max(2 * Math.ceil(Math.max(1, ticketsPerOrder)), Math.ceil(Math.max(0, capacity) * 0.02));
}

/** How the claim ratio is measured: below `minPositions` advanced it is 1; it never falls below `floor`. */
export const CLAIM_RATIO = { minPositions: 50, floor: 0.1 } as const;

/**
 * Share of the positions the watermark passed that were actually claimed (admission tokens issued / positions
 * advanced, over the same recent minutes). 1 when fewer than 50 positions advanced (too few to tell); clamped
 * to 0.1..1 (a ratio above 1 is claims lagging the advance, not more fans than positions).
 */
export function claimRatioOf(tokensIssued: number, positionsAdvanced: number): number {
  if (!(positionsAdvanced >= CLAIM_RATIO.minPositions) || !Number.isFinite(tokensIssued)) return 1;
  return Math.min(1, Math.max(CLAIM_RATIO.floor, tokensIssued / positionsAdvanced));
}

/** Inputs of one watermark step. */
export interface WatermarkStepInput {
  /** Admits per minute (nextAdmissionRate's rate): real fans, not positions. */
  ratePerMinute: number;
  /** Time since the last tick, already bounded by the caller. */
  elapsedMs: number;
  /** claimRatioOf(...): positions advance 1 / claimRatio times faster so real admissions meet the rate. */
  claimRatio: number;
  /** Fraction of a position left over from the previous tick. */
  carry: number;
  /** nextAdmissionRate's cap: most fans that may be admitted before the next tick. */
  cap: number;
  /** Positions that exist beyond the watermark (highest position - admittedThrough); never admit past them. */
  room: number;
  /** nextAdmissionRate's admitAtOnce: fans to let in on this tick whatever the elapsed time (default 0). */
  admitAtOnce?: number;
}

/**
 * How many whole positions the watermark moves: rate x elapsed / claimRatio plus the carried fraction, at least
 * admitAtOnce / claimRatio (rounded up: the positions one real fan takes), never more than cap / claimRatio (the
 * plausible-seat cap, in positions) nor past the last position that exists (otherwise an idle queue would bank
 * admissions and let a later burst straight in). A step cut by a bound, or raised to admitAtOnce, carries nothing over.
 */
export function advanceWatermark(s: WatermarkStepInput): { advanced: number; carry: number } {
  const ratio = Math.min(1, Math.max(CLAIM_RATIO.floor, s.claimRatio));
  const exact = (Math.max(0, s.ratePerMinute) * Math.max(0, s.elapsedMs)) / 60_000 / ratio + Math.max(0, s.carry);
  const whole = Math.floor(exact + 1e-9);
  const limit = Math.max(0, Math.min(Math.floor(Math.max(0, s.cap) / ratio), Math.floor(s.room)));
  const atOnce = Math.min(limit, Math.ceil(Math.max(0, s.admitAtOnce ?? 0) / ratio - 1e-9));
  if (whole > limit) return { advanced: limit, carry: 0 };
  if (whole < atOnce) return { advanced: atOnce, carry: 0 };
  return { advanced: whole, carry: Math.max(0, exact - whole) };
}

/**
 * Beyond the longest Retry-After, how long the controller waits for a fan whose turn came: the fans' page adds up to a
 * quarter of the Retry-After at random (7.5 s of 30 s) so a crowd told the same number does not return at once, and
 * the claim takes a moment to be recorded.
 */
export const ARRIVAL_SLACK_MS = 10_000;
/**
 * How long the controller counts a position it just passed as a fan on their way in: the longest a waiting fan is
 * told to sleep between status polls (POLL_SECONDS.max, 30 s: retryAfterWaiting never tells more) and the slack (the
 * page's jitter, the claim's recording): 40 s. A position passed and not collected within it is a place nobody used: its slot goes back.
 */
export const ARRIVAL_WINDOW_MS = POLL_SECONDS.max * 1000 + ARRIVAL_SLACK_MS;

/**
 * The arrival window of an event whose clock runs `timeScale` times fast (a rehearsal's): its fans sleep that much
 * less between polls, so positions passed are claimed that much sooner; never under 10 s (a rehearsal's crowd far
 * back polls every few seconds, within its poll budget, and a position passed it must still count as arriving until
 * then). A real sale (null) keeps ARRIVAL_WINDOW_MS.
 */
export function arrivalWindowMs(timeScale: number | null | undefined): number {
  if (!timeScale || !(timeScale > 1)) return ARRIVAL_WINDOW_MS;
  return Math.max(10_000, Math.round(ARRIVAL_WINDOW_MS / timeScale));
}

/** The controller's recent advances, [[epoch ms, positions]], oldest first. */
export type RecentAdvances = [number, number][];

/** The recent advances after a tick at `nowMs` that moved `advanced` positions: only those inside the window kept. */
export function recordAdvance(recent: RecentAdvances, nowMs: number, advanced: number, windowMs = ARRIVAL_WINDOW_MS): RecentAdvances {
  const kept = recent.filter(([at, n]) => Number.isFinite(at) && n > 0 && at > nowMs - windowMs && at <= nowMs);
  return advanced > 0 ? [...kept, [nowMs, advanced]] : kept;
}

/**
 * Fans on their way in: positions the watermark passed within the window, times the claim ratio (the share of
 * positions that turn into a fan), less the claims recorded within the window; never below 0. Without it a tick
 * would see an empty store while the fans it just let in are still between two polls, and let in more.
 */
export function arrivingFans(
  recent: RecentAdvances,
  nowMs: number,
  claimRatio: number,
  claimedInWindow: number,
  windowMs = ARRIVAL_WINDOW_MS,
): number {
  const positions = recent.reduce((sum, [at, n]) => (at > nowMs - windowMs && at <= nowMs && n > 0 ? sum + n : sum), 0);
  const ratio = Math.min(1, Math.max(CLAIM_RATIO.floor, claimRatio));
  return Math.max(0, Math.ceil(positions * ratio - 1e-9) - Math.max(0, claimedInWindow));
}

/**
 * The positions the watermark passed since `sinceMs` (epoch ms), read off its published history ([[epoch ms,
 * admittedThrough]], oldest first, a point at most every 10 s): `admittedThrough` less the watermark at the last point
 * at or before `sinceMs` (0 when every point is later: the queue opened within the window). A point's advance may have
 * begun up to 10 s before it, so the count errs by at most those positions, on the side of counting them.
 */
export function positionsPassedSince(history: readonly (readonly [number, number])[], admittedThrough: number, sinceMs: number): number {
  let base = 0;
  for (const [at, through] of history) {
    if (!(Number(at) <= sinceMs)) break;
    base = Number(through);
  }
  return Math.max(0, admittedThrough - (Number.isFinite(base) ? base : 0));
}

/**
 * Fans let in who have not come yet and may still come: the positions the watermark passed within their claim window
 * (a position reached stays its fan's that long, queue/edge.ts POSITION_CLAIM_WINDOW_MS), less the claims recorded
 * within that window and less the fans already counted on their way in (arrivingFans, over the shorter arrival
 * window); never below 0. Every such position counts, not the claim ratio's share of them: that ratio (tokens over
 * positions in the same minutes) is low exactly when fans come late, and weighted by it the count was 0 in a
 * 3,000-fan rehearsal whose late fans then found the sale sold out (601 of 2,899 let in). A position nobody ever
 * collects counts until its claim window ends; the tail rule keeps the sale going meanwhile when nobody holds seats.
 *
 * Why: a fan who polls later than told (a background tab; the rehearsal's crowd far back, spaced by the driver's poll
 * budget) comes for its turn after the arrival window, when its slot was already given back. Mid-sale that is what
 * keeps admission going; at the end it let in fans for seats that the fans ahead of them came for afterwards (the
 * 200,000-fan stadium of 2026-12-07: 9,676 of 37,246 fans let in found it sold out). The controller sets them
 * against the plausible fans the seats left can take (nextAdmissionRate's `admittedNotCome`), which binds only when
 * the seats left are few; the tail rule still lets the next fan in when seats are free and nobody holds any.
 */
export function admittedNotCome(s: {
  history: readonly (readonly [number, number])[];
  admittedThrough: number;
  nowMs: number;
  claimWindowMs: number;
  claimedInClaimWindow: number;
  arriving: number;
}): number {
  if (!(s.claimWindowMs > 0)) return 0;
  const passed = positionsPassedSince(s.history, s.admittedThrough, s.nowMs - s.claimWindowMs);
  const owed = passed - Math.max(0, s.claimedInClaimWindow) - Math.max(0, s.arriving);
  return Math.max(0, owed);
}

/** One event on sale now, as the budget sees it. */
export interface BudgetEvent {
  eventId: string;
  capacity: number;
  /** Seats still to sell (the last known figure; capacity when unknown). */
  remainingSeats: number;
  targetSaleMinutes: number;
  ticketsPerOrder: number;
  checkoutMinutes: number;
  overbookFactor: number;
  /** The event's own payment TPS setting. */
  paymentTps: number;
}

/**
 * Each event's share of the platform-wide payment budget, in buyers per minute: every event asks for its own
 * plan's buyers per minute (on its remaining seats and its own payment TPS) and shareAdmissionBudget splits
 * `paymentTpsBudget` among them (floors, then water-filling). Events with no seats ask for nothing.
 */
export function eventBudgetShares(events: readonly BudgetEvent[], paymentTpsBudget: number): Map<string, number> {
  const demands = events.map((e) => {
    let ask = 0;
    if (e.capacity > 0) {
      try {
        ask = planAdmission({
          seats: e.capacity,
          ticketsPerOrder: e.ticketsPerOrder,
          targetSaleMinutes: e.targetSaleMinutes,
          overbookFactor: e.overbookFactor,
          checkoutMinutes: e.checkoutMinutes,
          paymentTps: e.paymentTps,
          remainingSeats: Math.min(e.capacity, Math.max(0, e.remainingSeats)),
        }).buyersPerMinute;
      } catch {
        ask = 0; // an event whose settings cannot be planned asks for nothing; its own tick fails and pauses it
      }
    }
    return { eventId: e.eventId, plannedBuyersPerMinute: ask };
  });
  return shareAdmissionBudget(demands, paymentTpsBudget);
}

/**
 * The payment TPS an event's plan uses: its own setting, or less when its share of the shared budget (buyers per
 * minute) is smaller. A share of 0 (the event asked for nothing) leaves its own setting: it has nothing to sell.
 */
export function effectivePaymentTps(
  ownPaymentTps: number,
  shareBuyersPerMinute: number | undefined,
  attemptsPerBuyer = DEFAULT_PAYMENT_ATTEMPTS_PER_BUYER,
): number {
  if (shareBuyersPerMinute === undefined || !(shareBuyersPerMinute > 0)) return ownPaymentTps;
  return Math.min(ownPaymentTps, (shareBuyersPerMinute * attemptsPerBuyer) / 60);
}
