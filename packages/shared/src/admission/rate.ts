import { invalid } from '../errors.js';
import type { AdmissionPlan } from './plan.js';
import { ADMISSION_WINDOW } from './window.js';

/** Where the controller's live rule starts slowing down, and how far. Linear between start and floor. */
export const ADMISSION_SLOWDOWN = {
  /** Above 2% failed checkouts the rate falls linearly, to 10% of itself at 20%. */
  checkoutErrors: { startRate: 0.02, fullRate: 0.2, floorFactor: 0.1 },
  /** Above 10% failed hold attempts the rate falls linearly, to 25% of itself at 50%. */
  holdFailures: { startRate: 0.1, fullRate: 0.5, floorFactor: 0.25 },
} as const;

/** What the controller knows at one tick. Rates are fractions 0..1; seats and fans are counts. */
export interface AdmissionRateInput {
  plan: AdmissionPlan;
  /** Share of recent checkout attempts that failed (payment errors, timeouts), 0..1. */
  checkoutErrorRate: number;
  /** Share of recent hold attempts that failed to get seats, 0..1. */
  holdFailureRate: number;
  /** Seats available now (neither held nor sold). */
  remainingSeats: number;
  /** Seats held now (may return if their holds expire). */
  heldSeats: number;
  /**
   * Fans inside who can still buy: holding seats, admitted within the expected checkout time and holding nothing
   * yet, or on their way to claim a position just reached. A fan admitted long ago who never held (or whose hold
   * lapsed) is not inside: their slot is given back.
   */
  fansInside: number;
  /**
   * Fans let in who have not come yet and may still come (advance.ts admittedNotCome): counted against the plausible
   * seats' cap as fans inside are, and nowhere else (not in the window: they load no store yet). Absent: 0.
   */
  admittedNotCome?: number;
  ticketsPerOrder: number;
  /** An operator's rate in admits per minute; null or absent follows the plan. */
  overrideRatePerMinute?: number | null;
  /** Seats returning from expired or released holds per minute; sets the pace in LAST_CHANCE. */
  releasedSeatsPerMinute?: number;
  /**
   * How many times faster than real time the event's clock runs: a rehearsal's time scale, 1 (the default) for a
   * real sale. The plausible-seats cap paces admission at `cap` fans per minute of the event's clock.
   */
  clockScale?: number;
  /**
   * The congestion window (window.ts): most fans inside the store follows now; absent: no window (the plausible
   * seats alone bound the fans inside).
   */
  window?: number;
  /** How late the store answers now, ms (window.ts storeLagMs), for the reason's words. */
  storeLagMs?: number;
  /** The lag it is held to (window.ts lagTargetMs: the target, or twice the store's base lag); absent: the target. */
  storeLagTargetMs?: number;
  /** Holds of admitted fans the store shed (503 unserved) over the last 5 s (window.ts StoreLoad.holdsShed), for the reason's words. */
  storeHoldsShed?: number;
  /**
   * Who the fans inside are, said in the store_lag reason (the war room and a rehearsal's progress line show it):
   * holding seats, let in and not holding yet (counted until `leaverSeconds` after they collected), on their way to
   * collect. Absent: not said.
   */
  insideParts?: { holding: number; notHolding: number; arriving: number; leaverSeconds: number };
  /**
   * The tail rule's inputs: time since the watermark last moved and the gap after which the next fan comes in while
   * seats are available and none is held (window.ts tailGapMs). Absent: no tail rule.
   */
  tail?: { sinceLastAdvanceMs: number; gapMs: number };
}

/** What set the rate: the stable code that starts `reason`. */
export type AdmissionConstraint =
  | 'plan'
  | 'override'
  | 'checkout_errors'
  | 'hold_failures'
  | 'last_chance'
  | 'sold_out'
  | 'plausible_seats'
  | 'no_plausible_seats'
  | 'store_lag'
  | 'tail';

