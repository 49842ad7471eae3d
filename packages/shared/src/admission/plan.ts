import { invalid } from '../errors.js';

// Admission math: pure, no I/O. The reference sale (docs/architecture.md) is the reference; plan.test.ts reproduces
// its figures.

/** What the promoter and the payments team give the planner for one event. */
export interface PlanInput {
  /** Seats on sale (the venue's sellable capacity). */
  seats: number;
  /** Average tickets per order (the reference sale: 2.5). */
  ticketsPerOrder: number;
  /** How long the sale should take; selling out in 90 s "looks rigged" (the reference sale: 20-30 min). */
  targetSaleMinutes: number;
  /** Admits per buyer, to cover fans who are let in and never buy (the reference sale: x1.3). */
  overbookFactor: number;
  /** How long an admitted fan shops and pays, in minutes (the reference sale: ~6). */
  checkoutMinutes: number;
  /** Payment transactions per second this event may use (its share of the gateway's contract). */
  paymentTps: number;
  /** Payment attempts per buyer, covering retries (default 1.1). */
  paymentAttemptsPerBuyer?: number;
  /** Seats still to sell when re-planning mid-sale (default `seats`). */
  remainingSeats?: number;
  /** Hold TTLs to price in stranded seats (the reference sale's stranded seats); adds `strandedSeatsByHoldTtl` to the plan. */
  holdTtlMinutes?: readonly number[];
  /** Share of holds that never check out, for `strandedSeatsByHoldTtl` (default 0.3). */
  abandonmentRate?: number;
}

/** Which downstream limit sets the buyer rate. Checkout concurrency is the payment gateway's budget, so it is `payment_tps`. */
export type BindingConstraint = 'inventory_pacing' | 'payment_tps';

/** Seats sitting in abandoned holds at steady state for one hold TTL. */
export interface StrandedAtTtl {
  holdTtlMinutes: number;
  strandedSeats: number;
  /** strandedSeats / seats on sale (the reference sale: ~10% at 6 min, ~24% at 15 min). */
  shareOfSeats: number;
}

/** The admission plan for one event; every rate is per minute unless the name says otherwise. */
export interface AdmissionPlan {
  /** Orders the inventory can make: remaining seats / tickets per order. */
  orders: number;
  buyersPerMin: {
    /** Buyers per minute that sell the remaining orders in the target duration. */
    inventoryPacing: number;
    /** Buyers per minute the payment gateway can take: paymentTps x 60 / attempts per buyer. */
    paymentCeiling: number;
  };
  bindingConstraint: BindingConstraint;
  /** The tighter of the two buyer rates. */
  buyersPerMinute: number;
  /** buyersPerMinute x overbookFactor: how fast the watermark advances. */
  admitsPerMinute: number;
  /** The factor the plan used, so the live rule can cap admissions by plausible seats. */
  overbookFactor: number;
  /** admitsPerMinute x checkoutMinutes: fans in the store at once. */
  concurrentShoppers: number;
  /** Minutes the remaining orders take at buyersPerMinute (the target, or longer when payment binds). */
  expectedSaleMinutes: number;
  /** Store and inventory load: concurrent shoppers x 8..15 requests a minute (the reference sale: about 1-2 thousand requests a second). */
  storeRequestsPerSecond: { low: number; high: number };
  /** Present when `holdTtlMinutes` was given. */
  strandedSeatsByHoldTtl?: StrandedAtTtl[];
}

/** Requests a shopper makes per minute in the store (browse, seat map, hold, pay): "a few requests a minute" in the reference sale. */
export const STORE_REQUESTS_PER_SHOPPER_MINUTE = { low: 8, high: 15 } as const;
/** Payment attempts per buyer when none is given: one attempt plus 10% retries. */
export const DEFAULT_PAYMENT_ATTEMPTS_PER_BUYER = 1.1;
/** Share of holds that never check out (the reference sale: about 30%). */
export const DEFAULT_ABANDONMENT_RATE = 0.3;

/** Drops float noise (960 x 1.3 = 1248.0000000000002) without losing any precision that matters for a rate. */
const tidy = (x: number): number => Math.round(x * 1e6) / 1e6;

function positive(value: number, field: string): number {
  if (!Number.isFinite(value) || value <= 0) throw invalid('INVALID_PLAN_INPUT', `${field} must be a positive number`, field, { value });
  return value;
}
function nonNegative(value: number, field: string): number {
  if (!Number.isFinite(value) || value < 0) throw invalid('INVALID_PLAN_INPUT', `${field} must be zero or more`, field, { value });
  return value;
}
function fraction(value: number, field: string): number {
  if (!Number.isFinite(value) || value < 0 || value > 1)
    throw invalid('INVALID_PLAN_INPUT', `${field} must be between 0 and 1`, field, { value });
  return value;
}

