import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { leadingZeroBits, ProofOfWork, solveChallenge, solves } from './pow.js';

const SECRET = 'a-test-secret-that-is-at-least-32-chars!';
const codeOf = async (f: () => Promise<unknown>) => {
  try {
    await f();
  } catch (e) {
    if (e instanceof DomainError) return { code: e.code, kind: e.kind, details: e.details };
    throw e;
  }
  return null;
};

describe('proof-of-work', () => {
  it('counts leading zero bits', () => {
    expect(leadingZeroBits(new Uint8Array([0x80]))).toBe(0);
    expect(leadingZeroBits(new Uint8Array([0x00, 0x01]))).toBe(15);
    expect(leadingZeroBits(new Uint8Array([0x00, 0x00, 0x10]))).toBe(19);
    expect(leadingZeroBits(new Uint8Array([0, 0]))).toBe(16);
  });

  it('issues a signed challenge a client can solve, accepted once for its account and event', async () => {
    const pow = new ProofOfWork({ secret: SECRET, difficulty: 10, ttlSeconds: 60 });
    const c = pow.issue('fan-1', 'event-1');
    expect(c).toMatchObject({ difficulty: 10, algorithm: 'sha256-leading-zero-bits' });
    expect(c.nonce).toMatch(/^[0-9a-f]{32}$/);
    const suffix = solveChallenge(c.nonce, c.difficulty);
    expect(solves(c.nonce, suffix, 10)).toBe(true);
    expect(await codeOf(() => pow.verify(`${c.token}:${suffix}`, 'fan-1', 'event-1'))).toBeNull();
    expect(await codeOf(() => pow.verify(`${c.token}:${suffix}`, 'fan-1', 'event-1'))).toMatchObject({
      code: 'POW_REUSED',
      kind: 'conflict',
    });
  });

  it('refuses forged, misbound, malformed and unsolved proofs with a code', async () => {
    const pow = new ProofOfWork({ secret: SECRET, difficulty: 12, ttlSeconds: 60 });
    const other = new ProofOfWork({ secret: `${SECRET}-other`, difficulty: 12, ttlSeconds: 60 });
    const c = pow.issue('fan-1', 'event-1');
    const suffix = solveChallenge(c.nonce, 12);
    const forged = other.issue('fan-1', 'event-1');
    expect(await codeOf(() => pow.verify(`${forged.token}:${solveChallenge(forged.nonce, 12)}`, 'fan-1', 'event-1'))).toMatchObject({
      code: 'POW_FORGED',
      kind: 'forbidden',
    });
    // A payload edited to a lower difficulty no longer matches its signature.
    const [body, mac] = c.token.split('.') as [string, string];
    const easier = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), d: 1 })).toString('base64url');
    expect((await codeOf(() => pow.verify(`${easier}.${mac}:0`, 'fan-1', 'event-1')))?.code).toBe('POW_FORGED');
    expect((await codeOf(() => pow.verify(`${c.token}:${suffix}`, 'fan-2', 'event-1')))?.code).toBe('POW_WRONG_ACCOUNT');
    expect((await codeOf(() => pow.verify(`${c.token}:${suffix}`, 'fan-1', 'event-2')))?.code).toBe('POW_WRONG_EVENT');
    for (const bad of ['', 'nonsense', `${c.token}:`, `${c.token}:bad suffix`, `not.a-token:abc`])
      expect(await codeOf(() => pow.verify(bad, 'fan-1', 'event-1')), bad).toMatchObject({ code: 'POW_MALFORMED', kind: 'invalid' });
    const wrong = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'].find((s) => !solves(c.nonce, s, 12))!;
    expect((await codeOf(() => pow.verify(`${c.token}:${wrong}`, 'fan-1', 'event-1')))?.code).toBe('POW_UNSOLVED');
    // Failed attempts do not use the challenge up.
    expect(await codeOf(() => pow.verify(`${c.token}:${suffix}`, 'fan-1', 'event-1'))).toBeNull();
  });

  it('refuses an expired challenge and hands out a fresh one', async () => {
    let now = 1_000_000_000_000;
    const pow = new ProofOfWork({ secret: SECRET, difficulty: 8, ttlSeconds: 30, now: () => now });
    const c = pow.issue('fan-1', 'event-1');
    const suffix = solveChallenge(c.nonce, 8);
    now += 31_000;
    const err = await codeOf(() => pow.verify(`${c.token}:${suffix}`, 'fan-1', 'event-1'));
    expect(err).toMatchObject({ code: 'POW_EXPIRED', kind: 'gone' });
    expect((err!.details.challenge as { exp: number }).exp).toBe(Math.floor(now / 1000) + 30);
  });
});
