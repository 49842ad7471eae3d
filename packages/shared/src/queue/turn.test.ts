import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ARRIVAL_SLACK_MS, ARRIVAL_WINDOW_MS } from '../admission/advance.js';
import { computeStatusNow, POLL_SECONDS, retryAfterWaiting, type QueueStatus, type QueueTokenClaims, type WatermarkState } from './edge.js';

// A turn a fan keeps by polling as told: the Retry-After of the status rule (the store API's and the edge's: both run
// computeStatus) against a watermark that moves as the controller moves it, with its published history.

const T0 = 1_790_000_000_000;
const claims = (joinIndex: number): QueueTokenClaims => ({
  kind: 'queue',
  eventId: 'ev',
  accountId: 'fan',
  deviceHash: '0'.repeat(64),
  joinIndex,
  cohort: 'FIFO',
  iat: Math.floor(T0 / 1000),
  exp: Math.floor(T0 / 1000) + 7200,
});

/**
 * A watermark moving second by second at `rates[k]` positions a minute during second k (a rate jump, a stall at 0,
 * the tail's one fan at once), publishing its rate and a history point at most every 10 s as the controller does.
 */
function watermarkTimeline(rates: readonly number[]): (ms: number) => WatermarkState {
  const states: WatermarkState[] = [];
  let through = 0;
  let carry = 0;
  let history: [number, number][] = [];
  let updatedAt = T0;
  for (let k = 0; k < rates.length; k++) {
    const at = T0 + k * 1000;
    const exact = rates[k]! / 60 + carry;
    const step = Math.floor(exact);
    carry = exact - step;
    through += step;
    // updated_at moves when a public number changes (the watermark, the rate), as the controller writes it.
    if (step > 0 || (k > 0 && rates[k] !== rates[k - 1])) updatedAt = at;
    if (step > 0 && (history.length === 0 || at - history[history.length - 1]![0] >= 10_000))
      history = [...history.filter(([t]) => t >= at - 1_800_000), [at, through]];
    states.push({
      eventId: 'ev',
      admittedThrough: through,
      state: 'OPEN',
      ratePerMin: rates[k]!,
      updatedAt,
      heartbeatAt: at,
      cohortSize: null,
      seedHex: null,
      history,
    });
  }
  return (ms) => states[Math.min(states.length - 1, Math.max(0, Math.floor((ms - T0) / 1000)))]!;
}

/** A fan at `joinIndex` polling at `every(retryAfter)` seconds from T0 until admitted (or the timeline ends). */
function pollUntilAdmitted(
  joinIndex: number,
  at: (ms: number) => WatermarkState,
  endMs: number,
  every: (retryAfterSeconds: number) => number,
  jitter: () => number,
): { admittedAtMs: number | null; answers: QueueStatus[] } {
  const answers: QueueStatus[] = [];
  for (let now = T0; now <= endMs;) {
    const s = computeStatusNow(claims(joinIndex), at(now), now, { jitter }) as QueueStatus;
    answers.push(s);
    if (s.admit || s.expired) return { admittedAtMs: s.admit ? now : null, answers };
    now += every(s.retryAfterSeconds) * 1000;
  }
  return { admittedAtMs: null, answers };
}

/** When the watermark first reached the position (the second it moved past it). */
function reachedAtMs(position: number, at: (ms: number) => WatermarkState, endMs: number): number | null {
  for (let ms = T0; ms <= endMs; ms += 1000) if (at(ms).admittedThrough >= position) return ms;
  return null;
}

describe('a turn a fan keeps by polling as told', () => {
  it('the Retry-After a waiting fan is told is never longer than the arrival window the controller keeps its turn for, less slack', () => {
    expect(ARRIVAL_WINDOW_MS).toBe(POLL_SECONDS.max * 1000 + ARRIVAL_SLACK_MS);
    fc.assert(
      fc.property(
        fc.constantFrom('WAITING' as const, 'LAST_CHANCE' as const),
        fc.option(fc.nat(100_000)),
        fc.nat(60),
        (state, est, usual) => {
          const r = retryAfterWaiting(state, est, usual);
          expect(r).toBeGreaterThanOrEqual(POLL_SECONDS.nearFront);
          expect(r * 1000).toBeLessThanOrEqual(ARRIVAL_WINDOW_MS - ARRIVAL_SLACK_MS);
        },
      ),
    );
  });

  it('a fan polling exactly at its Retry-After never reads POSITION_EXPIRED and comes in within its Retry-After of its turn, whatever the rate does', () => {
    const rate = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 30 }), fc.integer({ min: 30, max: 3000 }), fc.constant(60_000));
    fc.assert(
      fc.property(
        fc.array(rate, { minLength: 60, maxLength: 900 }),
        fc.integer({ min: 0, max: 2000 }),
        fc.double({ min: 0, max: 0.999, noNaN: true }),
        (rates, joinIndex, j) => {
          const at = watermarkTimeline(rates);
          const endMs = T0 + (rates.length - 1) * 1000;
          const honest = pollUntilAdmitted(
            joinIndex,
            at,
            endMs,
            (r) => r,
            () => j,
          );
          expect(honest.answers.some((a) => a.expired)).toBe(false);
          const reached = reachedAtMs(joinIndex + 1, at, endMs);
          if (reached === null || honest.admittedAtMs === null) return;
          // Admitted at the first poll after the turn came, so within the longest Retry-After: inside the window the
          // controller counts the fan as on its way (its slot is kept, not given to the next fan).
          expect(honest.admittedAtMs - reached).toBeLessThanOrEqual(POLL_SECONDS.max * 1000);
          expect(honest.admittedAtMs - reached).toBeLessThan(ARRIVAL_WINDOW_MS);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('at a steady rate, a client polling four times sooner than told comes in no more than the near-front interval before a fan who polls as told', () => {
    // The Retry-After is aimed at the estimated turn, so what a faster client can gain is the estimate's error: none at
    // a steady rate beyond the 5 s floor. (When the rate jumps, the fan is still within its Retry-After of its turn,
    // inside the arrival window: the test above.)
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 600 }),
        fc.integer({ min: 120, max: 600 }),
        fc.integer({ min: 0, max: 1500 }),
        (perMin, seconds, joinIndex) => {
          const rates = Array.from({ length: seconds }, () => perMin);
          const at = watermarkTimeline(rates);
          const endMs = T0 + (rates.length - 1) * 1000;
          const honest = pollUntilAdmitted(
            joinIndex,
            at,
            endMs,
            (r) => r,
            () => 0.5,
          );
          // The eager client polls on past the timeline's end (the watermark stays where it ended) so that a turn the
          // honest fan caught in the last second is compared, not cut off.
          const eager = pollUntilAdmitted(
            joinIndex,
            at,
            endMs + 30_000,
            (r) => Math.max(1.5, r / 4),
            () => 0.5,
          );
          if (honest.admittedAtMs === null) return;
          expect(eager.admittedAtMs).not.toBeNull();
          expect(honest.admittedAtMs - eager.admittedAtMs!).toBeLessThanOrEqual(POLL_SECONDS.nearFront * 1000);
          expect(eager.answers.length).toBeGreaterThanOrEqual(honest.answers.length); // and it asked more often for it
        },
      ),
      { numRuns: 500 },
    );
  });
});
