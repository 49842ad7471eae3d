import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EdgeQueueState, StatusAnswer } from '@onsale/shared/queue/edge-state';
import { negotiateLanguage } from '@onsale/shared/queue/copy';
import { fanLanguage, publishedFacts, statusBody } from '../src/status-body.js';

// The status answer's body built from a template is the text JSON.stringify made of the same answer before, byte for
// byte, and the Accept-Language kept per value is the language negotiated from it.

describe('the status body template', () => {
  it('is JSON.stringify of { state, message, position, admittedThrough, estWaitSeconds, admissionToken, waitlist }', () => {
    const count = fc.oneof(fc.constant(null), fc.nat(), fc.integer(), fc.double());
    fc.assert(
      fc.property(
        fc.constantFrom('WAITING', 'PAUSED', 'ADMITTED', 'LAST_CHANCE', 'SOLD_OUT'),
        fc.oneof(fc.string(), fc.constantFrom('You are in line. "Keep" this page open\n', 'Vous êtes dans la file \u2028 \\ </script>')),
        count,
        fc.integer(),
        count,
        fc.option(fc.string(), { nil: undefined }),
        fc.option(fc.record({ listingId: fc.string(), join: fc.string() }), { nil: undefined }),
        (state, message, position, admittedThrough, estWaitSeconds, admissionToken, waitlist) => {
          const answer = {
            state,
            message,
            position,
            admittedThrough,
            estWaitSeconds,
            admit: false,
            retryAfterSeconds: 20,
            ...(waitlist === undefined ? {} : { waitlist }),
          } as StatusAnswer;
          const expected = JSON.stringify({
            state: answer.state,
            message: answer.message,
            position: answer.position,
            admittedThrough: answer.admittedThrough,
            estWaitSeconds: answer.estWaitSeconds,
            admissionToken,
            waitlist: answer.waitlist,
          });
          expect(statusBody(answer, admissionToken)).toBe(expected);
          // Twice: the second from the kept message.
          expect(statusBody(answer, admissionToken)).toBe(expected);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('negotiates each Accept-Language value as negotiateLanguage does, also when it was kept', () => {
    for (const accept of [null, '', 'fr-CA,fr;q=0.9, en;q=0.5', 'de;q=0, es', 'x'.repeat(300), 'en;q=0.1, fr;q=0.2'])
      for (let i = 0; i < 2; i++) expect(fanLanguage(accept)).toBe(negotiateLanguage(accept));
    fc.assert(
      fc.property(fc.string(), (accept) => {
        expect(fanLanguage(accept)).toBe(negotiateLanguage(accept));
        expect(fanLanguage(accept)).toBe(negotiateLanguage(accept));
      }),
    );
  });
});

describe('the facts as published', () => {
  const queue = (heartbeatAt: number): EdgeQueueState => ({
    queueId: 'q1',
    watermark: {
      eventId: 'q1',
      admittedThrough: 10,
      state: 'OPEN',
      ratePerMin: 600,
      updatedAt: 1_000,
      heartbeatAt,
      cohortSize: null,
      seedHex: null,
      history: [],
    },
    copy: { WAITING: 'w', PAUSED: 'p', ADMITTED: 'a', LAST_CHANCE: 'l', SOLD_OUT: 's' },
    listingId: 'l1',
    tier: null,
    tierName: null,
    closesAt: null,
  });

  it("puts the controller's heartbeat on the edge's clock, as of when the origin published the state", () => {
    const q = queue(9_000);
    // Published at 10,000 (the heartbeat 1 s old then), read at 50,000 on the edge's clock: 1 s old now too.
    const f = publishedFacts(q, 10_000, 50_000);
    expect(f.watermark).toEqual({ ...q.watermark, heartbeatAt: 49_000 });
    expect(f).toMatchObject({ copy: q.copy, listingId: 'l1', tier: null, tierName: null, closesAt: null });
    // A heartbeat newer than the publication counts as fresh, never from the future.
    expect(publishedFacts(queue(11_000), 10_000, 50_000).watermark.heartbeatAt).toBe(50_000);
  });

  it('hands out the same facts for the same queue state, publication and time, and new ones when any differs', () => {
    const q = queue(9_000);
    const first = publishedFacts(q, 10_000, 50_000);
    expect(publishedFacts(q, 10_000, 50_000)).toBe(first);
    const later = publishedFacts(q, 10_000, 50_001);
    expect(later).not.toBe(first);
    expect(later.watermark.heartbeatAt).toBe(49_001);
    // Another queue state (a refresh brings new objects) or another publication time: built again, from them.
    const refreshed = queue(9_500);
    expect(publishedFacts(refreshed, 10_000, 50_001).watermark.heartbeatAt).toBe(49_501);
    expect(publishedFacts(refreshed, 10_200, 50_001).watermark.heartbeatAt).toBe(49_301);
    // What was handed out before is never changed afterwards.
    expect(first.watermark.heartbeatAt).toBe(49_000);
    expect(later.watermark.heartbeatAt).toBe(49_001);
  });
});
