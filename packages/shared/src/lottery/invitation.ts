// Lottery invitation codes: what an edge needs to check one without the origin. Signed in the queue tokens' format
// with their key (signPayload / openPayload, tokens/signing.ts); Web Crypto only: keep this file free of node: imports.
import { openPayload, signPayload, TokenError, type TokenKey } from '../tokens/signing.js';

/** A winner's invitation: bound to the event, the account and the cohort's purchase window. Times are seconds since the epoch. */
export interface InvitationClaims {
  kind: 'invitation';
  eventId: string;
  accountId: string;
  /** 1-based place in the draw order; becomes the admission token's position. */
  rank: number;
  /** 0-based cohort. */
  cohort: number;
  /** The purchase window opens (not before). */
  nbf: number;
  /** The purchase window closes (not at or after). */
  exp: number;
}

export type InvitationErrorCode =
  | 'INVITATION_MALFORMED'
  | 'INVITATION_FORGED'
  | 'INVITATION_WRONG_EVENT'
  | 'INVITATION_WRONG_ACCOUNT'
  | 'INVITATION_NOT_YET_VALID'
  | 'INVITATION_EXPIRED';

const MESSAGES: Record<InvitationErrorCode, string> = {
  INVITATION_MALFORMED: 'the invitation code is not a well-formed code',
  INVITATION_FORGED: 'the invitation code signature is not valid',
  INVITATION_WRONG_EVENT: 'the invitation code is for another event',
  INVITATION_WRONG_ACCOUNT: 'the invitation code belongs to another account',
  INVITATION_NOT_YET_VALID: "the invitation's purchase window has not opened yet",
  INVITATION_EXPIRED: "the invitation's purchase window has closed",
};

/**
 * An invitation code was refused. `kind` uses the domain's error kinds (so an app maps it like a DomainError):
 * malformed is `invalid`, forged or someone else's `forbidden`, too early `conflict`, too late `gone`.
 */
export class InvitationError extends Error {
  readonly kind: 'invalid' | 'forbidden' | 'conflict' | 'gone';
  constructor(
    readonly code: InvitationErrorCode,
    message: string = MESSAGES[code],
  ) {
    super(message);
    this.name = 'InvitationError';
    this.kind =
      code === 'INVITATION_MALFORMED'
        ? 'invalid'
        : code === 'INVITATION_NOT_YET_VALID'
          ? 'conflict'
          : code === 'INVITATION_EXPIRED'
            ? 'gone'
            : 'forbidden';
  }
}

const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 256;
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** The claims in canonical key order, or null when they are not a well-formed invitation. */
function wellFormed(c: unknown): InvitationClaims | null {
  if (typeof c !== 'object' || c === null) return null;
  const o = c as Record<string, unknown>;
  if (o.kind !== 'invitation' || !isText(o.eventId) || !isText(o.accountId)) return null;
  if (!isCount(o.rank) || o.rank < 1 || !isCount(o.cohort) || !isCount(o.nbf) || !isCount(o.exp) || o.exp <= o.nbf) return null;
  return { kind: 'invitation', eventId: o.eventId, accountId: o.accountId, rank: o.rank, cohort: o.cohort, nbf: o.nbf, exp: o.exp };
}

/**
 * Signs an invitation as `base64url(JSON claims).base64url(HMAC-SHA256(key, first part))` (edge.ts's format) with
 * the queue token key, which edges have. Deterministic: the same winner always gets the same code. Its `kind`
 * keeps it from ever passing as a queue or admission token, and those from passing as an invitation.
 */
export async function signInvitation(key: TokenKey, claims: InvitationClaims): Promise<string> {
  const canonical = wellFormed(claims);
  if (!canonical) throw new InvitationError('INVITATION_MALFORMED', 'refusing to sign malformed invitation claims');
  return signPayload(key, canonical);
}

/**
 * Verifies an invitation code and returns its claims, or throws an InvitationError. In order: shape (MALFORMED),
 * signature (FORGED; the payload is parsed only after the signature holds), event (WRONG_EVENT), account
 * (WRONG_ACCOUNT), then the window: before it NOT_YET_VALID, at or after its end EXPIRED. `now`: ms since the epoch.
 */
export async function verifyInvitation(
  key: TokenKey,
  code: string,
  expected: { eventId: string; accountId: string; now?: number },
): Promise<InvitationClaims> {
  let raw: unknown;
  try {
    raw = await openPayload(key, code);
  } catch (e) {
    if (e instanceof TokenError) throw new InvitationError(e.code === 'TOKEN_FORGED' ? 'INVITATION_FORGED' : 'INVITATION_MALFORMED');
    throw e;
  }
  const claims = wellFormed(raw);
  if (!claims) throw new InvitationError('INVITATION_MALFORMED');
  if (claims.eventId !== expected.eventId) throw new InvitationError('INVITATION_WRONG_EVENT');
  if (claims.accountId !== expected.accountId) throw new InvitationError('INVITATION_WRONG_ACCOUNT');
  const now = expected.now ?? Date.now();
  if (now < claims.nbf * 1000) throw new InvitationError('INVITATION_NOT_YET_VALID');
  if (now >= claims.exp * 1000) throw new InvitationError('INVITATION_EXPIRED');
  return claims;
}

/** The claims of a code without checking it (for a refusal's details only, after verifyInvitation has run). */
export function peekInvitation(code: string): InvitationClaims | null {
  try {
    const payload = code.split('.')[0] ?? '';
    const bin = atob(payload.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (payload.length % 4)) % 4));
    return wellFormed(JSON.parse(new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)))));
  } catch {
    return null;
  }
}
