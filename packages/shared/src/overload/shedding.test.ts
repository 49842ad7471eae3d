import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkSheddingLimits,
  DEFAULT_SHEDDING_LIMITS,
  lowestDelayLimit,
  SHED_ORDERS,
  shedReason,
  shedRetryAfterSeconds,
  type SheddingLimits,
} from './shedding.js';

const limit = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 10_000 }));
/** Limits that pass checkSheddingLimits: each class at or above the one before (0 ends the list). */
const limits: fc.Arbitrary<SheddingLimits> = fc
  .tuple(limit, limit, limit, limit, limit, fc.integer({ min: 1, max: 10 }), fc.integer({ min: 0, max: 10 }))
  .map(([a, b, c, p, q, min, extra]) => {
    const [first, standard, last] = [a, b, c].sort((x, y) => x - y).filter((v) => v > 0);
    const [pf, ps] = [p, q].sort((x, y) => x - y).filter((v) => v > 0);
    return {
      eventLoopDelayMs: { first: first ?? 0, standard: standard ?? 0, last: last ?? 0 },
      poolWaiting: { first: pf ?? 0, standard: ps ?? 0 },
      retryAfterSeconds: { min, max: min + extra },
    };
  });
const reading = fc.record({
  eventLoopDelayMs: fc.double({ min: 0, max: 20_000, noNaN: true }),
  poolWaiting: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 1000 })),
});

describe('load shedding', () => {
  it('sheds in order: whenever a class is shed, every class before it is shed too', () => {
    fc.assert(
      fc.property(limits, reading, (l, r) => {
        checkSheddingLimits(l);
        const shed = SHED_ORDERS.map((o) => shedReason(o, r, l) !== null);
        for (let i = 1; i < shed.length; i++) if (shed[i]) expect(shed[i - 1]).toBe(true);
      }),
    );
  });

  it('never sheds a status poll for the pool queue (polls are answered from memory), only for a blocked event loop', () => {
    fc.assert(
      fc.property(limits, fc.integer({ min: 0, max: 100_000 }), (l, waiting) => {
        expect(shedReason('last', { eventLoopDelayMs: 0, poolWaiting: waiting }, l)).toBeNull();
      }),
    );
  });

  it('serves everything while the readings are at or under the limits, and names the reason above them', () => {
    const l = DEFAULT_SHEDDING_LIMITS;
    for (const o of SHED_ORDERS) expect(shedReason(o, { eventLoopDelayMs: 200, poolWaiting: 50 }, l)).toBeNull();
    expect(shedReason('first', { eventLoopDelayMs: 201, poolWaiting: 0 }, l)).toBe('overload_event_loop');
    expect(shedReason('standard', { eventLoopDelayMs: 201, poolWaiting: 0 }, l)).toBeNull();
    expect(shedReason('first', { eventLoopDelayMs: 0, poolWaiting: 51 }, l)).toBe('overload_pool');
    expect(shedReason('standard', { eventLoopDelayMs: 0, poolWaiting: 51 }, l)).toBeNull();
    expect(shedReason('standard', { eventLoopDelayMs: 0, poolWaiting: 201 }, l)).toBe('overload_pool');
    expect(shedReason('last', { eventLoopDelayMs: 1999, poolWaiting: 10_000 }, l)).toBeNull();
    expect(shedReason('last', { eventLoopDelayMs: 2001, poolWaiting: 0 }, l)).toBe('overload_event_loop');
    expect(
      shedReason('first', { eventLoopDelayMs: 10_000, poolWaiting: null }, { ...l, eventLoopDelayMs: { first: 0, standard: 0, last: 0 } }),
    ).toBeNull();
    expect(lowestDelayLimit(l)).toBe(200);
    expect(lowestDelayLimit({ ...l, eventLoopDelayMs: { first: 0, standard: 0, last: 0 } })).toBe(0);
  });

  it('refuses limits that would shed a cheap class before an expensive one', () => {
    const l = DEFAULT_SHEDDING_LIMITS;
    expect(() => checkSheddingLimits({ ...l, eventLoopDelayMs: { first: 500, standard: 200, last: 2000 } })).toThrow(/event-loop delay/);
    expect(() => checkSheddingLimits({ ...l, eventLoopDelayMs: { first: 0, standard: 200, last: 2000 } })).toThrow(/event-loop delay/);
    expect(() => checkSheddingLimits({ ...l, poolWaiting: { first: 100, standard: 10 } })).toThrow(/pool queue/);
    expect(() => checkSheddingLimits({ ...l, retryAfterSeconds: { min: 0, max: 3 } })).toThrow(/Retry-After/);
    expect(checkSheddingLimits({ ...l, eventLoopDelayMs: { first: 200, standard: 500, last: 0 } })).toBeTruthy();
  });

  it('spreads Retry-After over its range', () => {
    fc.assert(
      fc.property(limits, fc.double({ min: 0, max: 0.999999, noNaN: true }), (l, r) => {
        const s = shedRetryAfterSeconds(l, () => r);
        expect(Number.isInteger(s)).toBe(true);
        expect(s).toBeGreaterThanOrEqual(l.retryAfterSeconds.min);
        expect(s).toBeLessThanOrEqual(l.retryAfterSeconds.max);
      }),
    );
  });
});
