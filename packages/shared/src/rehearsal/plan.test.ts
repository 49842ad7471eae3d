import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  arrivalOffsets,
  botOperators,
  compressClock,
  DEFAULT_BOT_SHAPE,
  faultOffsetMs,
  parseFault,
  seededRandom,
  slowPaymentsFault,
  testCardNumber,
} from './plan.js';
import { checkoutRequestSchema } from '../checkout/checkout.schema.js';

describe('parseFault', () => {
  it('reads a share of the sale or seconds after the open', () => {
    expect(parseFault('kill-store@30%')).toEqual({ kind: 'kill-store', at: { percentOfSale: 30 }, text: 'kill-store@30%' });
    expect(parseFault('restart-db@90s')).toEqual({ kind: 'restart-db', at: { secondsAfterOpen: 90 }, text: 'restart-db@90s' });
    expect(faultOffsetMs({ percentOfSale: 50 }, 20_000)).toBe(10_000);
    expect(faultOffsetMs({ secondsAfterOpen: 1.5 }, 20_000)).toBe(1500);
  });

  it('reads slow-payments like the others', () => {
    expect(parseFault('slow-payments@40%')).toEqual({ kind: 'slow-payments', at: { percentOfSale: 40 }, text: 'slow-payments@40%' });
    expect(parseFault(' slow-payments@90s ')).toEqual({ kind: 'slow-payments', at: { secondsAfterOpen: 90 }, text: 'slow-payments@90s' });
  });

  it('names what is wrong', () => {
    expect(() => parseFault('kill-store')).toThrow(/NAME@P%/);
    expect(() => parseFault('unplug@10%')).toThrow(/unknown fault "unplug"/);
    expect(() => parseFault('kill-store@120%')).toThrow(/0-100%/);
  });
});

describe('slowPaymentsFault', () => {
  it('lasts 15% of the planned sale, at least 10 s; delays 60 s / K within 1 to 5 s; half the charges refused', () => {
    // The club at time scale 30: a 20 s plan, so the floor; 2 s late.
    expect(slowPaymentsFault(20_000, 30)).toEqual({ busyShare: 0.5, retryAfterSeconds: 1, delayMs: 2000, durationMs: 10_000 });
    // The stadium in real time: a 25-minute sale, slow for 225 s, 5 s late.
    expect(slowPaymentsFault(25 * 60_000, 1)).toMatchObject({ delayMs: 5000, durationMs: 225_000 });
    expect(slowPaymentsFault(20_000, 1000).delayMs).toBe(1000);
  });

  it('is bounded for any plan and scale (what the gateway condition table accepts)', () => {
    fc.assert(
      fc.property(fc.double({ min: 1, max: 1e9, noNaN: true }), fc.double({ min: 1, max: 1000, noNaN: true }), (saleMs, k) => {
        const f = slowPaymentsFault(saleMs, k);
        return (
          f.durationMs >= 10_000 &&
          f.durationMs <= 3_600_000 &&
          f.delayMs >= 1000 &&
          f.delayMs <= 5000 &&
          f.busyShare > 0 &&
          f.busyShare < 1 &&
          f.retryAfterSeconds >= 1
        );
      }),
    );
  });
});

describe('compressClock', () => {
  it('divides every duration by the scale, whole seconds never below 1', () => {
    const c = compressClock(
      {
        holdTtlSeconds: 360,
        holdExtensionSeconds: 180,
        targetSaleMinutes: 10,
        checkoutMinutes: 5,
        seatPickingOpensAfterMinutes: 15,
        offerTtlSeconds: 900,
      },
      30,
    );
    expect(c).toEqual({
      holdTtlSeconds: 12,
      holdExtensionSeconds: 6,
      targetSaleMinutes: 10 / 30,
      checkoutMinutes: 5 / 30,
      seatPickingOpensAfterMinutes: 0.5,
      offerTtlSeconds: 30,
    });
    expect(
      compressClock(
        {
          holdTtlSeconds: 30,
          holdExtensionSeconds: 0,
          targetSaleMinutes: 1,
          checkoutMinutes: 1,
          seatPickingOpensAfterMinutes: 0,
          offerTtlSeconds: 60,
        },
        1000,
      ).holdTtlSeconds,
    ).toBe(1);
    expect(() =>
      compressClock(
        {
          holdTtlSeconds: 1,
          holdExtensionSeconds: 0,
          targetSaleMinutes: 1,
          checkoutMinutes: 1,
          seatPickingOpensAfterMinutes: 0,
          offerTtlSeconds: 1,
        },
        0.5,
      ),
    ).toThrow();
  });
});

describe('the crowd', () => {
  it('arrives before the open in the pre-open share, after it in the tail', () => {
    const t = arrivalOffsets(10_000, { preOpenMs: 5000, preOpenShare: 0.7, tailMeanMs: 3000 }, seededRandom(1));
    const before = t.filter((v) => v < 5000).length;
    expect(before / 10_000).toBeGreaterThan(0.67);
    expect(before / 10_000).toBeLessThan(0.73);
    // The crowd grows towards the open: the last half of the pre-open window holds about 3/4 of its arrivals.
    expect(t.filter((v) => v >= 2500 && v < 5000).length / before).toBeGreaterThan(0.7);
  });

  it('makes the asked share of bots, grouped by operator', () => {
    const ops = botOperators(3000, 0.3, DEFAULT_BOT_SHAPE, seededRandom(7));
    const bots = ops.filter((o) => o >= 0);
    expect(bots.length).toBe(900);
    expect(Math.max(...bots)).toBe(900 / DEFAULT_BOT_SHAPE.accountsPerOperator - 1);
    expect(bots.filter((o) => o === 0).length).toBe(DEFAULT_BOT_SHAPE.accountsPerOperator);
  });

  it('pays with card numbers the checkout accepts', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 40 }), (n) => {
        const number = testCardNumber(n);
        expect(checkoutRequestSchema.safeParse({ payment: { instrument: { type: 'card', number } } }).success).toBe(true);
      }),
    );
    expect(testCardNumber(1)).not.toBe(testCardNumber(2));
  });
});
