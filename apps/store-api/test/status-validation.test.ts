import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { params, statusHeaders, statusHeadersAccepted, statusParamsAccepted } from '../src/routes/queue/index.js';

// The status poll's plain checks stand in for its zod schemas only where zod would accept the same data unchanged.
describe("the status poll's plain request checks", () => {
  const text = fc.oneof(
    fc.string({ maxLength: 300 }),
    fc.string({ unit: 'grapheme', maxLength: 80 }),
    fc.string({ minLength: 4090, maxLength: 4100 }),
  );
  const value = fc.oneof(text, fc.constant(undefined), fc.integer(), fc.array(fc.string(), { maxLength: 2 }));

  it('accept headers only when the zod schema accepts them, with the same values (property)', () => {
    fc.assert(
      fc.property(value, value, (device, token) => {
        const h: Record<string, unknown> = { host: 'x', 'x-device-id': device, 'x-queue-token': token };
        if (!statusHeadersAccepted(h)) return;
        const r = statusHeaders.safeParse(h);
        expect(r.success).toBe(true);
        expect(r.data).toEqual({ 'x-device-id': device, 'x-queue-token': token });
      }),
      { numRuns: 2000 },
    );
  });

  it('accept params only when the zod schema accepts them (property)', () => {
    fc.assert(
      fc.property(value, (id) => {
        if (!statusParamsAccepted({ id })) return;
        expect(params.safeParse({ id }).data).toEqual({ id });
      }),
      { numRuns: 2000 },
    );
  });

  it('accept a well-formed poll and leave the rest to zod', () => {
    expect(statusHeadersAccepted({ 'x-device-id': 'device-0001', 'x-queue-token': 'a.b' })).toBe(true);
    expect(statusHeadersAccepted({ 'x-device-id': 'short', 'x-queue-token': 'a.b' })).toBe(false);
    expect(statusHeadersAccepted({ 'x-device-id': 'device 0001', 'x-queue-token': 'a.b' })).toBe(false);
    expect(statusHeadersAccepted({ 'x-device-id': 'device-0001', 'x-queue-token': '' })).toBe(false);
    expect(statusHeadersAccepted({ 'x-device-id': 'device-0001' })).toBe(false);
    expect(statusParamsAccepted({ id: 'e'.repeat(65) })).toBe(false);
  });
});
