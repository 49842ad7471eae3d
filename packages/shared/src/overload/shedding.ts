// Load shedding as a pure rule: given how loaded the process is now, does a request of this class get an answer
// (503 with Retry-After) instead of a place in the queue? No I/O here; the apps read the figures (event-loop delay
// from @fastify/under-pressure, the pool's queue from pg) and send the answer.

/**
 * When a route is shed, in order: `first` (the expensive ones: joins, new holds, waitlist and lottery writes,
 * sign-ins), `standard` (everything else, checkouts of held seats among them), `last` (the cheap ones that keep fans
 * in line and operators sighted: status polls, the watermark, the edges' state, health, metrics).
 */
export type ShedOrder = 'first' | 'standard' | 'last';

export const SHED_ORDERS: readonly ShedOrder[] = ['first', 'standard', 'last'];

/** Thresholds per class: above a class's event-loop delay (or pool queue), its requests are shed. */
export interface SheddingLimits {
  /** Mean event-loop delay, ms, over the last sample, above which each class is shed (0: never for that class). */
  eventLoopDelayMs: Record<ShedOrder, number>;
  /**
   * Queries waiting for a pooled database connection above which each class is shed (0: never). `last` routes
   * are answered from memory, so the pool's queue does not shed them.
   */
  poolWaiting: Record<Exclude<ShedOrder, 'last'>, number>;
  /** The Retry-After of a shed answer, seconds: a random whole number in [min, max] so retries do not come back together. */
  retryAfterSeconds: { min: number; max: number };
}

/** What the process reads about its own load when a request arrives. */
export interface LoadReading {
  eventLoopDelayMs: number;
  /** Queries waiting for a pooled connection (null: this process cannot tell). */
  poolWaiting: number | null;
}

export type ShedReason = 'overload_event_loop' | 'overload_pool';

/** Why a request of `order` is shed under `load`, or null when it is served. */
export function shedReason(order: ShedOrder, load: LoadReading, limits: SheddingLimits): ShedReason | null {
  const delayLimit = limits.eventLoopDelayMs[order];
  if (delayLimit > 0 && load.eventLoopDelayMs > delayLimit) return 'overload_event_loop';
  if (order !== 'last' && load.poolWaiting !== null) {
    const poolLimit = limits.poolWaiting[order];
    if (poolLimit > 0 && load.poolWaiting > poolLimit) return 'overload_pool';
  }
  return null;
}

/** The lowest event-loop delay that sheds anything (what @fastify/under-pressure watches for), 0 when none is set. */
export function lowestDelayLimit(limits: SheddingLimits): number {
  const set = SHED_ORDERS.map((o) => limits.eventLoopDelayMs[o]).filter((v) => v > 0);
  return set.length ? Math.min(...set) : 0;
}

/** Checks that the classes shed in order: a class never goes before one listed earlier. Throws naming the setting. */
export function checkSheddingLimits(limits: SheddingLimits): SheddingLimits {
  const d = limits.eventLoopDelayMs;
  const inOrder = (a: number, b: number) => (a === 0 ? b === 0 : b === 0 || b >= a);
  if (!inOrder(d.first, d.standard) || !inOrder(d.standard, d.last))
    throw new Error(
      'load shedding: the event-loop delay limits must not fall from first to standard to last (0 turns a class off, and then every later one too)',
    );
  const p = limits.poolWaiting;
  if (!inOrder(p.first, p.standard))
    throw new Error(
      'load shedding: the pool queue limit for standard routes must be at least the one for the first routes (0 turns it off)',
    );
  if (limits.retryAfterSeconds.min < 1 || limits.retryAfterSeconds.max < limits.retryAfterSeconds.min)
    throw new Error('load shedding: Retry-After needs 1 <= min <= max');
  return limits;
}

/** A shed answer's Retry-After, spread over [min, max]. */
export function shedRetryAfterSeconds(limits: SheddingLimits, random: () => number = Math.random): number {
  const { min, max } = limits.retryAfterSeconds;
  return min + Math.floor(random() * (max - min + 1));
}

/** The defaults: generous enough that a healthy process under an on-sale's ordinary load never sheds. */
export const DEFAULT_SHEDDING_LIMITS: SheddingLimits = {
  eventLoopDelayMs: { first: 200, standard: 500, last: 2000 },
  poolWaiting: { first: 50, standard: 200 },
  retryAfterSeconds: { min: 2, max: 5 },
};