/** The rate for the next ticks. `reason` starts with its `constraint` code followed by `: ` and words. */
export interface AdmissionRate {
  /** Admits per minute, 0 <= rate <= the override or the plan, and <= cap. */
  ratePerMinute: number;
  /** The binding constraint: what set the rate (the first word of `reason`). */
  constraint: AdmissionConstraint;
  reason: string;
  /** Most fans that may be admitted, in total, before the next tick recomputes it. */
  cap: number;
  /**
   * Fans to let in on this tick whatever the time since the last one: 1 when seats are available, nobody inside can
   * buy them and the rate is not 0 (a pace planned on a handful of seats would otherwise let the next fan in
   * minutes later, with the store empty), or when the tail rule lets the next fan in; else 0. Never above cap.
   */
  admitAtOnce: number;
}

/** Linear slow-down factor: 1 up to `startRate`, `floorFactor` from `fullRate` on. */
function slowdown(rate: number, s: { startRate: number; fullRate: number; floorFactor: number }): number {
  if (rate <= s.startRate) return 1;
  if (rate >= s.fullRate) return s.floorFactor;
  return 1 - ((1 - s.floorFactor) * (rate - s.startRate)) / (s.fullRate - s.startRate);
}

const tidy = (x: number): number => Math.round(x * 1e6) / 1e6;
const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

function check(value: number, field: string, max = Infinity): number {
  if (!Number.isFinite(value) || value < 0 || value > max)
    throw invalid('INVALID_RATE_INPUT', `${field} must be ${max === 1 ? 'between 0 and 1' : 'zero or more'}`, field, { value });
  return value;
}

/**
 * The admission controller's live rule. Starts from the operator's override or the plan's admits per minute; in
 * LAST_CHANCE (no seats available, some held) paces at the rate seats are released (released / ticketsPerOrder,
 * never above the start); slows linearly when checkout errors pass 2% or hold failures pass 10% (the tighter of
 * the two applies); and never admits more fans than there are plausible seats:
 * cap = max(0, ceil((remainingSeats + heldSeats) / ticketsPerOrder x overbook) - fansInside - admittedNotCome), at most cap fans a
 * minute of the event's clock (a rehearsal's runs `clockScale` times fast).
 * Held seats count as plausible because their holders are inside fansInside; counting the holders
 * without their seats would make LAST_CHANCE admit no one, ever. The rate is also clamped to the cap. The window
 * (what the store serves now, window.ts) bounds the fans inside too: constraint `store_lag` when it binds. When seats
 * are available, nobody is inside and the rate is not 0, one fan is let in at once (`admitAtOnce`); when seats are
 * available, none is held and the tail's gap has passed since the last advance, one fan is let in too, beyond the
 * plausible-seats cap if need be (constraint `tail`): a sale with seats free and fans waiting never stalls.
 * Throws `INVALID_RATE_INPUT` for a negative or non-finite input or a rate outside 0..1: the tick fails, the
 * heartbeat goes stale, and the queue pauses (fail closed).
 */
