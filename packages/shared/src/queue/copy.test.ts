import { describe, expect, it } from 'vitest';
import { copyTimesOf, DEFAULT_QUEUE_COPY, fillCopyTimes, queueCopyByLanguage, spokenDuration } from './copy.js';
import { placeMovedAway } from './edge-state.js';
import { ADMISSION_TOKEN_TTL_SECONDS, type QueueTokenClaims } from './edge.js';

describe("the event's times in its words", () => {
  it('says a duration as a sentence does, in English and Spanish', () => {
    expect(spokenDuration(600)).toBe('10 minutes');
    expect(spokenDuration(60)).toBe('1 minute');
    expect(spokenDuration(45)).toBe('45 seconds');
    expect(spokenDuration(150)).toBe('2 minutes 30 seconds');
    expect(spokenDuration(61)).toBe('1 minute 1 second');
    expect(spokenDuration(420, 'es')).toBe('7 minutos');
    expect(spokenDuration(1, 'es')).toBe('1 segundo');
  });

  it("fills {turn} and {hold} with the event's real times, and leaves words without them as they are", () => {
    const times = copyTimesOf(420);
    expect(times.turnSeconds).toBe(ADMISSION_TOKEN_TTL_SECONDS);
    expect(fillCopyTimes(DEFAULT_QUEUE_COPY.ADMITTED, times)).toBe(
      'It is your turn. You have 10 minutes to choose your seats; the seats you choose are held for you for 7 minutes while you pay.',
    );
    expect(fillCopyTimes('Go! {hold} to pay, {hold} exactly.', { turnSeconds: 300, holdSeconds: 90 })).toBe(
      'Go! 1 minute 30 seconds to pay, 1 minute 30 seconds exactly.',
    );
    expect(fillCopyTimes('Nothing to fill.', times)).toBe('Nothing to fill.');
  });

  it("fills every language's words, the promoter's included, and never says a default 10-minute hold", () => {
    const copy = queueCopyByLanguage(
      { ADMITTED: 'Your go: {turn} on the clock.' },
      { es: { WAITING: 'Espera {hold}.' } },
      copyTimesOf(240),
    );
    expect(copy.en.ADMITTED).toBe('Your go: 10 minutes on the clock.');
    expect(copy.es.ADMITTED).toBe(
      'Es tu turno. Tienes 10 minutos para elegir tus asientos; los que elijas se reservan para ti durante 4 minutos mientras pagas.',
    );
    expect(copy.es.WAITING).toBe('Espera 4 minutos.');
    for (const lang of ['en', 'es'] as const) for (const words of Object.values(copy[lang])) expect(words).not.toMatch(/\{(turn|hold)\}/);
    // Without times (the console's editor), the placeholders stay for the promoter to see.
    expect(queueCopyByLanguage(null, null).en.ADMITTED).toContain('{turn}');
  });
});

describe('a place that moved to another device', () => {
  const claims = (joinIndex: number, moves?: number): QueueTokenClaims => ({
    kind: 'queue',
    eventId: 'e',
    accountId: 'a',
    deviceHash: '0'.repeat(64),
    joinIndex,
    cohort: 'FIFO',
    ...(moves === undefined ? {} : { moves }),
    iat: 0,
    exp: 1,
  });

  it("stops only the tokens issued before the place's last move", () => {
    const q = { moves: [[7, 2] as [number, number], [9, 1] as [number, number]] };
    expect(placeMovedAway(claims(7), q)).toBe(true);
    expect(placeMovedAway(claims(7, 1), q)).toBe(true);
    expect(placeMovedAway(claims(7, 2), q)).toBe(false);
    expect(placeMovedAway(claims(9, 1), q)).toBe(false);
    expect(placeMovedAway(claims(8), q)).toBe(false);
    expect(placeMovedAway(claims(7), {})).toBe(false);
    expect(placeMovedAway(claims(7), { moves: [] })).toBe(false);
  });
});
