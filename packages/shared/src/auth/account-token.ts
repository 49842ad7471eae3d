import { SignJWT, errors, jwtVerify } from 'jose';
import { DomainError } from '../errors.js';

/** Account ids are opaque strings chosen by the identity provider (the dev sign-in takes one as given). */
export const ACCOUNT_ID_PATTERN = /^[A-Za-z0-9._@:-]{1,128}$/;

const ISSUER = 'onsale';
const AUDIENCE = 'onsale:account';

/**
 * Signs and verifies account tokens (HS256 JWT via jose, Web Crypto only, so an edge can verify them too).
 */
export class AccountTokens {
  private readonly key: Uint8Array;
  constructor(secret: string, private readonly ttlSeconds = 12 * 3600) {
    if (secret.length < 32) throw new Error('account token secret must be at least 32 characters');
    this.key = new TextEncoder().encode(secret);
  }

  async issue(accountId: string): Promise<{ token: string; expiresAt: Date }> {
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(accountId)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(now)
      .setExpirationTime(now + this.ttlSeconds)
      .sign(this.key);
    return { token, expiresAt: new Date((now + this.ttlSeconds) * 1000) };
  }

  /** The account id, or an `unauthenticated` error (TOKEN_EXPIRED or INVALID_TOKEN). */
  async verify(token: string): Promise<string> {
    try {
      const { payload } = await jwtVerify(token, this.key, { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'] });
      if (typeof payload.sub !== 'string' || !ACCOUNT_ID_PATTERN.test(payload.sub)) throw new errors.JWTInvalid('bad sub');
      return payload.sub;
    } catch (e) {
      if (e instanceof errors.JWTExpired)
        throw new DomainError('unauthenticated', 'TOKEN_EXPIRED', 'the account token has expired', { field: 'authorization' });
      throw new DomainError('unauthenticated', 'INVALID_TOKEN', 'the account token is not valid', { field: 'authorization' });
    }
  }
}
