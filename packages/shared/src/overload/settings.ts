import { z } from 'zod';
import { checkSheddingLimits, type SheddingLimits } from './shedding.js';

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/**
 * The load-shedding settings, one set for every process that sheds (store API, BFF): while the mean event-loop
 * delay over the last sample is above a class's limit (ms), or more queries than its limit wait for a pooled
 * connection, that class's requests are answered 503 SERVICE_UNAVAILABLE with Retry-After at once instead of
 * queueing. Classes: FIRST (the expensive routes), STANDARD (the rest), LAST (the cheap ones: status polls, health,
 * metrics, the operators' controls; never shed for the pool). 0 turns a limit off.
 */
export const loadSheddingEnvShape = {
  LOAD_SHED_ENABLED: bool.optional(),
  LOAD_SHED_FIRST_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(200),
  LOAD_SHED_STANDARD_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(500),
  LOAD_SHED_LAST_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(2000),
  LOAD_SHED_FIRST_POOL_WAITING: z.coerce.number().int().min(0).max(100_000).default(50),
  LOAD_SHED_STANDARD_POOL_WAITING: z.coerce.number().int().min(0).max(100_000).default(200),
  /** How often the event-loop delay and the pool's queue are sampled, ms (at least 100: the delay is read every 10 ms). */
  LOAD_SHED_SAMPLE_INTERVAL_MS: z.coerce.number().int().min(100).max(10_000).default(250),
  /** A shed answer's Retry-After: a whole number of seconds picked at random in [MIN, MAX]. */
  LOAD_SHED_RETRY_AFTER_MIN_SECONDS: z.coerce.number().int().min(1).max(600).default(2),
  LOAD_SHED_RETRY_AFTER_MAX_SECONDS: z.coerce.number().int().min(1).max(600).default(5),
};

type LoadSheddingEnv = z.infer<z.ZodObject<typeof loadSheddingEnvShape>>;

/** A process's load shedding: its limits and sample interval; null when LOAD_SHED_ENABLED=false. */
export type LoadSheddingConfig = { limits: SheddingLimits; sampleIntervalMs: number } | null;

/** The settings parsed with loadSheddingEnvShape, checked (a cheap class never shed before an expensive one). */
export function loadSheddingConfigOf(e: LoadSheddingEnv): LoadSheddingConfig {
  if (e.LOAD_SHED_ENABLED === false) return null;
  return {
    limits: checkSheddingLimits({
      eventLoopDelayMs: { first: e.LOAD_SHED_FIRST_DELAY_MS, standard: e.LOAD_SHED_STANDARD_DELAY_MS, last: e.LOAD_SHED_LAST_DELAY_MS },
      poolWaiting: { first: e.LOAD_SHED_FIRST_POOL_WAITING, standard: e.LOAD_SHED_STANDARD_POOL_WAITING },
      retryAfterSeconds: { min: e.LOAD_SHED_RETRY_AFTER_MIN_SECONDS, max: e.LOAD_SHED_RETRY_AFTER_MAX_SECONDS },
    }),
    sampleIntervalMs: e.LOAD_SHED_SAMPLE_INTERVAL_MS,
  };
}
