// The war room's alert rules: pure, no I/O, browser-safe. The source document's Appendix E lists the metrics
// (E.1) and leaves the critical alerts (E.2) to the reader; each rule below takes its threshold from the place
// in the source that states it (the detection lines of section 4, the SLOs of 6.4 follow-up 6, ARCHITECTURE's
// rules), named in `source`.

/** `critical`: someone acts now. `warning`: someone looks now. */
export type AlertSeverity = 'critical' | 'warning';

/** Stable codes the console switches on. */
export type AlertCode =
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
  | 'STORE_UNAVAILABLE';

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
  /** One line, in the war room's words. */
  title: string;
  /** The numbers behind it. */
  detail: string;
  /** The measured value and the threshold it crossed, in the metric's own unit (null where there is none). */
  value: number | null;
  threshold: number | null;
  /** Where the rule comes from. */
  source: string;
}

/** Every threshold in one place, so the console can print them and the tests can pin them. */
export const ALERT_THRESHOLDS = {
  /** Section 4.1: holds_created_per_min / admitted_per_min "should be <= ~1.2". */
  holdsPerAdmittedMax: 1.2,
  /** Below this many holds and admissions in the minute the ratio is noise. */
  holdsPerAdmittedMinVolume: 20,
  /** Admissions in the last minute above this multiple of the plan (or the operator's rate) mean the gate or the controller is wrong. */
  admittedOverPlanFactor: 1.5,
  admittedOverPlanMinVolume: 20,
  /** SLO (6.4 follow-up 6): hold p99 < 500 ms for admitted users. */
  holdLatencyP99MsMax: 500,
  /** Share of hold requests refused for want of seats: the controller starts slowing at 10% (ADMISSION_SLOWDOWN). */
  holdRefusalWarn: 0.1,
  holdRefusalCritical: 0.5,
  holdRefusalMinVolume: 20,
  /** Checkout errors: the controller starts slowing at 2% and is at its floor at 20% (ADMISSION_SLOWDOWN). */
  checkoutErrorWarn: 0.02,
  checkoutErrorCritical: 0.2,
  checkoutMinVolume: 20,
  /** Section 4.3: payment_attempts_per_sec vs contracted TPS; warn with 10% headroom left. */
  paymentTpsWarnShare: 0.9,
  /** SLO: sold-out visible to everyone within 60 s. */
  soldOutPropagationSecondsMax: 60,
  /** Expiry is a read-time predicate, so an unswept expired hold strands nothing; a sweeper this far behind is stuck. */
  expiredUnsweptSecondsMax: 120,
  /** ARCHITECTURE rule 8: notification latency under a minute. */
  waitlistPendingSecondsMax: 60,
} as const;

