// Why fans are (or are not) being let in, in one sentence, with what the operator can do and how long the queue
// takes to clear at the current rate. Pure and browser-safe: computed from the figures the admission controller
// and the queue state give (the state, the controller's binding constraint and its fans inside, the rate, the
// plan, the override), so the war room, the board and the tests read the same words.
import type { WarRoomSnapshot, WarRoomState } from './warroom.service.js';

/** Why admissions are what they are. */
export type AdmissionExplanationCode =
  | 'ENDED'
  | 'SOLD_OUT'
  | 'AWAITING_SIGNOFF'
  | 'BEFORE_OPEN'
  | 'PAUSED'
  | 'CONTROLLER_SILENT'
  | 'OVERRIDE_ZERO'
  | 'NOBODY_WAITING'
  | 'INVENTORY_PACING'
  | 'TAIL'
  | 'STORE_LAG'
  | 'LAST_CHANCE'
  | 'CHECKOUT_ERRORS'
  | 'HOLD_FAILURES'
  | 'OVERRIDE_BELOW_PLAN'
  | 'CONTROLLER_STARTING'
  | 'AT_PLAN';

export interface AdmissionExplanation {
  code: AdmissionExplanationCode;
  /** Admissions are below the plan (or the operator's rate) or zero while fans wait: the war room says why loudly. */
  stalled: boolean;
  /** Why, in one sentence. */
  sentence: string;
  /** What the operator can do, in one sentence. */
  action: string;
  /** The controller's admits per minute now. */
  ratePerMin: number;
  /** How long the fans waiting now take to be let in at that rate; null when it does not move (or nobody waits). */
  clearQueueSeconds: number | null;
  /** The same, in words. */
  clearQueue: string;
}

/** What the explanation is computed from: one event's war-room figures at one instant. */
export interface AdmissionExplainInput {
  /** The war room's state. */
  state: WarRoomState;
  /** The database clock and the on-sale time, ms since the epoch. */
  nowMs: number;
  onsaleAtMs: number;
  /** Not signed off and not opened: it will not open (before the open too). */
  awaitingSignOff: boolean;
  waiting: number;
  /** The controller's admits per minute now (0 unless it admits). */
  controllerRatePerMin: number;
  planAdmitsPerMin: number | null;
  rateOverridePerMin: number | null;
  /** The controller's last tick: its binding constraint (rate.ts AdmissionConstraint and the phases), reason, fans inside, cap. */
  controller: { constraint: string; reason: string; fansInside: number; cap: number } | null;
  paused: { by: string | null; reason: string | null; atMs: number | null } | null;
  heartbeatAgeSeconds: number | null;
  available: number;
  held: number;
  /** Share of checkouts the platform failed over 2 minutes (null: none). */
  checkoutErrorRate: number | null;
  /** Share of hold requests that found no seats over the last minute (null: none). */
  holdRefusalRate: number | null;
  /** Formats a time of day for the sentence (the console passes the venue's or the operator's clock). */
  formatTime?: (ms: number) => string;
}

/** Admissions below this share of the plan count as below plan. */
export const BELOW_PLAN_SHARE = 0.9;

const count = (n: number) => Math.round(n).toLocaleString('en-US');
const perMin = (n: number) =>
  n >= 10 || Number.isInteger(n) ? `${count(n)} a minute` : `${n.toLocaleString('en-US', { maximumFractionDigits: 2 })} a minute`;
const pct = (x: number) => `${(x * 100).toLocaleString('en-US', { maximumFractionDigits: 1 })}%`;
const fans = (n: number) => `${count(n)} ${n === 1 ? 'fan' : 'fans'}`;
const seats = (n: number) => `${count(n)} ${n === 1 ? 'seat' : 'seats'}`;

