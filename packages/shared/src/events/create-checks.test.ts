import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { eventCreateWarnings, ONSALE_OPEN_NOW_GRACE_MS, pastTimeIssues } from './create-checks.js';

const NOW = Date.parse('2026-12-03T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

describe('a new event: times that have passed', () => {
  it('refuses a show time in the past and an on-sale more than 5 minutes ago, each at its field', () => {
    expect(pastTimeIssues({ startsAt: '2025-01-01T20:00:00Z', onsaleAt: '2025-01-01T10:00:00Z' }, new Date(NOW))).toEqual([
      { path: 'startsAt', message: 'this time has passed: enter when the show starts, later than now' },
      { path: 'onsaleAt', message: 'this time has passed: choose when the sale opens, later than now, or open the sale now' },
    ]);
  });

  it('an on-sale within 5 minutes of now means "open now"; one just past 5 minutes is refused', () => {
    const starts = iso(NOW + 86_400_000);
    expect(pastTimeIssues({ startsAt: starts, onsaleAt: iso(NOW - ONSALE_OPEN_NOW_GRACE_MS) }, NOW)).toEqual([]);
    expect(pastTimeIssues({ startsAt: starts, onsaleAt: iso(NOW - 60_000) }, NOW)).toEqual([]);
    expect(pastTimeIssues({ startsAt: starts, onsaleAt: iso(NOW - ONSALE_OPEN_NOW_GRACE_MS - 1000) }, NOW).map((i) => i.path)).toEqual([
      'onsaleAt',
    ]);
  });

  it('a show starting now has passed; times that do not parse are left to the schema', () => {
    expect(pastTimeIssues({ startsAt: iso(NOW), onsaleAt: iso(NOW + 1) }, NOW).map((i) => i.path)).toEqual(['startsAt']);
    expect(pastTimeIssues({ startsAt: 'tomorrow', onsaleAt: 42 }, NOW)).toEqual([]);
    expect(pastTimeIssues({}, NOW)).toEqual([]);
  });

  it('any pair of future times passes; any show time at or before now is refused (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 ** 10 }), fc.integer({ min: -ONSALE_OPEN_NOW_GRACE_MS, max: 10 ** 10 }), (ahead, onsale) => {
        expect(pastTimeIssues({ startsAt: iso(NOW + ahead), onsaleAt: iso(NOW + onsale) }, NOW)).toEqual([]);
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 ** 10 }), (ago) => {
        expect(pastTimeIssues({ startsAt: iso(NOW - ago) }, NOW).map((i) => i.path)).toEqual(['startsAt']);
      }),
    );
  });
});

describe('a new event: what is asked before Create', () => {
  it('a free price level, by its name, at its price field; a missing sign-off at the fairness mode', () => {
    const file = {
      priceLevels: [
        { code: 'P1', name: 'Stalls', priceCents: 6550 },
        { code: 'COMP', name: 'Guests', priceCents: 0 },
      ],
    };
    expect(eventCreateWarnings(file, { signOff: false })).toEqual([
      {
        code: 'FREE_PRICE_LEVEL',
        path: 'priceLevels.1.priceCents',
        message: 'The price level "Guests" costs nothing: fans will get its seats free.',
      },
      {
        code: 'FAIRNESS_NOT_SIGNED_OFF',
        path: 'fairnessMode',
        message: 'The fairness description is not signed off: the sale will not open until a promoter signs it off on the event page.',
      },
    ]);
  });

  it('nothing to ask for paid levels signed off', () => {
    expect(eventCreateWarnings({ priceLevels: [{ code: 'P1', name: 'Stalls', priceCents: 1 }] }, { signOff: true })).toEqual([]);
  });
});
