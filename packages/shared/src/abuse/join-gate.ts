import { DomainError, type ErrorCode } from '../errors.js';
import { botVerdict, DEFAULT_BOT_THRESHOLDS, type BotScorer, type BotSignals, type BotThresholds, type BotVerdict } from './bot-score.js';
import { ProofOfWork } from './pow.js';
import { TicketSigner } from './signed.js';

export const DEFERRAL_HEADER = 'x-join-deferral';

/** How the gate let a join through (or why not), for metrics. */
export type GateDecision = 'PASS' | 'SOLVED' | 'CHALLENGED' | 'DEFERRED' | 'DEFERRAL_SERVED' | 'HAS_POSITION';

export interface JoinGateOptions {
  scorer: BotScorer;
  pow: ProofOfWork;
  /** Server secret for deferral tickets (>= 32 characters). */
  secret: string;
  thresholds?: BotThresholds;
  /** How far behind a low-priority join goes: it may join this long after the later of now and the open. */
  lowPriorityDelaySeconds: number;
  /** How long a deferral ticket stays usable once due. */
  deferralGraceSeconds?: number;
  now?: () => number;
}

export interface JoinAttempt {
  accountId: string;
  eventId: string;
  onsaleAt: Date;
  signals: BotSignals;
  /** X-Proof-Of-Work, when sent. */
  proof?: string;
  /** X-Join-Deferral, when sent. */
  deferral?: string;
  /** Whether the account already holds a place in this event's queue (read only when the verdict is not PASS). */
  hasPosition: () => Promise<boolean>;
}

/**
 * The bot-score hook in front of a queue join. The scorer's verdict decides the friction:
 *  - PASS: join now.
 *  - CHALLENGE: join only with a solved proof-of-work (X-Proof-Of-Work); without one, 403 CHALLENGE_REQUIRED
 *    carrying a fresh challenge.
 *  - LOW_PRIORITY: a later place in line. The join is refused for now with 409 JOIN_DEFERRED, Retry-After and a
 *    signed deferral ticket; the same join with X-Join-Deferral is accepted once the ticket is due: no earlier
 *    than `lowPriorityDelaySeconds` after the later of now and the open. Before the open that keeps the join
 *    out of the randomized pre-open cohort (it lands FIFO after it); after the open it puts everyone who joins
 *    in the meantime ahead. Stateless: nothing about a deferred fan is stored, and the queue's ordering is
 *    untouched (one position per account, join order from the sequence).
 * An account that already holds a position is never challenged or deferred: a join is idempotent and returns the
 * position it has. A proof-of-work that is sent is always checked, and a bad one refused.
 */
export class JoinGate {
  private readonly deferrals: TicketSigner;
  private readonly now: () => number;
  private readonly thresholds: BotThresholds;

  constructor(private readonly opts: JoinGateOptions) {
    this.deferrals = new TicketSigner(opts.secret, 'join-deferral');
    this.now = opts.now ?? Date.now;
    this.thresholds = opts.thresholds ?? DEFAULT_BOT_THRESHOLDS;
  }

  /** Lets the join through (returns how) or throws the DomainError the client must act on. */
  async check(a: JoinAttempt): Promise<{ decision: GateDecision; score: number | null; verdict: BotVerdict | null }> {
    if (a.deferral !== undefined) {
      this.redeemDeferral(a);
      return { decision: 'DEFERRAL_SERVED', score: null, verdict: null };
    }
    let solved = false;
    if (a.proof !== undefined) {
      await this.opts.pow.verify(a.proof, a.accountId, a.eventId);
      solved = true;
    }
    const score = await this.opts.scorer.score(a.signals);
    const verdict = botVerdict(score, this.thresholds);
    if (verdict === 'PASS') return { decision: 'PASS', score, verdict };
    if (verdict === 'CHALLENGE' && solved) return { decision: 'SOLVED', score, verdict };
    if (await a.hasPosition()) return { decision: 'HAS_POSITION', score, verdict };
    if (verdict === 'CHALLENGE')
      throw new DomainError(
        'forbidden',
        'CHALLENGE_REQUIRED',
        'solve the proof-of-work challenge and join again with X-Proof-Of-Work: <token>:<suffix>',
        {
          field: 'x-proof-of-work',
          challenge: this.opts.pow.issue(a.accountId, a.eventId),
        },
      );
    throw this.defer(a);
  }

  private defer(a: JoinAttempt): DomainError {
    const nowS = Math.floor(this.now() / 1000);
    const notBefore = Math.max(nowS, Math.ceil(a.onsaleAt.getTime() / 1000)) + this.opts.lowPriorityDelaySeconds;
    const exp = notBefore + (this.opts.deferralGraceSeconds ?? 600);
    const token = this.deferrals.sign({ k: 'deferral', a: a.accountId, v: a.eventId, nb: notBefore, e: exp });
    return deferred(notBefore - nowS, { token, notBefore: new Date(notBefore * 1000).toISOString() });
  }

  private redeemDeferral(a: JoinAttempt): void {
    const err = (kind: 'invalid' | 'forbidden' | 'gone', code: ErrorCode, message: string) =>
      new DomainError(kind, code, message, { field: DEFERRAL_HEADER });
    const opened = this.deferrals.open(a.deferral!);
    if (!opened.ok)
      throw opened.why === 'forged'
        ? err('forbidden', 'DEFERRAL_FORGED', 'the deferral ticket was not issued by this service')
        : err('invalid', 'DEFERRAL_MALFORMED', 'the deferral ticket is not well formed');
    const t = opened.payload;
    if (t.k !== 'deferral' || typeof t.nb !== 'number' || typeof t.e !== 'number')
      throw err('invalid', 'DEFERRAL_MALFORMED', 'the deferral ticket is not well formed');
    if (t.a !== a.accountId) throw err('forbidden', 'DEFERRAL_WRONG_ACCOUNT', 'the deferral ticket was issued to another account');
    if (t.v !== a.eventId) throw err('forbidden', 'DEFERRAL_WRONG_EVENT', 'the deferral ticket was issued for another event');
    const nowS = this.now() / 1000;
    if (nowS >= t.e) throw err('gone', 'DEFERRAL_EXPIRED', 'the deferral ticket has expired; join again');
    if (nowS < t.nb) throw deferred(Math.ceil(t.nb - nowS), { token: a.deferral!, notBefore: new Date(t.nb * 1000).toISOString() });
  }
}

const deferred = (retryAfterSeconds: number, deferral: { token: string; notBefore: string }) =>
  new DomainError(
    'conflict',
    'JOIN_DEFERRED',
    `you are in line behind fans who join in the next ${retryAfterSeconds} s; join again with X-Join-Deferral after Retry-After`,
    {
      field: DEFERRAL_HEADER,
      retryAfterSeconds,
      deferral,
    },
  );
