import { describe, expect, it } from 'vitest';
import { createTokenKey, hashDevice, openPayload, signPayload, signToken, TokenError, type QueueTokenClaims } from './edge.js';
import { CachedTokenVerifier, createNodeTokenKey } from './token-cache.js';

const SECRET = 'a-queue-token-secret-of-at-least-32-chars';
const NOW = 1_790_000_000_000; // ms

async function fixture() {
  const key = await createNodeTokenKey(SECRET);
  const claims: QueueTokenClaims = {
    kind: 'queue',
    eventId: 'ev-1',
    accountId: 'fan-1',
    deviceHash: await hashDevice('device-1', 'fan-1'),
    joinIndex: 41,
    cohort: 'FIFO',
    iat: NOW / 1000 - 60,
    exp: NOW / 1000 + 3600,
  };
  return { verifier: new CachedTokenVerifier(key), token: await signToken(key, claims), claims };
}

const codeOf = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    if (e instanceof TokenError) return e.code;
    throw e;
  }
  return 'passed';
};

describe('CachedTokenVerifier.verifyQueueNow (a status poll: one lookup, the device hash kept with the token)', () => {
  it('verifies a new token asynchronously, then answers the same poll without a promise', async () => {
    const { verifier, token, claims } = await fixture();
    const first = verifier.verifyQueueNow(token, 'ev-1', 'fan-1', 'device-1', NOW);
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toEqual(claims);
    const again = verifier.verifyQueueNow(token, 'ev-1', 'fan-1', 'device-1', NOW);
    expect(again).not.toBeInstanceOf(Promise);
    expect(again).toEqual(claims);
  });

  it('refuses a known token from another device or account, every time, and passes its own again after', async () => {
    const { verifier, token } = await fixture();
    await verifier.verifyQueueNow(token, 'ev-1', 'fan-1', 'device-1', NOW);
    for (let i = 0; i < 2; i++) {
      expect(codeOf(() => verifier.verifyQueueNow(token, 'ev-1', 'fan-1', 'device-2', NOW))).toBe('TOKEN_WRONG_DEVICE');
      // The same device id under another account hashes differently (and the account itself is checked first).
      expect(codeOf(() => verifier.verifyQueueNow(token, 'ev-1', 'fan-2', 'device-1', NOW))).toBe('TOKEN_WRONG_ACCOUNT');
      expect(codeOf(() => verifier.verifyQueueNow(token, 'ev-1', 'fan-1', 'device-1', NOW))).toBe('passed');
    }
  });

  it('re-checks the event and the expiry on every poll, as verifyNow does', async () => {
    const { verifier, token } = await fixture();
    await verifier.verifyQueueNow(token, 'ev-1', 'fan-1', 'device-1', NOW);
    expect(codeOf(() => verifier.verifyQueueNow(token, 'ev-2', 'fan-1', 'device-1', NOW))).toBe('TOKEN_WRONG_EVENT');
    expect(codeOf(() => verifier.verifyQueueNow(token, 'ev-1', 'fan-1', 'device-1', NOW + 3600_000))).toBe('TOKEN_EXPIRED');
    const deviceHash = verifier.deviceHashNow('device-2', 'fan-1');
    expect(codeOf(() => verifier.verifyNow(token, { kind: 'queue', eventId: 'ev-1', accountId: 'fan-1', deviceHash, now: NOW }))).toBe(
      'TOKEN_WRONG_DEVICE',
    );
  });

  it('refuses a first poll from the wrong device, and keeps refusing it', async () => {
    const { verifier, token } = await fixture();
    for (let i = 0; i < 2; i++)
      await expect(Promise.resolve().then(() => verifier.verifyQueueNow(token, 'ev-1', 'fan-1', 'device-2', NOW))).rejects.toMatchObject({
        code: 'TOKEN_WRONG_DEVICE',
      });
    expect(await verifier.verifyQueueNow(token, 'ev-1', 'fan-1', 'device-1', NOW)).toMatchObject({ accountId: 'fan-1' });
    expect(codeOf(() => verifier.verifyQueueNow(token, 'ev-1', 'fan-1', 'device-2', NOW))).toBe('TOKEN_WRONG_DEVICE');
  });
});

describe("a Node origin's native encodings (the join's device hash and queue token, written without the loops)", () => {
  it('hashes a device exactly as hashDevice does (Web Crypto), for any text', async () => {
    const verifier = new CachedTokenVerifier(await createNodeTokenKey(SECRET));
    for (const [device, account] of [
      ['device-1', 'fan-1'],
      ['d'.repeat(200), 'a'.repeat(128)],
      ['!~"#\\x', 'fan:1|2+3@x'],
      ['appareil-é-ü-中', 'fañ-😀'],
      ['', ''],
    ] as const)
      expect(verifier.deviceHashNow(device, account)).toBe(await hashDevice(device, account));
  });

  it('signs the same characters as the Web Crypto key (every padding length, any text), and each opens the other', async () => {
    const nodeKey = await createNodeTokenKey(SECRET);
    const webKey = await createTokenKey(SECRET);
    for (let n = 0; n < 12; n++)
      for (const value of [{ s: 'x'.repeat(n) }, { s: `é${'y'.repeat(n)}😀`, n }, ['中'.repeat(n)], n]) {
        const fromNode = await signPayload(nodeKey, value);
        expect(fromNode).toBe(await signPayload(webKey, value));
        expect(await openPayload(webKey, fromNode)).toEqual(value);
        expect(await openPayload(nodeKey, fromNode)).toEqual(value);
      }
  });
});
