import { lowestDelayLimit, shedReason, shedRetryAfterSeconds, type ShedOrder, type ShedReason, type SheddingLimits } from './shedding.js';

/** What a process needs to shed load: its limits, how it reads its pool's queue, where it counts and logs. */
export interface LoadShedderOptions {
  limits: SheddingLimits;
  /** How often the event-loop delay is sampled, ms (a sample with no reading in it counts as this long). */
  sampleIntervalMs: number;
  /** Queries waiting for a pooled database connection now; null when the process cannot tell. */
  poolWaiting: () => number | null;
  /** Counts each request shed. */
  onShed?: (reason: ShedReason) => void;
  log: { warn(obj: object, msg: string): void };
  now?: () => number;
  random?: () => number;
}

/** A shed request's answer: why, and when to come back. */
export interface ShedAnswer {
  reason: ShedReason;
  retryAfterSeconds: number;
  message: string;
}

/**
 * The state of one process's load shedding around the pure rule (shedReason): it reads the pool's queue as each
 * request arrives, counts what it sheds, and logs an episode once when it starts and once when it has been quiet
 * for a while, never once per request. The apps wire it to @fastify/under-pressure, which samples the event loop.
 */
export class LoadShedder {
  private episode: { since: number; answered: number; lastAt: number } | null = null;
  private readonly now: () => number;
  /** How long without a shed request ends an episode, ms. */
  readonly quietMs: number;

  constructor(private readonly opts: LoadShedderOptions) {
    this.now = opts.now ?? Date.now;
    this.quietMs = Math.max(5_000, opts.sampleIntervalMs * 4);
  }

  /** The pool-queue limit that makes anything shed (what a periodic health check compares with), 0 when off. */
  get poolLimit(): number {
    return this.opts.limits.poolWaiting.first || this.opts.limits.poolWaiting.standard;
  }

  /** Whether the pool's queue is past the first limit now (false when it cannot be read or the limit is off). */
  poolOverloaded(): boolean {
    const waiting = this.opts.poolWaiting();
    return this.poolLimit > 0 && waiting !== null && waiting > this.poolLimit;
  }

  /**
   * The answer for a request of `order` given the sampled event-loop delay (ms; not finite when the sample had no
   * reading at all: the loop was blocked at least a whole sample), or null when it is served.
   */
  decide(order: ShedOrder, eventLoopDelayMs: number): ShedAnswer | null {
    const delay = Number.isFinite(eventLoopDelayMs) ? eventLoopDelayMs : this.opts.sampleIntervalMs;
    const load = { eventLoopDelayMs: delay, poolWaiting: this.opts.poolWaiting() };
    const reason = shedReason(order, load, this.opts.limits);
    if (!reason) return null;
    this.opts.onShed?.(reason);
    const at = this.now();
    if (!this.episode) {
      this.episode = { since: at, answered: 0, lastAt: at };
      this.opts.log.warn(
        { reason, eventLoopDelayMs: Math.round(delay), poolWaiting: load.poolWaiting },
        'overloaded: shedding load (503 with Retry-After), expensive routes first, status polls last',
      );
    }
    this.episode.answered++;
    this.episode.lastAt = at;
    const retryAfterSeconds = shedRetryAfterSeconds(this.opts.limits, this.opts.random);
    return { reason, retryAfterSeconds, message: `the service is overloaded; retry in ${retryAfterSeconds} s` };
  }

  /**
   * @fastify/under-pressure's options for this shedder. Under-pressure calls `pressureHandler` only while some limit
   * is passed (the lowest event-loop delay, or the pool's queue as its health check samples it); the handler asks
   * decide() with the request's own class, the pool's queue read as it arrives.
   */
  underPressureOptions<Handler>(pressureHandler: Handler) {
    const poolChecked = this.poolLimit > 0 && this.opts.poolWaiting() !== null;
    return {
      maxEventLoopDelay: lowestDelayLimit(this.opts.limits),
      sampleInterval: this.opts.sampleIntervalMs,
      ...(poolChecked ? { healthCheck: async () => !this.poolOverloaded(), healthCheckInterval: this.opts.sampleIntervalMs } : {}),
      pressureHandler,
    };
  }

  /** Calls tick() every quietMs (the timer does not keep the process alive); returns what stops it. */
  startTicking(): () => void {
    const timer = setInterval(() => this.tick(), this.quietMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Ends an episode that has been quiet for quietMs (logged once with what it shed); call it periodically. */
  tick(): void {
    const e = this.episode;
    if (e && this.now() - e.lastAt > this.quietMs) {
      this.opts.log.warn(
        { answered: e.answered },
        `load shedding stopped: ${e.answered} requests answered 503 over ${((e.lastAt - e.since) / 1000).toFixed(1)} s`,
      );
      this.episode = null;
    }
  }
}
