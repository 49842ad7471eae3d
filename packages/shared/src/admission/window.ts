// The admission controller's window on the fans inside: a congestion window, kept from what the store reports it is
// doing now (queue/store-load.ts). Pure: controller.ts feeds it and keeps the window in queue_state between ticks.
import { ADMISSION_TOKEN_TTL_SECONDS } from '../queue/edge.js';

/**
 * The rule's constants. Times are real milliseconds (the store's latency is real even in a rehearsal whose event
 * clock runs fast); the window is in fans.
 *
 * Why AIMD on a window of fans inside rather than a rate: the store's capacity is not known in advance (it depends on
 * the machine, the other events on sale, the database), the fans inside are what loads it (each one inside holds, reads
 * the seat map and pays), and a window bounds that load directly whatever the rate. Additive increase probes for more
 * while the store keeps up; multiplicative decrease backs off fast when it lags, once per interval, so a slow store
 * sheds half its incoming load within a second or two instead of piling fans into holds that time out; the same rule
 * TCP uses to share a link it cannot measure, and it converges rather than oscillating on a noisy latency signal.
 *
 * Three refinements, each from a rehearsal (docs/how-it-works.md, "How the waiting room works", Following the store):
 * - The open starts small (TCP's initial window), not at the maximum: nothing is known of the store then, and a
 *   window that starts at 4x the plan lets thousands of fans in within the first second, all holding at once.
 *   From there the additive step (10% of the planned window a second) reaches the plan in about 10 s while the store
 *   keeps up.
 * - The window never runs further ahead of what the store serves than the fans holding + `servedGain` x the holds it
 *   answers a second x (a fan's seat choice at the event's clock + the latency target) (BBR's bound: twice the
 *   delivery rate times the round trip; the fans holding have had their answer). Requests queued before the store sees them (in its HTTP server, at the edge, in a client's
 *   connections) show in no latency the store measures, but they do hold the fans they belong to off the answered
 *   count: this bound stops the window growing into that queue.
 * - "Lagging" is against the store's own base lag (TCP Vegas, LEDBAT): the lag is over the target when it passes
 *   max(latencyTargetMs, baseLagFactor x the smallest lag of the last baseLagWindowMs). A store made slow by other
 *   work (the crowd's polls, another event) stays slow however few fans are inside; halving the window on that only
 *   starves the sale (the club sold 182 of 300 seats that way). A store that stalls answers nothing, so it gets no
 *   served room and its lag keeps rising past twice its base. The base only spares a slow store the cut: the window
 *   grows only while the lag is within latencyTargetMs itself (between the two it is held where it is), or a store
 *   kept slow by the fans already inside (its base over 30 s is their doing) lets in more of them.
 */
export const ADMISSION_WINDOW = {
  /** The store lags when holds take longer than this at the 90th percentile, as the store measures them... */
  latencyTargetMs: 1_000,
  /** ...or this many times its base lag, when that is more... */
  baseLagFactor: 2,
  /** ...the smallest lag seen over this long (real ms). */
  baseLagWindowMs: 30_000,
  /** A lagging store halves the window... */
  decrease: 0.5,
  /** ...at most once per this interval (or the lag itself when longer: one round trip of the store). */
  minCutIntervalMs: 1_000,
  /** While the store keeps up and the window is in use, it grows by this share of the planned window a second... */
  increaseShare: 0.1,
  /** ...and by at least one fan a second. */
  minIncreasePerSecond: 1,
  /** The window is in use when the fans inside fill this share of it (an idle window does not grow). */
  inUse: 0.8,
  /** It never grows past this many times the planned window (or the plausible fans when more). */
  maxOfPlanned: 4,
  /** At the open it starts at this share of the planned window... */
  initialShare: 0.1,
  /** ...and at least this many fans (never past its maximum). */
  initialMin: 10,
  /** It is at most this many times the fans the store answers within a fan's round trip (see above)... */
  servedGain: 2,
  /** It never shrinks below one fan: the next fan can always come in once the store answers. */
  min: 1,
} as const;

/** What the store reported it is doing now (every store process's fresh report, summed). */
export interface StoreLoad {
  /** Store processes with a fresh report; 0: nothing is known (no hold or checkout for this event lately). */
  reporting: number;
  holdsInFlight: number;
  checkoutsInFlight: number;
  /** Holds answered over the last 5 s. */
  holdsAnswered: number;
  /** Their 90th percentile, ms. */
  holdLatencyP90Ms: number;
  /** The oldest hold or checkout still unanswered, ms. */
  oldestInFlightMs: number;
  /**
   * How long the fans whose holds reached the store had waited since they collected their admission, 90th percentile
   * over the last 30 s, ms (the slowest process's); absent or 0: none known.
   */
  admittedWaitMs?: number;
  /**
   * Holds of admitted fans the store answered 503 unserved (load shedding) over the last 5 s, summed; absent: 0. A
   * loss, as TCP reads a dropped packet: the window let in more fans than the store takes, whatever its latency says
   * (a shed hold never reaches the handler that times holds).
   */
  holdsShed?: number;
}

