import { describe, expect, it } from 'vitest';
import type { AdmissionConstraint } from '../admission/rate.js';
import { explainAdmissions, formatDuration, type AdmissionExplainInput, type AdmissionExplanationCode } from './explain.js';

// Whenever admissions are below plan or zero the war room says why in one sentence, what the
// operator can do, and how long the queue takes to clear at the current rate. Every reason, from the inputs.

const NOW = Date.parse('2026-12-02T10:05:00Z');

/** The live run that prompted this: ADMITTING, 61 waiting, 40 seats, 0/min under a 120/min override. */
const live: AdmissionExplainInput = {
  state: 'ADMITTING',
  nowMs: NOW,
  onsaleAtMs: Date.parse('2026-12-02T10:00:00Z'),
  awaitingSignOff: false,
  waiting: 61,
  controllerRatePerMin: 0,
  planAdmitsPerMin: 12,
  rateOverridePerMin: 120,
  controller: {
    constraint: 'no_plausible_seats',
    reason: 'no_plausible_seats: 27 fans inside can still buy the 40 seats left',
    fansInside: 27,
    cap: 0,
  },
  paused: null,
  heartbeatAgeSeconds: 0.4,
  available: 34,
  held: 6,
  checkoutErrorRate: 0,
  holdRefusalRate: null,
};

const explain = (over: Partial<AdmissionExplainInput>) => explainAdmissions({ ...live, ...over });

