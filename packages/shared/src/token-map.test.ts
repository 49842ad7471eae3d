import { describe, expect, it } from 'vitest';
import { TokenMap } from './token-map.js';

describe('TokenMap', () => {
  const signature = 'S'.repeat(43);
  it('answers only for the very token it was set for, whatever the string object', () => {
    const m = new TokenMap<string>(10);
    const token = `header.payload-of-fan-1.${signature}`;
    m.set(token, 'fan-1');
    // The same characters in a new string (as a header arrives on every request).
    expect(m.get(Buffer.from(token).toString('latin1'))).toBe('fan-1');
    // Same ending, other beginning: a forged token with a genuine token's signature is not a hit.
    expect(m.get(`header.payload-of-fan-2.${signature}`)).toBeUndefined();
    expect(m.get(token.slice(1))).toBeUndefined();
    expect(m.get('short')).toBeUndefined();
  });

  it('keeps the later of two tokens that end alike', () => {
    const m = new TokenMap<number>(10);
    m.set(`a.${signature}`, 1);
    m.set(`b.${signature}`, 2);
    expect(m.get(`a.${signature}`)).toBeUndefined();
    expect(m.get(`b.${signature}`)).toBe(2);
    expect(m.size).toBe(1);
  });

  it('keys short tokens by the whole token', () => {
    const m = new TokenMap<number>(10);
    m.set('abc', 1);
    m.set('xbc', 2);
    expect(m.get('abc')).toBe(1);
    expect(m.get('xbc')).toBe(2);
  });

  it('forgets the oldest entry first when full', () => {
    const m = new TokenMap<number>(3);
    const t = (i: number) => `token-${i}.${String(i).padStart(43, 'x')}`;
    for (let i = 0; i < 5; i++) m.set(t(i), i);
    expect(m.size).toBe(3);
    expect(m.get(t(0))).toBeUndefined();
    expect(m.get(t(1))).toBeUndefined();
    expect([m.get(t(2)), m.get(t(3)), m.get(t(4))]).toEqual([2, 3, 4]);
    // Setting a token already kept again forgets nothing.
    m.set(t(4), 40);
    expect([m.get(t(2)), m.get(t(3)), m.get(t(4))]).toEqual([2, 3, 40]);
  });
});