/** A duration in words: "about 40 s", "about 12 min", "about 2 h 5 min". */
export function formatDuration(seconds: number): string {
  if (seconds < 60) return `about ${Math.max(1, Math.round(seconds))} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `about ${minutes} min`;
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return `about ${h} h${m > 0 ? ` ${m} min` : ''}`;
}

const defaultTime = (ms: number) => new Date(ms).toISOString().slice(11, 16) + ' UTC';

/**
 * Why admissions are what they are now, most fundamental cause first: the event over, sold out, not signed off,
 * not open yet, paused, the controller silent, an override of 0, nobody waiting, then seats free and none held while
 * fans wait (the tail: never "nothing to do"), then the controller's own binding constraint (a store that lags, the
 * seats left already covered by fans inside, last chance, failing payments, holds finding no seats, an override below
 * the plan), else the plan. With the time the queue takes to clear at the current rate.
 */
export function explainAdmissions(i: AdmissionExplainInput): AdmissionExplanation {
  const time = i.formatTime ?? defaultTime;
  const rate = Math.max(0, i.controllerRatePerMin);
  const clearQueueSeconds = i.waiting > 0 && rate > 0 ? (i.waiting / rate) * 60 : null;
  const clearQueue =
    i.waiting === 0
      ? 'Nobody is waiting.'
      : clearQueueSeconds === null
        ? `At 0 a minute the ${fans(i.waiting)} waiting are not let in.`
        : `At ${perMin(rate)} the ${fans(i.waiting)} waiting are all let in within ${formatDuration(clearQueueSeconds)}.`;
  // Below the plan (an operator's rate above the plan that the controller holds back to the plan is not a stall).
  const below =
    i.waiting > 0 &&
    (rate === 0 || (i.planAdmitsPerMin !== null && i.planAdmitsPerMin > 0 && rate < i.planAdmitsPerMin * BELOW_PLAN_SHARE));
  const out = (code: AdmissionExplanationCode, sentence: string, action: string, stalled = below): AdmissionExplanation => ({
    code,
    stalled,
    sentence,
    action,
    ratePerMin: rate,
    clearQueueSeconds,
    clearQueue,
  });

  if (i.state === 'ENDED')
    return out(
      'ENDED',
      'Nobody is let in: the event has started and its queue is closed.',
      'Nothing to do: fans who still wait are told the sale is over.',
      false,
    );
  if (i.state === 'SOLD_OUT')
    return out(
      'SOLD_OUT',
      'Nobody is let in: every seat is sold.',
      'Nothing to do: fans waiting are sent to the waitlist, and seats that come back are offered to it first.',
      false,
    );
  if (i.awaitingSignOff && i.nowMs >= i.onsaleAtMs)
    return out(
      'AWAITING_SIGNOFF',
      `Nobody is let in: the sale has not opened because its fairness mode is not signed off (it was due at ${time(i.onsaleAtMs)}).`,
      "A promoter or an admin signs the fairness mode off on the event's Configuration page; the sale opens at the controller's next tick.",
      i.waiting > 0,
    );
  if (i.state === 'NOT_OPEN' || i.nowMs < i.onsaleAtMs) {
    const inMin = Math.max(0, Math.ceil((i.onsaleAtMs - i.nowMs) / 60_000));
    return out(
      'BEFORE_OPEN',
      `Nobody is let in yet: the sale opens at ${time(i.onsaleAtMs)} (in ${inMin < 60 ? `${inMin} min` : formatDuration(inMin * 60).replace('about ', '')})${i.awaitingSignOff ? ', and only once its fairness mode is signed off' : ''}.`,
      i.awaitingSignOff
        ? "A promoter or an admin signs the fairness mode off on the event's Configuration page before the open; until then the queue stays closed."
        : 'Nothing to do before the open: fans who join now are placed in the pre-open group, whose order is drawn at the open.',
      false,
    );
  }
  if (i.state === 'PAUSED' || i.paused)
    return out(
      'PAUSED',
      `Nobody is let in: admissions were paused by ${i.paused?.by ?? 'an operator'}${i.paused?.atMs ? ` at ${time(i.paused.atMs)}` : ''}${i.paused?.reason ? ` (“${i.paused.reason}”)` : ''}.`,
      'Resume admissions once the cause is dealt with; fans keep their places meanwhile.',
      i.waiting > 0,
    );
  if (i.state === 'FAILED_CLOSED')
    return out(
      'CONTROLLER_SILENT',
      `Nobody is let in: the admission controller has not reported for ${i.heartbeatAgeSeconds === null ? 'as long as the sale has been open' : `${count(i.heartbeatAgeSeconds)} s`}, so the queue has failed closed.`,
      'Check that a worker process is running and can reach the database; admissions restart by themselves at its next heartbeat.',
      i.waiting > 0,
    );
  if (i.rateOverridePerMin === 0)
    return out(
      'OVERRIDE_ZERO',
      'Nobody is let in: an operator set the admission rate to 0 a minute.',
      'Set a rate, or clear the override to follow the plan.',
      i.waiting > 0,
    );
  if (i.waiting === 0) return out('NOBODY_WAITING', 'Nobody is waiting: every fan who joined has been let in.', 'Nothing to do.', false);

  const c = i.controller;
  const left = i.available + i.held;
  // Seats free, nobody holding any, fans waiting: never "nothing to do". The controller lets the next fan in every few
  // seconds (the tail rule) while the fans it let in have not held; the war room says so and what would go faster.
  // A last tick that read every seat held (last_chance) is a moment older than these counts: seats came back since,
  // and the tail rule lets the next fan in on the next tick.
  const freeAndUnheld = i.available > 0 && i.held === 0 && i.waiting > 0;
  if (
    freeAndUnheld &&
    (c?.constraint === 'no_plausible_seats' ||
      c?.constraint === 'plausible_seats' ||
      c?.constraint === 'tail' ||
      c?.constraint === 'last_chance')
  )
    return {
      ...out(
        'TAIL',
        `Nobody holds any of the ${seats(i.available)} free while ${fans(i.waiting)} wait: the ${fans(c.fansInside)} let in last ${c.fansInside === 1 ? 'has' : 'have'} not held yet, so the next fan is let in every few seconds until one does.`,
        "Fans let in who leave without holding give their places back within a minute, and places nobody collects within 40 s. To let more fans in at once, raise the overbook factor on the event's Configuration page (it sets how many fans the seats left may take).",
        false,
      ),
      clearQueueSeconds: null,
      clearQueue: `The ${seats(i.available)} left go to the next fans in line as they hold; ${i.waiting > i.available ? 'the fans behind them will read that the sale sold out' : 'every fan waiting can still be let in'}.`,
    };
  switch (c?.constraint) {
    case 'store_lag':
      return out(
        'STORE_LAG',
        `Admissions are slowed to ${perMin(rate)}: the store is answering holds late, so fewer fans are let in until it catches up (${fans(c.fansInside)} inside).`,
        "Check the store's processes and the database (hold latency, the database's load); admissions rise again by themselves within seconds of the store catching up. A higher rate does not help.",
      );
    case 'no_plausible_seats':
      return out(
        'INVENTORY_PACING',
        `Nobody new is let in: the ${fans(c.fansInside)} already let in and still able to buy can take the ${seats(left)} left.`,
        'Nothing to do: as they buy, or their time runs out, their places go to the next fans in line. A higher rate does not change this.',
      );
    case 'plausible_seats':
      return out(
        'INVENTORY_PACING',
        `Admissions are held to ${fans(c.cap)} more: the ${fans(c.fansInside)} already let in and still able to buy cover most of the ${seats(left)} left.`,
        'Nothing to do: as they buy, or their time runs out, more fans are let in. A higher rate does not change this.',
      );
    case 'last_chance':
      return out(
        'LAST_CHANCE',
        `Fans are let in only as seats come back: all ${seats(i.held)} left are held by fans choosing or paying.`,
        'Nothing to do: held seats that are not paid for return, and the next fans are let in for them.',
      );
    case 'checkout_errors':
      return out(
        'CHECKOUT_ERRORS',
        `Admissions are slowed to ${perMin(rate)}: ${i.checkoutErrorRate === null ? 'payments are failing' : `${pct(i.checkoutErrorRate)} of payments are failing`} at the payment gateway.`,
        "Check the payment provider's status; admissions speed up by themselves when payments recover.",
      );
    case 'hold_failures':
      return out(
        'HOLD_FAILURES',
        `Admissions are slowed to ${perMin(rate)}: ${i.holdRefusalRate === null ? 'many fans' : `${pct(i.holdRefusalRate)} of fans`} let in find no seats to hold.`,
        'Expected near the end of a sale; earlier, check the sections on sale and the presale tiers.',
      );
    case 'override':
      if (i.planAdmitsPerMin !== null && i.rateOverridePerMin !== null && i.rateOverridePerMin < i.planAdmitsPerMin * BELOW_PLAN_SHARE)
        return out(
          'OVERRIDE_BELOW_PLAN',
          `Admissions follow an operator's rate of ${perMin(i.rateOverridePerMin)}, below the plan's ${perMin(i.planAdmitsPerMin)}.`,
          'Clear the override to follow the plan, if the reason for it has passed.',
        );
      return out(
        'AT_PLAN',
        `Admissions follow an operator's rate of ${perMin(i.rateOverridePerMin ?? rate)}.`,
        freeAndUnheld
          ? 'The fans let in are choosing seats; if none holds, the next fans come in every few seconds. A higher rate lets more in at once.'
          : 'Nothing to do.',
      );
    case 'plan':
      return out(
        'AT_PLAN',
        `Admissions follow the plan: ${perMin(rate)}.`,
        freeAndUnheld
          ? 'The fans let in are choosing seats; if none holds, the next fans come in every few seconds. To let more in at once, set an operator rate.'
          : 'Nothing to do.',
      );
    default:
      return out(
        'CONTROLLER_STARTING',
        'The admission controller has not yet reported its rate for the sale as it stands now.',
        'Wait a few seconds; if nothing changes, check that a worker process is running.',
      );
  }
}

