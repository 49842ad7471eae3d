import { invalid } from '../errors.js';
import { DEFAULT_PAYMENT_ATTEMPTS_PER_BUYER } from './plan.js';

/** One event's claim on the shared payment budget. */
export interface EventDemand {
  eventId: string;
  /** Buyers per minute the event's own plan asks for (its `buyersPerMinute` before sharing). */
  plannedBuyersPerMinute: number;
  /** Share of the whole budget this event is guaranteed, 0..1 (default 0.5 / number of events). */
  floorShare?: number;
}

/** The floor every event gets when none is set: half the budget split evenly. */
export const DEFAULT_FLOOR_FRACTION = 0.5;

/**
 * Splits one payment budget (paymentTps x 60 / attemptsPerBuyer buyers per minute) among every event on sale at
 * the same moment (a busy Saturday has 40 on-sales opening at 10:00). Each event first gets its floor (default
 * 0.5 x budget / n, never more than it asked for; floors that add up to more than the budget are scaled down to
 * fit); the rest is water-filled in proportion to demand: an event never gets more than it asked for and what it
 * leaves goes to the others. Returns eventId -> buyers-per-minute cap, in input order.
 *
 * Guarantees: sum of caps <= budget (up to float rounding), each cap <= its ask, each cap >= min(ask, floor).
 * Throws `INVALID_BUDGET_INPUT` for a negative ask, a floorShare outside 0..1, a duplicate event or a
 * non-positive paymentTps.
 */
export function shareAdmissionBudget(
  events: readonly EventDemand[],
  paymentTps: number,
  attemptsPerBuyer: number = DEFAULT_PAYMENT_ATTEMPTS_PER_BUYER,
): Map<string, number> {
  if (!Number.isFinite(paymentTps) || paymentTps <= 0)
    throw invalid('INVALID_BUDGET_INPUT', 'paymentTps must be a positive number', 'paymentTps', { value: paymentTps });
  if (!Number.isFinite(attemptsPerBuyer) || attemptsPerBuyer <= 0)
    throw invalid('INVALID_BUDGET_INPUT', 'attemptsPerBuyer must be a positive number', 'attemptsPerBuyer', { value: attemptsPerBuyer });
  const seen = new Set<string>();
  events.forEach((e, i) => {
    if (seen.has(e.eventId)) throw invalid('INVALID_BUDGET_INPUT', `event ${e.eventId} appears twice`, `events[${i}].eventId`);
    seen.add(e.eventId);
    if (!Number.isFinite(e.plannedBuyersPerMinute) || e.plannedBuyersPerMinute < 0)
      throw invalid('INVALID_BUDGET_INPUT', 'plannedBuyersPerMinute must be zero or more', `events[${i}].plannedBuyersPerMinute`);
    if (e.floorShare !== undefined && !(e.floorShare >= 0 && e.floorShare <= 1))
      throw invalid('INVALID_BUDGET_INPUT', 'floorShare must be between 0 and 1', `events[${i}].floorShare`);
  });

  const n = events.length;
  const caps = new Map<string, number>();
  if (n === 0) return caps;
  const budget = (paymentTps * 60) / attemptsPerBuyer;

  const floors = events.map((e) => (e.floorShare ?? DEFAULT_FLOOR_FRACTION / n) * budget);
  const floorTotal = floors.reduce((a, b) => a + b, 0);
  const floorScale = floorTotal > budget ? budget / floorTotal : 1;
  const cap = events.map((e, i) => Math.min(e.plannedBuyersPerMinute, floors[i]! * floorScale));
  let remaining = budget - cap.reduce((a, b) => a + b, 0);

  // Water-filling: share what is left in proportion to demand; whoever would get more than it asked is
  // capped at its ask and the surplus goes round again.
  let active = events.map((_, i) => i).filter((i) => cap[i]! < events[i]!.plannedBuyersPerMinute);
  while (remaining > 0 && active.length > 0) {
    const demand = active.reduce((a, i) => a + events[i]!.plannedBuyersPerMinute, 0);
    const saturated = active.filter(
      (i) => cap[i]! + (remaining * events[i]!.plannedBuyersPerMinute) / demand >= events[i]!.plannedBuyersPerMinute,
    );
    if (saturated.length === 0) {
      for (const i of active) cap[i]! += (remaining * events[i]!.plannedBuyersPerMinute) / demand;
      remaining = 0;
      break;
    }
    for (const i of saturated) {
      remaining -= events[i]!.plannedBuyersPerMinute - cap[i]!;
      cap[i] = events[i]!.plannedBuyersPerMinute;
    }
    const done = new Set(saturated);
    active = active.filter((i) => !done.has(i));
  }
  events.forEach((e, i) => caps.set(e.eventId, Math.min(cap[i]!, e.plannedBuyersPerMinute)));
  return caps;
}
