import { describe, expect, it } from 'vitest';
import { generatePassword, hashPassword, hashSessionToken, newSessionToken, verifyNothing, verifyPassword } from './password.js';

describe('password hashing (scrypt)', () => {
  it('verifies the right password only, with a fresh salt per hash', async () => {
    const a = await hashPassword('correct horse battery staple');
    const b = await hashPassword('correct horse battery staple');
    expect(a).toMatch(/^scrypt\$N=32768,r=8,p=3\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword('correct horse battery staple', a)).toBe(true);
    expect(await verifyPassword('correct horse battery stapl', a)).toBe(false);
    expect(await verifyPassword('', a)).toBe(false);
  });

  it('never matches a malformed or tampered hash', async () => {
    const h = await hashPassword('correct horse battery staple');
    expect(await verifyPassword('correct horse battery staple', 'plaintext')).toBe(false);
    expect(await verifyPassword('correct horse battery staple', h.replace('N=32768', 'N=1073741824'))).toBe(false);
    expect(await verifyPassword('correct horse battery staple', h.slice(0, -8) + 'AAAAAAA=')).toBe(false);
  });

  it('verifyNothing answers false', async () => {
    expect(await verifyNothing('anything')).toBe(false);
  });

  it('generates long random passwords and session tokens; only the token hash is kept', () => {
    const p = generatePassword();
    expect(p).toMatch(/^[A-Za-z0-9_-]{20}$/);
    expect(generatePassword()).not.toBe(p);
    const { token, tokenHash } = newSessionToken();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(tokenHash).toEqual(hashSessionToken(token));
    expect(tokenHash).toHaveLength(32);
  });
});
