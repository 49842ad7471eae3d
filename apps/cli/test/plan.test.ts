import { describe, expect, it } from 'vitest';
import { onsaleWith } from './run.js';

/** `plan` needs no database. */
const onsale = (...args: string[]) => onsaleWith({}, ...args);

// The reference sale's inputs (docs/architecture.md, "The reference sale").
const REFERENCE_SALE = [
  '--seats',
  '60000',
  '--tickets-per-order',
  '2.5',
  '--duration-min',
  '25',
  '--overbook',
  '1.3',
  '--checkout-min',
  '6',
  '--payment-tps',
  '1000',
];

describe('onsale plan', () => {
  it("prints the reference sale's plan as JSON: ~24,000 orders, ~1,000 buyers/min, ~1,300 admits/min, ~8,000 shoppers", async () => {
    const r = await onsale('plan', ...REFERENCE_SALE);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout);
    expect(plan).toMatchObject({
      orders: 24_000, // "60,000 seats, avg 2.5 tickets/order -> ~24,000 orders"
      buyersPerMinute: 960, // "24,000 orders / 25 min ~ 1,000 buyers/min"
      bindingConstraint: 'inventory_pacing', // "payment gateway 1,000 TPS ... not the constraint at our rates"
      admitsPerMinute: 1248, // "x 1.3 overbooking for abandonment ~ 1,300 admits/min"
      concurrentShoppers: 7488, // "1,300/min x ~6 min checkout ~ 8,000 active in store"
      expectedSaleMinutes: 25,
      storeRequestsPerSecond: { low: 998.4, high: 1872 }, // "~1-2K req/s"
    });
    expect(plan.buyersPerMin.paymentCeiling).toBeCloseTo(54_545.45, 1);
    // stranded seats at the default 6-minute hold and at 15 minutes (the reference sale rounds admits up to 1,300)
    expect(plan.strandedSeatsByHoldTtl).toEqual([
      { holdTtlMinutes: 6, strandedSeats: 5616, shareOfSeats: 0.0936 },
      { holdTtlMinutes: 15, strandedSeats: 14_040, shareOfSeats: 0.234 },
    ]);
  });

  it('takes the hold TTL and payment attempts per buyer', async () => {
    const r = await onsale('plan', ...REFERENCE_SALE, '--hold-ttl-min', '9', '--payment-attempts', '2', '--payment-tps', '10');
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout);
    expect(plan.bindingConstraint).toBe('payment_tps'); // 10 x 60 / 2 = 300 buyers/min < 960
    expect(plan.buyersPerMinute).toBe(300);
    expect(plan.strandedSeatsByHoldTtl.map((s: { holdTtlMinutes: number }) => s.holdTtlMinutes)).toEqual([9, 15]);
  });

  it('refuses a missing flag, a non-number and an out-of-range value with usage and exit 2', async () => {
    const missing = await onsale('plan', '--seats', '60000');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/plan needs --tickets-per-order <n>/);
    const nan = await onsale('plan', ...REFERENCE_SALE.slice(2), '--seats', 'lots');
    expect(nan.code).toBe(2);
    expect(nan.stderr).toMatch(/--seats must be a number/);
    const low = await onsale('plan', ...REFERENCE_SALE.slice(0, 6), '--overbook', '0.5', ...REFERENCE_SALE.slice(8));
    expect(low.code).toBe(2);
    expect(low.stderr).toMatch(/--overbook: overbookFactor must be at least 1/);
    expect(low.stdout).toBe('');
  });

  it('is in the usage text', async () => {
    const r = await onsale('help');
    expect(r.stdout).toMatch(/plan --seats <n> --tickets-per-order <x>/);
  });
});
