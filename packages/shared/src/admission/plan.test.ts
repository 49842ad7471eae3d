import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { planAdmission, strandedSeats, type PlanInput } from './plan.js';

// The reference sale's inputs (docs/architecture.md): 60,000 seats, avg 2.5 tickets/order, ~25 min target,
// x1.3 overbooking, ~6 min checkout, payment gateway 1,000 TPS.
const REFERENCE_SALE: PlanInput = {
  seats: 60_000,
  ticketsPerOrder: 2.5,
  targetSaleMinutes: 25,
  overbookFactor: 1.3,
  checkoutMinutes: 6,
  paymentTps: 1000,
};

describe('planAdmission with the reference sale inputs', () => {
  const plan = planAdmission(REFERENCE_SALE);

  it('"60,000 seats, avg 2.5 tickets/order -> ~24,000 orders"', () => {
    expect(plan.orders).toBe(24_000);
  });
  it('"24,000 orders / 25 min ~ 1,000 buyers/min" (exactly 960)', () => {
    expect(plan.buyersPerMin.inventoryPacing).toBe(960);
    expect(plan.buyersPerMinute).toBe(960);
  });
  it('"payment gateway 1,000 TPS; ~1 payment attempt per buyer -> not the constraint at our rates"', () => {
    expect(plan.buyersPerMin.paymentCeiling).toBeCloseTo((1000 * 60) / 1.1, 5); // 54,545 buyers/min
    expect(plan.bindingConstraint).toBe('inventory_pacing');
  });
  it('"x 1.3 overbooking for abandonment ~ 1,300 admits/min" (exactly 1,248)', () => {
    expect(plan.admitsPerMinute).toBe(1248);
  });
  it('"1,300/min x ~6 min checkout ~ 8,000 active in store" (exactly 7,488)', () => {
    expect(plan.concurrentShoppers).toBe(7488);
  });
  it('"8,000 users x a few requests/min -> ~1-2K req/s"', () => {
    expect(plan.storeRequestsPerSecond).toEqual({ low: 998.4, high: 1872 });
  });
  it('sells out in the 25-minute target', () => {
    expect(plan.expectedSaleMinutes).toBe(25);
  });
  it('prices stranded seats per hold TTL when asked (as the reference sale does)', () => {
    const withTtl = planAdmission({ ...REFERENCE_SALE, holdTtlMinutes: [6, 15] });
    expect(withTtl.strandedSeatsByHoldTtl).toEqual([
      { holdTtlMinutes: 6, strandedSeats: 5616, shareOfSeats: 0.0936 },
      { holdTtlMinutes: 15, strandedSeats: 14_040, shareOfSeats: 0.234 },
    ]);
    expect(plan.strandedSeatsByHoldTtl).toBeUndefined();
  });
});

