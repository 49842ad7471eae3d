import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  cohortPositions,
  commitSeed,
  createPermuter,
  FairnessInputError,
  fairnessDescription,
  generateSeed,
  permutationDomain,
  permutePosition,
  VERIFICATION_RECIPE,
  verifyCommitment,
} from './fairness.js';

const SEED = 'ab'.repeat(32);

function expectPermutation(slots: Uint32Array, n: number): void {
  expect(slots.length).toBe(n);
  const seen = new Uint8Array(n);
  let outside = 0;
  for (const s of slots) {
    if (s >= n) outside++;
    else seen[s]! += 1;
  }
  expect(outside).toBe(0);
  expect(seen.every((c) => c === 1)).toBe(true);
}

/** Spearman's rho between join index and slot; both are ranks 0..n-1, so rho = 1 - 6 sum d^2 / (n (n^2 - 1)). */
function spearman(slots: Uint32Array): number {
  const n = slots.length;
  let sum = 0;
  slots.forEach((s, j) => (sum += (s - j) ** 2));
  return 1 - (6 * sum) / (n * (n * n - 1));
}

/** VERIFICATION_RECIPE followed word for word, with none of the module's tables or caches: the third party's view. */
async function recipe(seedHex: string, n: number, j: number): Promise<number> {
  const S = Uint8Array.from(seedHex.match(/../g)!.map((h) => parseInt(h, 16)));
  const key = await crypto.subtle.importKey('raw', S, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  let k = 1;
  while (2 ** (2 * k) < n) k++;
  const F = async (r: number, R: number) => {
    const msg = new Uint8Array(8);
    new DataView(msg.buffer).setUint32(0, r);
    new DataView(msg.buffer).setUint32(4, R);
    const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, msg));
    return (((mac[0]! << 24) >>> 0) + (mac[1]! << 16) + (mac[2]! << 8) + mac[3]!) % 2 ** k;
  };
  const E = async (x: number) => {
    let L = Math.floor(x / 2 ** k);
    let R = x % 2 ** k;
    for (let r = 0; r < 6; r++) [L, R] = [R, L ^ (await F(r, R))];
    return L * 2 ** k + R;
  };
  let x = await E(j);
  while (x >= n) x = await E(x);
  return x;
}

describe('seed commitment', () => {
  it('generates 32 random bytes as hex, different every time', () => {
    const a = generateSeed();
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(generateSeed()).not.toBe(a);
  });

  it('commits to SHA-256 of the seed bytes (a known vector)', async () => {
    // SHA-256 of 32 zero bytes
    expect(await commitSeed('0'.repeat(64))).toBe('66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925');
  });

  it('verifies the revealed seed and refuses a tampered one', async () => {
    const seed = generateSeed();
    const commitment = await commitSeed(seed);
    expect(await verifyCommitment(seed, commitment)).toBe(true);
    expect(await verifyCommitment(seed, commitment.toUpperCase())).toBe(true);
    const tampered = (seed[0] === '0' ? '1' : '0') + seed.slice(1);
    expect(await verifyCommitment(tampered, commitment)).toBe(false);
    expect(await verifyCommitment(seed, commitment.slice(0, 63))).toBe(false);
    expect(await verifyCommitment('not hex', commitment)).toBe(false);
  });

  it('refuses seeds that are not 64 hex digits', async () => {
    await expect(commitSeed('abc')).rejects.toBeInstanceOf(FairnessInputError);
    await expect(permutePosition('zz'.repeat(32), 10, 0)).rejects.toMatchObject({ code: 'INVALID_FAIRNESS_INPUT', field: 'seedHex' });
  });
});