/** Holds answered over this window are what `holdsAnswered` counts (queue/store-load.ts STORE_LOAD_WINDOW_MS). */
const ANSWERED_WINDOW_S = 5;

/**
 * How late the store answers now, ms: the holds' 90th percentile, the oldest request still waiting, and what a
 * request arriving now would wait behind those in flight at the rate the store answers them (Little's law: in
 * flight / answered a second). A store answering nothing with requests in flight lags by the oldest one's wait.
 */
export function storeLagMs(load: StoreLoad): number {
  if (load.reporting === 0) return 0;
  const inFlight = load.holdsInFlight + load.checkoutsInFlight;
  const perSecond = load.holdsAnswered / ANSWERED_WINDOW_S;
  const queued = inFlight > 0 && perSecond > 0 ? (inFlight / perSecond) * 1000 : 0;
  return Math.max(load.holdLatencyP90Ms, load.oldestInFlightMs, queued);
}

/** One step of the window. */
export interface WindowInput {
  /** The window after the last tick; null: none yet (it starts at its initial size, see initialWindow). */
  window: number | null;
  /** When it was last halved (epoch ms), null: never. */
  cutAtMs: number | null;
  nowMs: number;
  /** Real time since the last tick, ms. */
  elapsedMs: number;
  /** The plan's fans inside at once (admits a minute x checkout minutes): sets the step the window grows by. */
  plannedInside: number;
  /** Fans counted inside now. */
  inside: number;
  /** Of them, fans holding seats (the store has answered them: servedWindow bounds the others); absent: 0. */
  holding?: number;
  /**
   * The fans the seats left can plausibly take (the plausible-seats bound): the window may always grow to it, so a
   * window sized on the plan's early pace never binds at the tail of a sale when the store keeps up.
   */
  plausibleFans: number;
  load: StoreLoad;
  /** The smallest lag seen over the last ADMISSION_WINDOW.baseLagWindowMs (see BaseLag); null or absent: none known. */
  baseLagMs?: number | null;
  /** The event's clock runs this many times fast (a rehearsal); absent or <= 1: real time. */
  clockScale?: number | null;
}

export interface WindowStep {
  window: number;
  cutAtMs: number | null;
  /** The store lags (storeLagMs above lagTargetMs). */
  lagging: boolean;
  lagMs: number;
  /** What the lag was held against: max(latencyTargetMs, baseLagFactor x the base lag). */
  targetMs: number;
  /** Set on the tick that halved the window. */
  cut: boolean;
  /** The store shed holds of admitted fans lately (StoreLoad.holdsShed > 0): a loss, which cuts like a lag. */
  shedding: boolean;
  /** The most fans the store's answers allow inside now (servedWindow + the fans holding), Infinity when nothing is reported. */
  served: number;
}

/** The lag the store is held to: the target, or twice its base lag when it is slow whatever the fans inside do. */
export function lagTargetMs(baseLagMs: number | null | undefined): number {
  const A = ADMISSION_WINDOW;
  const base = baseLagMs !== null && baseLagMs !== undefined && Number.isFinite(baseLagMs) && baseLagMs > 0 ? baseLagMs : 0;
  return Math.max(A.latencyTargetMs, A.baseLagFactor * base);
}

/** The window at the open: 10% of the planned window, at least 10 fans, never past `max`. */
export function initialWindow(plannedInside: number, max: number): number {
  const A = ADMISSION_WINDOW;
  const planned = Number.isFinite(plannedInside) && plannedInside > 0 ? plannedInside : 0;
  return Math.min(max, Math.max(A.initialMin, planned * A.initialShare));
}

/**
 * The most fans the store's answers allow inside: servedGain x the holds it answered a second (over the last 5 s) x a
 * fan's round trip (a minute's seat choice at the event's clock + the latency target), never below the initial window.
 * Infinity when no store process reports (nothing known: the other bounds apply).
 */
export function servedWindow(load: StoreLoad, clockScale: number | null | undefined, initial: number): number {
  if (load.reporting === 0) return Infinity;
  const A = ADMISSION_WINDOW;
  const scale = clockScale && clockScale > 1 ? clockScale : 1;
  const roundTripS = SEAT_CHOICE_SECONDS / scale + A.latencyTargetMs / 1000;
  return Math.max(initial, A.servedGain * (load.holdsAnswered / ANSWERED_WINDOW_S) * roundTripS);
}

