// What an edge worker runs to identify the fan behind a request, as the store API's auth hook does: the
// `Authorization: Bearer <account token>` header, an HS256 JWT of the install's AUTH_SECRET. Web Crypto only; the
// one import is ../errors.js, which imports nothing.
import { DomainError } from '../errors.js';

/**
 * Account ids are opaque strings chosen by the identity provider (a token's `sub`; the dev sign-in takes one as
 * given): Keycloak and Cognito use UUIDs, Auth0 `provider|id`.
 */
export const ACCOUNT_ID_PATTERN = /^[A-Za-z0-9._@:|+-]{1,128}$/;
/** The `iss` and `aud` of the account tokens this install signs. */
export const ACCOUNT_TOKEN_ISSUER = 'onsale';
export const ACCOUNT_TOKEN_AUDIENCE = 'onsale:account';

const invalidToken = () =>
  new DomainError('unauthenticated', 'INVALID_TOKEN', 'the account token is not valid', { field: 'authorization' });
const expiredToken = () => new DomainError('unauthenticated', 'TOKEN_EXPIRED', 'the account token has expired', { field: 'authorization' });

/**
 * The account token of an `Authorization` header value: MISSING_TOKEN without one, INVALID_TOKEN when it is not
 * `Bearer <token>` (the store API's words and codes).
 */
export function bearerToken(header: string | null | undefined): string {
  if (!header)
    throw new DomainError('unauthenticated', 'MISSING_TOKEN', 'Authorization: Bearer <account token> is required', {
      field: 'authorization',
    });
  const m = /^Bearer\s+(\S+)$/i.exec(header);
  if (!m?.[1])
    throw new DomainError('unauthenticated', 'INVALID_TOKEN', 'Authorization must be "Bearer <account token>"', { field: 'authorization' });
  return m[1];
}

const B64URL = /^[A-Za-z0-9_-]*$/;
function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  const bin = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/**
 * Verifies this install's account tokens with Web Crypto (HS256, the same checks as AccountTokens.verifySync):
 * signature, `alg`, issuer, audience, subject, expiry. A verified token's subject and expiry are kept (bounded), so
 * a fan who polls with the same token pays for the signature once; the expiry is checked on every call.
 */
export class WebAccountTokenVerifier {
  private readonly key: Promise<Awaited<ReturnType<typeof globalThis.crypto.subtle.importKey>>>;
  private readonly verified = new Map<string, { sub: string; exp: number }>();
  private readonly utf8 = new TextEncoder();

  constructor(
    secret: string,
    private readonly maxCached = 100_000,
  ) {
    if (typeof secret !== 'string' || secret.length < 32) throw new Error('the account token secret must be at least 32 characters');
    this.key = globalThis.crypto.subtle.importKey('raw', this.utf8.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  }

  /**
   * verify without a promise for a token verified before: its account id, or TOKEN_EXPIRED thrown; undefined for a
   * token this verifier has not seen (verify it).
   */
  known(token: string, nowMs = Date.now()): string | undefined {
    const hit = this.verified.get(token);
    if (!hit) return undefined;
    if (hit.exp * 1000 <= nowMs) throw expiredToken();
    return hit.sub;
  }

  /** The account id, or an `unauthenticated` DomainError (TOKEN_EXPIRED or INVALID_TOKEN). `nowMs`: Date.now(). */
  async verify(token: string, nowMs = Date.now()): Promise<string> {
    const known = this.known(token, nowMs);
    if (known !== undefined) return known;
    const parts = token.split('.');
    if (parts.length !== 3 || token.length > 4096) throw invalidToken();
    const [header, payload, signature] = parts as [string, string, string];
    if (!B64URL.test(header) || !B64URL.test(payload) || !B64URL.test(signature) || signature.length === 0) throw invalidToken();
    let h: { alg?: unknown };
    let c: { sub?: unknown; iss?: unknown; aud?: unknown; exp?: unknown };
    try {
      const ok = await globalThis.crypto.subtle.verify(
        'HMAC',
        await this.key,
        fromBase64Url(signature),
        this.utf8.encode(`${header}.${payload}`),
      );
      if (!ok) throw invalidToken();
      const text = new TextDecoder('utf-8', { fatal: true });
      h = JSON.parse(text.decode(fromBase64Url(header))) as typeof h;
      c = JSON.parse(text.decode(fromBase64Url(payload))) as typeof c;
    } catch {
      throw invalidToken();
    }
    if (typeof h !== 'object' || h === null || typeof c !== 'object' || c === null) throw invalidToken();
    if (h.alg !== 'HS256' || c.iss !== ACCOUNT_TOKEN_ISSUER || c.aud !== ACCOUNT_TOKEN_AUDIENCE) throw invalidToken();
    if (typeof c.sub !== 'string' || !ACCOUNT_ID_PATTERN.test(c.sub) || typeof c.exp !== 'number') throw invalidToken();
    if (c.exp * 1000 <= nowMs) throw expiredToken();
    if (this.verified.size >= this.maxCached) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, { sub: c.sub, exp: c.exp });
    return c.sub;
  }
}
