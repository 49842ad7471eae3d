import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBase64UrlStrict } from './encoding.js';

describe('decodeBase64UrlStrict', () => {
  it('decodes exactly what Buffer encodes, for any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
        const text = Buffer.from(bytes).toString('base64url');
        expect(decodeBase64UrlStrict(text)).toEqual(Buffer.from(bytes));
      }),
      { seed: 12, numRuns: 300 },
    );
  });

  it('refuses padding, the standard alphabet, stray characters and non-canonical last characters', () => {
    const mac = Buffer.alloc(32, 7).toString('base64url'); // 43 characters: the last one carries 2 unused bits
    expect(decodeBase64UrlStrict(mac)).not.toBeNull();
    expect(decodeBase64UrlStrict(`${mac}=`)).toBeNull();
    expect(decodeBase64UrlStrict(mac.replace(/-/g, '+').replace(/_/g, '/') + '+')).toBeNull();
    expect(decodeBase64UrlStrict(`${mac.slice(0, 20)} ${mac.slice(20)}`)).toBeNull();
    expect(decodeBase64UrlStrict(`${mac}AB`)).toBeNull(); // 45 characters: no whole number of bytes
    // Same bytes, another spelling: flip the unused bits of the last character.
    const last = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.indexOf(mac.at(-1)!);
    const variant = mac.slice(0, -1) + 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'[last ^ 1];
    expect(Buffer.from(variant, 'base64url')).toEqual(Buffer.from(mac, 'base64url'));
    expect(decodeBase64UrlStrict(variant)).toBeNull();
  });
});