/**
 * Additive increase, multiplicative decrease on the fans inside. The window starts small (initialWindow). A lagging
 * store (storeLagMs over lagTargetMs) halves it, from the fans inside when they are fewer (never below
 * ADMISSION_WINDOW.min), at most once per max(minCutIntervalMs, lag); a store that answers within latencyTargetMs while
 * the window is in use adds max(1, min(10% of the planned window, the holds the store answers a second)) fans a second, up to the maximum (4x the planned window or the plausible fans,
 * whichever is more) and never past the fans holding + servedWindow.
 */
export function nextWindow(s: WindowInput): WindowStep {
  const A = ADMISSION_WINDOW;
  const planned = Math.max(A.min, Number.isFinite(s.plannedInside) ? s.plannedInside : A.min);
  const max = Math.max(A.min, planned * A.maxOfPlanned, Number.isFinite(s.plausibleFans) ? s.plausibleFans : 0);
  const initial = initialWindow(planned, max);
  // Fans holding seats have had their answer (they pay or leave): the served bound is on the fans still to be answered.
  const holding = s.holding !== undefined && Number.isFinite(s.holding) && s.holding > 0 ? s.holding : 0;
  const served = servedWindow(s.load, s.clockScale, initial) + holding;
  let window = s.window !== null && Number.isFinite(s.window) && s.window > 0 ? Math.min(max, Math.max(A.min, s.window)) : initial;
  const lagMs = storeLagMs(s.load);
  const targetMs = lagTargetMs(s.baseLagMs);
  const shedding = s.load.reporting > 0 && (s.load.holdsShed ?? 0) > 0;
  const lagging = lagMs > targetMs;
  if (lagging || shedding) {
    // A loss (holds shed) is a round trip's news: cut at most once a second for it, or once per lag when lagging.
    const interval = Math.max(A.minCutIntervalMs, lagging ? lagMs : 0);
    if (s.cutAtMs === null || s.nowMs - s.cutAtMs >= interval) {
      // Halved from the fans actually inside when fewer than the window (TCP halves its flight size, not an unused window).
      window = Math.max(A.min, Math.min(window, Math.max(A.min, s.inside)) * A.decrease);
      return { window, cutAtMs: s.nowMs, lagging, lagMs, targetMs, cut: true, served, shedding };
    }
    return { window, cutAtMs: s.cutAtMs, lagging, lagMs, targetMs, cut: false, served, shedding };
  }
  // Grown only while the store answers within the latency target itself, whatever its base: a store slow by its base
  // (lag between the target and twice its base) is neither cut nor grown into. Before, it grew up to twice its base:
  // in a 20,000-fan stadium with a connection a fan (2026-12-07) a store loaded for 30 s by the fans inside had a
  // base of 1.65 s, so its window went from 20 to 950 in one tick while holds took 2.1 s, and the store fell over.
  const growing = lagMs <= A.latencyTargetMs;
  // In use: the fans inside fill 80% of its whole fans (a window of 1.6 fans is in use with one fan inside).
  if (growing && s.inside >= Math.floor(A.inUse * Math.floor(window))) {
    // The step a second: 10% of the planned window, but never more than the holds the store answers a second (its
    // delivery rate) when it reports: at the stadium 10% of the plan is 1,556 fans a second, so one tick whose lag
    // dipped under the target undid every cut (a window of 1 became 1,556 in a 20,000-fan run, 7,204 fans then on
    // their way to a store answering 100 holds a second). A window grows by what the store showed it takes.
    const answeredPerSecond = s.load.reporting > 0 ? s.load.holdsAnswered / ANSWERED_WINDOW_S : Infinity;
    const perSecond = Math.max(A.minIncreasePerSecond, Math.min(planned * A.increaseShare, answeredPerSecond));
    const step = perSecond * (Math.max(0, s.elapsedMs) / 1000);
    // Growth stops at what the store serves (a window already past it is not cut for that: only lag cuts it).
    window = Math.max(window, Math.min(max, served, window + step));
  }
  return { window, cutAtMs: s.cutAtMs, lagging, lagMs, targetMs, cut: false, served, shedding };
}

/**
 * The smallest store lag over the last ADMISSION_WINDOW.baseLagWindowMs, per event, as the controller saw it on its
 * ticks (kept in memory by the leading controller: a new leader starts from what it sees, as a new TCP connection does).
 */
export class BaseLag {
  private readonly seen = new Map<string, [number, number][]>();
  /** Records this tick's lag and returns the base: the smallest within the window, this one included. */
  note(eventId: string, nowMs: number, lagMs: number): number {
    let l = this.seen.get(eventId);
    if (!l) this.seen.set(eventId, (l = []));
    // A monotonic deque: the front is the smallest within the window.
    while (l.length > 0 && l[l.length - 1]![1] >= lagMs) l.pop();
    l.push([nowMs, lagMs]);
    while (l.length > 0 && l[0]![0] <= nowMs - ADMISSION_WINDOW.baseLagWindowMs) l.shift();
    return l.length > 0 ? l[0]![1] : lagMs;
  }
  forget(eventId: string): void {
    this.seen.delete(eventId);
  }
  clear(): void {
    this.seen.clear();
  }
}

