// Presale access codes: signed like queue tokens (the format and key of tokens/signing.ts), so an edge can check one
// without the origin. Web Crypto only, through tokens/signing.ts; keep this file free of node: imports.
import { openPayload, signPayload, TokenError, type TokenKey } from '../tokens/signing.js';

/** What a code grants: a place in one presale tier's queue, for one account (bound now, or at first use). */
export interface AccessCodeClaims {
  kind: 'access';
  eventId: string;
  tier: string;
  /** Unique per code: the origin records which account used it (a code is single-account). */
  codeId: string;
  /** Bound at issue: only this account may use the code. Absent: the first account to use it. */
  accountId?: string;
  /** Seconds since the epoch. */
  exp: number;
}

export type AccessCodeProblem =
  | 'ACCESS_CODE_MALFORMED'
  | 'ACCESS_CODE_FORGED'
  | 'ACCESS_CODE_EXPIRED'
  | 'ACCESS_CODE_WRONG_EVENT'
  | 'ACCESS_CODE_WRONG_TIER'
  | 'ACCESS_CODE_WRONG_ACCOUNT';

export const ACCESS_CODE_MESSAGES: Record<AccessCodeProblem, string> = {
  ACCESS_CODE_MALFORMED: 'the access code is not a well-formed code',
  ACCESS_CODE_FORGED: 'the access code is not genuine',
  ACCESS_CODE_EXPIRED: 'the access code has expired',
  ACCESS_CODE_WRONG_EVENT: 'the access code is for another event',
  ACCESS_CODE_WRONG_TIER: 'the access code is for another presale',
  ACCESS_CODE_WRONG_ACCOUNT: 'the access code was issued to another account',
};

const text = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 256;

export async function signAccessCode(key: TokenKey, claims: AccessCodeClaims): Promise<string> {
  const { kind, eventId, tier, codeId, accountId, exp } = claims;
  return signPayload(key, { kind, eventId, tier, codeId, ...(accountId !== undefined ? { accountId } : {}), exp });
}

/** Checks a code's signature and binding: the claims, or the problem. `now`: ms since the epoch. */
export async function checkAccessCode(
  key: TokenKey,
  code: string,
  expected: { eventId: string; tier: string; accountId: string; now: number },
): Promise<{ ok: true; claims: AccessCodeClaims } | { ok: false; problem: AccessCodeProblem }> {
  let raw: unknown;
  try {
    raw = await openPayload(key, code);
  } catch (e) {
    if (e instanceof TokenError) return { ok: false, problem: e.code === 'TOKEN_FORGED' ? 'ACCESS_CODE_FORGED' : 'ACCESS_CODE_MALFORMED' };
    throw e;
  }
  const o = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  if (
    o.kind !== 'access' ||
    !text(o.eventId) ||
    !text(o.tier) ||
    !text(o.codeId) ||
    (o.accountId !== undefined && !text(o.accountId)) ||
    typeof o.exp !== 'number'
  )
    return { ok: false, problem: 'ACCESS_CODE_MALFORMED' };
  const claims = o as unknown as AccessCodeClaims;
  if (claims.eventId !== expected.eventId) return { ok: false, problem: 'ACCESS_CODE_WRONG_EVENT' };
  if (claims.tier !== expected.tier) return { ok: false, problem: 'ACCESS_CODE_WRONG_TIER' };
  if (claims.accountId !== undefined && claims.accountId !== expected.accountId) return { ok: false, problem: 'ACCESS_CODE_WRONG_ACCOUNT' };
  if (expected.now >= claims.exp * 1000) return { ok: false, problem: 'ACCESS_CODE_EXPIRED' };
  return { ok: true, claims };
}
