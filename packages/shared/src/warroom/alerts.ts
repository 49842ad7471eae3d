// The war room's alert rules: pure, no I/O, browser-safe. Each rule below is one of the detection lines in
// docs/architecture.md (with the rule it guards), named in `source`. What an operator reads is `title` (what is wrong), `action` (what to do) and `detail`
// (the numbers), in plain words; `source` is a reference for the curious, shown apart.

/** `critical`: someone acts now. `warning`: someone looks now. */
export type AlertSeverity = 'critical' | 'warning';

/** Stable codes the console switches on. */
export type AlertCode =
  | 'FAIRNESS_NOT_SIGNED_OFF'
  | 'CONTROLLER_SILENT'
  | 'QUEUE_PAUSED'
  | 'ADMISSION_BYPASS'
  | 'ADMITTED_OVER_PLAN'
  | 'HOLD_LATENCY_P99'
  | 'HOLD_REFUSALS'
  | 'CHECKOUT_ERRORS'
  | 'PAYMENT_TPS_CEILING'
  | 'INVARIANT_DRIFT'
  | 'ORDER_DRIFT'
  | 'SOLDOUT_PROPAGATION'
  | 'SOLDOUT_FLIP'
  | 'EXPIRED_HOLDS_UNSWEPT'
  | 'WAITLIST_FANOUT_BEHIND'
  | 'STORE_UNAVAILABLE'
  | 'SHARED_LIMITS_DOWN';

/** The war-room figure an alert belongs to: the console shows the alert on that figure's tile. */
export type AlertMetric =
  | 'state'
  | 'admittedPerMin'
  | 'holdsPerAdmitted'
  | 'holdLatencyP99'
  | 'checkoutErrorRate'
  | 'paymentTps'
  | 'drift'
  | 'soldOutPropagation'
  | 'inventory'
  | 'waitlist';

export interface Alert {
  code: AlertCode;
  severity: AlertSeverity;
  metric: AlertMetric;
  /**
   * What the alert is about within its event: '' for the event itself, a presale tier's code for that tier's own
   * queue. (event, code, scope) names one alert across evaluations: history and webhooks de-duplicate on it.
   */
  scope: string;
  /** What is wrong, in one plain sentence. */
  title: string;
  /** What to do about it, in one plain sentence. */
  action: string;
  /** The numbers behind it. */
  detail: string;
  /** The measured value and the threshold it crossed, in the metric's own unit (null where there is none). */
  value: number | null;
  threshold: number | null;
  /** Where the rule comes from (a reference, shown apart from the words an operator acts on). */
  source: string;
}

/** Every threshold in one place, so the console can print them and the tests can pin them. */
export const ALERT_THRESHOLDS = {
  /** Holds created per admitted fan a minute "should be <= ~1.2" (the detection lines). */
  holdsPerAdmittedMax: 1.2,
  /** Below this many holds and admissions in the minute the ratio is noise. */
  holdsPerAdmittedMinVolume: 20,
  /** Admissions in the last minute above this multiple of the plan (or the operator's rate) mean the gate or the controller is wrong. */
  admittedOverPlanFactor: 1.5,
  admittedOverPlanMinVolume: 20,
  /** Hold p99 < 500 ms for admitted fans (the detection lines). */
  holdLatencyP99MsMax: 500,
  /** The p99 of fewer holds than this is the slowest one or two: the first holds at the open warm caches and pools. */
  holdLatencyMinSample: 50,
  /** Share of hold requests refused for want of seats: the controller starts slowing at 10% (ADMISSION_SLOWDOWN). */
  holdRefusalWarn: 0.1,
  holdRefusalCritical: 0.5,
  holdRefusalMinVolume: 20,
  /**
   * Checkouts the platform failed (gateway errors, timeouts, payments that could not complete): the controller
   * starts slowing at 2% and is at its floor at 20% (ADMISSION_SLOWDOWN). A card its issuer declines is the fan's
   * outcome, not a platform failure, and is not counted.
   */
  checkoutErrorWarn: 0.02,
  checkoutErrorCritical: 0.2,
  checkoutMinVolume: 20,
  /** Payment attempts a second against the contracted TPS; warn with 10% headroom left (the detection lines). */
  paymentTpsWarnShare: 0.9,
  /** Payment attempts in the 10 s the rate is measured over: fewer is too few to call a rate. */
  paymentTpsMinAttempts: 10,
  /** SLO: sold-out visible to everyone within 60 s. */
  soldOutPropagationSecondsMax: 60,
  /** Fans told SOLD_OUT in the window before the p99 means anything. */
  soldOutPropagationMinSample: 20,
  /** Expiry is a read-time predicate, so an unswept expired hold strands nothing; a sweeper this far behind is stuck. */
  expiredUnsweptSecondsMax: 120,
  /** Rule 8 of docs/architecture.md: notification latency under a minute. */
  waitlistPendingSecondsMax: 60,
} as const;

