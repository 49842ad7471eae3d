import { isIP } from 'node:net';
import type { Db } from '../db/connect.js';
import { DomainError } from '../errors.js';
import { insertAudit } from '../audit/index.js';
import * as repo from './sign-in-throttle.repository.js';

/**
 * How console sign-in is throttled. Failures are counted per e-mail address (known or not, so a lockout tells
 * nobody which addresses have an account) and per client address, in PostgreSQL, so every BFF instance shares them.
 */
export interface SignInThrottleConfig {
  /** Failed sign-ins for one e-mail address within the window that lock it (default 5). */
  maxFailuresPerEmail: number;
  /** Failed sign-ins from one client address (an IPv6 /64) within the window that lock it (default 50). */
  maxFailuresPerIp: number;
  /** The window failures are counted in (default 15 minutes). */
  windowSeconds: number;
  /** How long a first lockout lasts (default 15 minutes); each lockout in a row lasts twice the one before. */
  lockoutSeconds: number;
  /** The longest a lockout lasts (default 24 hours). */
  maxLockoutSeconds: number;
}

export const DEFAULT_SIGN_IN_THROTTLE: SignInThrottleConfig = {
  maxFailuresPerEmail: 5,
  maxFailuresPerIp: 50,
  windowSeconds: 15 * 60,
  lockoutSeconds: 15 * 60,
  maxLockoutSeconds: 24 * 3600,
};

/** A lockout that ended longer ago than this (or than the longest lockout) is forgotten: the next starts short again. */
const LOCKOUT_MEMORY_SECONDS = 24 * 3600;

type Scope = 'email' | 'ip';

/**
 * The key a client address is counted under: an IPv4 address as it is (an IPv4-mapped IPv6 address as its IPv4),
 * an IPv6 address as its /64 (one host or one customer usually has a whole /64), null when there is none.
 */
export function clientAddressKey(ip: string | null | undefined): string | null {
  if (!ip) return null;
  const address = ip.replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped && isIP(mapped[1]!) === 4) return mapped[1]!;
  const version = isIP(address);
  if (version === 4) return address;
  if (version !== 6) return null;
  const [head = '', tail] = address.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])));
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  const all = [...h, ...Array<string>(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t];
  return `${all
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

const since = (a: Date, b: Date | undefined) => (b && b > a ? b : a);

function lockoutLength(cfg: SignInThrottleConfig, lockouts: number): number {
  return Math.min(cfg.maxLockoutSeconds, cfg.lockoutSeconds * 2 ** Math.min(lockouts - 1, 30));
}

function throttled(scope: Scope, retryAfterSeconds: number): DomainError {
  const minutes = Math.ceil(retryAfterSeconds / 60);
  const wait = minutes >= 120 ? `${Math.ceil(minutes / 60)} hours` : minutes === 1 ? '1 minute' : `${minutes} minutes`;
  const who = scope === 'email' ? 'for this e-mail address' : 'from your network address';
  return new DomainError('throttled', 'SIGN_IN_THROTTLED', `too many failed sign-ins ${who}; try again in ${wait}`, {
    field: scope === 'email' ? 'email' : 'password',
    scope,
    retryAfterSeconds,
  });
}

/**
 * Counts a sign-in attempt before its password is checked, or refuses it. Under an advisory lock per e-mail and per
 * client address: while either is locked out, or when it already has its fill of failures in the window (which
 * starts a lockout, audited `console_user.sign_in_locked`), throws SIGN_IN_THROTTLED (kind `throttled`, with
 * `retryAfterSeconds`) and the caller checks no password. Otherwise records the attempt as a failure, which
 * `signInSucceeded` removes when the password is right. Failures count from the end of the last lockout, so after
 * one the next lockout comes after as many failures again, and lasts twice as long.
 */
export async function reserveSignInAttempt(
  db: Db,
  who: { email: string; ip: string | null },
  now: Date,
  cfg: SignInThrottleConfig = DEFAULT_SIGN_IN_THROTTLE,
): Promise<void> {
  const refusal = await db.transaction().execute(async (trx) => {
    const scopes: { scope: Scope; key: string }[] = [
      { scope: 'email', key: who.email },
      ...(who.ip ? [{ scope: 'ip' as const, key: who.ip }] : []),
    ];
    await repo.lockThrottleKeys(
      trx,
      scopes.map((s) => `${s.scope}:${s.key}`),
    );
    const lockouts = await repo.findLockouts(trx, scopes);
    const of = (scope: Scope) => lockouts.find((l) => l.scope === scope);

    const active = lockouts.filter((l) => l.locked_until > now);
    if (active.length > 0) {
      const longest = active.reduce((a, b) => (b.locked_until > a.locked_until ? b : a));
      return throttled(longest.scope, Math.ceil((longest.locked_until.getTime() - now.getTime()) / 1000));
    }

    const windowStart = new Date(now.getTime() - cfg.windowSeconds * 1000);
    const full: Scope[] = [];
    if ((await repo.countFailures(trx, { email: who.email }, since(windowStart, of('email')?.locked_until))) >= cfg.maxFailuresPerEmail)
      full.push('email');
    if (who.ip && (await repo.countFailures(trx, { ip: who.ip }, since(windowStart, of('ip')?.locked_until))) >= cfg.maxFailuresPerIp)
      full.push('ip');

    if (full.length > 0) {
      let refusal: DomainError | undefined;
      for (const scope of full) {
        const key = scope === 'email' ? who.email : who.ip!;
        const last = of(scope);
        const memory = Math.max(LOCKOUT_MEMORY_SECONDS, cfg.maxLockoutSeconds) * 1000;
        const lockoutsInARow = last && now.getTime() - last.locked_until.getTime() < memory ? last.lockouts + 1 : 1;
        const seconds = lockoutLength(cfg, lockoutsInARow);
        const lockedUntil = new Date(now.getTime() + seconds * 1000);
        await repo.upsertLockout(trx, { scope, key, lockedAt: now, lockedUntil, lockouts: lockoutsInARow });
        await insertAudit(trx, {
          actor: `sign-in:${who.ip ?? 'unknown address'}`,
          action: 'console_user.sign_in_locked',
          details: {
            scope,
            email: who.email,
            ip: who.ip,
            failures: scope === 'email' ? cfg.maxFailuresPerEmail : cfg.maxFailuresPerIp,
            windowSeconds: cfg.windowSeconds,
            lockoutsInARow,
            lockedUntil: lockedUntil.toISOString(),
            retryAfterSeconds: seconds,
          },
        });
        if (!refusal || seconds > (refusal.details.retryAfterSeconds as number)) refusal = throttled(scope, seconds);
      }
      return refusal!;
    }

    await repo.insertFailure(trx, { email: who.email, ip: who.ip, at: now });
    // Old rows count for nothing: a few go with every attempt, so the tables stay small without a sweeper.
    const forgetBefore = new Date(now.getTime() - Math.max(cfg.windowSeconds, 3600) * 1000);
    await repo.purgeOld(trx, forgetBefore, new Date(now.getTime() - Math.max(LOCKOUT_MEMORY_SECONDS, cfg.maxLockoutSeconds) * 1000));
    return null;
  });
  if (refusal) throw refusal;
}

/** The password of `email` was right: its failures and lockout history are forgotten (its client address's stay). */
export async function signInSucceeded(db: Db, email: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await repo.lockThrottleKeys(trx, [`email:${email}`]);
    await repo.clearEmail(trx, email);
  });
}
