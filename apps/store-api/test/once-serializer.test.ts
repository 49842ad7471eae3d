import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compiledSerializer, onceSerializer } from '../src/routes/compiled-serializer.js';

const schema = z.object({ eventId: z.string(), sections: z.array(z.object({ code: z.string(), available: z.number() })) });

describe('onceSerializer', () => {
  it('writes a 200 answer object as compiledSerializer does, once: the same object again gets the first text, another object its own', () => {
    const plain = compiledSerializer({ schema });
    const once = onceSerializer({ schema, httpStatus: '200' });
    const first = { eventId: 'e1', sections: [{ code: 'A', available: 3, extra: 'left out' }] };
    const text = once(first);
    expect(text).toBe(plain(first));
    expect(text).toBe('{"eventId":"e1","sections":[{"code":"A","available":3}]}');
    expect(once(first)).toBe(text);
    const next = { eventId: 'e1', sections: [{ code: 'A', available: 2 }] };
    expect(once(next)).toBe('{"eventId":"e1","sections":[{"code":"A","available":2}]}');
  });

  it('writes every answer of another status afresh', () => {
    const once = onceSerializer({ schema: z.object({ error: z.string() }), httpStatus: '404' });
    const answer = { error: 'EVENT_NOT_FOUND' };
    expect(once(answer)).toBe('{"error":"EVENT_NOT_FOUND"}');
    answer.error = 'SECTION_NOT_FOUND';
    expect(once(answer)).toBe('{"error":"SECTION_NOT_FOUND"}');
  });
});
