import { jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { AccountTokens } from './account-token.js';

const secret = 'a-test-secret-that-is-long-enough-1234';
const tokens = new AccountTokens(secret, 60);

const code = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return (e as DomainError).code;
  }
  return 'none';
};

describe('account tokens', () => {
  it('round-trip, and are standard HS256 JWTs a JWT library accepts', async () => {
    const { token } = await tokens.issue('fan-1');
    expect(await tokens.verify(token)).toBe('fan-1');
    const { payload } = await jwtVerify(token, new TextEncoder().encode(secret), { issuer: 'onsale', audience: 'onsale:account' });
    expect(payload.sub).toBe('fan-1');
  });

  it('refuse forged, tampered, foreign and expired tokens', async () => {
    const { token } = await tokens.issue('fan-1');
    const [h, p, s] = token.split('.') as [string, string, string];
    const other = await new AccountTokens('another-secret-that-is-long-enough-9876').issue('fan-1');
    expect(code(() => tokens.verifySync(other.token))).toBe('INVALID_TOKEN');
    const tampered = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), sub: 'fan-2' })).toString(
      'base64url',
    );
    expect(code(() => tokens.verifySync(`${h}.${tampered}.${s}`))).toBe('INVALID_TOKEN');
    expect(code(() => tokens.verifySync('not-a-token'))).toBe('INVALID_TOKEN');
    expect(code(() => tokens.verifySync(`${h}.${p}.`))).toBe('INVALID_TOKEN');
    expect(code(() => tokens.verifySync(token, Date.now() + 61_000))).toBe('TOKEN_EXPIRED');
  });

  it('accept one spelling only: padded or re-spelt signatures, other headers and alg none are refused', async () => {
    const { token } = await tokens.issue('fan-1');
    const [h, p, s] = token.split('.') as [string, string, string];
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const respelt = s.slice(0, -1) + alphabet[alphabet.indexOf(s.at(-1)!) ^ 1];
    expect(Buffer.from(respelt, 'base64url')).toEqual(Buffer.from(s, 'base64url'));
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    for (const variant of [
      `${token}=`,
      `${h}.${p}.${respelt}`,
      `${h}.${p}.${s.replace(/-/g, '+').replace(/_/g, '/')}=`,
      `${b64({ alg: 'none', typ: 'JWT' })}.${p}.`,
      `${b64({ typ: 'JWT', alg: 'HS256' })}.${p}.${s}`,
    ])
      if (variant !== token)
        expect(
          code(() => tokens.verifySync(variant)),
          variant,
        ).toBe('INVALID_TOKEN');
  });
});
