import { describe, expect, it } from 'vitest';
import { ALERT_THRESHOLDS, alertReachOf, evaluateAlerts, type AlertCode, type AlertInput } from './alerts.js';

/** A healthy minute of the reference stadium sale: 1,300 admitted, holds a little below that, nothing broken. */
const calm: AlertInput = {
  paused: false,
  pausedBy: null,
  pausedReason: null,
  controllerSilent: false,
  heartbeatAgeSeconds: 0.4,
  inventoryState: 'AVAILABLE',
  admittedLastMinute: 1_300,
  holdsCreatedLastMinute: 1_150,
  holdsRefusedLastMinute: 20,
  planAdmitsPerMin: 1_248,
  rateOverridePerMin: null,
  holdLatencyP99Ms: 120,
  checkoutAttempts: 2_000,
  checkoutFailed: 10,
  paymentTps: 17,
  paymentTpsCeiling: 1_000,
  drift: 0,
  orderDrift: 0,
  soldOutPropagationP99Seconds: null,
  soldOutOnce: false,
  available: 40_000,
  oldestExpiredUnsweptSeconds: null,
  expiredUnsweptSeats: 0,
  waitlistOldestPendingSeconds: null,
};

const codes = (over: Partial<AlertInput>): AlertCode[] => evaluateAlerts({ ...calm, ...over }).map((a) => a.code);
const only = (over: Partial<AlertInput>, code: AlertCode) => {
  const alerts = evaluateAlerts({ ...calm, ...over }).filter((a) => a.code === code);
  expect(alerts).toHaveLength(1);
  return alerts[0]!;
};

