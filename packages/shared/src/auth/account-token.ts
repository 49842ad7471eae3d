import { createHmac, timingSafeEqual } from 'node:crypto';
import { decodeBase64UrlStrict } from '../encoding.js';
import { DomainError } from '../errors.js';
import { TokenMap } from '../token-map.js';
import { ACCOUNT_ID_PATTERN, ACCOUNT_TOKEN_AUDIENCE as AUDIENCE, ACCOUNT_TOKEN_ISSUER as ISSUER } from './edge.js';

export { ACCOUNT_ID_PATTERN };

/** What the store API asks of fan identity: the account id of a token, or an `unauthenticated` DomainError. */
export interface FanIdentity {
  verify(token: string): Promise<string>;
  /** The fan's display name carried by a token `verify` accepted (the identity provider's `name` claim), or null. */
  displayName?(token: string): string | null;
}
const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

const invalidToken = () =>
  new DomainError('unauthenticated', 'INVALID_TOKEN', 'the account token is not valid', { field: 'authorization' });

/**
 * Signs and verifies development account tokens: standard HS256 JWTs (RFC 7519) on the install's own AUTH_SECRET,
 * with node:crypto's HMAC. Every request of a signed-in fan verifies one, so it is done synchronously here (Web
 * Crypto's asynchronous HMAC cost several times as much per call under load). Only the header this class writes is
 * accepted (so `alg: none` and any other algorithm are refused), and the signature's base64url must be canonical.
 */
export class AccountTokens implements FanIdentity {
  private readonly key: Buffer;
  /** Verified tokens (a fan sends the same one on every request): signature checked once, expiry every time. */
  private readonly verified = new TokenMap<{ sub: string; exp: number }>(100_000);
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
    if (!ACCOUNT_ID_PATTERN.test(accountId))
      throw new DomainError('invalid', 'INVALID_ACCOUNT_ID', 'account ids are 1-128 of A-Z a-z 0-9 . _ @ : | + -', { field: 'accountId' });
    const now = Math.floor(Date.now() / 1000);
    const payload = Buffer.from(
      JSON.stringify({ sub: accountId, iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + this.ttlSeconds }),
    ).toString('base64url');
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
      if (hit.exp * 1000 <= nowMs)
        throw new DomainError('unauthenticated', 'TOKEN_EXPIRED', 'the account token has expired', { field: 'authorization' });
      return hit.sub;
    }
    if (token.length > 4096) throw invalidToken();
    const parts = token.split('.');
    if (parts.length !== 3) throw invalidToken();
    const [header, payload, signature] = parts as [string, string, string];
    // The one header this class signs: no other algorithm (none, RS256 with a confused key) gets near the HMAC.
    if (header !== HEADER) throw invalidToken();
    const given = decodeBase64UrlStrict(signature);
    const body = decodeBase64UrlStrict(payload);
    if (!given || !body) throw invalidToken();
    const expected = this.sign(`${header}.${payload}`);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidToken();
    let c: { sub?: unknown; iss?: unknown; aud?: unknown; exp?: unknown };
    try {
      c = JSON.parse(body.toString('utf8')) as typeof c;
    } catch {
      throw invalidToken();
    }
    if (typeof c !== 'object' || c === null || c.iss !== ISSUER || c.aud !== AUDIENCE) throw invalidToken();
    if (typeof c.sub !== 'string' || !ACCOUNT_ID_PATTERN.test(c.sub)) throw invalidToken();
    if (typeof c.exp !== 'number') throw invalidToken();
    if (c.exp * 1000 <= nowMs)
      throw new DomainError('unauthenticated', 'TOKEN_EXPIRED', 'the account token has expired', { field: 'authorization' });
    this.verified.set(token, { sub: c.sub, exp: c.exp });
    return c.sub;
  }
}