/** What the rules look at: one event's figures at one instant. Null means "not measured" and never fires. */
export interface AlertInput {
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
  /** Checkout attempts in the last two minutes and how many failed. */
  checkoutAttempts: number;
  checkoutFailed: number;
  paymentTps: number;
  paymentTpsCeiling: number;
  /** available + held + sold - capacity, now. */
  drift: number;
  /** Sold seats - seats in confirmed orders at the last reconciliation (null before the first). */
  orderDrift: number | null;
  soldOutPropagationP99Seconds: number | null;
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
  /** The event's presale tiers' own queues (absent or empty: none): paused by an operator, or selling with a silent controller. */
  presaleQueues?: { tier: string; paused: boolean; pausedBy: string | null; pausedReason: string | null; selling: boolean; heartbeatFresh: boolean; heartbeatAgeSeconds: number | null }[];
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const num = (x: number) => (Number.isInteger(x) ? x.toLocaleString('en-US') : x.toLocaleString('en-US', { maximumFractionDigits: 2 }));
const ORDER: Record<AlertSeverity, number> = { critical: 0, warning: 1 };

/**
 * The alerts that fire for one event now, critical first (stable order within a severity). A figure that is not
 * measured (null) never fires; ratios need a minimum volume before they mean anything.
 */
export function evaluateAlerts(i: AlertInput): Alert[] {
  const t = ALERT_THRESHOLDS;
  const out: Alert[] = [];
  const fire = (a: Alert) => out.push(a);

  if (i.controllerSilent)
    fire({
      code: 'CONTROLLER_SILENT',
      severity: 'critical',
      metric: 'state',
      title: 'Admission controller silent: the queue has failed closed',
      detail: `no heartbeat for ${i.heartbeatAgeSeconds === null ? 'ever' : `${num(Math.round(i.heartbeatAgeSeconds))} s`}; every fan not yet admitted reads PAUSED`,
      value: i.heartbeatAgeSeconds,
      threshold: null,
      source: 'ARCHITECTURE rule 3; section 4.7 (fail closed)',
    });
  if (i.paused)
    fire({
      code: 'QUEUE_PAUSED',
      severity: 'warning',
      metric: 'state',
      title: 'Queue paused by an operator',
      detail: `${i.pausedBy ?? 'unknown'}: ${i.pausedReason ?? 'no reason recorded'}`,
      value: null,
      threshold: null,
      source: 'ARCHITECTURE rule 3',
    });

  // A presale's own queue fails closed and is paused on its own: the same alerts, naming the tier.
  for (const q of i.presaleQueues ?? []) {
    if (q.selling && !q.heartbeatFresh)
      fire({
        code: 'CONTROLLER_SILENT',
        severity: 'critical',
        metric: 'state',
        title: `Admission controller silent on the ${q.tier} presale queue: it has failed closed`,
        detail: `no heartbeat for ${q.heartbeatAgeSeconds === null ? 'ever' : `${num(Math.round(q.heartbeatAgeSeconds))} s`}; every ${q.tier} fan not yet admitted reads PAUSED`,
        value: q.heartbeatAgeSeconds,
        threshold: null,
        source: 'ARCHITECTURE rule 3; section 4.7 (fail closed)',
      });
    if (q.paused && !i.paused)
      fire({
        code: 'QUEUE_PAUSED',
        severity: 'warning',
        metric: 'state',
        title: `${q.tier} presale queue paused by an operator`,
        detail: `${q.pausedBy ?? 'unknown'}: ${q.pausedReason ?? 'no reason recorded'}`,
        value: null,
        threshold: null,
        source: 'ARCHITECTURE rule 3',
      });
  }

  if ((i.storeDatabaseDownInstances ?? 0) > 0 || (i.storeUnavailablePerMin ?? 0) > 0) {
    const down = i.storeDatabaseDownInstances ?? 0;
    fire({
      code: 'STORE_UNAVAILABLE',
      severity: down > 0 ? 'critical' : 'warning',
      metric: 'state',
      title: down > 0 ? 'Store API has lost its database: fans are told to retry (503)' : 'Store API is turning requests away (503 with Retry-After)',
      detail: `${down > 0 ? `${num(down)} instance(s) without a database; ` : ''}${num(i.storeUnavailablePerMin ?? 0)} requests/min answered 503 (database outage, statements refused under load, or load shed)`,
      value: i.storeUnavailablePerMin ?? null,
      threshold: 0,
      source: 'issue 13: a database outage or overload answers 503 with Retry-After, never a 500',
    });
  }

  const holds = i.holdsCreatedLastMinute;
  const admitted = i.admittedLastMinute;
  if (holds >= t.holdsPerAdmittedMinVolume || admitted >= t.holdsPerAdmittedMinVolume) {
    const ratio = admitted > 0 ? holds / admitted : Infinity;
    if (ratio > t.holdsPerAdmittedMax)
      fire({
        code: 'ADMISSION_BYPASS',
        severity: 'critical',
        metric: 'holdsPerAdmitted',
        title: 'More holds than admitted fans: something reaches the store past the queue',
        detail: `${num(holds)} holds created vs ${num(admitted)} admitted in the last minute (${Number.isFinite(ratio) ? `${ratio.toFixed(2)} per fan` : 'no admissions'}; should be <= ${t.holdsPerAdmittedMax})`,
        value: Number.isFinite(ratio) ? ratio : null,
        threshold: t.holdsPerAdmittedMax,
        source: 'Appendix E.1 holds_created_per_min / admitted_per_min; section 4.1',
      });
  }

  const allowed = i.rateOverridePerMin ?? i.planAdmitsPerMin;
  if (admitted >= t.admittedOverPlanMinVolume && admitted > allowed * t.admittedOverPlanFactor)
    fire({
      code: 'ADMITTED_OVER_PLAN',
      severity: 'critical',
      metric: 'admittedPerMin',
      title: `Admitting faster than ${i.rateOverridePerMin === null ? 'the plan' : "the operator's rate"}`,
      detail: `${num(admitted)} admitted in the last minute vs ${num(Math.round(allowed))}/min ${i.rateOverridePerMin === null ? 'planned' : 'set'}`,
      value: admitted,
      threshold: allowed * t.admittedOverPlanFactor,
      source: 'Appendix E.1 admitted_per_min; ARCHITECTURE rule 2',
    });

  if (i.holdLatencyP99Ms !== null && i.holdLatencyP99Ms > t.holdLatencyP99MsMax)
    fire({
      code: 'HOLD_LATENCY_P99',
      severity: 'critical',
      metric: 'holdLatencyP99',
      title: 'Hold latency p99 over the SLO',
      detail: `p99 ${num(Math.round(i.holdLatencyP99Ms))} ms > ${t.holdLatencyP99MsMax} ms`,
      value: i.holdLatencyP99Ms,
      threshold: t.holdLatencyP99MsMax,
      source: 'Appendix E.1 hold_latency_p99; SLO hold p99 < 500 ms',
    });

  const holdAttempts = holds + i.holdsRefusedLastMinute;
  if (holdAttempts >= t.holdRefusalMinVolume) {
    const refused = i.holdsRefusedLastMinute / holdAttempts;
    if (refused > t.holdRefusalWarn)
      fire({
        code: 'HOLD_REFUSALS',
        severity: refused >= t.holdRefusalCritical ? 'critical' : 'warning',
        metric: 'holdsPerAdmitted',
        title: 'Hold requests refused for want of seats',
        detail: `${pct(refused)} of ${num(holdAttempts)} hold requests refused in the last minute; the controller slows admissions`,
        value: refused,
        threshold: refused >= t.holdRefusalCritical ? t.holdRefusalCritical : t.holdRefusalWarn,
        source: 'Appendix E.1 hold_success_rate; section 4.6',
      });
  }

  if (i.checkoutAttempts >= t.checkoutMinVolume) {
    const rate = i.checkoutFailed / i.checkoutAttempts;
    if (rate > t.checkoutErrorWarn)
      fire({
        code: 'CHECKOUT_ERRORS',
        severity: rate >= t.checkoutErrorCritical ? 'critical' : 'warning',
        metric: 'checkoutErrorRate',
        title: 'Checkout errors rising',
        detail: `${pct(rate)} of ${num(i.checkoutAttempts)} checkouts failed in the last 2 minutes; the controller slows admissions`,
        value: rate,
        threshold: rate >= t.checkoutErrorCritical ? t.checkoutErrorCritical : t.checkoutErrorWarn,
        source: 'section 4.3; ADMISSION_SLOWDOWN',
      });
  }

  if (i.paymentTpsCeiling > 0 && i.paymentTps >= i.paymentTpsCeiling * t.paymentTpsWarnShare) {
    const at = i.paymentTps >= i.paymentTpsCeiling;
    fire({
      code: 'PAYMENT_TPS_CEILING',
      severity: at ? 'critical' : 'warning',
      metric: 'paymentTps',
      title: at ? 'Payment attempts at the contracted ceiling' : 'Payment attempts near the contracted ceiling',
      detail: `${num(i.paymentTps)} attempts/s vs ${num(i.paymentTpsCeiling)} TPS contracted`,
      value: i.paymentTps,
      threshold: at ? i.paymentTpsCeiling : i.paymentTpsCeiling * t.paymentTpsWarnShare,
      source: 'Appendix E.1 payment_attempts_per_sec vs contracted_tps; section 4.3',
    });
  }

  if (i.drift !== 0)
    fire({
      code: 'INVARIANT_DRIFT',
      severity: 'critical',
      metric: 'drift',
      title: 'Inventory invariant broken: available + held + sold ≠ capacity',
      detail: `drift ${i.drift > 0 ? '+' : ''}${num(i.drift)} seats`,
      value: i.drift,
      threshold: 0,
      source: 'Appendix E.1 inventory_invariant_drift; ARCHITECTURE rule 7',
    });
  if (i.orderDrift !== null && i.orderDrift !== 0)
    fire({
      code: 'ORDER_DRIFT',
      severity: 'critical',
      metric: 'drift',
      title: 'Sold seats and confirmed orders disagree',
      detail: `sold seats - seats in confirmed orders = ${i.orderDrift > 0 ? '+' : ''}${num(i.orderDrift)} at the last reconciliation`,
      value: i.orderDrift,
      threshold: 0,
      source: 'section 4.4 (orders_per_hold); ARCHITECTURE rule 7',
    });

  if (i.soldOutPropagationP99Seconds !== null && i.soldOutPropagationP99Seconds > t.soldOutPropagationSecondsMax)
    fire({
      code: 'SOLDOUT_PROPAGATION',
      severity: 'critical',
      metric: 'soldOutPropagation',
      title: 'Sold-out reaches fans too slowly',
      detail: `p99 ${num(Math.round(i.soldOutPropagationP99Seconds))} s from the sell-out to a polling fan > ${t.soldOutPropagationSecondsMax} s`,
      value: i.soldOutPropagationP99Seconds,
      threshold: t.soldOutPropagationSecondsMax,
      source: 'Appendix E.1 soldout_propagation_seconds; SLO < 60 s',
    });
  if (i.soldOutOnce && i.inventoryState !== 'SOLD_OUT' && i.available > 0)
    fire({
      code: 'SOLDOUT_FLIP',
      severity: 'warning',
      metric: 'inventory',
      title: 'Sold out, then seats came back',
      detail: `${num(i.available)} seats available after the sell-out (cancellations or returns; the waitlist should get them first)`,
      value: i.available,
      threshold: 0,
      source: 'section 4.2 (soldout_flip_count)',
    });
  if (i.oldestExpiredUnsweptSeconds !== null && i.oldestExpiredUnsweptSeconds > t.expiredUnsweptSecondsMax)
    fire({
      code: 'EXPIRED_HOLDS_UNSWEPT',
      severity: 'warning',
      metric: 'inventory',
      title: 'Expired holds not swept',
      detail: `${num(i.expiredUnsweptSeats)} seats in holds that expired up to ${num(Math.round(i.oldestExpiredUnsweptSeconds))} s ago (they sell anyway: expiry is read-time; the sweeper is behind)`,
      value: i.oldestExpiredUnsweptSeconds,
      threshold: t.expiredUnsweptSecondsMax,
      source: 'section 4.2 (held_expired_not_released)',
    });
  if (i.waitlistOldestPendingSeconds !== null && i.waitlistOldestPendingSeconds > t.waitlistPendingSecondsMax)
    fire({
      code: 'WAITLIST_FANOUT_BEHIND',
      severity: 'warning',
      metric: 'waitlist',
      title: 'Waitlist fan-out behind',
      detail: `returned seats waiting ${num(Math.round(i.waitlistOldestPendingSeconds))} s to reach the waitlist (target under ${t.waitlistPendingSecondsMax} s)`,
      value: i.waitlistOldestPendingSeconds,
      threshold: t.waitlistPendingSecondsMax,
      source: 'ARCHITECTURE rule 8',
    });

  return out.map((a, idx) => ({ a, idx })).sort((x, y) => ORDER[x.a.severity] - ORDER[y.a.severity] || x.idx - y.idx).map((x) => x.a);
}
