import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { planAdmission } from './plan.js';
import { nextAdmissionRate, type AdmissionRateInput } from './rate.js';

// The reference sale's plan (docs/architecture.md): 1,248 admits/min ("about 1,300"), x1.3, 2.5 tickets/order.
const plan = planAdmission({
  seats: 60_000,
  ticketsPerOrder: 2.5,
  targetSaleMinutes: 25,
  overbookFactor: 1.3,
  checkoutMinutes: 6,
  paymentTps: 1000,
});
const healthy: AdmissionRateInput = {
  plan,
  checkoutErrorRate: 0,
  holdFailureRate: 0,
  remainingSeats: 60_000,
  heldSeats: 0,
  fansInside: 0,
  ticketsPerOrder: 2.5,
};
const rate = (patch: Partial<AdmissionRateInput>) => nextAdmissionRate({ ...healthy, ...patch });

describe('nextAdmissionRate', () => {
  it('follows the plan when everything is healthy', () => {
    const r = rate({});
    expect(r.ratePerMinute).toBe(1248);
    expect(r.reason).toMatch(/^plan: /);
    expect(r.cap).toBe(31_200); // 60,000 / 2.5 x 1.3
  });

  it('a full window on a store that sheds holds of fans let in: no one more, and the reason says the store shed them', () => {
    const r = rate({ fansInside: 40, window: 40, storeLagMs: 200, storeHoldsShed: 7 });
    expect(r).toMatchObject({ ratePerMinute: 0, constraint: 'store_lag', cap: 0 });
    expect(r.reason).toContain('the store shed 7 holds of fans let in');
    // No shed holds: the same full window reads as one that grows while the store keeps up.
    expect(rate({ fansInside: 40, window: 40, storeLagMs: 200, storeHoldsShed: 0 }).reason).toMatch(/which grows while the store answers/);
    expect(() => rate({ storeHoldsShed: -1 })).toThrow(DomainError);
    // Who is inside, when given: the fans holding, those let in not holding yet and how long they count, those on their way.
    const parts = { holding: 12, notHolding: 25, arriving: 3, leaverSeconds: 40 };
    expect(rate({ fansInside: 40, window: 40, storeLagMs: 200, insideParts: parts }).reason).toMatch(
      /as fast as it answers holds; inside: 12 holding, 25 let in not holding yet \(a leaver 40 s after collecting\), 3 on their way$/,
    );
  });

  it('follows an operator override, above or below the plan, and 0 stops admissions', () => {
    expect(rate({ overrideRatePerMinute: 500 })).toMatchObject({ ratePerMinute: 500, reason: expect.stringMatching(/^override: /) });
    expect(rate({ overrideRatePerMinute: 2000 }).ratePerMinute).toBe(2000);
    expect(rate({ overrideRatePerMinute: 0 }).ratePerMinute).toBe(0);
    expect(rate({ overrideRatePerMinute: null }).ratePerMinute).toBe(1248);
  });

  describe('checkout errors', () => {
    it.each([
      [0.01, 1248],
      [0.02, 1248], // the threshold itself does not slow
      [0.11, 1248 * 0.55], // half way from 2% to 20%: 1 - 0.9 x 0.5
      [0.2, 1248 * 0.1],
      [0.6, 1248 * 0.1], // never below 10%
    ])('at %f the rate is %f', (errors, expected) => {
      const r = rate({ checkoutErrorRate: errors });
      expect(r.ratePerMinute).toBeCloseTo(expected, 5);
      if (errors > 0.02) expect(r.reason).toMatch(/^checkout_errors: /);
    });
  });

  describe('hold failures', () => {
    it.each([
      [0.05, 1248],
      [0.1, 1248],
      [0.3, 1248 * 0.625], // half way from 10% to 50%: 1 - 0.75 x 0.5
      [0.5, 1248 * 0.25],
      [1, 1248 * 0.25],
    ])('at %f the rate is %f', (failures, expected) => {
      const r = rate({ holdFailureRate: failures });
      expect(r.ratePerMinute).toBeCloseTo(expected, 5);
      if (failures > 0.1) expect(r.reason).toMatch(/^hold_failures: /);
    });
  });

  it('applies the tighter of the two slow-downs, not both', () => {
    const r = rate({ checkoutErrorRate: 0.11, holdFailureRate: 0.3 }); // x0.55 vs x0.625
    expect(r.ratePerMinute).toBeCloseTo(1248 * 0.55, 5);
    expect(r.reason).toMatch(/^checkout_errors: /);
  });

  it('slows an override too', () => {
    expect(rate({ overrideRatePerMinute: 1000, checkoutErrorRate: 0.2 }).ratePerMinute).toBeCloseTo(100, 6);
  });

  it('stops admitting more fans than there are plausible seats ("no point letting 8,000 people into a store with 400 seats left")', () => {
    const r = rate({ remainingSeats: 400, fansInside: 8000 });
    expect(r).toMatchObject({ ratePerMinute: 0, cap: 0, reason: expect.stringMatching(/^no_plausible_seats: /) });
    // 400 seats = 160 orders x 1.3 = 208 fans; 150 inside leaves room for 58 more
    const some = rate({ remainingSeats: 400, fansInside: 150 });
    expect(some.cap).toBe(58);
    expect(some.ratePerMinute).toBe(58);
    expect(some.reason).toMatch(/^plausible_seats: /);
  });

  it("paces the cap per minute of the event's clock: a rehearsal's 30 times fast clock admits up to 30 caps a real minute", () => {
    const real = rate({ remainingSeats: 400, fansInside: 150 });
    const rehearsal = rate({ remainingSeats: 400, fansInside: 150, clockScale: 30 });
    expect(rehearsal.cap).toBe(real.cap); // the fans let in before the next tick are bounded the same
    expect(rehearsal.ratePerMinute).toBe(1248); // 30 x 58 = 1,740 a real minute: the plan binds first
    expect(rehearsal.constraint).toBe('plan');
    expect(rate({ remainingSeats: 400, fansInside: 200, clockScale: 30 })).toMatchObject({
      ratePerMinute: 240,
      constraint: 'plausible_seats',
    });
  });

  it('counts fans let in who have not come yet against the seats left: no more fans than those seats take, and says so', () => {
    // 100 seats left at 2.5 a fan x 1.3: 52 plausible fans; 10 inside and 40 let in not come yet leave room for 2.
    const r = rate({ remainingSeats: 100, fansInside: 10, admittedNotCome: 40 });
    expect(r.cap).toBe(2);
    expect(r.constraint).toBe('plausible_seats');
    expect(r.reason).toContain('40 let in have not come yet');
    const none = rate({ remainingSeats: 100, fansInside: 10, admittedNotCome: 45 });
    expect(none).toMatchObject({ cap: 0, ratePerMinute: 0, constraint: 'no_plausible_seats' });
    expect(none.reason).toContain('45 let in who have not come yet');
    // Mid-sale it does not bind: the plan sets the rate.
    expect(rate({ admittedNotCome: 5_000 })).toMatchObject({ ratePerMinute: 1248, constraint: 'plan' });
  });

  it('with seats free, none held and fans waiting, the tail still lets the next fan in whatever fans not come yet cover', () => {
    const r = rate({ remainingSeats: 10, admittedNotCome: 20, tail: { sinceLastAdvanceMs: 3_000, gapMs: 2_000 } });
    expect(r).toMatchObject({ constraint: 'tail', admitAtOnce: 1, cap: 1 });
  });

  it('counts held seats as plausible, because their holders are among the admitted', () => {
    // 1,000 available + 2,000 held (800 holders, in fansInside) = 1,200 orders x 1.3 = 1,560 fans
    expect(rate({ remainingSeats: 1000, heldSeats: 2000, fansInside: 1000 }).cap).toBe(560);
  });

  it('LAST_CHANCE: no seats available, some held: admits at the rate seats are released', () => {
    const r = rate({ remainingSeats: 0, heldSeats: 5000, fansInside: 2000, releasedSeatsPerMinute: 250 });
    expect(r.ratePerMinute).toBe(100); // 250 seats / 2.5
    expect(r.reason).toMatch(/^last_chance: /);
    expect(r.cap).toBe(600); // 2,000 orders x 1.3 - 2,000
    expect(rate({ remainingSeats: 0, heldSeats: 5000, fansInside: 2000 }).ratePerMinute).toBe(0); // nothing released yet
    // never faster than the plan, however fast seats return
    expect(rate({ remainingSeats: 0, heldSeats: 50_000, releasedSeatsPerMinute: 1e6 }).ratePerMinute).toBe(1248);
    // and still slowed by errors
    expect(
      rate({ remainingSeats: 0, heldSeats: 5000, fansInside: 2000, releasedSeatsPerMinute: 250, checkoutErrorRate: 0.2 }).ratePerMinute,
    ).toBeCloseTo(10, 6);
  });

  it('the last seats: with seats available and nobody inside, one fan is let in at once, however slow the pace', () => {
    // The club: 1 seat left of 300, 2 tickets/order, 10 min target: the pace is 0.06 fans/min, one every 17 min.
    const club = planAdmission({
      seats: 300,
      ticketsPerOrder: 2,
      targetSaleMinutes: 10,
      overbookFactor: 1.2,
      checkoutMinutes: 5,
      paymentTps: 50,
      remainingSeats: 1,
    });
    const last = rate({ plan: club, ticketsPerOrder: 2, remainingSeats: 1, heldSeats: 0, fansInside: 0 });
    expect(last).toMatchObject({ ratePerMinute: 0.06, constraint: 'plan', cap: 1, admitAtOnce: 1 });
    // Someone inside can still buy it: no more than the plausible seats allow, and nobody at once.
    expect(rate({ plan: club, ticketsPerOrder: 2, remainingSeats: 1, heldSeats: 0, fansInside: 1 })).toMatchObject({
      ratePerMinute: 0,
      constraint: 'no_plausible_seats',
      admitAtOnce: 0,
    });
    // An operator's 0 stops admissions, idle store or not; LAST_CHANCE (nothing available) waits for seats to come back.
    expect(rate({ plan: club, ticketsPerOrder: 2, remainingSeats: 1, fansInside: 0, overrideRatePerMinute: 0 }).admitAtOnce).toBe(0);
    expect(rate({ plan: club, ticketsPerOrder: 2, remainingSeats: 0, heldSeats: 2, fansInside: 0 }).admitAtOnce).toBe(0);
  });

  it('40 seats left, 27 admitted fans who left long ago: they are not inside, so a 120/min override admits', () => {
    // Before, every fan admitted in the last 10 minutes who had not bought counted: 27 for 40 seats x 1.2 / 2 = 24 -> 0/min.
    const club = planAdmission({
      seats: 300,
      ticketsPerOrder: 2,
      targetSaleMinutes: 10,
      overbookFactor: 1.2,
      checkoutMinutes: 5,
      paymentTps: 50,
    });
    expect(rate({ plan: club, ticketsPerOrder: 2, remainingSeats: 40, fansInside: 27, overrideRatePerMinute: 120 })).toMatchObject({
      ratePerMinute: 0,
      constraint: 'no_plausible_seats',
    });
    expect(rate({ plan: club, ticketsPerOrder: 2, remainingSeats: 40, fansInside: 3, overrideRatePerMinute: 120 })).toMatchObject({
      ratePerMinute: 21,
      constraint: 'plausible_seats',
      cap: 21,
    });
  });

  it('sold out (nothing available, nothing held) admits no one', () => {
    expect(rate({ remainingSeats: 0, heldSeats: 0, overrideRatePerMinute: 5000 })).toMatchObject({
      ratePerMinute: 0,
      cap: 0,
      reason: expect.stringMatching(/^sold_out: /),
    });
  });

  it.each([
    ['checkoutErrorRate', { checkoutErrorRate: Number.NaN }],
    ['holdFailureRate', { holdFailureRate: 1.5 }],
    ['remainingSeats', { remainingSeats: -1 }],
    ['heldSeats', { heldSeats: Infinity }],
    ['fansInside', { fansInside: -3 }],
    ['ticketsPerOrder', { ticketsPerOrder: 0 }],
    ['overrideRatePerMinute', { overrideRatePerMinute: -10 }],
    ['releasedSeatsPerMinute', { releasedSeatsPerMinute: -1 }],
  ])('throws naming %s (the tick fails and the queue pauses: fail closed)', (field, patch) => {
    try {
      rate(patch);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(DomainError);
      expect((e as DomainError).details.field).toBe(field);
    }
  });

  it('is never negative, never above the override or plan, and respects the cap (property)', () => {
    const frac = fc.double({ min: 0, max: 1, noNaN: true });
    const count = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 100_000 }));
    fc.assert(
      fc.property(
        fc.record({
          seats: fc.integer({ min: 1, max: 100_000 }),
          perOrder: fc.double({ min: 1, max: 8, noNaN: true }),
          minutes: fc.double({ min: 1, max: 120, noNaN: true }),
          overbook: fc.double({ min: 1, max: 2, noNaN: true }),
          tps: fc.double({ min: 0.1, max: 2000, noNaN: true }),
        }),
        frac,
        frac,
        count,
        count,
        count,
        fc.option(fc.double({ min: 0, max: 10_000, noNaN: true })),
        fc.option(fc.double({ min: 0, max: 10_000, noNaN: true }), { nil: undefined }),
        (p, checkoutErrorRate, holdFailureRate, remainingSeats, heldSeats, fansInside, override, released) => {
          const plan = planAdmission({
            seats: p.seats,
            ticketsPerOrder: p.perOrder,
            targetSaleMinutes: p.minutes,
            overbookFactor: p.overbook,
            checkoutMinutes: 6,
            paymentTps: p.tps,
          });
          const r = nextAdmissionRate({
            plan,
            checkoutErrorRate,
            holdFailureRate,
            remainingSeats,
            heldSeats,
            fansInside,
            ticketsPerOrder: p.perOrder,
            overrideRatePerMinute: override,
            releasedSeatsPerMinute: released,
          });
          const start = override ?? plan.admitsPerMinute;
          expect(r.ratePerMinute).toBeGreaterThanOrEqual(0);
          expect(r.ratePerMinute).toBeLessThanOrEqual(start);
          expect(r.ratePerMinute).toBeLessThanOrEqual(r.cap);
          expect(Number.isInteger(r.cap) && r.cap >= 0).toBe(true);
          expect(r.cap).toBeLessThanOrEqual(
            Math.max(0, Math.ceil(((remainingSeats + heldSeats) / p.perOrder) * p.overbook + 1e-6) - fansInside),
          );
          if (remainingSeats === 0 && heldSeats === 0) expect(r.ratePerMinute).toBe(0);
          if (remainingSeats === 0 && heldSeats > 0) expect(r.ratePerMinute).toBeLessThanOrEqual((released ?? 0) / p.perOrder + 1e-9);
          if ((checkoutErrorRate > 0.02 || holdFailureRate > 0.1) && start > 1e-6) expect(r.ratePerMinute).toBeLessThan(start);
          if (checkoutErrorRate >= 0.2) expect(r.ratePerMinute).toBeLessThanOrEqual(start * 0.1 + 1e-9);
          if (holdFailureRate >= 0.5) expect(r.ratePerMinute).toBeLessThanOrEqual(start * 0.25 + 1e-9);
          expect(r.reason).toMatch(
            /^(plan|override|checkout_errors|hold_failures|last_chance|sold_out|plausible_seats|no_plausible_seats): /,
          );
          expect(r.reason.startsWith(`${r.constraint}: `)).toBe(true);
          // One fan at once exactly when seats are available, nobody inside can buy them, and the rate is not 0.
          expect(r.admitAtOnce).toBe(remainingSeats > 0 && fansInside === 0 && r.ratePerMinute > 0 ? 1 : 0);
          expect(r.admitAtOnce).toBeLessThanOrEqual(r.cap);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('is monotone: more errors never mean a faster rate (property)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (a, b, h) => {
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          expect(rate({ checkoutErrorRate: hi, holdFailureRate: h }).ratePerMinute).toBeLessThanOrEqual(
            rate({ checkoutErrorRate: lo, holdFailureRate: h }).ratePerMinute,
          );
          expect(rate({ holdFailureRate: hi, checkoutErrorRate: h }).ratePerMinute).toBeLessThanOrEqual(
            rate({ holdFailureRate: lo, checkoutErrorRate: h }).ratePerMinute,
          );
        },
      ),
    );
  });
});
