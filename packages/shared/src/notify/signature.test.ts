import { describe, expect, it } from 'vitest';
import { signWebhookPayload, verifyWebhookSignature } from './signature.js';

const secret = 'whsec_test_secret_0123456789';
const body = JSON.stringify({ deliveryId: 7, notifications: [{ id: 1 }] });
const now = 1_800_000_000_000;
const t = now / 1000;

describe('webhook signatures', () => {
  it('a signature made with the secret verifies, from a string or the raw bytes', () => {
    const header = signWebhookPayload(secret, body, t);
    expect(header).toMatch(/^t=1800000000,v1=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature(secret, header, body, 300, now)).toBe(true);
    expect(verifyWebhookSignature(secret, header, Buffer.from(body), 300, now)).toBe(true);
  });

  it('rejects a forged signature: another secret, a changed body, a changed timestamp', () => {
    const header = signWebhookPayload(secret, body, t);
    expect(verifyWebhookSignature('whsec_someone_else_entirely', header, body, 300, now)).toBe(false);
    expect(verifyWebhookSignature(secret, header, body.replace('7', '8'), 300, now)).toBe(false);
    expect(verifyWebhookSignature(secret, header.replace(`t=${t}`, `t=${t + 1}`), body, 300, now)).toBe(false);
    const forged = `t=${t},v1=${'0'.repeat(64)}`;
    expect(verifyWebhookSignature(secret, forged, body, 300, now)).toBe(false);
  });

  it('rejects an old (replayed) or far-future signature, outside the tolerance', () => {
    const old = signWebhookPayload(secret, body, t - 301);
    expect(verifyWebhookSignature(secret, old, body, 300, now)).toBe(false);
    expect(verifyWebhookSignature(secret, old, body, 600, now)).toBe(true);
    expect(verifyWebhookSignature(secret, signWebhookPayload(secret, body, t + 301), body, 300, now)).toBe(false);
    expect(verifyWebhookSignature(secret, signWebhookPayload(secret, body, t - 299), body, 300, now)).toBe(true);
  });

  it('rejects missing or malformed headers, and accepts any one valid v1 (secret rotation)', () => {
    for (const h of [undefined, null, '', 'garbage', `t=${t}`, `v1=${'a'.repeat(64)}`, `t=abc,v1=${'a'.repeat(64)}`, `t=${t},v1=xyz`])
      expect(verifyWebhookSignature(secret, h, body, 300, now)).toBe(false);
    const valid = signWebhookPayload(secret, body, t).split(',')[1]!;
    const oldSecretSig = signWebhookPayload('whsec_the_previous_secret_value', body, t).split(',')[1]!;
    expect(verifyWebhookSignature(secret, `t=${t},${oldSecretSig},${valid}`, body, 300, now)).toBe(true);
  });
});
