import { createHash, randomBytes } from 'node:crypto';
import { DomainError, type ErrorCode } from '../errors.js';
import { TicketSigner } from './signed.js';
import { searchSuffix } from './pow-hash.js';

/**
 * Proof-of-work before joining, for requests the bot scorer finds suspicious. The server issues a signed
 * challenge {nonce, difficulty, exp} bound to the account and the event; the client finds a suffix such that
 * SHA-256(nonce + suffix) (UTF-8 strings concatenated) starts with `difficulty` zero bits, and sends
 * `X-Proof-Of-Work: <challenge token>:<suffix>` with its join. Verification is stateless (signature, binding,
 * expiry, the hash) except for single use: used challenges are remembered until they expire, in this process's
 * memory by default, or in a store every instance shares (UsedChallenges; the store API uses Redis when REDIS_URL
 * is set). A replay on an instance that does not share the memory gains little: the proof is bound to one account
 * and one event, and a join is idempotent per account.
 *
 * Cost: a difficulty of d bits takes 2^d hashes on average (18 bits: about 260,000, a fraction of a second
 * natively, a second or two in a browser) and is checked with one hash.
 */

/** The challenge as a client receives it. `exp` is seconds since the epoch. */
export interface IssuedChallenge {
  token: string;
  nonce: string;
  difficulty: number;
  exp: number;
  expiresAt: string;
  algorithm: 'sha256-leading-zero-bits';
}

export interface ProofOfWorkOptions {
  secret: string;
  /** Leading zero bits the hash must have (1-32). */
  difficulty: number;
  /** How long a challenge stays solvable. */
  ttlSeconds: number;
  now?: () => number;
  /** Used challenges remembered at most in memory (oldest forgotten first; they expire anyway). */
  maxRemembered?: number;
  /** Where used challenges are remembered (default: this process's memory). */
  used?: UsedChallenges;
}

/** Where used challenges are remembered, for single use. */
export interface UsedChallenges {
  /** Marks `key` used until `expiresAtMs`; false when it was already used. */
  use(key: string, expiresAtMs: number, nowMs: number): Promise<boolean>;
}

/** Used challenges in this process's memory, forgotten once expired (or the oldest, past `max`). */
export class MemoryUsedChallenges implements UsedChallenges {
  private readonly used = new Map<string, number>();
  constructor(private readonly max = 1_000_000) {}

  async use(key: string, expiresAtMs: number, nowMs: number): Promise<boolean> {
    // Insertion order is close to expiry order (one TTL for all): forget the expired from the front.
    for (const [k, expMs] of this.used) {
      if (expMs > nowMs) break;
      this.used.delete(k);
    }
    if (this.used.has(key)) return false;
    if (this.used.size >= this.max) {
      const oldest = this.used.keys().next();
      if (!oldest.done) this.used.delete(oldest.value);
    }
    this.used.set(key, expiresAtMs);
    return true;
  }
}

export const POW_HEADER = 'x-proof-of-work';
const SUFFIX = /^[A-Za-z0-9_-]{1,128}$/;

/** Leading zero bits of a digest. */
export function leadingZeroBits(digest: Uint8Array): number {
  let bits = 0;
  for (const byte of digest) {
    if (byte === 0) {
      bits += 8;
      continue;
    }
    return bits + Math.clz32(byte) - 24;
  }
  return bits;
}

/** Whether `suffix` solves `nonce` at `difficulty`. */
export function solves(nonce: string, suffix: string, difficulty: number): boolean {
  return (
    leadingZeroBits(
      createHash('sha256')
        .update(nonce + suffix, 'utf8')
        .digest(),
    ) >= difficulty
  );
}

/**
 * What a client does: tries suffixes 0, 1, 2, ... (base 36) until one solves. For tests and reference clients (the
 * CLI, the rehearsal's bots). An ASCII nonce short enough for one SHA-256 block (the server's 32 hex digits) is
 * searched with the allocation-free one-block hash the fans' page uses (a few times cheaper than node:crypto's per-call
 * hash objects, the same digests); anything else with node:crypto.
 */