describe('explainAdmissions', () => {
  it('inventory pacing: the fans let in and still shopping cover the seats left (the live run: 0/min under a 120/min override)', () => {
    const e = explain({});
    expect(e).toMatchObject({ code: 'INVENTORY_PACING', stalled: true, ratePerMin: 0, clearQueueSeconds: null });
    expect(e.sentence).toBe('Nobody new is let in: the 27 fans already let in and still able to buy can take the 40 seats left.');
    expect(e.action).toContain('A higher rate does not change this');
    expect(e.clearQueue).toBe('At 0 a minute the 61 fans waiting are not let in.');
    const capped = explain({
      controllerRatePerMin: 6,
      controller: { constraint: 'plausible_seats', reason: 'plausible_seats: …', fansInside: 20, cap: 4 },
    });
    expect(capped).toMatchObject({ code: 'INVENTORY_PACING', stalled: true });
    expect(capped.sentence).toBe(
      'Admissions are held to 4 fans more: the 20 fans already let in and still able to buy cover most of the 40 seats left.',
    );
    expect(capped.clearQueue).toBe('At 6 a minute the 61 fans waiting are all let in within about 10 min.');
  });

  it("seats free, none held and fans waiting (the console's 60-seat event: 8 free, 153 waiting): why, and never 'nothing to do'", () => {
    // Every constraint the controller can report (rate.ts AdmissionConstraint), a last tick older than the counts
    // (last_chance: every seat was held then) and none yet: a reason and something to do or to expect, never nothing.
    const constraints: (AdmissionConstraint | null)[] = [
      'no_plausible_seats',
      'plausible_seats',
      'tail',
      'plan',
      'override',
      'store_lag',
      'checkout_errors',
      'hold_failures',
      'last_chance',
      'sold_out',
      null,
    ];
    for (const constraint of constraints)
      for (const fansInside of [0, 1, 5]) {
        const e = explain({
          available: 8,
          held: 0,
          waiting: 153,
          controllerRatePerMin: 0.07,
          rateOverridePerMin: constraint === 'override' ? 30 : null,
          controller: constraint === null ? null : { constraint, reason: '', fansInside, cap: constraint === 'plausible_seats' ? 1 : 0 },
        });
        expect(e.action, String(constraint)).not.toMatch(/nothing to do/i);
        expect(e.sentence, String(constraint)).not.toMatch(/^$|all 0 seats/);
        expect(e.clearQueue).not.toMatch(/2 h/);
      }
    expect(
      explain({ available: 2, held: 0, waiting: 10, controller: { constraint: 'last_chance', reason: '', fansInside: 0, cap: 0 } }).code,
    ).toBe('TAIL');
    const e = explain({
      available: 8,
      held: 0,
      waiting: 153,
      controllerRatePerMin: 0.07,
      controller: { constraint: 'plausible_seats', reason: '', fansInside: 1, cap: 1 },
    });
    expect(e).toMatchObject({ code: 'TAIL', stalled: false, clearQueueSeconds: null });
    expect(e.sentence).toBe(
      'Nobody holds any of the 8 seats free while 153 fans wait: the 1 fan let in last has not held yet, so the next fan is let in every few seconds until one does.',
    );
    expect(e.action).toMatch(/give their places back within a minute/);
    expect(e.clearQueue).toBe(
      'The 8 seats left go to the next fans in line as they hold; the fans behind them will read that the sale sold out.',
    );
  });

  it('a store that lags: admissions slowed, why, and that they rise again by themselves', () => {
    const e = explain({ controllerRatePerMin: 3, controller: { constraint: 'store_lag', reason: '', fansInside: 40, cap: 0 } });
    expect(e).toMatchObject({ code: 'STORE_LAG', stalled: true });
    expect(e.sentence).toMatch(/^Admissions are slowed to 3 a minute: the store is answering holds late/);
    expect(e.action).toMatch(/rise again by themselves/);
  });

  it('paused: who, when and why; resuming is what to do', () => {
    const e = explain({
      state: 'PAUSED',
      paused: { by: 'ops@example.com', reason: 'gateway 429s', atMs: Date.parse('2026-12-02T10:02:00Z') },
    });
    expect(e).toMatchObject({ code: 'PAUSED', stalled: true });
    expect(e.sentence).toBe('Nobody is let in: admissions were paused by ops@example.com at 10:02 UTC (“gateway 429s”).');
    expect(e.action).toMatch(/^Resume admissions/);
  });

  it('before the open: when it opens, nothing to do; not a stall', () => {
    const e = explain({ state: 'NOT_OPEN', onsaleAtMs: NOW + 12 * 60_000, controller: null });
    expect(e).toMatchObject({ code: 'BEFORE_OPEN', stalled: false });
    expect(e.sentence).toBe('Nobody is let in yet: the sale opens at 10:17 UTC (in 12 min).');
    expect(explain({ state: 'NOT_OPEN', onsaleAtMs: NOW + 3 * 3600_000, controller: null }).sentence).toContain('(in 3 h)');
  });

  it('not signed off: before its time it will not open, after its time it has not opened; signing it off is what to do', () => {
    const before = explain({ state: 'NOT_OPEN', awaitingSignOff: true, onsaleAtMs: NOW + 30 * 60_000, controller: null });
    expect(before).toMatchObject({ code: 'BEFORE_OPEN' });
    expect(before.sentence).toContain('and only once its fairness mode is signed off');
    expect(before.action).toContain('signs the fairness mode off');
    const after = explain({
      state: 'AWAITING_SIGNOFF',
      awaitingSignOff: true,
      controller: { constraint: 'awaiting_signoff', reason: 'awaiting_signoff: …', fansInside: 0, cap: 0 },
    });
    expect(after).toMatchObject({ code: 'AWAITING_SIGNOFF', stalled: true });
    expect(after.sentence).toBe(
      'Nobody is let in: the sale has not opened because its fairness mode is not signed off (it was due at 10:00 UTC).',
    );
  });

  it('the controller silent: the queue failed closed; check the worker', () => {
    const e = explain({ state: 'FAILED_CLOSED', heartbeatAgeSeconds: 12.4 });
    expect(e).toMatchObject({ code: 'CONTROLLER_SILENT', stalled: true });
    expect(e.sentence).toBe('Nobody is let in: the admission controller has not reported for 12 s, so the queue has failed closed.');
    expect(e.action).toContain('worker process');
    expect(explain({ state: 'FAILED_CLOSED', heartbeatAgeSeconds: null }).sentence).toContain('as long as the sale has been open');
  });

  it('an override of 0: set a rate or clear it', () => {
    const e = explain({
      rateOverridePerMin: 0,
      controller: { constraint: 'override', reason: 'override: operator rate 0/min', fansInside: 0, cap: 24 },
    });
    expect(e).toMatchObject({
      code: 'OVERRIDE_ZERO',
      stalled: true,
      sentence: 'Nobody is let in: an operator set the admission rate to 0 a minute.',
    });
  });

  it('sold out and ended: nobody is let in, and nothing to do', () => {
    expect(explain({ state: 'SOLD_OUT', available: 0, held: 0 })).toMatchObject({
      code: 'SOLD_OUT',
      stalled: false,
      sentence: 'Nobody is let in: every seat is sold.',
    });
    expect(explain({ state: 'ENDED' })).toMatchObject({ code: 'ENDED', stalled: false });
  });

  it('last chance: fans are let in as held seats come back', () => {
    const e = explain({
      state: 'LAST_CHANCE',
      available: 0,
      held: 12,
      controllerRatePerMin: 1.5,
      controller: { constraint: 'last_chance', reason: 'last_chance: …', fansInside: 6, cap: 3 },
    });
    expect(e).toMatchObject({ code: 'LAST_CHANCE', stalled: true });
    expect(e.sentence).toBe('Fans are let in only as seats come back: all 12 seats left are held by fans choosing or paying.');
    expect(e.clearQueue).toBe('At 1.5 a minute the 61 fans waiting are all let in within about 41 min.');
  });

  it('failing payments and holds that find no seats slow admissions: how much, and what to check', () => {
    const pay = explain({
      controllerRatePerMin: 30,
      rateOverridePerMin: null,
      planAdmitsPerMin: 120,
      checkoutErrorRate: 0.11,
      controller: { constraint: 'checkout_errors', reason: '…', fansInside: 50, cap: 200 },
    });
    expect(pay).toMatchObject({
      code: 'CHECKOUT_ERRORS',
      stalled: true,
      sentence: 'Admissions are slowed to 30 a minute: 11% of payments are failing at the payment gateway.',
    });
    const holds = explain({
      controllerRatePerMin: 60,
      rateOverridePerMin: null,
      planAdmitsPerMin: 120,
      holdRefusalRate: 0.3,
      controller: { constraint: 'hold_failures', reason: '…', fansInside: 50, cap: 200 },
    });
    expect(holds).toMatchObject({
      code: 'HOLD_FAILURES',
      stalled: true,
      sentence: 'Admissions are slowed to 60 a minute: 30% of fans let in find no seats to hold.',
    });
  });

  it("an operator's rate below the plan is a stall with a remedy; at the plan (or the override) nothing is wrong", () => {
    const low = explain({
      controllerRatePerMin: 20,
      rateOverridePerMin: 20,
      planAdmitsPerMin: 120,
      controller: { constraint: 'override', reason: 'override: operator rate 20/min', fansInside: 5, cap: 200 },
    });
    expect(low).toMatchObject({
      code: 'OVERRIDE_BELOW_PLAN',
      stalled: true,
      sentence: "Admissions follow an operator's rate of 20 a minute, below the plan's 120 a minute.",
    });
    expect(low.clearQueue).toBe('At 20 a minute the 61 fans waiting are all let in within about 3 min.');
    const plan = explain({
      controllerRatePerMin: 120,
      rateOverridePerMin: null,
      planAdmitsPerMin: 120,
      controller: { constraint: 'plan', reason: 'plan: 120/min', fansInside: 5, cap: 500 },
    });
    expect(plan).toMatchObject({ code: 'AT_PLAN', stalled: false, sentence: 'Admissions follow the plan: 120 a minute.' });
    expect(plan.clearQueueSeconds).toBeCloseTo(30.5);
    expect(plan.clearQueue).toBe('At 120 a minute the 61 fans waiting are all let in within about 31 s.');
    const high = explain({
      controllerRatePerMin: 600,
      rateOverridePerMin: 600,
      planAdmitsPerMin: 120,
      controller: { constraint: 'override', reason: '…', fansInside: 5, cap: 500 },
    });
    expect(high).toMatchObject({ code: 'AT_PLAN', stalled: false });
  });

  it('nobody waiting is no stall, whatever the rate', () => {
    expect(explain({ waiting: 0 })).toMatchObject({
      code: 'NOBODY_WAITING',
      stalled: false,
      clearQueue: 'Nobody is waiting.',
      clearQueueSeconds: null,
    });
  });

  it('a controller that has not reported yet says so', () => {
    expect(explain({ controller: null, controllerRatePerMin: 0 })).toMatchObject({ code: 'CONTROLLER_STARTING', stalled: true });
  });

  it('every reason has a sentence and an action in plain words (no codes), and the rules are in the order of their causes', () => {
    const seen = new Set<AdmissionExplanationCode>();
    const inputs: Partial<AdmissionExplainInput>[] = [
      {},
      { state: 'ENDED' },
      { state: 'SOLD_OUT' },
      { state: 'AWAITING_SIGNOFF', awaitingSignOff: true },
      { state: 'NOT_OPEN', onsaleAtMs: NOW + 60_000 },
      { state: 'PAUSED', paused: { by: 'x', reason: 'y', atMs: NOW } },
      { state: 'FAILED_CLOSED' },
      { rateOverridePerMin: 0 },
      { waiting: 0 },
      { controller: { constraint: 'last_chance', reason: '', fansInside: 0, cap: 1 } },
      { controller: { constraint: 'checkout_errors', reason: '', fansInside: 0, cap: 1 } },
      { controller: { constraint: 'hold_failures', reason: '', fansInside: 0, cap: 1 } },
      { rateOverridePerMin: 5, controller: { constraint: 'override', reason: '', fansInside: 0, cap: 1 } },
      { rateOverridePerMin: null, controller: { constraint: 'plan', reason: '', fansInside: 0, cap: 1 } },
      { controller: null },
      { held: 0 },
      { controller: { constraint: 'store_lag', reason: '', fansInside: 40, cap: 0 } },
    ];
    for (const over of inputs) {
      const e = explain(over);
      seen.add(e.code);
      for (const words of [e.sentence, e.action]) {
        expect(words).toMatch(/^[A-Z].*\.$/);
        expect(words).not.toMatch(/_|[A-Z]{4,}/);
      }
    }
    expect(seen.size).toBe(17);
    // Sold out wins over a pause; a pause over a silent controller; an override of 0 over the controller's constraint.
    expect(explain({ state: 'SOLD_OUT', paused: { by: 'x', reason: 'y', atMs: NOW } }).code).toBe('SOLD_OUT');
    expect(explain({ state: 'PAUSED', paused: { by: 'x', reason: 'y', atMs: NOW }, heartbeatAgeSeconds: 30 }).code).toBe('PAUSED');
    expect(explain({ rateOverridePerMin: 0 }).code).toBe('OVERRIDE_ZERO');
  });

  it('durations read as a person would say them', () => {
    expect([formatDuration(0.2), formatDuration(31), formatDuration(90), formatDuration(3600), formatDuration(7500)]).toEqual([
      'about 1 s',
      'about 31 s',
      'about 2 min',
      'about 1 h',
      'about 2 h 5 min',
    ]);
  });
});
