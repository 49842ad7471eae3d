import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  admittedNotCome,
  advanceWatermark,
  ARRIVAL_WINDOW_MS,
  arrivalWindowMs,
  arrivingFans,
  claimRatioOf,
  effectivePaymentTps,
  eventBudgetShares,
  inventoryStateOf,
  positionsPassedSince,
  recordAdvance,
} from './advance.js';

describe('inventoryStateOf (truthful sold-out)', () => {
  it.each([
    [{ available: 3, held: 0 }, 'AVAILABLE'],
    [{ available: 1, held: 9 }, 'AVAILABLE'],
    [{ available: 0, held: 1 }, 'LAST_CHANCE'],
    [{ available: 0, held: 0 }, 'SOLD_OUT'],
  ] as const)('%o is %s', (counts, state) => expect(inventoryStateOf(counts)).toBe(state));
});

describe('claimRatioOf', () => {
  it('is 1 below 50 positions advanced, tokens / positions above, clamped to 0.1..1', () => {
    expect(claimRatioOf(0, 49)).toBe(1);
    expect(claimRatioOf(25, 50)).toBe(0.5);
    expect(claimRatioOf(1, 1000)).toBe(0.1);
    expect(claimRatioOf(900, 600)).toBe(1);
    expect(claimRatioOf(Number.NaN, 100)).toBe(1);
  });
});

describe('advanceWatermark', () => {
  const base = { ratePerMinute: 600, elapsedMs: 1000, claimRatio: 1, carry: 0, cap: 1e9, room: 1e9 };
  it('moves rate x elapsed, carrying fractions between ticks', () => {
    expect(advanceWatermark(base)).toEqual({ advanced: 10, carry: 0 });
    const a = advanceWatermark({ ...base, ratePerMinute: 90, elapsedMs: 1000 }); // 1.5
    expect(a.advanced).toBe(1);
    expect(a.carry).toBeCloseTo(0.5, 9);
    expect(advanceWatermark({ ...base, ratePerMinute: 90, carry: a.carry }).advanced).toBe(2);
  });
  it('moves 1 / claimRatio faster so real admissions meet the rate', () => {
    expect(advanceWatermark({ ...base, claimRatio: 0.5 }).advanced).toBe(20);
    expect(advanceWatermark({ ...base, claimRatio: 0.01 }).advanced).toBe(100); // floor 0.1
  });
  it('never past the cap (in positions: cap / claimRatio) nor the last position; a cut step carries nothing', () => {
    expect(advanceWatermark({ ...base, cap: 4 })).toEqual({ advanced: 4, carry: 0 });
    expect(advanceWatermark({ ...base, cap: 4, claimRatio: 0.5 })).toEqual({ advanced: 8, carry: 0 });
    expect(advanceWatermark({ ...base, room: 3 })).toEqual({ advanced: 3, carry: 0 });
    expect(advanceWatermark({ ...base, room: -5 })).toEqual({ advanced: 0, carry: 0 });
    expect(advanceWatermark({ ...base, ratePerMinute: 0 })).toEqual({ advanced: 0, carry: 0 });
  });
  it('admits admitAtOnce fans at once (in positions: rounded up over the claim ratio), within the cap and the room', () => {
    const slow = { ...base, ratePerMinute: 0.06, elapsedMs: 1000 };
    expect(advanceWatermark(slow)).toEqual({ advanced: 0, carry: expect.closeTo(0.001, 9) });
    expect(advanceWatermark({ ...slow, admitAtOnce: 1 })).toEqual({ advanced: 1, carry: 0 });
    expect(advanceWatermark({ ...slow, admitAtOnce: 1, claimRatio: 0.4 })).toEqual({ advanced: 3, carry: 0 });
    expect(advanceWatermark({ ...slow, admitAtOnce: 1, room: 0 }).advanced).toBe(0);
    expect(advanceWatermark({ ...slow, admitAtOnce: 1, cap: 0 }).advanced).toBe(0);
    // A faster pace moves further than the floor, as before.
    expect(advanceWatermark({ ...base, admitAtOnce: 1 })).toEqual({ advanced: 10, carry: 0 });
  });
  it('over many ticks, advances floor(total) exactly (property)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 5000, noNaN: true }),
        fc.array(fc.integer({ min: 0, max: 3000 }), { minLength: 1, maxLength: 50 }),
        (rate, ticks) => {
          let carry = 0;
          let total = 0;
          for (const ms of ticks) {
            const r = advanceWatermark({ ...base, ratePerMinute: rate, elapsedMs: ms, carry });
            total += r.advanced;
            carry = r.carry;
          }
          const exact = ticks.reduce((a, ms) => a + (rate * ms) / 60_000, 0);
          expect(total).toBeLessThanOrEqual(Math.floor(exact + 1e-6));
          expect(total).toBeGreaterThanOrEqual(Math.floor(exact - 1e-6));
        },
      ),
    );
  });
});

