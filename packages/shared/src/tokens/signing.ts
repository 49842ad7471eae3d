// The signed-token primitives every signed code of the product shares: the HMAC key, the token format
// (`base64url(JSON).base64url(HMAC-SHA256)`, strict base64url), and the error a refused token throws. Below every
// domain that signs something: the queue's tokens (queue/edge.ts: queue and admission claims, the status rule),
// presale access codes (allocations/access-code.ts) and lottery invitations (lottery/invitation.ts). Web Crypto
// only, and no imports at all: the edge worker and the bundle tests (queue/edge.test.ts,
// allocations/access-code.test.ts, lottery/invitation.test.ts) run this file in a bare V8 context. Keep it that way.

/** Web Crypto's SubtleCrypto, typed from the global so this file needs no imports (not even type-only ones). */
type Subtle = typeof globalThis.crypto.subtle;
/** Web Crypto's CryptoKey, typed from the global for the same reason (queue/fairness.ts spells it the same way). */
export type WebCryptoKey = Awaited<ReturnType<Subtle['importKey']>>;

const subtle = (): Subtle => globalThis.crypto.subtle;
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder('utf-8', { fatal: true });
const MAX_TOKEN_LENGTH = 4096;
const B64URL = /^[A-Za-z0-9_-]+$/;

function toBase64Url(bytes: Uint8Array): string {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Strict base64url: no padding, and only the canonical spelling of the bytes (else one token has many spellings). */
function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  if (text.length % 4 === 1) throw new TokenError('TOKEN_MALFORMED');
  const bin = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  if (toBase64Url(out) !== text) throw new TokenError('TOKEN_MALFORMED');
  return out;
}

/**
 * The HMAC key tokens are signed with: a Web Crypto CryptoKey (what an edge has), or one with a synchronous
 * HMAC-SHA256 of the same secret beside it (a Node origin passes its crypto module's, which costs a fraction of
 * Web Crypto's asynchronous call per token). The token format is this file's either way.
 */
export type TokenKey = WebCryptoKey | SyncTokenKey;

/**
 * A key with a synchronous HMAC-SHA256 of the same secret (a Node origin's). `base64Url` (a text's UTF-8 bytes in
 * base64url) and `hmacBase64Url` (the HMAC of a text's UTF-8 bytes, in base64url), when given, write the same
 * characters this file's own encoding writes, natively: signing a token then costs a fraction of the loop's.
 */
export interface SyncTokenKey {
  readonly webKey: WebCryptoKey;
  readonly hmacSync: (data: Uint8Array) => Uint8Array;
  readonly base64Url?: (text: string) => string;
  readonly hmacBase64Url?: (text: string) => string;
}

const isSyncKey = (k: TokenKey): k is SyncTokenKey => typeof (k as { hmacSync?: unknown }).hmacSync === 'function';

async function hmac(key: TokenKey, data: Uint8Array): Promise<Uint8Array> {
  if (isSyncKey(key)) return key.hmacSync(data);
  // The casts are needed where the DOM / WebWorker lib types Web Crypto (the edge, the browser), not under Node's.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
  return new Uint8Array(await subtle().sign('HMAC', key, data as Uint8Array<ArrayBuffer>));
}

async function hmacVerify(key: TokenKey, mac: Uint8Array, data: Uint8Array): Promise<boolean> {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- needed under the DOM / WebWorker lib (see hmac)
  if (!isSyncKey(key)) return subtle().verify('HMAC', key, mac as Uint8Array<ArrayBuffer>, data as Uint8Array<ArrayBuffer>);
  const expected = key.hmacSync(data);
  if (expected.length !== mac.length) return false;
  let diff = 0;
  for (let i = 0; i < mac.length; i++) diff |= (mac[i] as number) ^ (expected[i] as number);
  return diff === 0;
}

/** Stable codes a token check fails with. */
export type TokenErrorCode =
  | 'TOKEN_MALFORMED'
  | 'TOKEN_FORGED'
  | 'TOKEN_EXPIRED'
  | 'TOKEN_WRONG_EVENT'
  | 'TOKEN_WRONG_ACCOUNT'
  | 'TOKEN_WRONG_DEVICE'
  | 'TOKEN_WRONG_KIND'
  | 'TOKEN_WRONG_HOLD';

