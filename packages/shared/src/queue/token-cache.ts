import { createHmac, hash } from 'node:crypto';
import {
  checkClaims,
  createTokenKey,
  deviceHashText,
  TokenError,
  verifyToken,
  type AdmissionTokenClaims,
  type TokenClaims,
  type TokenExpectation,
  type TokenKey,
} from './edge.js';
import { TokenMap } from '../token-map.js';

/** A token key for a Node origin: the same secret, with node:crypto's synchronous HMAC for the hot path. */
export async function createNodeTokenKey(secret: string): Promise<TokenKey> {
  const webKey = await createTokenKey(secret);
  const raw = Buffer.from(secret, 'utf8');
  return {
    webKey,
    hmacSync: (data) => createHmac('sha256', raw).update(data).digest(),
    // signPayload's encodings, written by Node's Buffer and HMAC (the same characters: token-cache.test.ts).
    base64Url: (text) => Buffer.from(text, 'utf8').toString('base64url'),
    hmacBase64Url: (text) => createHmac('sha256', raw).update(text, 'utf8').digest('base64url'),
  };
}

/** A bounded map that forgets its oldest entries first. */
export class BoundedCache<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly max: number) {}
  get(k: K): V | undefined {
    return this.map.get(k);
  }
  set(k: K, v: V): void {
    if (this.map.size >= this.max) {
      const oldest = this.map.keys().next();
      if (!oldest.done) this.map.delete(oldest.value);
    }
    this.map.set(k, v);
  }
}

/** A verified token's claims, with the device and account it was last checked with and their device hash. */
interface Verified {
  claims: TokenClaims;
  accountId: string | undefined;
  deviceId: string | undefined;
  deviceHash: string | undefined;
}

/**
 * Token verification for a busy origin: a fan polls with the same queue token every few seconds, so a token's
 * signature is verified once and its claims kept (bounded); every poll still re-checks the binding (event,
 * account, device) and the expiry. Device hashes are kept the same way. The rules are the edge module's.
 */
export class CachedTokenVerifier {
  private readonly claims: TokenMap<Verified>;
  private readonly devices: BoundedCache<string, string>;
  constructor(
    private readonly key: TokenKey,
    size = 200_000,
  ) {
    this.claims = new TokenMap(size);
    this.devices = new BoundedCache(size);
  }

  async deviceHash(deviceId: string, accountId: string): Promise<string> {
    return this.deviceHashNow(deviceId, accountId);
  }

  /** deviceHash without a promise (Node's SHA-256 is synchronous). */
  deviceHashNow(deviceId: string, accountId: string): string {
    const k = `${accountId}\n${deviceId}`;
    let h = this.devices.get(k);
    if (h === undefined) {
      // hashDeviceSync's digest, in one native call (the text's UTF-8 bytes, hex): no encoder, no hex loop.
      h = hash('sha256', deviceHashText(deviceId, accountId), 'hex');
      this.devices.set(k, h);
    }
    return h;
  }

  async verify<K extends TokenClaims['kind']>(token: string, expected: TokenExpectation<K>): Promise<Extract<TokenClaims, { kind: K }>> {
    return this.verifyNow(token, expected);
  }

  /**
   * verify without a promise for a token verified before (its claims re-checked: binding and expiry); a new token's
   * signature is checked asynchronously. Throws (rather than rejects) when a known token's claims do not hold.
   */
  verifyNow<K extends TokenClaims['kind']>(
    token: string,
    expected: TokenExpectation<K>,
  ): Extract<TokenClaims, { kind: K }> | Promise<Extract<TokenClaims, { kind: K }>> {
    const hit = this.claims.get(token);
    if (hit) return checkClaims(hit.claims, expected) as Extract<TokenClaims, { kind: K }>;
    return this.verifyNew(token, expected);
  }

  /**
   * A status poll's check: verifyNow of a queue token bound to this event, account and the device hash of
   * (deviceId, accountId), found with one lookup. The device and account a known token was last checked with are
   * kept beside its claims with their hash, so a fan's polls (the same token, account and device every time) hash
   * and build nothing; any other device or account is hashed as deviceHashNow hashes it. The checks and their order
   * are verifyNow's.
   */
  verifyQueueNow(
    token: string,
    eventId: string,
    accountId: string,
    deviceId: string,
    now: number,
  ): Extract<TokenClaims, { kind: 'queue' }> | Promise<Extract<TokenClaims, { kind: 'queue' }>> {
    const hit = this.claims.get(token);
    if (hit === undefined) {
      const deviceHash = this.deviceHashNow(deviceId, accountId);
      return this.verifyNew(token, { kind: 'queue', eventId, accountId, deviceHash, now });
    }
    let deviceHash = hit.deviceHash;
    if (deviceHash === undefined || hit.deviceId !== deviceId || hit.accountId !== accountId) {
      deviceHash = this.deviceHashNow(deviceId, accountId);
      hit.deviceId = deviceId;
      hit.accountId = accountId;
      hit.deviceHash = deviceHash;
    }
    return checkClaims(hit.claims, { kind: 'queue', eventId, accountId, deviceHash, now }) as Extract<TokenClaims, { kind: 'queue' }>;
  }

  private verifyNew<K extends TokenClaims['kind']>(
    token: string,
    expected: TokenExpectation<K>,
  ): Promise<Extract<TokenClaims, { kind: K }>> {
    return verifyToken(this.key, token, expected as TokenExpectation<'queue'>).then((claims: TokenClaims) => {
      this.claims.set(token, { claims, accountId: undefined, deviceId: undefined, deviceHash: undefined });
      return claims as Extract<TokenClaims, { kind: K }>;
    });
  }
}

/** The event a token names, read without verifying it (the verification that follows checks it). */
function claimedEventId(token: string): string | undefined {
  try {
    const claims = JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8')) as { eventId?: unknown };
    return typeof claims.eventId === 'string' ? claims.eventId : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The admission rule of the store: a token for this event (or, on a route about an existing hold, for the event the
 * token names; the hold's own event is checked by the domain), bound to the signed-in account and this device, and
 * unexpired on every route. A token issued with a hold (`holdId`) opens that hold's routes only; new holds need the
 * waiting room's own token.
 */
export async function verifyAdmission(
  tokens: CachedTokenVerifier,
  a: { token: string; accountId: string; deviceId: string; eventId?: string; holdId?: string; now?: number },
): Promise<AdmissionTokenClaims> {
  const eventId = a.holdId !== undefined ? claimedEventId(a.token) : a.eventId;
  if (!eventId) throw new TokenError('TOKEN_MALFORMED');
  return tokens.verify<'admission'>(a.token, {
    kind: 'admission',
    eventId,
    accountId: a.accountId,
    deviceHash: await tokens.deviceHash(a.deviceId, a.accountId),
    ...(a.holdId !== undefined ? { holdId: a.holdId } : {}),
    now: a.now ?? Date.now(),
  });
}
