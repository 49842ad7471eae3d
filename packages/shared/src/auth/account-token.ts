import { createHmac, timingSafeEqual } from 'node:crypto';
import { DomainError } from '../errors.js';
import { ACCOUNT_ID_PATTERN, ACCOUNT_TOKEN_AUDIENCE as AUDIENCE, ACCOUNT_TOKEN_ISSUER as ISSUER } from './edge.js';

export { ACCOUNT_ID_PATTERN };
const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

const invalidToken = () => new DomainError('unauthenticated', 'INVALID_TOKEN', 'the account token is not valid', { field: 'authorization' });

/**
 * Signs and verifies account tokens: standard HS256 JWTs (RFC 7519), with node:crypto's HMAC. Every request of
 * a signed-in fan verifies one, so it is done synchronously here (Web Crypto's asynchronous HMAC cost several
 * times as much per call under load); any JWT library can verify these tokens with the same secret.
 */
export class AccountTokens {
  private readonly key: Buffer;
  /** Verified tokens (a fan sends the same one on every request): signature checked once, expiry every time. */
  private readonly verified = new Map<string, { sub: string; exp: number }>();
  constructor(
    secret: string,
    private readonly ttlSeconds = 12 * 3600,
  ) {
    if (secret.length < 32) throw new Error('account token secret must be at least 32 characters');
    this.key = Buffer.from(secret, 'utf8');
  }

  private sign(input: string): Buffer {
    return createHmac('sha256', this.key).update(input).digest();
  }

  async issue(accountId: string): Promise<{ token: string; expiresAt: Date }> {
    if (!ACCOUNT_ID_PATTERN.test(accountId)) throw new DomainError('invalid', 'INVALID_ACCOUNT_ID', 'account ids are 1-128 of A-Z a-z 0-9 . _ @ : -', { field: 'accountId' });
    const now = Math.floor(Date.now() / 1000);
    const payload = Buffer.from(JSON.stringify({ sub: accountId, iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + this.ttlSeconds })).toString('base64url');
    const input = `${HEADER}.${payload}`;
    return { token: `${input}.${this.sign(input).toString('base64url')}`, expiresAt: new Date((now + this.ttlSeconds) * 1000) };
  }

  /** The account id, or an `unauthenticated` error (TOKEN_EXPIRED or INVALID_TOKEN). */
  async verify(token: string): Promise<string> {
    return this.verifySync(token);
  }

  verifySync(token: string, nowMs = Date.now()): string {
    const hit = this.verified.get(token);
    if (hit) {
      if (hit.exp * 1000 <= nowMs) throw new DomainError('unauthenticated', 'TOKEN_EXPIRED', 'the account token has expired', { field: 'authorization' });
      return hit.sub;
    }
    const parts = token.split('.');
    if (parts.length !== 3) throw invalidToken();
    const [header, payload, signature] = parts as [string, string, string];
    const expected = this.sign(`${header}.${payload}`);
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidToken();
    let h: { alg?: unknown };
    let c: { sub?: unknown; iss?: unknown; aud?: unknown; exp?: unknown };
    try {
      h = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
      c = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalidToken();
    }
    if (h.alg !== 'HS256' || c.iss !== ISSUER || c.aud !== AUDIENCE) throw invalidToken();
    if (typeof c.sub !== 'string' || !ACCOUNT_ID_PATTERN.test(c.sub)) throw invalidToken();
    if (typeof c.exp !== 'number') throw invalidToken();
    if (c.exp * 1000 <= nowMs)
      throw new DomainError('unauthenticated', 'TOKEN_EXPIRED', 'the account token has expired', { field: 'authorization' });
    if (this.verified.size >= 100_000) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, { sub: c.sub, exp: c.exp });
    return c.sub;
  }
}
