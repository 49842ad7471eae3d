import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boardState, boardStateWords, compareBoard, type BoardState } from './board.js';

const now = Date.parse('2027-05-31T09:00:00Z');
const at = (minutes: number) => new Date(now + minutes * 60_000);
const facts = (over: Partial<Parameters<typeof boardState>[0]> = {}) => ({
  onsaleAt: at(120),
  startsAt: at(60 * 24 * 30),
  signedOff: true,
  paused: false,
  soldOut: false,
  ...over,
});

describe('the events board', () => {
  it('names each state', () => {
    expect(boardState(facts(), now)).toBe('SCHEDULED');
    expect(boardState(facts({ onsaleAt: at(12) }), now)).toBe('OPENING_SOON');
    expect(boardStateWords('OPENING_SOON', at(12), now)).toBe('Opening in 12 min');
    expect(boardState(facts({ signedOff: false }), now)).toBe('DRAFT');
    expect(boardState(facts({ onsaleAt: at(-5) }), now)).toBe('LIVE');
    expect(boardState(facts({ onsaleAt: at(-5), paused: true }), now)).toBe('PAUSED');
    expect(boardState(facts({ onsaleAt: at(-5), signedOff: false }), now)).toBe('DRAFT');
    expect(boardState(facts({ onsaleAt: at(-5), soldOut: true }), now)).toBe('SOLD_OUT');
    expect(boardState(facts({ onsaleAt: at(-500), startsAt: at(-1), soldOut: true }), now)).toBe('ENDED');
  });

  it('puts paused and live first, then the soonest to open, drafts, sold out and ended last', () => {
    const rows = [
      { name: 'ended', state: 'ENDED' as BoardState, onsaleAt: at(-9000) },
      { name: 'later', state: 'SCHEDULED' as BoardState, onsaleAt: at(600) },
      { name: 'soon', state: 'OPENING_SOON' as BoardState, onsaleAt: at(20) },
      { name: 'live', state: 'LIVE' as BoardState, onsaleAt: at(-30) },
      { name: 'draft', state: 'DRAFT' as BoardState, onsaleAt: at(100) },
      { name: 'paused', state: 'PAUSED' as BoardState, onsaleAt: at(-60) },
      { name: 'sold', state: 'SOLD_OUT' as BoardState, onsaleAt: at(-90) },
      { name: 'sooner', state: 'SCHEDULED' as BoardState, onsaleAt: at(300) },
    ];
    expect([...rows].sort(compareBoard).map((r) => r.name)).toEqual([
      'paused',
      'live',
      'soon',
      'sooner',
      'later',
      'draft',
      'sold',
      'ended',
    ]);
  });

  it('is a total order whatever the input order (property)', () => {
    const states: BoardState[] = ['LIVE', 'PAUSED', 'OPENING_SOON', 'SCHEDULED', 'DRAFT', 'SOLD_OUT', 'ENDED'];
    const row = fc.record({
      name: fc.string({ maxLength: 4 }),
      state: fc.constantFrom(...states),
      onsaleAt: fc.integer({ min: -10_000, max: 10_000 }).map(at),
    });
    fc.assert(
      fc.property(fc.array(row, { maxLength: 20 }), (rs) => {
        const a = [...rs].sort(compareBoard);
        const b = [...rs].reverse().sort(compareBoard);
        expect(a.map((r) => [r.state, r.onsaleAt.getTime(), r.name])).toEqual(b.map((r) => [r.state, r.onsaleAt.getTime(), r.name]));
        for (let i = 1; i < a.length; i++) expect(compareBoard(a[i - 1]!, a[i]!)).toBeLessThanOrEqual(0);
      }),
    );
  });
});