/** The explanation of a war-room snapshot (the console formats times in its own clock with `formatTime`). */
export function explainSnapshot(s: WarRoomSnapshot, formatTime?: (ms: number) => string): AdmissionExplanation {
  const attempts = s.holds.createdLastMinute + s.holds.refusedLastMinute;
  return explainAdmissions({
    state: s.state,
    nowMs: Date.parse(s.at),
    onsaleAtMs: Date.parse(s.onsaleAt),
    awaitingSignOff: s.fairness.awaitingSignOff,
    waiting: s.queue.waiting,
    controllerRatePerMin: s.admission.controllerRatePerMin,
    planAdmitsPerMin: s.admission.plan?.admitsPerMinute ?? null,
    rateOverridePerMin: s.queue.rateOverridePerMin,
    controller: s.admission.controller,
    paused: s.queue.paused
      ? { by: s.queue.pausedBy, reason: s.queue.pausedReason, atMs: s.queue.pausedAt ? Date.parse(s.queue.pausedAt) : null }
      : null,
    heartbeatAgeSeconds: s.queue.heartbeatAgeSeconds,
    available: s.inventory.available,
    held: s.inventory.held,
    checkoutErrorRate: s.checkout.errorRate,
    holdRefusalRate: attempts > 0 ? s.holds.refusedLastMinute / attempts : null,
    ...(formatTime ? { formatTime } : {}),
  });
}