describe('payment budget shares', () => {
  const event = (eventId: string, seats: number) => ({
    eventId,
    capacity: seats,
    remainingSeats: seats,
    targetSaleMinutes: 25,
    ticketsPerOrder: 2.5,
    checkoutMinutes: 6,
    overbookFactor: 1.3,
    paymentTps: 1000,
  });
  it('gives each event its plan when the budget covers all, and splits it when it does not', () => {
    const alone = eventBudgetShares([event('a', 60_000)], 1000);
    expect(alone.get('a')).toBe(960);
    const crowded = eventBudgetShares([event('a', 60_000), event('b', 60_000)], 10); // 545 buyers/min for both
    expect(crowded.get('a')! + crowded.get('b')!).toBeCloseTo((10 * 60) / 1.1, 6);
    expect(effectivePaymentTps(1000, crowded.get('a'))).toBeCloseTo(5, 6);
  });
  it('events with nothing left ask for nothing; their own setting stays', () => {
    const s = eventBudgetShares([{ ...event('a', 100), remainingSeats: 0 }, event('b', 0)], 1000);
    expect(s.get('a')).toBe(0);
    expect(s.get('b')).toBe(0);
    expect(effectivePaymentTps(1000, 0)).toBe(1000);
    expect(effectivePaymentTps(1000, undefined)).toBe(1000);
  });
});

describe('fans on their way in (recordAdvance, arrivingFans)', () => {
  it('counts positions passed within the window, times the claim ratio, less the claims recorded in it', () => {
    const now = 1_000_000;
    let recent = recordAdvance([], now - 40_000, 5); // outside the window by the next tick
    recent = recordAdvance(recent, now - 10_000, 3);
    recent = recordAdvance(recent, now - 1_000, 0); // nothing advanced: nothing recorded
    recent = recordAdvance(recent, now, 1);
    expect(recent).toEqual([
      [now - 10_000, 3],
      [now, 1],
    ]);
    expect(arrivingFans(recent, now, 1, 0)).toBe(4);
    expect(arrivingFans(recent, now, 1, 3)).toBe(1);
    expect(arrivingFans(recent, now, 1, 9)).toBe(0);
    expect(arrivingFans(recent, now, 0.5, 0)).toBe(2);
    expect(arrivingFans(recent, now, 0.3, 0)).toBe(2); // 1.2 rounds up: a fan is whole
    expect(arrivingFans(recent, now + ARRIVAL_WINDOW_MS, 1, 0)).toBe(0); // they took too long: no longer counted
  });

  it("runs on a rehearsal's compressed clock: the window shrinks with the time scale, never under 10 s", () => {
    expect(arrivalWindowMs(null)).toBe(ARRIVAL_WINDOW_MS);
    expect(arrivalWindowMs(1)).toBe(ARRIVAL_WINDOW_MS);
    expect(arrivalWindowMs(2)).toBe(20_000);
    expect(arrivalWindowMs(30)).toBe(10_000);
    const now = 1_000_000;
    const recent = recordAdvance(recordAdvance([], now - 12_000, 4, arrivalWindowMs(30)), now, 2, arrivalWindowMs(30));
    expect(recent).toEqual([[now, 2]]); // the advance 12 s ago is past a rehearsal's window
    expect(
      arrivingFans(
        [
          [now - 12_000, 4],
          [now, 2],
        ],
        now,
        1,
        0,
        arrivalWindowMs(30),
      ),
    ).toBe(2);
    expect(
      arrivingFans(
        [
          [now - 12_000, 4],
          [now, 2],
        ],
        now,
        1,
        0,
      ),
    ).toBe(6); // a real sale still counts it
  });
});

describe('admittedNotCome (fans let in who may still come, set against the seats left)', () => {
  const history: [number, number][] = [
    [1_000, 100],
    [11_000, 250],
    [21_000, 400],
  ];
  it('counts the positions passed since a time from the watermark history, 0 before the oldest point', () => {
    expect(positionsPassedSince(history, 450, 0)).toBe(450);
    expect(positionsPassedSince(history, 450, 1_000)).toBe(350);
    expect(positionsPassedSince(history, 450, 15_000)).toBe(200);
    expect(positionsPassedSince(history, 450, 30_000)).toBe(50);
    expect(positionsPassedSince([], 7, 30_000)).toBe(7);
  });
  it('positions passed within the claim window x the claim ratio, less the claims and the fans already counted arriving', () => {
    const base = {
      history,
      admittedThrough: 450,
      nowMs: 31_000,
      claimWindowMs: 30_000,
      claimRatio: 1,
      claimedInClaimWindow: 100,
      arriving: 50,
    };
    // 350 passed since 1 000 - 100 claimed - 50 on their way (counted inside already) = 200.
    expect(admittedNotCome(base)).toBe(200);
    expect(admittedNotCome({ ...base, nowMs: 41_000 })).toBe(50);
    expect(admittedNotCome({ ...base, claimedInClaimWindow: 400 })).toBe(0);
    expect(admittedNotCome({ ...base, claimWindowMs: 0 })).toBe(0);
  });
  it('is never negative nor more than the positions passed within the window', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 1_000 }), fc.integer({ min: 0, max: 500 })), { maxLength: 8 }),
        fc.integer({ min: 0, max: 1_000 }),
        fc.nat(600),
        fc.nat(600),
        (points, extra, claimed, arriving) => {
          let through = 0;
          const h = points.sort((a, b) => a[0] - b[0]).map(([at, n]): [number, number] => [at * 100, (through += n)]);
          const admittedThrough = through + extra;
          const n = admittedNotCome({
            history: h,
            admittedThrough,
            nowMs: 100_000,
            claimWindowMs: 50_000,
            claimedInClaimWindow: claimed,
            arriving,
          });
          expect(n).toBeGreaterThanOrEqual(0);
          expect(n).toBeLessThanOrEqual(positionsPassedSince(h, admittedThrough, 50_000));
        },
      ),
    );
  });
});
