// The edge's circuit breaker for its origin: an origin that does not answer (refused, reset, no answer within the
// timeout, a 5xx that is not the store API's own) is not sent more requests to hang on. Per isolate.

export interface BreakerOptions {
  /** Failures in a row that open the circuit. */
  failures: number;
  /** How long the circuit stays open before one request is let through to try the origin, in milliseconds. */
  openMs: number;
  /**
   * How long a trial may take before another request may try instead (its request may have been cancelled, the fan
   * gone, without telling the breaker): the longest origin timeout and a margin.
   */
  trialMs: number;
  /** The clock (ms since the epoch); tests pass their own. */
  now?: () => number;
}

/** What the breaker says of a request about to go to the origin. */
export type Admission = { send: true; trial: boolean } | { send: false; retryAfterSeconds: number };

/**
 * Closed: every request goes to the origin, and `failures` failures in a row open it. Open: no request goes, each is
 * answered at once with the seconds left. Half-open (once `openMs` has passed): one request goes as a trial, the
 * rest are still answered at once; its success closes the circuit, its failure opens it again for `openMs`.
 */
export class OriginBreaker {
  private failuresInARow = 0;
  private openUntil = 0;
  private trialInFlight = false;
  private trialSince = 0;
  private readonly now: () => number;

  constructor(private readonly o: BreakerOptions) {
    this.now = o.now ?? Date.now;
  }

  get state(): 'closed' | 'open' | 'half-open' {
    if (this.openUntil === 0) return 'closed';
    return this.now() < this.openUntil ? 'open' : 'half-open';
  }

  admit(): Admission {
    if (this.openUntil === 0) return { send: true, trial: false };
    const now = this.now();
    const left = this.openUntil - now;
    if (left <= 0 && (!this.trialInFlight || now - this.trialSince > this.o.trialMs)) {
      this.trialInFlight = true;
      this.trialSince = now;
      return { send: true, trial: true };
    }
    return { send: false, retryAfterSeconds: Math.max(1, Math.ceil(left / 1000)) };
  }

  /** Failures in a row so far. */
  get failuresSoFar(): number {
    return this.failuresInARow;
  }

  /** The origin answered (any answer the edge passes on, the store API's own 503 included). */
  succeeded(trial: boolean): void {
    if (trial) this.trialInFlight = false;
    this.failuresInARow = 0;
    if (this.openUntil !== 0) {
      this.openUntil = 0;
      console.error('onsale edge: the origin answers again; circuit closed');
    }
  }

  /** The origin did not answer. */
  failed(trial: boolean): void {
    if (trial) this.trialInFlight = false;
    this.failuresInARow++;
    if (trial || (this.openUntil === 0 && this.failuresInARow >= this.o.failures)) {
      if (this.openUntil === 0)
        console.error(
          `onsale edge: the origin did not answer ${this.failuresInARow} times in a row; circuit open: fans answered 503 at once, the origin tried again every ${this.o.openMs / 1000} s`,
        );
      this.openUntil = this.now() + this.o.openMs;
    }
  }
}
