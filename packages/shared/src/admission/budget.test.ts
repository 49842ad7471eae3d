import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { shareAdmissionBudget } from './budget.js';

const budgetOf = (tps: number, attempts = 1.1) => (tps * 60) / attempts;

describe('shareAdmissionBudget', () => {
  it('gives every event what it asked when the budget covers everyone', () => {
    const caps = shareAdmissionBudget(
      [
        { eventId: 'a', plannedBuyersPerMinute: 960 },
        { eventId: 'b', plannedBuyersPerMinute: 300 },
      ],
      1000,
    );
    expect(caps).toEqual(
      new Map([
        ['a', 960],
        ['b', 300],
      ]),
    );
  });

  it('40 on-sales at 10:00 share one 1,000 TPS gateway; each gets a floor, the rest follows demand', () => {
    // 40 stadium on-sales each planned like the reference sale (960 buyers/min): 38,400 asked of 54,545.
    // Make two of them mega events asking 20,000 each: 38 x 960 + 40,000 = 76,480 > 54,545.
    const events = Array.from({ length: 40 }, (_, i) => ({ eventId: `e${i}`, plannedBuyersPerMinute: i < 2 ? 20_000 : 960 }));
    const caps = shareAdmissionBudget(events, 1000);
    const budget = budgetOf(1000);
    const floor = (0.5 * budget) / 40; // 681.8
    const total = [...caps.values()].reduce((a, b) => a + b, 0);
    expect(total).toBeCloseTo(budget, 6); // demand exceeds the budget: all of it is used
    for (let i = 2; i < 40; i++) expect(caps.get(`e${i}`)).toBeCloseTo(960, 9); // small events are served in full
    expect(caps.get('e0')).toBeCloseTo((budget - 38 * 960) / 2, 6); // the mega events split what is left
    expect(caps.get('e0')!).toBeGreaterThan(floor);
  });

  it('keeps the floor for a small event when a huge one would otherwise take it all', () => {
    const caps = shareAdmissionBudget(
      [
        { eventId: 'huge', plannedBuyersPerMinute: 1_000_000 },
        { eventId: 'club', plannedBuyersPerMinute: 5000 },
      ],
      100,
    );
    const budget = budgetOf(100); // 5,454.5
    const floor = (0.5 * budget) / 2;
    // proportional alone would give the club 5000 / 1,005,000 of the rest; the floor keeps it at >= 1,363.6
    expect(caps.get('club')!).toBeGreaterThanOrEqual(floor);
    expect(caps.get('club')!).toBeLessThan(floor + 20);
    expect(caps.get('huge')! + caps.get('club')!).toBeCloseTo(budget, 6);
  });

  it('honours a set floorShare and scales floors that add up to more than the budget', () => {
    const budget = budgetOf(100);
    const premium = shareAdmissionBudget(
      [
        { eventId: 'premium', plannedBuyersPerMinute: 10_000, floorShare: 0.6 },
        { eventId: 'other', plannedBuyersPerMinute: 1_000_000 },
      ],
      100,
    );
    expect(premium.get('premium')!).toBeGreaterThanOrEqual(0.6 * budget);
    const over = shareAdmissionBudget(
      [
        { eventId: 'a', plannedBuyersPerMinute: 1e6, floorShare: 0.8 },
        { eventId: 'b', plannedBuyersPerMinute: 1e6, floorShare: 0.8 },
      ],
      100,
    );
    expect(over.get('a')).toBeCloseTo(budget / 2, 6);
    expect(over.get('b')).toBeCloseTo(budget / 2, 6);
  });

  it('gives zero to an event that asks for nothing, and nothing to share among none', () => {
    const caps = shareAdmissionBudget(
      [
        { eventId: 'idle', plannedBuyersPerMinute: 0 },
        { eventId: 'busy', plannedBuyersPerMinute: 1e6 },
      ],
      100,
    );
    expect(caps.get('idle')).toBe(0);
    expect(caps.get('busy')).toBeCloseTo(budgetOf(100), 6);
    expect(shareAdmissionBudget([], 100).size).toBe(0);
  });

  it('rejects duplicates, negative asks, bad floors and a non-positive budget', () => {
    const bad = [
      () =>
        shareAdmissionBudget(
          [
            { eventId: 'a', plannedBuyersPerMinute: 1 },
            { eventId: 'a', plannedBuyersPerMinute: 1 },
          ],
          10,
        ),
      () => shareAdmissionBudget([{ eventId: 'a', plannedBuyersPerMinute: -1 }], 10),
      () => shareAdmissionBudget([{ eventId: 'a', plannedBuyersPerMinute: 1, floorShare: 1.5 }], 10),
      () => shareAdmissionBudget([{ eventId: 'a', plannedBuyersPerMinute: 1 }], 0),
      () => shareAdmissionBudget([{ eventId: 'a', plannedBuyersPerMinute: 1 }], 10, 0),
    ];
    for (const f of bad) expect(f).toThrow(DomainError);
  });

  it('never exceeds the budget or an ask, and always meets min(ask, floor) (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constant(0), fc.double({ min: 0, max: 100_000, noNaN: true })), { minLength: 1, maxLength: 60 }),
        fc.double({ min: 0.01, max: 5000, noNaN: true }),
        fc.double({ min: 1, max: 3, noNaN: true }),
        (asks, tps, attempts) => {
          const events = asks.map((ask, i) => ({ eventId: `e${i}`, plannedBuyersPerMinute: ask }));
          const caps = shareAdmissionBudget(events, tps, attempts);
          const budget = budgetOf(tps, attempts);
          const floor = (0.5 * budget) / events.length;
          const eps = 1e-9 * Math.max(1, budget);
          let total = 0;
          for (const e of events) {
            const cap = caps.get(e.eventId)!;
            total += cap;
            expect(cap).toBeGreaterThanOrEqual(0);
            expect(cap).toBeLessThanOrEqual(e.plannedBuyersPerMinute);
            expect(cap).toBeGreaterThanOrEqual(Math.min(e.plannedBuyersPerMinute, floor) - eps);
          }
          expect(total).toBeLessThanOrEqual(budget + eps);
          // nothing is left on the table while someone still wants more
          const totalAsk = asks.reduce((a, b) => a + b, 0);
          expect(total).toBeGreaterThanOrEqual(Math.min(totalAsk, budget) - eps);
        },
      ),
    );
  });
});