/**
 * Seats held by fans who will never pay, at steady state, for a hold TTL (the reference sale's stranded seats):
 * admitsPerMinute x abandonmentRate x holdTtlMinutes abandoned holds, x ticketsPerOrder seats.
 * 1,300 x 0.3 x 6 x 2.5 = 5,850 seats at 6 min; 14,625 at 15 min.
 */
export function strandedSeats(input: {
  admitsPerMinute: number;
  abandonmentRate?: number;
  holdTtlMinutes: number;
  ticketsPerOrder: number;
}): number {
  const admits = nonNegative(input.admitsPerMinute, 'admitsPerMinute');
  const abandon = fraction(input.abandonmentRate ?? DEFAULT_ABANDONMENT_RATE, 'abandonmentRate');
  const ttl = nonNegative(input.holdTtlMinutes, 'holdTtlMinutes');
  const perOrder = positive(input.ticketsPerOrder, 'ticketsPerOrder');
  return tidy(admits * abandon * ttl * perOrder);
}

/**
 * The admission plan: buyers per minute from the tighter of inventory pacing (remaining orders over the target
 * duration) and the payment ceiling, times the overbooking factor, and what that means for the store.
 * Throws a DomainError `INVALID_PLAN_INPUT` naming the field for a non-positive or non-finite input.
 */
export function planAdmission(input: PlanInput): AdmissionPlan {
  const seats = positive(input.seats, 'seats');
  const ticketsPerOrder = positive(input.ticketsPerOrder, 'ticketsPerOrder');
  const targetSaleMinutes = positive(input.targetSaleMinutes, 'targetSaleMinutes');
  const overbookFactor = positive(input.overbookFactor, 'overbookFactor');
  if (overbookFactor < 1)
    throw invalid('INVALID_PLAN_INPUT', 'overbookFactor must be at least 1', 'overbookFactor', { value: overbookFactor });
  const checkoutMinutes = positive(input.checkoutMinutes, 'checkoutMinutes');
  const paymentTps = positive(input.paymentTps, 'paymentTps');
  const attempts = positive(input.paymentAttemptsPerBuyer ?? DEFAULT_PAYMENT_ATTEMPTS_PER_BUYER, 'paymentAttemptsPerBuyer');
  const remainingSeats = nonNegative(input.remainingSeats ?? seats, 'remainingSeats');
  if (remainingSeats > seats)
    throw invalid('INVALID_PLAN_INPUT', 'remainingSeats cannot exceed seats', 'remainingSeats', { value: remainingSeats });

  const orders = remainingSeats / ticketsPerOrder;
  const inventoryPacing = orders / targetSaleMinutes;
  const paymentCeiling = (paymentTps * 60) / attempts;
  const bindingConstraint: BindingConstraint = paymentCeiling < inventoryPacing ? 'payment_tps' : 'inventory_pacing';
  const buyersPerMinute = Math.min(inventoryPacing, paymentCeiling);
  const admitsPerMinute = buyersPerMinute * overbookFactor;
  const concurrentShoppers = admitsPerMinute * checkoutMinutes;

  const plan: AdmissionPlan = {
    orders: tidy(orders),
    buyersPerMin: { inventoryPacing: tidy(inventoryPacing), paymentCeiling: tidy(paymentCeiling) },
    bindingConstraint,
    buyersPerMinute: tidy(buyersPerMinute),
    admitsPerMinute: tidy(admitsPerMinute),
    overbookFactor,
    concurrentShoppers: tidy(concurrentShoppers),
    expectedSaleMinutes: buyersPerMinute > 0 ? tidy(orders / buyersPerMinute) : 0,
    storeRequestsPerSecond: {
      low: tidy((concurrentShoppers * STORE_REQUESTS_PER_SHOPPER_MINUTE.low) / 60),
      high: tidy((concurrentShoppers * STORE_REQUESTS_PER_SHOPPER_MINUTE.high) / 60),
    },
  };
  if (input.holdTtlMinutes) {
    plan.strandedSeatsByHoldTtl = input.holdTtlMinutes.map((ttl) => {
      const stranded = strandedSeats({ admitsPerMinute, abandonmentRate: input.abandonmentRate, holdTtlMinutes: ttl, ticketsPerOrder });
      return { holdTtlMinutes: ttl, strandedSeats: stranded, shareOfSeats: tidy(stranded / seats) };
    });
  }
  return plan;
}