/**
 * How long after collecting an admission a fan who has not held is still counted inside (choosing, or in line for the
 * store), seconds: the longest of
 * - a minute to look at the seat map and choose (of the event's clock: a rehearsal's is `clockScale` times fast, at
 *   least 5 s), plus three times what the store takes to answer a hold now, never more than the checkout time; plus
 *   how long the fans let in wait before the store answers them (queuedBeforeStoreMs, at most twice the checkout time);
 * - ADMITTED_WAIT_GAIN x (what the fans whose holds reached the store lately had waited since their admission
 *   (`admittedWaitMs`, measured by the store from the admission token's issue time) + the store's lag): the round trip
 *   fans actually take, as TCP's retransmission timeout follows the round trips it measures. A line in front of the
 *   store (its HTTP server, the edge, the fans' connections) that no latency the store measures shows is in it, so
 *   the fans in that line stay counted inside, and admission slows instead of piling more fans into it;
 * and never longer than the admission token lives (ADMISSION_TOKEN_TTL_SECONDS): past it the fan's admission has lapsed
 * unheld and it can hold nothing with it. Past the leaver time the fan left: the slot goes back.
 */
export const SEAT_CHOICE_SECONDS = 60;
/** A fan who collected is counted inside this many times the round trip fans were measured to take (see leaverSeconds). */
export const ADMITTED_WAIT_GAIN = 2;
export function leaverSeconds(
  checkoutSeconds: number,
  clockScale: number | null | undefined,
  lagMs: number,
  queuedMs = 0,
  admittedWaitMs = 0,
): number {
  const scale = clockScale && clockScale > 1 ? clockScale : 1;
  const choose = Math.max(5, SEAT_CHOICE_SECONDS / scale);
  const checkout = Math.max(1, checkoutSeconds);
  const lag = Number.isFinite(lagMs) ? Math.max(0, lagMs) / 1000 : 0;
  const queued = Number.isFinite(queuedMs) ? Math.max(0, queuedMs) / 1000 : 0;
  // The line is added past the checkout time too (up to 3x): a fan still in line has not started its checkout.
  const estimated = Math.min(checkout, choose + 3 * lag) + Math.min(queued, 2 * checkout);
  const waited = Number.isFinite(admittedWaitMs) ? Math.max(0, admittedWaitMs) / 1000 : 0;
  const measured = ADMITTED_WAIT_GAIN * (waited + lag);
  return Math.max(1, Math.round(Math.min(ADMISSION_TOKEN_TTL_SECONDS, Math.max(estimated, measured))));
}

/**
 * How long the fans let in and not holding yet (`notHolding`, as the last tick counted them) wait beyond their seat
 * choice for the store to answer them, at the pace it answers holds now, ms: what the fans see of a queue in front of
 * the store (its HTTP server, the edge, their connections) that no latency the store measures shows. 0 when nothing
 * is known (no report, nothing answered: a store that answers nothing shows in its own lag).
 */
export function queuedBeforeStoreMs(notHolding: number, load: StoreLoad, clockScale: number | null | undefined): number {
  if (load.reporting === 0 || !(notHolding > 0)) return 0;
  const perSecond = load.holdsAnswered / ANSWERED_WINDOW_S;
  if (!(perSecond > 0)) return 0;
  const scale = clockScale && clockScale > 1 ? clockScale : 1;
  return Math.max(0, (notHolding / perSecond) * 1000 - (SEAT_CHOICE_SECONDS / scale) * 1000);
}

/**
 * The tail: seats available, nobody holding any and fans waiting. The next fan comes in this long after the last
 * advance, whatever the per-minute plan says: 2 s, plus 1 s for each fan let in who has not held yet (on their way or
 * choosing), at most 8 s; a rehearsal's compressed clock divides it (at least 1 s). So seats are never free for long
 * with fans waiting, and while the fans let in keep not holding (leavers, places nobody uses) the tail admits at most
 * one fan every 8 s until the leaver time hands their slots back.
 */
export const TAIL_GAP = { baseMs: 2_000, perFanMs: 1_000, maxMs: 8_000, minMs: 1_000 } as const;
export function tailGapMs(fansNotHolding: number, clockScale: number | null | undefined): number {
  const scale = clockScale && clockScale > 1 ? clockScale : 1;
  const gap = Math.min(TAIL_GAP.maxMs, TAIL_GAP.baseMs + TAIL_GAP.perFanMs * Math.max(0, fansNotHolding));
  return Math.max(TAIL_GAP.minMs, Math.round(gap / scale));
}