describe('planAdmission', () => {
  it('is bound by payment TPS when the gateway is the tighter limit', () => {
    const plan = planAdmission({ ...REFERENCE_SALE, paymentTps: 10 }); // 10 x 60 / 1.1 = 545 buyers/min < 960
    expect(plan.bindingConstraint).toBe('payment_tps');
    expect(plan.buyersPerMinute).toBeCloseTo(545.454545, 5);
    expect(plan.admitsPerMinute).toBeCloseTo(545.454545 * 1.3, 4);
    expect(plan.expectedSaleMinutes).toBeCloseTo(24_000 / 545.454545, 3); // 44 min, longer than the target
  });

  it('re-plans on the seats that remain', () => {
    const plan = planAdmission({ ...REFERENCE_SALE, remainingSeats: 6000 });
    expect(plan.orders).toBe(2400);
    expect(plan.buyersPerMinute).toBe(96);
  });

  it('with nothing left, admits no one', () => {
    const plan = planAdmission({ ...REFERENCE_SALE, remainingSeats: 0 });
    expect(plan.admitsPerMinute).toBe(0);
    expect(plan.expectedSaleMinutes).toBe(0);
  });

  it('honours paymentAttemptsPerBuyer', () => {
    expect(planAdmission({ ...REFERENCE_SALE, paymentAttemptsPerBuyer: 2 }).buyersPerMin.paymentCeiling).toBe(30_000);
  });

  it.each([
    ['seats', { seats: 0 }],
    ['ticketsPerOrder', { ticketsPerOrder: -1 }],
    ['targetSaleMinutes', { targetSaleMinutes: Number.NaN }],
    ['overbookFactor', { overbookFactor: 0.9 }],
    ['checkoutMinutes', { checkoutMinutes: 0 }],
    ['paymentTps', { paymentTps: Infinity }],
    ['paymentAttemptsPerBuyer', { paymentAttemptsPerBuyer: 0 }],
    ['remainingSeats', { remainingSeats: 60_001 }],
  ])('names the bad field %s', (field, patch) => {
    try {
      planAdmission({ ...REFERENCE_SALE, ...patch });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(DomainError);
      expect((e as DomainError).code).toBe('INVALID_PLAN_INPUT');
      expect((e as DomainError).details.field).toBe(field);
    }
  });

  it('holds its identities for any inputs (property)', () => {
    const pos = (min: number, max: number) => fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
    fc.assert(
      fc.property(
        pos(1, 200_000),
        pos(1, 8),
        pos(1, 240),
        pos(1, 3),
        pos(0.5, 30),
        pos(0.1, 10_000),
        (seats, perOrder, minutes, overbook, checkout, tps) => {
          const p = planAdmission({
            seats,
            ticketsPerOrder: perOrder,
            targetSaleMinutes: minutes,
            overbookFactor: overbook,
            checkoutMinutes: checkout,
            paymentTps: tps,
          });
          const rel = (a: number, b: number) => Math.abs(a - b) <= 1e-4 * Math.max(1, Math.abs(b)); // outputs are rounded to 1e-6;
          expect(rel(p.buyersPerMinute, Math.min(p.buyersPerMin.inventoryPacing, p.buyersPerMin.paymentCeiling))).toBe(true);
          expect(p.bindingConstraint === 'payment_tps').toBe(p.buyersPerMin.paymentCeiling < p.buyersPerMin.inventoryPacing);
          expect(rel(p.admitsPerMinute, p.buyersPerMinute * overbook)).toBe(true);
          expect(rel(p.concurrentShoppers, p.admitsPerMinute * checkout)).toBe(true);
          expect(p.expectedSaleMinutes).toBeGreaterThanOrEqual(minutes - 1e-6);
          expect(p.storeRequestsPerSecond.low).toBeLessThanOrEqual(p.storeRequestsPerSecond.high);
        },
      ),
    );
  });
});

describe('strandedSeats (the reference sale)', () => {
  it('"Hold TTL 6 min: 1,300 x 0.3 x 6 x 2.5 ~ 5,850 seats (~10%) stranded"', () => {
    expect(strandedSeats({ admitsPerMinute: 1300, holdTtlMinutes: 6, ticketsPerOrder: 2.5 })).toBe(5850);
  });
  it('"Hold TTL 15 min: 1,300 x 0.3 x 15 ~ 5,850 abandoned holds x 2.5 seats ~ 14,600 seats (24% of the venue)"', () => {
    const seats = strandedSeats({ admitsPerMinute: 1300, abandonmentRate: 0.3, holdTtlMinutes: 15, ticketsPerOrder: 2.5 });
    expect(seats).toBe(14_625);
    expect(Math.round((seats / 60_000) * 100)).toBe(24);
  });
  it('is zero with no abandonment and rejects a rate above 1', () => {
    expect(strandedSeats({ admitsPerMinute: 1300, abandonmentRate: 0, holdTtlMinutes: 6, ticketsPerOrder: 2.5 })).toBe(0);
    expect(() => strandedSeats({ admitsPerMinute: 1300, abandonmentRate: 1.2, holdTtlMinutes: 6, ticketsPerOrder: 2.5 })).toThrow(
      DomainError,
    );
  });
});