const TOKEN_ERROR_MESSAGES: Record<TokenErrorCode, string> = {
  TOKEN_MALFORMED: 'the token is not a well-formed token',
  TOKEN_FORGED: 'the token signature is not valid',
  TOKEN_EXPIRED: 'the token has expired',
  TOKEN_WRONG_EVENT: 'the token is for another event',
  TOKEN_WRONG_ACCOUNT: 'the token belongs to another account',
  TOKEN_WRONG_DEVICE: 'the token was issued to another device',
  TOKEN_WRONG_KIND: 'the token is not the kind this route needs',
  TOKEN_WRONG_HOLD: 'the token is for one hold and opens that hold only',
};

/**
 * A token was refused. `code` is stable; `kind` uses the domain's error kinds (`unauthenticated` for a token
 * that is not valid at all, `forbidden` for a valid token presented where it does not belong) so an app can
 * map it the way it maps a DomainError. Defined here, not on DomainError, so this file imports nothing.
 */
export class TokenError extends Error {
  readonly kind: 'unauthenticated' | 'forbidden';
  constructor(
    readonly code: TokenErrorCode,
    message: string = TOKEN_ERROR_MESSAGES[code],
  ) {
    super(message);
    this.name = 'TokenError';
    this.kind = code === 'TOKEN_MALFORMED' || code === 'TOKEN_FORGED' || code === 'TOKEN_EXPIRED' ? 'unauthenticated' : 'forbidden';
  }
}

/** The HMAC-SHA256 key for signing and verifying queue and admission tokens. The secret must be >= 32 characters. */
export async function createTokenKey(secret: string): Promise<WebCryptoKey> {
  if (typeof secret !== 'string' || secret.length < 32) throw new Error('the queue token secret must be at least 32 characters');
  return subtle().importKey('raw', utf8.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
}

/**
 * Signs any JSON value as `base64url(JSON value).base64url(HMAC-SHA256(key, first part))`: the format of queue and
 * admission tokens (queue/edge.ts signToken), presale access codes and lottery invitations.
 */
export async function signPayload(key: TokenKey, value: unknown): Promise<string> {
  if (isSyncKey(key) && key.base64Url && key.hmacBase64Url) {
    const text = key.base64Url(JSON.stringify(value));
    return `${text}.${key.hmacBase64Url(text)}`;
  }
  const payload = toBase64Url(utf8.encode(JSON.stringify(value)));
  const mac = await hmac(key, utf8.encode(payload));
  return `${payload}.${toBase64Url(mac)}`;
}

/**
 * Opens a token made by signPayload: checks its shape (TOKEN_MALFORMED) and signature (TOKEN_FORGED), then
 * parses the payload. The caller checks the claims' own shape. `maxLength`: the longest token opened (a token's
 * 4,096 characters by default; an edge's claims report is longer, see EDGE_REPORT_MAX_LENGTH).
 */
export async function openPayload(key: TokenKey, token: string, maxLength = MAX_TOKEN_LENGTH): Promise<unknown> {
  if (typeof token !== 'string' || token.length > maxLength) throw new TokenError('TOKEN_MALFORMED');
  const parts = token.split('.');
  const [payload, signature] = parts;
  if (parts.length !== 2 || !payload || !signature || !B64URL.test(payload) || !B64URL.test(signature))
    throw new TokenError('TOKEN_MALFORMED');
  let mac: Uint8Array<ArrayBuffer>;
  try {
    mac = fromBase64Url(signature);
  } catch {
    throw new TokenError('TOKEN_MALFORMED');
  }
  if (!(await hmacVerify(key, mac, utf8.encode(payload)))) throw new TokenError('TOKEN_FORGED');
  try {
    return JSON.parse(fromUtf8.decode(fromBase64Url(payload)));
  } catch {
    throw new TokenError('TOKEN_MALFORMED');
  }
}