describe('the pre-open permutation', () => {
  it.each([1, 2, 3, 4, 5, 17, 1000, 1001, 65_537])('puts every join index of a cohort of %i in exactly one slot', async (n) => {
    expectPermutation(await cohortPositions(SEED, n), n);
  });

  it('covers a cohort of 10,000, with no rank correlation to join order (|rho| < 0.05)', async () => {
    const slots = await cohortPositions(SEED, 10_000);
    expectPermutation(slots, 10_000);
    expect(Math.abs(spearman(slots))).toBeLessThan(0.05);
    for (let i = 0; i < 5; i++) expect(Math.abs(spearman(await cohortPositions(generateSeed(), 10_000)))).toBeLessThan(0.05);
  });

  it('is the same permutation for the same seed, a different one for a different seed', async () => {
    const a = await cohortPositions(SEED, 1000);
    expect(await cohortPositions(SEED, 1000)).toEqual(a);
    const b = await cohortPositions('cd'.repeat(32), 1000);
    let same = 0;
    a.forEach((s, j) => (same += s === b[j] ? 1 : 0));
    expect(same).toBeLessThan(20); // about 1 expected by chance
  });

  it('gives one position at a time exactly what the whole permutation gives', async () => {
    const all = await cohortPositions(SEED, 5000);
    const p = createPermuter(SEED, 5000);
    for (const j of [0, 1, 2, 999, 2500, 4998, 4999]) {
      expect(await permutePosition(SEED, 5000, j)).toBe(all[j]);
      expect(await p.position(j)).toBe(all[j]);
    }
  });

  it('answers a position without a promise once its rounds are computed, the same position', async () => {
    const all = await cohortPositions(SEED, 5000);
    const p = createPermuter(SEED, 5000);
    expect(p.knownPosition(7)).toBeUndefined(); // no round computed yet
    for (const j of [0, 1, 7, 2500, 4999]) {
      await p.position(j);
      expect(p.knownPosition(j)).toBe(all[j]);
    }
    expect(p.knownPosition(5000)).toBeUndefined(); // outside the cohort: position() says why
    expect(p.knownPosition(-1)).toBeUndefined();
  });

  it('matches the published recipe re-implemented from its text (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex')),
        fc.integer({ min: 1, max: 300_000 }).chain((n) => fc.tuple(fc.constant(n), fc.nat(n - 1))),
        async (seed, [n, j]) => {
          expect(await permutePosition(seed, n, j)).toBe(await recipe(seed, n, j));
        },
      ),
      { numRuns: 60 },
    );
  });

  it("reproduces the recipe's test vectors", async () => {
    expect([...(await cohortPositions('0'.repeat(64), 10))]).toEqual([2, 4, 9, 8, 6, 1, 3, 0, 5, 7]);
    expect([...(await cohortPositions(SEED, 1000)).slice(0, 5)]).toEqual([150, 930, 431, 121, 288]);
    expect(VERIFICATION_RECIPE).toContain('2, 4, 9, 8, 6, 1, 3, 0, 5, 7');
    expect(VERIFICATION_RECIPE).toContain('150, 930, 431, 121, 288');
  });

  it('uses the smallest even-bit domain at or above the cohort', () => {
    expect(permutationDomain(1)).toEqual({ halfBits: 1, domainSize: 4 });
    expect(permutationDomain(4)).toEqual({ halfBits: 1, domainSize: 4 });
    expect(permutationDomain(5)).toEqual({ halfBits: 2, domainSize: 16 });
    expect(permutationDomain(100_000)).toEqual({ halfBits: 9, domainSize: 262_144 });
    expect(permutationDomain(2 ** 32)).toEqual({ halfBits: 16, domainSize: 2 ** 32 });
    expect(() => permutationDomain(0)).toThrow(FairnessInputError);
    expect(() => permutationDomain(2 ** 32 + 1)).toThrow(FairnessInputError);
    expect(() => permutationDomain(1.5)).toThrow(FairnessInputError);
  });

  it('computes a position in a cohort of 2^32', async () => {
    const slot = await permutePosition(SEED, 2 ** 32, 2 ** 32 - 1);
    expect(slot).toBeGreaterThanOrEqual(0);
    expect(slot).toBeLessThan(2 ** 32);
    expect(slot).toBe(await recipe(SEED, 2 ** 32, 2 ** 32 - 1));
  });

  it('refuses a join index outside the cohort', async () => {
    await expect(permutePosition(SEED, 10, 10)).rejects.toMatchObject({ field: 'joinIndex' });
    await expect(permutePosition(SEED, 10, -1)).rejects.toMatchObject({ field: 'joinIndex' });
  });

  it('places a 100,000-fan cohort as a permutation, and single positions agree with the whole', async () => {
    // How long this takes is a benchmark's question, not a test's: the machine may be shared. What must hold at
    // the stadium's size is that every place is given exactly once and a single lookup reads the same place.
    const seed = generateSeed();
    const n = 100_000;
    const positions = await cohortPositions(seed, n);
    expect(positions).toHaveLength(n);
    const seen = new Uint8Array(n);
    for (const pos of positions) {
      expect(pos >= 0 && pos < n).toBe(true);
      seen[pos] = (seen[pos] ?? 0) + 1;
    }
    expect(seen.every((c) => c === 1)).toBe(true);
    const p = createPermuter(seed, n);
    for (const j of [0, 1, 4_999, 50_000, n - 1]) expect(await p.position(j)).toBe(positions[j]);
  });
});

describe('fairness copy', () => {
  it('says in plain words what each mode does', () => {
    expect(fairnessDescription('RANDOMIZED_PREOPEN_THEN_FIFO')).toMatch(
      /^Everyone who joins before the on-sale opens is placed in a random order/,
    );
    expect(fairnessDescription('FIFO')).toMatch(/order they joined/);
    expect(fairnessDescription('REGISTRATION_LOTTERY')).toMatch(/register/);
    expect(() => fairnessDescription('NOPE' as never)).toThrow(FairnessInputError);
  });
});

describe('edge safety', () => {
  it('fairness.ts imports nothing at all', () => {
    const src = readFileSync(new URL('./fairness.ts', import.meta.url), 'utf8');
    expect(src).not.toMatch(/^\s*import\b/m);
    expect(src).not.toMatch(/\bimport\s*\(|\brequire\s*\(|node:/);
  });
});