describe('evaluateAlerts', () => {
  it('a calm sale raises nothing', () => {
    expect(evaluateAlerts(calm)).toEqual([]);
  });

  it('holds per admitted fan above 1.2 is an admission bypass (critical, on the holds-per-fan figure)', () => {
    expect(codes({ holdsCreatedLastMinute: 1_560 })).toEqual([]); // exactly 1.2
    const a = only({ holdsCreatedLastMinute: 18_000 }, 'ADMISSION_BYPASS'); // an admission bypass: 18,000 holds against 1,300 admitted
    expect(a).toMatchObject({ severity: 'critical', metric: 'holdsPerAdmitted', threshold: 1.2 });
    expect(a.value).toBeCloseTo(18_000 / 1_300);
    expect(a.detail).toContain('18,000 holds made against 1,300 fans let in');
  });

  it('holds with nobody admitted is a bypass too; too few of either is noise', () => {
    expect(only({ admittedLastMinute: 0, holdsCreatedLastMinute: 50, planAdmitsPerMin: 0 }, 'ADMISSION_BYPASS').value).toBeNull();
    expect(codes({ admittedLastMinute: 5, holdsCreatedLastMinute: 12 })).not.toContain('ADMISSION_BYPASS');
    expect(ALERT_THRESHOLDS.holdsPerAdmittedMinVolume).toBe(20);
  });

  it('admitting well over the plan, or over the operator rate when one is set', () => {
    expect(codes({ admittedLastMinute: 1_800, holdsCreatedLastMinute: 1_700 })).toEqual([]); // 1.44x plan
    expect(only({ admittedLastMinute: 2_000, holdsCreatedLastMinute: 1_900 }, 'ADMITTED_OVER_PLAN')).toMatchObject({
      severity: 'critical',
      metric: 'admittedPerMin',
    });
    // The operator slowed the sale to 500/min: 1,300 a minute is now far too many.
    expect(only({ rateOverridePerMin: 500 }, 'ADMITTED_OVER_PLAN').title).toContain("the operator's rate");
    // ...and raised it to 3,000/min: 2,000 is within it.
    expect(codes({ rateOverridePerMin: 3_000, admittedLastMinute: 2_000, holdsCreatedLastMinute: 1_900 })).toEqual([]);
  });

  it('SLO: hold p99 over 500 ms; unmeasured (null) never fires; too few holds (the first ones at the open) never fire', () => {
    expect(codes({ holdLatencyP99Ms: 500 })).toEqual([]);
    // The open: 6 holds, the slowest 2 s while pools warm. The p99 of 6 is the slowest one: no alert.
    expect(codes({ holdLatencyP99Ms: 2_000, holdLatencyObserved: 6 })).toEqual([]);
    expect(codes({ holdLatencyP99Ms: 2_000, holdLatencyObserved: ALERT_THRESHOLDS.holdLatencyMinSample - 1 })).toEqual([]);
    expect(
      only({ holdLatencyP99Ms: 2_000, holdLatencyObserved: ALERT_THRESHOLDS.holdLatencyMinSample }, 'HOLD_LATENCY_P99').detail,
    ).toContain(`of ${ALERT_THRESHOLDS.holdLatencyMinSample} holds`);
    expect(only({ holdLatencyP99Ms: 8_000 }, 'HOLD_LATENCY_P99')).toMatchObject({
      severity: 'critical',
      metric: 'holdLatencyP99',
      value: 8_000,
      threshold: 500,
    });
    expect(codes({ holdLatencyP99Ms: null })).toEqual([]);
  });

  it('hold refusals: warning above 10%, critical from 50%, only with volume', () => {
    expect(codes({ holdsCreatedLastMinute: 900, holdsRefusedLastMinute: 100 })).toEqual([]); // exactly 10%
    expect(only({ holdsCreatedLastMinute: 800, holdsRefusedLastMinute: 200 }, 'HOLD_REFUSALS').severity).toBe('warning');
    expect(only({ holdsCreatedLastMinute: 500, holdsRefusedLastMinute: 500 }, 'HOLD_REFUSALS').severity).toBe('critical');
    expect(codes({ admittedLastMinute: 10, holdsCreatedLastMinute: 5, holdsRefusedLastMinute: 10 })).not.toContain('HOLD_REFUSALS');
  });

  it("checkout errors: where the controller's slow-down starts (2%) and bottoms out (20%)", () => {
    // Platform failures only: a card its issuer declines is the fan's outcome. One declined test card of two
    // checkouts raises nothing (too few), and neither do 30 declines among 100 (none of them is the platform's).
    expect(codes({ checkoutAttempts: 2, checkoutFailed: 0, checkoutDeclined: 1 })).toEqual([]);
    expect(codes({ checkoutAttempts: 100, checkoutFailed: 0, checkoutDeclined: 30 })).toEqual([]);
    expect(only({ checkoutAttempts: 100, checkoutFailed: 10, checkoutDeclined: 30 }, 'CHECKOUT_ERRORS').detail).toBe(
      "10 of 100 checkouts in the last 2 minutes failed at the gateway or timed out (10.0%); 30 cards declined by their issuers are the fans' outcome and not counted.",
    );
    expect(codes({ checkoutFailed: 40 })).toEqual([]); // exactly 2%
    expect(only({ checkoutFailed: 100 }, 'CHECKOUT_ERRORS')).toMatchObject({
      severity: 'warning',
      metric: 'checkoutErrorRate',
      value: 0.05,
    });
    expect(only({ checkoutFailed: 400 }, 'CHECKOUT_ERRORS').severity).toBe('critical');
    expect(codes({ checkoutAttempts: 10, checkoutFailed: 9 })).toEqual([]);
  });

  it('payment attempts against the contracted TPS (warning at 90%, critical at the ceiling)', () => {
    expect(codes({ paymentTps: 449, paymentTpsCeiling: 500 })).toEqual([]);
    expect(only({ paymentTps: 450, paymentTpsCeiling: 500 }, 'PAYMENT_TPS_CEILING').severity).toBe('warning');
    expect(only({ paymentTps: 900, paymentTpsCeiling: 500 }, 'PAYMENT_TPS_CEILING')).toMatchObject({
      severity: 'critical',
      metric: 'paymentTps',
      threshold: 500,
    });
    // A ceiling of 1 TPS and a single attempt in the 10 s is not a rate.
    expect(codes({ paymentTps: 0.1, paymentTpsCeiling: 0.1, paymentAttempts10s: 1 })).toEqual([]);
  });

  it('the invariant: any drift is critical, either way; order drift too', () => {
    expect(only({ drift: 3 }, 'INVARIANT_DRIFT')).toMatchObject({ severity: 'critical', metric: 'drift', value: 3 });
    expect(only({ drift: -1 }, 'INVARIANT_DRIFT').detail).toBe('Off by -1 seats.');
    expect(only({ orderDrift: 2 }, 'ORDER_DRIFT').severity).toBe('critical');
    expect(codes({ orderDrift: null })).toEqual([]);
  });

  it('SLO: sold-out reaches fans within 60 s', () => {
    expect(codes({ soldOutPropagationP99Seconds: 60 })).toEqual([]);
    expect(only({ soldOutPropagationP99Seconds: 95 }, 'SOLDOUT_PROPAGATION')).toMatchObject({
      severity: 'critical',
      metric: 'soldOutPropagation',
    });
    expect(codes({ soldOutPropagationP99Seconds: 95, soldOutPollsObserved: 3 })).toEqual([]);
  });

  it('sold out, then seats back on sale; expired holds left unswept by a stuck sweeper', () => {
    expect(codes({ soldOutOnce: true, inventoryState: 'SOLD_OUT', available: 0 })).toEqual([]);
    expect(only({ soldOutOnce: true, inventoryState: 'AVAILABLE', available: 12 }, 'SOLDOUT_FLIP')).toMatchObject({
      severity: 'warning',
      metric: 'inventory',
    });
    expect(codes({ oldestExpiredUnsweptSeconds: 90, expiredUnsweptSeats: 40 })).toEqual([]);
    expect(only({ oldestExpiredUnsweptSeconds: 600, expiredUnsweptSeats: 9_000 }, 'EXPIRED_HOLDS_UNSWEPT').detail).toContain('9,000 seats');
  });

  it('fail closed: a silent controller is critical; an operator pause is a warning that says who and why', () => {
    expect(only({ controllerSilent: true, heartbeatAgeSeconds: 12 }, 'CONTROLLER_SILENT')).toMatchObject({
      severity: 'critical',
      metric: 'state',
    });
    expect(only({ controllerSilent: true, heartbeatAgeSeconds: null }, 'CONTROLLER_SILENT').detail).toContain('ever');
    const paused = only({ paused: true, pausedBy: 'ops@example.com', pausedReason: 'payment provider degraded' }, 'QUEUE_PAUSED');
    expect(paused).toMatchObject({
      severity: 'warning',
      metric: 'state',
      title: 'Admissions are paused by ops@example.com',
      detail: 'Reason given: payment provider degraded.',
    });
  });

  it("a presale tier's own queue: paused on its own is a warning naming the tier; selling with a silent controller is critical", () => {
    const queue = {
      tier: 'FANCLUB',
      paused: false,
      pausedBy: null,
      pausedReason: null,
      selling: true,
      heartbeatFresh: true,
      heartbeatAgeSeconds: 0.5,
    };
    expect(codes({ presaleQueues: [queue] })).toEqual([]);
    expect(
      only(
        { presaleQueues: [{ ...queue, paused: true, pausedBy: 'ops@example.com', pausedReason: 'fan club codes leaked' }] },
        'QUEUE_PAUSED',
      ),
    ).toMatchObject({
      scope: 'FANCLUB',
      title: "The FANCLUB presale's admissions are paused by ops@example.com",
      detail: 'Reason given: fan club codes leaked.',
    });
    expect(only({ presaleQueues: [{ ...queue, heartbeatFresh: false, heartbeatAgeSeconds: 9 }] }, 'CONTROLLER_SILENT')).toMatchObject({
      severity: 'critical',
      scope: 'FANCLUB',
      title: expect.stringContaining('FANCLUB'),
    });
    // A presale not yet selling has no controller yet; the event paused as a whole raises one pause, not one per queue.
    expect(codes({ presaleQueues: [{ ...queue, selling: false, heartbeatFresh: false, heartbeatAgeSeconds: null }] })).toEqual([]);
    expect(codes({ paused: true, pausedBy: 'ops', pausedReason: 'x', presaleQueues: [{ ...queue, paused: true }] })).toEqual([
      'QUEUE_PAUSED',
    ]);
  });

  it('returned seats waiting over a minute to reach the waitlist', () => {
    expect(codes({ waitlistOldestPendingSeconds: 30 })).toEqual([]);
    expect(only({ waitlistOldestPendingSeconds: 75 }, 'WAITLIST_FANOUT_BEHIND').metric).toBe('waitlist');
  });

  it('the store API losing its database is critical; 503s answered (overload shed) are a warning', () => {
    expect(codes({ storeDatabaseDownInstances: 0, storeUnavailablePerMin: 0 })).toEqual([]);
    expect(codes({ storeUnavailablePerMin: null })).toEqual([]);
    const down = only({ storeDatabaseDownInstances: 1, storeUnavailablePerMin: 2_351 }, 'STORE_UNAVAILABLE');
    expect(down).toMatchObject({ severity: 'critical', metric: 'state', value: 2_351 });
    expect(down.detail).toBe(
      '1 store API instance without a database; 2,351 requests a minute answered "try again" (a database outage, or requests refused under load).',
    );
    expect(only({ storeUnavailablePerMin: 145 }, 'STORE_UNAVAILABLE').severity).toBe('warning');
  });

  it('Redis not answering (limits counted per process at their share) is a warning saying what fans may notice', () => {
    expect(codes({ storeLimitsLocalInstances: 0, storeLimitsLocalDivisor: 0 })).toEqual([]);
    const local = only({ storeLimitsLocalInstances: 2, storeLimitsLocalDivisor: 4 }, 'SHARED_LIMITS_DOWN');
    expect(local).toMatchObject({ severity: 'warning', metric: 'state', value: 2 });
    expect(local.title).toBe('Redis does not answer: request limits are counted in each store process on its own');
    expect(local.action).toMatch(/each store process allows 1\/4 of every limit/);
    expect(local.detail).toBe('2 store API instances counting limits locally, each at 1/4 of every limit (STORE_API_PROCESSES 4).');
  });

  it('orders critical before warning, keeping rule order within a severity; every alert names its source', () => {
    const alerts = evaluateAlerts({ ...calm, paused: true, drift: 1, checkoutFailed: 100, holdLatencyP99Ms: 900 });
    expect(alerts.map((a) => [a.code, a.severity])).toEqual([
      ['HOLD_LATENCY_P99', 'critical'],
      ['INVARIANT_DRIFT', 'critical'],
      ['QUEUE_PAUSED', 'warning'],
      ['CHECKOUT_ERRORS', 'warning'],
    ]);
    for (const a of alerts) expect(a.source.length).toBeGreaterThan(5);
  });

  it('every alert says what is wrong and what to do in plain words; the source reference stays out of them', () => {
    const all = evaluateAlerts({
      ...calm,
      awaitingSignOff: { secondsToOpen: -5 },
      controllerSilent: true,
      paused: true,
      pausedBy: 'ops@example.com',
      pausedReason: 'x',
      holdsCreatedLastMinute: 18_000,
      rateOverridePerMin: 100,
      holdLatencyP99Ms: 900,
      holdsRefusedLastMinute: 5_000,
      checkoutFailed: 500,
      paymentTps: 1_000,
      drift: 1,
      orderDrift: 1,
      soldOutPropagationP99Seconds: 90,
      soldOutOnce: true,
      oldestExpiredUnsweptSeconds: 600,
      waitlistOldestPendingSeconds: 600,
      storeDatabaseDownInstances: 1,
      storeUnavailablePerMin: 40,
    });
    expect(new Set(all.map((a) => a.code)).size).toBe(16);
    for (const a of all) {
      for (const words of [a.title, a.action, a.detail]) {
        expect(words).not.toMatch(/Appendix|section \d|ARCHITECTURE|rule \d|SLO|E\.1|_/);
        expect(words.length).toBeGreaterThan(10);
      }
      expect(a.action).toMatch(/\.$/);
    }
  });
});

describe('alertReachOf', () => {
  it("names the alerts measured across the platform (one latency histogram, the store's database and Redis); the rest are the event's own", () => {
    const all = evaluateAlerts({
      ...calm,
      holdLatencyP99Ms: 3_120,
      holdLatencyObserved: 500,
      storeDatabaseDownInstances: 1,
      storeUnavailablePerMin: 40,
      storeLimitsLocalInstances: 2,
      storeLimitsLocalDivisor: 2,
      drift: 3,
      paused: true,
    });
    const reach = Object.fromEntries(all.map((a) => [a.code, alertReachOf(a.code)]));
    expect(reach).toEqual({
      HOLD_LATENCY_P99: 'platform',
      STORE_UNAVAILABLE: 'platform',
      SHARED_LIMITS_DOWN: 'platform',
      INVARIANT_DRIFT: 'event',
      QUEUE_PAUSED: 'event',
    });
  });
});
