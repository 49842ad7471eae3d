import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StatusAnswer } from '@onsale/shared/queue/edge-state';
import { negotiateLanguage } from '@onsale/shared/queue/copy';
import { fanLanguage, statusBody } from '../src/status-body.js';

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
