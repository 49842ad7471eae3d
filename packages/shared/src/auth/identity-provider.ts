import { createRemoteJWKSet, errors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { decodeBase64UrlStrict } from '../encoding.js';
import { DomainError } from '../errors.js';
import { ACCOUNT_ID_PATTERN, type FanIdentity } from './account-token.js';
import { displayNameFromClaims } from './display-name.js';

/** The asymmetric algorithms a promoter's identity provider may sign fans' tokens with. HS256 and `none` never. */
export const IDENTITY_PROVIDER_ALGORITHMS = ['RS256', 'ES256', 'EdDSA', 'Ed25519'] as const;

export interface IdentityProviderOptions {
  /** The provider's JSON Web Key Set (e.g. Keycloak's `<issuer>/protocol/openid-connect/certs`). */
  jwksUrl: string;
  /** The `iss` every token must carry, exactly. */
  issuer: string;
  /** The `aud` every token must carry (the identifier of this API at the provider). */
  audience: string;
  /** At most one fetch of the key set per this many seconds for a `kid` it does not know (default 30). */
  cooldownSeconds?: number;
  /** A fetched key set is used this long before it is fetched again (default 600). */
  cacheMaxAgeSeconds?: number;
  /** How long a key set fetch may take (default 5000 ms). */
  timeoutMs?: number;
  /** Leeway for `exp` and `nbf` against clock skew (default 30 s). */
  clockToleranceSeconds?: number;
  /** Verified tokens kept (default 100,000). */
  cacheSize?: number;
  /** A key set to use instead of fetching jwksUrl (tests). */
  keySet?: JWTVerifyGetKey;
}

const invalid = (message = 'the account token is not valid') =>
  new DomainError('unauthenticated', 'INVALID_TOKEN', message, { field: 'authorization' });
const expired = () => new DomainError('unauthenticated', 'TOKEN_EXPIRED', 'the account token has expired', { field: 'authorization' });

/**
 * Fans' account tokens from the promoter's identity provider (OIDC: Keycloak, Auth0, Cognito, ...): asymmetric JWTs
 * (RS256, ES256, EdDSA) checked against the provider's key set with jose's remote key set, which caches the keys,
 * fetches a key set again for a `kid` it does not know at most once per cooldown, and so follows key rotation
 * without a restart. The issuer and audience must match; the account id is `sub`. A token that verified is kept
 * (bounded), like the development tokens: a fan polling with the same token pays one signature check and no key
 * fetch; its expiry is checked on every request. Its `name` claim, when it has one, is the fan's display name (kept
 * with the account, for support). A provider that cannot be reached is 503 IDENTITY_PROVIDER_UNAVAILABLE with
 * Retry-After, never a 401 that would sign fans out.
 */
export class IdentityProviderTokens implements FanIdentity {
  private readonly keys: JWTVerifyGetKey;
  private readonly verified = new Map<string, { sub: string; exp: number; name: string | null }>();
  private readonly cacheSize: number;

  constructor(
    private readonly opts: IdentityProviderOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.keys =
      opts.keySet ??
      createRemoteJWKSet(new URL(opts.jwksUrl), {
        cooldownDuration: (opts.cooldownSeconds ?? 30) * 1000,
        cacheMaxAge: (opts.cacheMaxAgeSeconds ?? 600) * 1000,
        timeoutDuration: opts.timeoutMs ?? 5000,
      });
    this.cacheSize = opts.cacheSize ?? 100_000;
  }

  async verify(token: string): Promise<string> {
    const hit = this.verified.get(token);
    if (hit) {
      if (hit.exp * 1000 <= this.now()) throw expired();
      return hit.sub;
    }
    // Compact JWS, each part canonical base64url: jose alone would also take a padded or otherwise re-spelt token.
    const parts = token.length <= 8192 ? token.split('.') : [];
    if (parts.length !== 3 || parts.some((p) => p === '' || decodeBase64UrlStrict(p) === null)) throw invalid();
    let payload;
    try {
      ({ payload } = await jwtVerify(token, this.keys, {
        issuer: this.opts.issuer,
        audience: this.opts.audience,
        algorithms: [...IDENTITY_PROVIDER_ALGORITHMS],
        requiredClaims: ['sub', 'exp'],
        clockTolerance: this.opts.clockToleranceSeconds ?? 30,
        currentDate: new Date(this.now()),
      }));
    } catch (e) {
      throw refusal(e);
    }
    if (typeof payload.sub !== 'string' || !ACCOUNT_ID_PATTERN.test(payload.sub))
      throw invalid("the account token's subject is not an account id this platform takes");
    const exp = payload.exp!;
    if (this.verified.size >= this.cacheSize) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, { sub: payload.sub, exp, name: displayNameFromClaims(payload) });
    return payload.sub;
  }

  /** The display name (the `name` claim) of a token that verified, or null (none given, or not verified here). */
  displayName(token: string): string | null {
    return this.verified.get(token)?.name ?? null;
  }
}

function refusal(e: unknown): DomainError {
  if (e instanceof errors.JWTExpired) return expired();
  // The key set could not be had (timeout, network, not 200, not a key set): the provider's trouble, not the fan's.
  const fetchFailed =
    e instanceof errors.JWKSTimeout ||
    e instanceof errors.JWKSInvalid ||
    (e instanceof errors.JOSEError && e.code === 'ERR_JOSE_GENERIC' && /JSON Web Key Set/.test(e.message)) ||
    (e instanceof TypeError && /fetch/i.test(e.message));
  if (fetchFailed)
    return new DomainError(
      'unavailable',
      'IDENTITY_PROVIDER_UNAVAILABLE',
      "the identity provider's keys could not be fetched; retry shortly",
      { retryAfterSeconds: 5 },
    );
  if (e instanceof errors.JOSEAlgNotAllowed) return invalid("the account token's algorithm is not accepted (RS256, ES256 or EdDSA only)");
  if (e instanceof errors.JWTClaimValidationFailed) return invalid(`the account token's ${e.claim} claim is not accepted`);
  return invalid();
}