/** What the rules look at: one event's figures at one instant. Null means "not measured" and never fires. */
export interface AlertInput {
  /**
   * The fairness mode is not signed off and the sale has not opened: it will not open at its time. With
   * `secondsToOpen` (zero or negative: the time has passed).
   */
  awaitingSignOff?: { secondsToOpen: number } | null;
  paused: boolean;
  pausedBy: string | null;
  pausedReason: string | null;
  /** No controller heartbeat for longer than the staleness limit after the open: fans read PAUSED (fail closed). */
  controllerSilent: boolean;
  heartbeatAgeSeconds: number | null;
  inventoryState: 'AVAILABLE' | 'LAST_CHANCE' | 'SOLD_OUT';
  /** Admission tokens issued and holds created in the last full minute. */
  admittedLastMinute: number;
  holdsCreatedLastMinute: number;
  holdsRefusedLastMinute: number;
  /** The plan's admits per minute, and the operator's override (null: following the plan). */
  planAdmitsPerMin: number;
  rateOverridePerMin: number | null;
  holdLatencyP99Ms: number | null;
  /** Holds the p99 is taken over (absent: enough). */
  holdLatencyObserved?: number;
  /**
   * Checkout attempts in the last two minutes and how many the platform failed (gateway errors and timeouts,
   * payments that could not complete); cards declined by their issuer are neither (see `checkoutDeclined`).
   */
  checkoutAttempts: number;
  checkoutFailed: number;
  /** Cards declined by their issuer in the same two minutes: the fans' outcome, reported, never alerted on. */
  checkoutDeclined?: number;
  paymentTps: number;
  paymentTpsCeiling: number;
  /** Payment attempts in the 10 s `paymentTps` is measured over (absent: enough). */
  paymentAttempts10s?: number;
  /** available + held + sold - capacity, now. */
  drift: number;
  /** Sold seats - seats in confirmed orders at the last reconciliation (null before the first). */
  orderDrift: number | null;
  soldOutPropagationP99Seconds: number | null;
  /** Fans told SOLD_OUT the p99 is taken over (absent: enough). */
  soldOutPollsObserved?: number;
  /** The event sold out at some point (queue_state.sold_out_at is set). */
  soldOutOnce: boolean;
  available: number;
  /** Age of the oldest HELD seat whose hold expired but that no sweeper has released yet (null: none). */
  oldestExpiredUnsweptSeconds: number | null;
  expiredUnsweptSeats: number;
  /** Age of the oldest availability event still fanning out to the waitlist (null: none pending). */
  waitlistOldestPendingSeconds: number | null;
  /** Store-API instances reporting that they lost their database (0: none; absent: not measured). */
  storeDatabaseDownInstances?: number;
  /** Requests the store API answered 503 with Retry-After per minute (outage or shedding); null: not measured. */
  storeUnavailablePerMin?: number | null;
  /** Store-API instances counting request limits in their own memory because Redis does not answer (absent: not measured). */
  storeLimitsLocalInstances?: number;
  /** The share each of them counts: 1/this of every limit. */
  storeLimitsLocalDivisor?: number;
  /** The event's presale tiers' own queues (absent or empty: none): paused by an operator, or selling with a silent controller. */
  presaleQueues?: {
    tier: string;
    paused: boolean;
    pausedBy: string | null;
    pausedReason: string | null;
    selling: boolean;
    heartbeatFresh: boolean;
    heartbeatAgeSeconds: number | null;
  }[];
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const num = (x: number) => (Number.isInteger(x) ? x.toLocaleString('en-US') : x.toLocaleString('en-US', { maximumFractionDigits: 2 }));
const seconds = (s: number | null) => (s === null ? 'ever' : `${num(Math.round(s))} s`);
const ORDER: Record<AlertSeverity, number> = { critical: 0, warning: 1 };

/** What a rule says when it fires: its code and source are the rule's own. */
type Firing = Omit<Alert, 'code' | 'scope' | 'source'> & { scope?: string };

/**
 * One detection line of docs/architecture.md: its alert code, the line it implements (`source`), and the alerts it
 * raises for one event's figures (none: an empty list). A figure that is not measured (null) never fires.
 */
interface AlertRule {
  code: AlertCode;
  source: string;
  fire(i: AlertInput): Firing[];
}

const t = ALERT_THRESHOLDS;
const when = (cond: boolean, a: () => Firing): Firing[] => (cond ? [a()] : []);
const FAIL_CLOSED = 'docs/architecture.md: fail closed (rule 3)';

/** Every rule, in the order their alerts are listed within a severity. */
const ALERT_RULES: readonly AlertRule[] = [
  {
    code: 'FAIRNESS_NOT_SIGNED_OFF',
    source: 'docs/architecture.md: fairness sign-off (rule 1)',
    fire: (i) => {
      if (!i.awaitingSignOff) return [];
      const late = i.awaitingSignOff.secondsToOpen <= 0;
      return [
        {
          severity: late ? 'critical' : 'warning',
          metric: 'state',
          title: late
            ? 'The sale has not opened: its fairness mode is not signed off'
            : 'The sale will not open at its time: its fairness mode is not signed off',
          action:
            "A promoter or an admin signs the fairness mode off on the event's Configuration page; the sale opens at the controller's next tick.",
          detail: late
            ? 'Nobody is let in; fans keep their places and read that the sale has not opened yet.'
            : 'Until it is signed off, the queue stays closed at the on-sale time.',
          value: null,
          threshold: null,
        },
      ];
    },
  },
  {
    code: 'CONTROLLER_SILENT',
    source: FAIL_CLOSED,
    fire: (i) => [
      ...when(i.controllerSilent, () => ({
        severity: 'critical',
        metric: 'state',
        title: 'Nobody is being let in: the admission controller has stopped reporting',
        action:
          'Check that a worker process is running and can reach the database; admissions restart by themselves at its next heartbeat.',
        detail: `No heartbeat for ${seconds(i.heartbeatAgeSeconds)}; every fan not yet let in reads PAUSED (the queue fails closed).`,
        value: i.heartbeatAgeSeconds,
        threshold: null,
      })),
      // A presale's own queue fails closed on its own: the same alert, naming the tier.
      ...(i.presaleQueues ?? []).flatMap((q) =>
        when(q.selling && !q.heartbeatFresh, () => ({
          scope: q.tier,
          severity: 'critical',
          metric: 'state',
          title: `Nobody is being let in to the ${q.tier} presale: its admission controller has stopped reporting`,
          action:
            'Check that a worker process is running and can reach the database; admissions restart by themselves at its next heartbeat.',
          detail: `No heartbeat for ${seconds(q.heartbeatAgeSeconds)}; every ${q.tier} fan not yet let in reads PAUSED.`,
          value: q.heartbeatAgeSeconds,
          threshold: null,
        })),
      ),
    ],
  },
  {
    code: 'QUEUE_PAUSED',
    source: FAIL_CLOSED,
    fire: (i) => [
      ...when(i.paused, () => ({
        severity: 'warning',
        metric: 'state',
        title: `Admissions are paused by ${i.pausedBy ?? 'an operator'}`,
        action: 'Resume admissions once the cause is dealt with; fans keep their places meanwhile.',
        detail: `Reason given: ${i.pausedReason ?? 'none recorded'}.`,
        value: null,
        threshold: null,
      })),
      // A presale's own queue is paused on its own (and the event's pause says it for every queue).
      ...(i.presaleQueues ?? []).flatMap((q) =>
        when(q.paused && !i.paused, () => ({
          scope: q.tier,
          severity: 'warning',
          metric: 'state',
          title: `The ${q.tier} presale's admissions are paused by ${q.pausedBy ?? 'an operator'}`,
          action: 'Resume its admissions once the cause is dealt with (the Resume button in the tier table).',
          detail: `Reason given: ${q.pausedReason ?? 'none recorded'}.`,
          value: null,
          threshold: null,
        })),
      ),
    ],
  },
  {
    code: 'STORE_UNAVAILABLE',
    source: 'docs/architecture.md: store answers (a 503 with Retry-After, never a 500)',
    fire: (i) => {
      const down = i.storeDatabaseDownInstances ?? 0;
      return when(down > 0 || (i.storeUnavailablePerMin ?? 0) > 0, () => ({
        severity: down > 0 ? 'critical' : 'warning',
        metric: 'state',
        title:
          down > 0
            ? 'The store cannot reach its database: fans are asked to try again in a moment'
            : 'The store is turning requests away: fans are asked to try again in a moment',
        action:
          down > 0
            ? 'Call engineering to restore the database; consider pausing admissions so no more fans are let in meanwhile.'
            : 'Lower the admission rate if it persists, and check the database and store API load.',
        detail: `${down > 0 ? `${num(down)} store API instance${down === 1 ? '' : 's'} without a database; ` : ''}${num(i.storeUnavailablePerMin ?? 0)} requests a minute answered "try again" (a database outage, or requests refused under load).`,
        value: i.storeUnavailablePerMin ?? null,
        threshold: 0,
      }));
    },
  },
  {
    code: 'SHARED_LIMITS_DOWN',
    source: 'docs/architecture.md: shared request limits (a per-process share while Redis is away)',
    fire: (i) => {
      const n = i.storeLimitsLocalInstances ?? 0;
      const share = Math.max(1, i.storeLimitsLocalDivisor ?? 1);
      return when(n > 0, () => ({
        severity: 'warning',
        metric: 'state',
        title: 'Redis does not answer: request limits are counted in each store process on its own',
        action:
          share > 1
            ? `Call engineering to restore Redis. Meanwhile each store process allows 1/${num(share)} of every limit, so a fan may be refused ("too many requests") sooner than usual.`
            : 'Call engineering to restore Redis. Meanwhile limits are counted per process.',
        detail: `${num(n)} store API instance${n === 1 ? '' : 's'} counting limits locally${share > 1 ? `, each at 1/${num(share)} of every limit (STORE_API_PROCESSES ${num(share)})` : ''}.`,
        value: n,
        threshold: 0,
      }));
    },
  },
  {
    code: 'ADMISSION_BYPASS',
    source: 'docs/architecture.md: holds per admitted fan',
    fire: (i) => {
      const holds = i.holdsCreatedLastMinute;
      const admitted = i.admittedLastMinute;
      if (holds < t.holdsPerAdmittedMinVolume && admitted < t.holdsPerAdmittedMinVolume) return [];
      const ratio = admitted > 0 ? holds / admitted : Infinity;
      return when(ratio > t.holdsPerAdmittedMax, () => ({
        severity: 'critical',
        metric: 'holdsPerAdmitted',
        title: 'More seats are being held than fans were let in: something reaches the store without passing the queue',
        action: 'Pause admissions if holds keep climbing, and check for shared admission tokens or a route that skips the queue.',
        detail: `${num(holds)} holds made against ${num(admitted)} fans let in over the last minute (${Number.isFinite(ratio) ? `${ratio.toFixed(2)} per fan` : 'nobody let in'}; normal is at most ${t.holdsPerAdmittedMax}).`,
        value: Number.isFinite(ratio) ? ratio : null,
        threshold: t.holdsPerAdmittedMax,
      }));
    },
  },
  {
    code: 'ADMITTED_OVER_PLAN',
    source: 'docs/architecture.md: admitted against the plan (rule 2)',
    fire: (i) => {
      const admitted = i.admittedLastMinute;
      const allowed = i.rateOverridePerMin ?? i.planAdmitsPerMin;
      return when(admitted >= t.admittedOverPlanMinVolume && admitted > allowed * t.admittedOverPlanFactor, () => ({
        severity: 'critical',
        metric: 'admittedPerMin',
        title: `Fans are being let in much faster than ${i.rateOverridePerMin === null ? 'planned' : "the operator's rate"}`,
        action: 'Pause admissions if the store is struggling, and check the rate override and the controller.',
        detail: `${num(admitted)} let in over the last minute against ${num(Math.round(allowed))} a minute ${i.rateOverridePerMin === null ? 'planned' : 'set by an operator'}.`,
        value: admitted,
        threshold: allowed * t.admittedOverPlanFactor,
      }));
    },
  },
  {
    code: 'HOLD_LATENCY_P99',
    source: 'docs/architecture.md: hold latency (p99 under 500 ms)',
    fire: (i) =>
      when(
        i.holdLatencyP99Ms !== null &&
          i.holdLatencyP99Ms > t.holdLatencyP99MsMax &&
          (i.holdLatencyObserved ?? Infinity) >= t.holdLatencyMinSample,
        () => ({
          severity: 'critical',
          metric: 'holdLatencyP99',
          title: 'Seat holds are slow: the slowest fans wait over half a second for their seats',
          action: 'Lower the admission rate while it lasts, and check the database and store API load.',
          detail: `The slowest 1% of ${num(i.holdLatencyObserved ?? 0)} holds took over ${num(Math.round(i.holdLatencyP99Ms ?? 0))} ms (the target is under ${t.holdLatencyP99MsMax} ms).`,
          value: i.holdLatencyP99Ms,
          threshold: t.holdLatencyP99MsMax,
        }),
      ),
  },
  {
    code: 'HOLD_REFUSALS',
    source: 'docs/architecture.md: hold success rate',
    fire: (i) => {
      const attempts = i.holdsCreatedLastMinute + i.holdsRefusedLastMinute;
      if (attempts < t.holdRefusalMinVolume) return [];
      const refused = i.holdsRefusedLastMinute / attempts;
      return when(refused > t.holdRefusalWarn, () => ({
        severity: refused >= t.holdRefusalCritical ? 'critical' : 'warning',
        metric: 'holdsPerAdmitted',
        title: 'Many fans let in find no seats to hold',
        action:
          'Expected near the end of a sale (the controller slows admissions by itself); earlier, check the sections on sale and the presale tiers.',
        detail: `${pct(refused)} of ${num(attempts)} hold requests over the last minute found no seats.`,
        value: refused,
        threshold: refused >= t.holdRefusalCritical ? t.holdRefusalCritical : t.holdRefusalWarn,
      }));
    },
  },
  {
    code: 'CHECKOUT_ERRORS',
    source: 'docs/architecture.md: checkout errors',
    fire: (i) => {
      if (i.checkoutAttempts < t.checkoutMinVolume) return [];
      const rate = i.checkoutFailed / i.checkoutAttempts;
      const declined = i.checkoutDeclined ?? 0;
      return when(rate > t.checkoutErrorWarn, () => ({
        severity: rate >= t.checkoutErrorCritical ? 'critical' : 'warning',
        metric: 'checkoutErrorRate',
        title: 'Payments are failing at the payment gateway',
        action: "Check the payment provider's status; the controller slows admissions by itself while it lasts.",
        detail: `${num(i.checkoutFailed)} of ${num(i.checkoutAttempts)} checkouts in the last 2 minutes failed at the gateway or timed out (${pct(rate)})${declined > 0 ? `; ${num(declined)} cards declined by their issuers are the fans' outcome and not counted` : ''}.`,
        value: rate,
        threshold: rate >= t.checkoutErrorCritical ? t.checkoutErrorCritical : t.checkoutErrorWarn,
      }));
    },
  },
  {
    code: 'PAYMENT_TPS_CEILING',
    source: 'docs/architecture.md: payment throughput',
    fire: (i) => {
      const at = i.paymentTps >= i.paymentTpsCeiling;
      return when(
        i.paymentTpsCeiling > 0 &&
          i.paymentTps >= i.paymentTpsCeiling * t.paymentTpsWarnShare &&
          (i.paymentAttempts10s ?? Infinity) >= t.paymentTpsMinAttempts,
        () => ({
          severity: at ? 'critical' : 'warning',
          metric: 'paymentTps',
          title: at
            ? 'Payment attempts have reached the limit agreed with the payment provider'
            : 'Payment attempts are close to the limit agreed with the payment provider',
          action: 'Lower the admission rate, or ask the payment provider for more headroom.',
          detail: `${num(i.paymentTps)} payment attempts a second against ${num(i.paymentTpsCeiling)} agreed.`,
          value: i.paymentTps,
          threshold: at ? i.paymentTpsCeiling : i.paymentTpsCeiling * t.paymentTpsWarnShare,
        }),
      );
    },
  },
  {
    code: 'INVARIANT_DRIFT',
    source: 'docs/architecture.md: inventory invariant (rule 7)',
    fire: (i) =>
      when(i.drift !== 0, () => ({
        severity: 'critical',
        metric: 'drift',
        title: 'The seat counts do not add up: available, held and sold differ from the capacity',
        action: 'Call engineering now, and add or cancel nothing until it is explained.',
        detail: `Off by ${i.drift > 0 ? '+' : ''}${num(i.drift)} seats.`,
        value: i.drift,
        threshold: 0,
      })),
  },
  {
    code: 'ORDER_DRIFT',
    source: 'docs/architecture.md: orders per hold (rule 7)',
    fire: (i) =>
      when(i.orderDrift !== null && i.orderDrift !== 0, () => ({
        severity: 'critical',
        metric: 'drift',
        title: 'Sold seats and paid orders disagree',
        action: 'Call engineering, and hold refunds and cancellations until orders and seats are compared.',
        detail: `Sold seats minus seats in confirmed orders: ${(i.orderDrift ?? 0) > 0 ? '+' : ''}${num(i.orderDrift ?? 0)} at the last check.`,
        value: i.orderDrift,
        threshold: 0,
      })),
  },
  {
    code: 'SOLDOUT_PROPAGATION',
    source: 'docs/architecture.md: sold-out propagation (under 60 s)',
    fire: (i) =>
      when(
        i.soldOutPropagationP99Seconds !== null &&
          i.soldOutPropagationP99Seconds > t.soldOutPropagationSecondsMax &&
          (i.soldOutPollsObserved ?? Infinity) >= t.soldOutPropagationMinSample,
        () => ({
          severity: 'critical',
          metric: 'soldOutPropagation',
          title: 'Fans learn of the sell-out too slowly',
          action: 'Check that every store API instance and edge cache is refreshing the queue state.',
          detail: `The slowest 1% of ${num(i.soldOutPollsObserved ?? 0)} fans heard ${num(Math.round(i.soldOutPropagationP99Seconds ?? 0))} s after the sell-out (the target is under ${t.soldOutPropagationSecondsMax} s).`,
          value: i.soldOutPropagationP99Seconds,
          threshold: t.soldOutPropagationSecondsMax,
        }),
      ),
  },
  {
    code: 'SOLDOUT_FLIP',
    source: 'docs/architecture.md: sold-out flip',
    fire: (i) =>
      when(i.soldOutOnce && i.inventoryState !== 'SOLD_OUT' && i.available > 0, () => ({
        severity: 'warning',
        metric: 'inventory',
        title: 'Seats came back after the sell-out',
        action: 'They go to the waitlist first: check that its offers are going out.',
        detail: `${num(i.available)} seats available again (cancellations or returns).`,
        value: i.available,
        threshold: 0,
      })),
  },
  {
    code: 'EXPIRED_HOLDS_UNSWEPT',
    source: 'docs/architecture.md: sold-out flip (expired holds unswept)',
    fire: (i) =>
      when(i.oldestExpiredUnsweptSeconds !== null && i.oldestExpiredUnsweptSeconds > t.expiredUnsweptSecondsMax, () => ({
        severity: 'warning',
        metric: 'inventory',
        title: 'Expired holds are not being cleared',
        action: 'Check the worker process; the seats sell anyway, since an expired hold counts as available.',
        detail: `${num(i.expiredUnsweptSeats)} seats in holds that expired up to ${num(Math.round(i.oldestExpiredUnsweptSeconds ?? 0))} s ago.`,
        value: i.oldestExpiredUnsweptSeconds,
        threshold: t.expiredUnsweptSecondsMax,
      })),
  },
  {
    code: 'WAITLIST_FANOUT_BEHIND',
    source: 'docs/architecture.md: waitlist notification (rule 8)',
    fire: (i) =>
      when(i.waitlistOldestPendingSeconds !== null && i.waitlistOldestPendingSeconds > t.waitlistPendingSecondsMax, () => ({
        severity: 'warning',
        metric: 'waitlist',
        title: 'Returned seats are slow to reach the waitlist',
        action: 'Check the worker process and its job queue.',
        detail: `Seats have waited ${num(Math.round(i.waitlistOldestPendingSeconds ?? 0))} s to be offered (the target is under ${t.waitlistPendingSecondsMax} s).`,
        value: i.waitlistOldestPendingSeconds,
        threshold: t.waitlistPendingSecondsMax,
      })),
  },
];

/**
 * The alerts that fire for one event now, critical first (the rules' order within a severity): every rule of
 * ALERT_RULES over the same figures. Ratios and percentiles need a minimum sample before they mean anything.
 */
export function evaluateAlerts(i: AlertInput): Alert[] {
  return ALERT_RULES.flatMap((rule) =>
    rule.fire(i).map((a): Alert => ({ code: rule.code, source: rule.source, ...a, scope: a.scope ?? '' })),
  )
    .map((a, idx) => ({ a, idx }))
    .sort((x, y) => ORDER[x.a.severity] - ORDER[y.a.severity] || x.idx - y.idx)
    .map((x) => x.a);
}

/**
 * Where an alert belongs. Most are about one event's own figures. A few are measured across the whole platform
 * (the store API's hold latency is one histogram for every event; an unreachable database or Redis is every
 * event's): they fire on every event on sale at once, and say so, so a rehearsal's load on one event is not
 * mistaken for trouble with another's sale.
 */
export type AlertReach = 'event' | 'platform';

const PLATFORM_WIDE: ReadonlySet<string> = new Set<AlertCode>(['HOLD_LATENCY_P99', 'STORE_UNAVAILABLE', 'SHARED_LIMITS_DOWN']);

/** Whether an alert (by its code) is about its event alone or about the whole platform. */
export const alertReachOf = (code: string): AlertReach => (PLATFORM_WIDE.has(code) ? 'platform' : 'event');

/** An alert's identity across evaluations: history and webhooks de-duplicate on it. */
export const alertKey = (a: { code: string; scope: string }) => (a.scope ? `${a.code}:${a.scope}` : a.code);
