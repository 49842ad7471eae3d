import { createHmac, timingSafeEqual } from 'node:crypto';
import { decodeBase64UrlStrict } from '../encoding.js';
import { DomainError, type ErrorCode } from '../errors.js';

/**
 * What a claim token grants: an OFFER (seats reserved for this fan until `exp`) or a share of a BROADCAST
 * availability event's pool (first to claim wins). Bound to the account; times are seconds since the epoch.
 */
export type ClaimClaims =
  | { kind: 'offer'; offerId: string; accountId: string; exp: number }
  | { kind: 'broadcast'; availabilityId: number; accountId: string; exp: number };

const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64url');

/**
 * Signs and verifies claim tokens (`base64url(JSON).base64url(HMAC-SHA256)`). Tokens are derived, not stored:
 * the same offer always yields the same token, so a notification can be re-rendered for any channel.
 */
export class ClaimTokens {
  private readonly key: Buffer;
  constructor(secret: string) {
    // A key of its own, derived from the configured secret, so a claim token can never pass as another token.
    this.key = createHmac('sha256', secret).update('onsale waitlist claim v1').digest();
  }

  sign(c: ClaimClaims): string {
    const body =
      c.kind === 'offer' ? { k: 'o', o: c.offerId, a: c.accountId, e: c.exp } : { k: 'b', v: c.availabilityId, a: c.accountId, e: c.exp };
    const payload = b64(JSON.stringify(body));
    return `${payload}.${b64(createHmac('sha256', this.key).update(payload).digest())}`;
  }

  /** The token's claims, or CLAIM_TOKEN_INVALID / CLAIM_TOKEN_FORGED / CLAIM_TOKEN_WRONG_ACCOUNT / CLAIM_TOKEN_EXPIRED. */
  verify(token: unknown, accountId: string, now = Date.now()): ClaimClaims {
    const bad = (code: ErrorCode, message: string, kind: 'invalid' | 'forbidden' | 'gone' = 'invalid') =>
      new DomainError(kind, code, message, { field: 'claimToken' });
    if (typeof token !== 'string' || token.length > 1024) throw bad('CLAIM_TOKEN_INVALID', 'the claim token is malformed');
    const [payload, mac, extra] = token.split('.');
    if (!payload || !mac || extra !== undefined) throw bad('CLAIM_TOKEN_INVALID', 'the claim token is malformed');
    const got = decodeBase64UrlStrict(mac);
    const raw = decodeBase64UrlStrict(payload);
    if (!got || !raw) throw bad('CLAIM_TOKEN_INVALID', 'the claim token is malformed');
    const want = createHmac('sha256', this.key).update(payload).digest();
    if (got.length !== want.length || !timingSafeEqual(got, want))
      throw bad('CLAIM_TOKEN_FORGED', 'the claim token was not issued by this service');
    let body: { k?: string; o?: string; v?: number; a?: string; e?: number };
    try {
      body = JSON.parse(raw.toString('utf8')) as typeof body;
    } catch {
      throw bad('CLAIM_TOKEN_INVALID', 'the claim token is malformed');
    }
    if (typeof body.a !== 'string' || typeof body.e !== 'number') throw bad('CLAIM_TOKEN_INVALID', 'the claim token is malformed');
    if (body.a !== accountId) throw bad('CLAIM_TOKEN_WRONG_ACCOUNT', 'this claim token belongs to another account', 'forbidden');
    if (now >= body.e * 1000) throw bad('CLAIM_TOKEN_EXPIRED', 'this offer has expired', 'gone');
    if (body.k === 'o' && typeof body.o === 'string') return { kind: 'offer', offerId: body.o, accountId: body.a, exp: body.e };
    if (body.k === 'b' && typeof body.v === 'number') return { kind: 'broadcast', availabilityId: body.v, accountId: body.a, exp: body.e };
    throw bad('CLAIM_TOKEN_INVALID', 'the claim token is malformed');
  }
}
