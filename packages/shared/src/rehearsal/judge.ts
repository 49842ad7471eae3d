// The rehearsal's verdict over every target its report shows, as the CLI's report and the console judge it: pure, no
// I/O. The sale's goals and the zeros are `verdictOf`'s (verdict.ts: each figure beside its limit); on top of them,
// the war room's detection lines (a hold p99 under 500 ms, sold-out within 60 s) and what the run alone cannot judge
// (admissions below the plan, a waitlist nobody was told of) as warnings with their reasons, never hidden behind a
// PASS.

import { ALERT_THRESHOLDS } from '../warroom/alerts.js';
import { verdictOf, type VerdictInput } from './verdict.js';
import type { RehearsalReport } from './report.js';

/** The targets a rehearsal is judged against (the detection lines of docs/architecture.md, as the war room uses them). */
export const REHEARSAL_TARGETS = {
  /** Hold p99 under 500 ms. */
  holdLatencyP99Ms: ALERT_THRESHOLDS.holdLatencyP99MsMax,
  /** Fewer holds than this: the p99 is the slowest one or two, not judged. */
  holdLatencyMinSample: ALERT_THRESHOLDS.holdLatencyMinSample,
  /** Every poller reads SOLD_OUT within 60 s. */
  soldOutPropagationP99Ms: ALERT_THRESHOLDS.soldOutPropagationSecondsMax * 1000,
  soldOutPropagationMinSample: ALERT_THRESHOLDS.soldOutPropagationMinSample,
  /**
   * The driver's own event-loop delay (p99) above which its fans' timings are mostly its own lag: the hold p99 is
   * then not judged (a warning saying so), since it would measure the crowd's machine, not the product.
   */
  driverLagMaxMs: 100,
  /** Admissions a minute below this share of the plan are a warning. */
  admittedShareOfPlanMin: 0.8,
} as const;

/** One target of the report and how the run did against it. */
export interface RehearsalCheck {
  key:
    | 'double-sold'
    | 'duplicate-orders'
    | 'drift'
    | 'faults-recovered'
    | 'whole-sale'
    | 'hold-p99'
    | 'sold-out-p99'
    | 'admitted'
    | 'waitlist';
  label: string;
  /** The run's figure, in words. */
  value: string;
  /** The target, in words. */
  target: string;
  /** `fail`: missed, the run is not a pass. `warn`: not judged or off the plan, with the reason. `ok`: met. */
  outcome: 'ok' | 'fail' | 'warn';
  reason: string | null;
}

/** What the verdict weighs of a report. */
export type JudgedReport = Pick<
  RehearsalReport,
  | 'doubleSold'
  | 'duplicateOrders'
  | 'drift'
  | 'faults'
  | 'holdLatencyMs'
  | 'soldOutPropagationMs'
  | 'soldOut'
  | 'admittedPerMinute'
  | 'waitlistJoined'
  | 'waitlistNotified'
> &
  Partial<
    Pick<
      RehearsalReport,
      | 'fans'
      | 'seats'
      | 'seatsSold'
      | 'seatsWanted'
      | 'admittedFans'
      | 'buyers'
      | 'positionExpired'
      | 'botSeatShare'
      | 'soldOutPropagationAsToldMs'
      | 'holdLatencyProductMs'
      | 'holdDriverLagMs'
    >
  > & {
    stopped?: RehearsalReport['stopped'];
    driver?: Pick<RehearsalReport['driver'], 'eventLoopDelayP99Ms'>;
    resources?: { machine?: VerdictInput['machine']; perRequest?: { productMeasured?: boolean } } | null;
  };

/** What `verdictOf` weighs, read off a report (older reports lack the sale's figures and are judged on the zeros). */
function verdictInput(r: JudgedReport): VerdictInput {
  return {
    doubleSold: r.doubleSold,
    duplicateOrders: r.duplicateOrders,
    drift: r.drift,
    faults: r.faults,
    seats: r.seats,
    seatsSold: r.seatsSold,
    seatsWanted: r.seatsWanted,
    soldOut: r.soldOut,
    fans: r.fans,
    admittedFans: r.admittedFans,
    buyers: r.buyers,
    // The sale's goals are over the reports that carry them (a driver that tells fans who polled as told apart).
    ...(r.soldOutPropagationAsToldMs
      ? {
          holdLatencyMs: r.holdLatencyMs,
          ...(r.holdLatencyProductMs && r.holdDriverLagMs
            ? { holdLatencyProductMs: r.holdLatencyProductMs, holdDriverLagMs: r.holdDriverLagMs }
            : {}),
          soldOutPropagationMs: r.soldOutPropagationAsToldMs,
          soldOutPolling: r.soldOutPropagationMs.count,
        }
      : {}),
    positionExpired: r.positionExpired,
    botSeatShare: r.botSeatShare,
    productMeasured: r.resources?.perRequest?.productMeasured,
    machine: r.resources?.machine ?? null,
  };
}

