import { describe, expect, it } from 'vitest';
import { trustProxyOf } from './trust-proxy.js';

describe('trustProxyOf', () => {
  it('trusts no proxy unless told', () => {
    expect(trustProxyOf(undefined)).toBe(false);
    expect(trustProxyOf('')).toBe(false);
    expect(trustProxyOf(' false ')).toBe(false);
  });

  it('trusts every hop for true, and only the listed addresses and ranges otherwise', () => {
    expect(trustProxyOf('true')).toBe(true);
    expect(trustProxyOf(' 10.0.0.0/8, 127.0.0.1 ,,')).toEqual(['10.0.0.0/8', '127.0.0.1']);
  });
});