export function solveChallenge(nonce: string, difficulty: number, maxTries = 2 ** 30): string {
  // The longest suffix maxTries can reach, in base 36; the one-block hash takes at most 55 bytes.
  const longest = (maxTries - 1).toString(36).length;
  if (Buffer.byteLength(nonce, 'utf8') === nonce.length && nonce.length + longest <= 55) {
    const suffix = searchSuffix(nonce, difficulty, 0, maxTries);
    if (suffix === null) throw new Error(`no solution within ${maxTries} tries`);
    return suffix;
  }
  for (let i = 0; i < maxTries; i++) {
    const suffix = i.toString(36);
    if (solves(nonce, suffix, difficulty)) return suffix;
  }
  throw new Error(`no solution within ${maxTries} tries`);
}

const powError = (
  kind: 'invalid' | 'forbidden' | 'gone' | 'conflict',
  code: ErrorCode,
  message: string,
  extra: Record<string, unknown> = {},
) => new DomainError(kind, code, message, { field: POW_HEADER, ...extra });

/** Issues and verifies proof-of-work challenges (see the module comment). */
export class ProofOfWork {
  private readonly signer: TicketSigner;
  private readonly used: UsedChallenges;
  private readonly now: () => number;

  constructor(private readonly opts: ProofOfWorkOptions) {
    if (!Number.isInteger(opts.difficulty) || opts.difficulty < 1 || opts.difficulty > 32)
      throw new Error('proof-of-work difficulty must be 1-32 bits');
    this.signer = new TicketSigner(opts.secret, 'proof-of-work');
    this.now = opts.now ?? Date.now;
    this.used = opts.used ?? new MemoryUsedChallenges(opts.maxRemembered);
  }

  get difficulty(): number {
    return this.opts.difficulty;
  }

  /** A fresh challenge for this account and event. */
  issue(accountId: string, eventId: string): IssuedChallenge {
    const nonce = randomBytes(16).toString('hex');
    const exp = Math.floor(this.now() / 1000) + this.opts.ttlSeconds;
    const token = this.signer.sign({ k: 'pow', n: nonce, d: this.opts.difficulty, e: exp, a: accountId, v: eventId });
    return {
      token,
      nonce,
      difficulty: this.opts.difficulty,
      exp,
      expiresAt: new Date(exp * 1000).toISOString(),
      algorithm: 'sha256-leading-zero-bits',
    };
  }

  /**
   * Checks `<token>:<suffix>` for this account and event and uses it up. Throws, in order: POW_MALFORMED (400),
   * POW_FORGED (403), POW_WRONG_ACCOUNT / POW_WRONG_EVENT (403), POW_EXPIRED (410, with a new challenge),
   * POW_UNSOLVED (403), POW_REUSED (409).
   */
  async verify(header: string, accountId: string, eventId: string): Promise<void> {
    const cut = header.lastIndexOf(':');
    const token = cut > 0 ? header.slice(0, cut) : '';
    const suffix = cut > 0 ? header.slice(cut + 1) : '';
    if (!token || !SUFFIX.test(suffix))
      throw powError('invalid', 'POW_MALFORMED', 'X-Proof-Of-Work must be "<challenge token>:<suffix>" (suffix: 1-128 of A-Z a-z 0-9 _ -)');
    const opened = this.signer.open(token);
    if (!opened.ok)
      throw opened.why === 'forged'
        ? powError('forbidden', 'POW_FORGED', 'the challenge was not issued by this service')
        : powError('invalid', 'POW_MALFORMED', 'the challenge token is not well formed');
    const c = opened.payload;
    if (c.k !== 'pow' || typeof c.n !== 'string' || typeof c.d !== 'number' || typeof c.e !== 'number')
      throw powError('invalid', 'POW_MALFORMED', 'the challenge token is not well formed');
    if (c.a !== accountId) throw powError('forbidden', 'POW_WRONG_ACCOUNT', 'the challenge was issued to another account');
    if (c.v !== eventId) throw powError('forbidden', 'POW_WRONG_EVENT', 'the challenge was issued for another event');
    const nowMs = this.now();
    if (nowMs >= c.e * 1000)
      throw powError('gone', 'POW_EXPIRED', 'the challenge has expired; solve the new one', { challenge: this.issue(accountId, eventId) });
    if (!solves(c.n, suffix, c.d))
      throw powError('forbidden', 'POW_UNSOLVED', `SHA-256(nonce + suffix) does not start with ${c.d} zero bits`);
    if (!(await this.used.use(`${accountId}\n${c.n}`, c.e * 1000, nowMs)))
      throw powError('conflict', 'POW_REUSED', 'this proof-of-work has already been used; a new join needs a new challenge');
  }
}