export function nextAdmissionRate(input: AdmissionRateInput): AdmissionRate {
  const checkoutErrorRate = check(input.checkoutErrorRate, 'checkoutErrorRate', 1);
  const holdFailureRate = check(input.holdFailureRate, 'holdFailureRate', 1);
  const remainingSeats = check(input.remainingSeats, 'remainingSeats');
  const heldSeats = check(input.heldSeats, 'heldSeats');
  const fansInside = check(input.fansInside, 'fansInside');
  const ticketsPerOrder = check(input.ticketsPerOrder, 'ticketsPerOrder');
  if (ticketsPerOrder === 0) throw invalid('INVALID_RATE_INPUT', 'ticketsPerOrder must be positive', 'ticketsPerOrder');
  const released = check(input.releasedSeatsPerMinute ?? 0, 'releasedSeatsPerMinute');
  const override = input.overrideRatePerMinute ?? null;
  if (override !== null) check(override, 'overrideRatePerMinute');
  const overbook = input.plan.overbookFactor;

  const notCome = check(input.admittedNotCome ?? 0, 'admittedNotCome');
  const plausible = Math.ceil(tidy(((remainingSeats + heldSeats) / ticketsPerOrder) * overbook));
  const cap = Math.max(0, plausible - fansInside - notCome);
  const notComeWords = notCome > 0 ? ` and ${notCome} let in who have not come yet` : '';

  if (remainingSeats === 0 && heldSeats === 0)
    return { ratePerMinute: 0, constraint: 'sold_out', reason: 'sold_out: no seats available or held', cap: 0, admitAtOnce: 0 };

  const start = override ?? input.plan.admitsPerMinute;
  let rate = start;
  let constraint: AdmissionConstraint = override !== null ? 'override' : 'plan';
  let reason = override !== null ? `override: operator rate ${start}/min` : `plan: ${start}/min`;

  if (remainingSeats === 0) {
    const pace = released / ticketsPerOrder;
    if (pace < rate) {
      rate = pace;
      constraint = 'last_chance';
      reason = `last_chance: all seats held; admitting at the release rate, ${tidy(released)} seats/min = ${tidy(pace)} fans/min`;
    }
  }

  const checkoutFactor = slowdown(checkoutErrorRate, ADMISSION_SLOWDOWN.checkoutErrors);
  const holdFactor = slowdown(holdFailureRate, ADMISSION_SLOWDOWN.holdFailures);
  const factor = Math.min(checkoutFactor, holdFactor);
  if (factor < 1 && rate > 0) {
    rate *= factor;
    constraint = checkoutFactor <= holdFactor ? 'checkout_errors' : 'hold_failures';
    reason =
      checkoutFactor <= holdFactor
        ? `checkout_errors: ${pct(checkoutErrorRate)} of checkouts failing; rate x${factor.toFixed(2)} (${reason})`
        : `hold_failures: ${pct(holdFailureRate)} of hold attempts failing; rate x${factor.toFixed(2)} (${reason})`;
  }

  // The window on the fans inside (what the store serves now): the fans it still has room for.
  const window = input.window === undefined ? Infinity : check(input.window, 'window');
  const windowRoom = Number.isFinite(window) ? Math.max(0, Math.floor(window + 1e-9) - fansInside) : Infinity;
  const lagMs = input.storeLagMs === undefined ? 0 : check(input.storeLagMs, 'storeLagMs');
  const lagTarget =
    input.storeLagTargetMs === undefined ? ADMISSION_WINDOW.latencyTargetMs : check(input.storeLagTargetMs, 'storeLagTargetMs');
  const holdsShed = input.storeHoldsShed === undefined ? 0 : check(input.storeHoldsShed, 'storeHoldsShed');
  const parts = input.insideParts;
  const who = parts
    ? `; inside: ${parts.holding} holding, ${parts.notHolding} let in not holding yet (a leaver ${parts.leaverSeconds} s after collecting), ${parts.arriving} on their way`
    : '';
  const storeLagReason =
    (holdsShed > 0
      ? `store_lag: the store shed ${holdsShed} holds of fans let in (503, over the last 5 s): more fans inside than it takes; ${fansInside} fans inside against a window of ${Math.floor(window + 1e-9)}, halved while it sheds them`
      : lagMs > lagTarget
        ? `store_lag: the store answers holds in ${(lagMs / 1000).toFixed(1)} s (target ${(lagTarget / 1000).toFixed(1)} s); ${fansInside} fans inside against a window of ${Math.floor(window + 1e-9)}, halved while it lags`
        : lagMs > ADMISSION_WINDOW.latencyTargetMs
          ? `store_lag: the store answers holds in ${(lagMs / 1000).toFixed(1)} s, within twice its base lag (${(lagTarget / 1000).toFixed(1)} s) but over the target ${(ADMISSION_WINDOW.latencyTargetMs / 1000).toFixed(1)} s; ${fansInside} fans inside against a window of ${Math.floor(window + 1e-9)}, held where it is`
          : `store_lag: ${fansInside} fans inside against a window of ${Math.floor(window + 1e-9)}, which grows while the store answers within ${(ADMISSION_WINDOW.latencyTargetMs / 1000).toFixed(1)} s, as fast as it answers holds`) +
    who;

  // The tail: seats available, none held, fans waiting, the rate not 0 and the store keeping up (not lagging). The next
  // fan comes in once the gap since the last advance has passed, however slow the plan's pace on the few seats left and
  // whatever the plausible-seats cap or the window say (the fans counted inside have not held anything, the store is
  // idle); and the rate published is at least one fan a gap, so the fans next in line are told to come back that soon.
  const tail = input.tail;
  const tailActive = tail !== undefined && remainingSeats > 0 && heldSeats === 0 && rate > 0 && lagMs <= lagTarget;
  const tailGap = tail === undefined ? 0 : check(tail.gapMs, 'tail.gapMs');
  const tailDue = tailActive && check(tail.sinceLastAdvanceMs, 'tail.sinceLastAdvanceMs') >= tailGap;
  const tailRate = tailActive && tailGap > 0 ? tidy(60_000 / tailGap) : 0;
  const tailReason = () =>
    `tail: ${remainingSeats} seats available and nobody holding any; the next fan is let in ${(tailGap / 1000).toFixed(0)} s after the last (${fansInside} let in ${fansInside === 1 ? 'has' : 'have'} not held yet)`;

  if (cap === 0 || windowRoom === 0) {
    if (tailActive)
      return {
        ratePerMinute: Math.max(tailRate, Math.min(tidy(rate), rate)),
        constraint: 'tail',
        reason: tailReason(),
        cap: tailDue ? 1 : 0,
        admitAtOnce: tailDue ? 1 : 0,
      };
    if (cap === 0)
      return {
        ratePerMinute: 0,
        constraint: 'no_plausible_seats',
        reason: `no_plausible_seats: ${fansInside} fans inside${notComeWords} can still buy the ${remainingSeats + heldSeats} seats left`,
        cap: 0,
        admitAtOnce: 0,
      };
    return { ratePerMinute: 0, constraint: 'store_lag', reason: storeLagReason, cap: 0, admitAtOnce: 0 };
  }
  const scale = input.clockScale !== undefined && input.clockScale > 1 && Number.isFinite(input.clockScale) ? input.clockScale : 1;
  if (rate > cap * scale) {
    rate = cap * scale;
    constraint = 'plausible_seats';
    reason = `plausible_seats: at most ${cap} more fans for ${remainingSeats + heldSeats} seats${notCome > 0 ? ` (${notCome} let in have not come yet)` : ''} (${reason})`;
  }
  // The window's room is fans inside, not fans a minute: fans leave it as they buy or go, so it bounds what one tick
  // (a second) lets in. Published as a rate of that room a second.
  let bound = cap;
  if (windowRoom < cap) {
    bound = windowRoom;
    if (rate > windowRoom * 60) {
      rate = windowRoom * 60;
      constraint = 'store_lag';
      reason = `${storeLagReason} (${reason})`;
    }
  }
  // tidy() drops float noise but must never round a rate up past its bound.
  let ratePerMinute = Math.min(tidy(rate), rate);
  let admitAtOnce = remainingSeats > 0 && fansInside === 0 && ratePerMinute > 0 ? 1 : 0;
  if (tailActive && ratePerMinute < tailRate) {
    ratePerMinute = tailRate;
    constraint = 'tail';
    reason = `${tailReason()} (${reason})`;
  }
  if (tailDue) admitAtOnce = 1;
  return { ratePerMinute, constraint, reason, cap: bound, admitAtOnce };
}