export interface RehearsalJudgement {
  verdict: 'PASS' | 'FAIL';
  checks: RehearsalCheck[];
  /** Why not PASS, one line a missed target. */
  reasons: string[];
  /** What to look at although it does not fail the run, with why. */
  warnings: string[];
}

const n = (v: number, digits = 0) => v.toLocaleString('en-US', { maximumFractionDigits: digits });
const ms = (v: number) => (v < 1000 ? `${n(v)} ms` : `${n(v / 1000, 2)} s`);

/** Judges a rehearsal's report against every target it shows. */
export function judgeRehearsal(r: JudgedReport): RehearsalJudgement {
  const t = REHEARSAL_TARGETS;
  const checks: RehearsalCheck[] = [];
  const check = (c: Omit<RehearsalCheck, 'reason'> & { reason?: string | null }) => checks.push({ reason: null, ...c });
  const core = verdictOf(verdictInput(r));
  const failed = (what: string) => core.reasons.find((x) => x.includes(what)) ?? null;

  check({
    key: 'double-sold',
    label: 'Seats sold twice',
    value: n(r.doubleSold),
    target: '0',
    outcome: r.doubleSold === 0 ? 'ok' : 'fail',
    reason: failed('twice'),
  });
  check({
    key: 'duplicate-orders',
    label: 'Duplicate orders',
    value: n(r.duplicateOrders),
    target: '0',
    outcome: r.duplicateOrders === 0 ? 'ok' : 'fail',
    reason: failed('duplicate'),
  });
  check({
    key: 'drift',
    label: 'Seats unaccounted for',
    value: n(r.drift),
    target: '0',
    outcome: r.drift === 0 ? 'ok' : 'fail',
    reason: failed('drift'),
  });
  const unrecovered = r.faults.filter((f) => f.recoveredAtMs === null).length;
  if (r.faults.length > 0)
    check({
      key: 'faults-recovered',
      label: 'Faults recovered from',
      value: `${n(r.faults.length - unrecovered)} of ${n(r.faults.length)}`,
      target: 'all',
      outcome: unrecovered === 0 ? 'ok' : 'fail',
      reason: failed('fault'),
    });
  if (r.stopped)
    check({
      key: 'whole-sale',
      label: 'A whole sale',
      value: `stopped ${n(r.stopped.atMs / 1000)} s after the open`,
      target: 'run to the end',
      outcome: 'fail',
      reason: `stopped early (${r.stopped.by}) ${n(r.stopped.atMs / 1000)} s after the open, ${n(r.stopped.joined)} fans joined: not a whole sale`,
    });

  // The product's part of the hold as fans time it, when the driver timed its own wait apart (verdict.ts).
  const hold = r.holdLatencyProductMs ?? r.holdLatencyMs;
  const lag = r.driver?.eventLoopDelayP99Ms ?? null;
  const driverBound = lag !== null && lag > t.driverLagMaxMs;
  check({
    key: 'hold-p99',
    label: 'Slowest holds (p99)',
    value: hold.p99 === null ? '—' : `${ms(hold.p99)} over ${n(hold.count)} holds`,
    target: `under ${ms(t.holdLatencyP99Ms)}`,
    ...(hold.p99 === null || hold.count < t.holdLatencyMinSample
      ? { outcome: 'warn', reason: `too few holds to judge the hold p99 (${n(hold.count)}, at least ${n(t.holdLatencyMinSample)} needed)` }
      : hold.p99 > t.holdLatencyP99Ms && driverBound
        ? {
            outcome: 'warn',
            reason: `hold p99 ${ms(hold.p99)} not judged: the driver's own event loop lagged ${ms(lag ?? 0)} (p99), so its fans' timings are mostly the crowd's machine, not the product; rehearse from a machine of its own`,
          }
        : hold.p99 > t.holdLatencyP99Ms
          ? { outcome: 'fail', reason: `hold p99 ${ms(hold.p99)} against its target of under ${ms(t.holdLatencyP99Ms)}` }
          : { outcome: 'ok' }),
  });

  const prop = r.soldOutPropagationMs;
  if (r.soldOut)
    check({
      key: 'sold-out-p99',
      label: 'Fans told it sold out within (p99)',
      value: prop.p99 === null ? '—' : `${ms(prop.p99)} over ${n(prop.count)} fans`,
      target: `under ${ms(t.soldOutPropagationP99Ms)}`,
      ...(prop.p99 === null || prop.count < t.soldOutPropagationMinSample
        ? {
            outcome: 'warn',
            reason: `too few polling fans to judge how fast the sell-out reached them (${n(prop.count)}, at least ${n(t.soldOutPropagationMinSample)} needed)`,
          }
        : prop.p99 > t.soldOutPropagationP99Ms
          ? {
              outcome: 'fail',
              reason: `sold-out reached fans in ${ms(prop.p99)} (p99) against its target of under ${ms(t.soldOutPropagationP99Ms)}`,
            }
          : { outcome: 'ok' }),
    });

  const { plan, actual } = r.admittedPerMinute;
  const share = actual !== null && plan > 0 ? actual / plan : null;
  check({
    key: 'admitted',
    label: 'Let in a minute, against the plan',
    value: actual === null ? 'nobody let in' : `${n(actual, 1)} of ${n(plan, 1)} (${n((share ?? 0) * 100)}%)`,
    target: `at least ${n(t.admittedShareOfPlanMin * 100)}% of the plan`,
    ...(share === null
      ? { outcome: 'warn', reason: 'nobody was let in: the admissions could not be compared with the plan' }
      : share < t.admittedShareOfPlanMin
        ? {
            outcome: 'warn',
            reason: `fans were let in at ${n(share * 100)}% of the plan's rate (${n(actual ?? 0, 1)} of ${n(plan, 1)} a minute): the admission controller held back (payments failing, holds slow or refused, seats running out) or too few fans were waiting`,
          }
        : { outcome: 'ok' }),
  });

  if (r.waitlistJoined > 0)
    check({
      key: 'waitlist',
      label: 'Waitlist told of returned seats',
      value: `${n(r.waitlistNotified)} of ${n(r.waitlistJoined)}`,
      target: 'fans told when seats come back',
      ...(r.waitlistNotified === 0
        ? {
            outcome: 'warn',
            reason: `none of the ${n(r.waitlistJoined)} fans on the waitlist was told of a returned seat: no seat came back after the sell-out, or the waitlist's fan-out did not run`,
          }
        : { outcome: 'ok' }),
    });

  const reasons = [...new Set([...core.reasons, ...checks.filter((c) => c.outcome === 'fail' && c.reason !== null).map((c) => c.reason!)])];
  const warnings = checks.filter((c) => c.outcome === 'warn').map((c) => c.reason!);
  return { verdict: reasons.length === 0 ? 'PASS' : 'FAIL', checks, reasons, warnings };
}

/**
 * A stored report judged by today's rule, or null when it lacks the figures the rule reads (a report written by an
 * older driver, or a partial one): its stored verdict then stands.
 */
export function judgeStoredReport(report: unknown): RehearsalJudgement | null {
  if (typeof report !== 'object' || report === null) return null;
  const r = report as Partial<JudgedReport>;
  const summary = (v: unknown) => typeof v === 'object' && v !== null && 'p99' in v && 'count' in v;
  const whole =
    typeof r.doubleSold === 'number' &&
    typeof r.duplicateOrders === 'number' &&
    typeof r.drift === 'number' &&
    Array.isArray(r.faults) &&
    summary(r.holdLatencyMs) &&
    summary(r.soldOutPropagationMs) &&
    typeof r.soldOut === 'boolean' &&
    typeof r.admittedPerMinute === 'object' &&
    r.admittedPerMinute !== null &&
    typeof r.waitlistJoined === 'number' &&
    typeof r.waitlistNotified === 'number';
  return whole ? judgeRehearsal(r as JudgedReport) : null;
}
