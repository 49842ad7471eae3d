import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { solveChallenge, solves } from './pow.js';
import { searchSuffix, sha256Short } from './pow-hash.js';

const hex = (words: Uint32Array) => [...words].map((w) => w.toString(16).padStart(8, '0')).join('');

describe("the page's proof-of-work hash", () => {
  it('is SHA-256 for every message of up to 55 bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 55 }), (bytes) => {
        const buf = new Uint8Array(64);
        buf.set(bytes);
        expect(hex(sha256Short(buf, bytes.length))).toBe(createHash('sha256').update(bytes).digest('hex'));
      }),
      { numRuns: 500, seed: 18 },
    );
  });

  it('finds the same suffix as the reference client, and the server accepts it', () => {
    for (const nonce of ['0f3a9c1e5b7d2468ace013579bdf0246', 'ffffffffffffffffffffffffffffffff']) {
      const suffix = searchSuffix(nonce, 12, 0, 1_000_000);
      expect(suffix).toBe(solveChallenge(nonce, 12));
      expect(solves(nonce, suffix!, 12)).toBe(true);
    }
  });
});

describe('solveChallenge', () => {
  it('finds what the node:crypto search finds, for nonces of every length up to and past one block', () => {
    const reference = (nonce: string, difficulty: number) => {
      for (let i = 0; ; i++) if (solves(nonce, i.toString(36), difficulty)) return i.toString(36);
    };
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii', maxLength: 70 }), fc.integer({ min: 1, max: 10 }), (nonce, difficulty) => {
        const suffix = solveChallenge(nonce, difficulty);
        expect(suffix).toBe(reference(nonce, difficulty));
        expect(solves(nonce, suffix, difficulty)).toBe(true);
      }),
      { numRuns: 200, seed: 27 },
    );
  });
});
