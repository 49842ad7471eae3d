import { DEFAULT_GA_SHARDS, MAX_GA_SHARDS } from '../events/limits.js';

export { DEFAULT_GA_SHARDS, MAX_GA_SHARDS } from '../events/limits.js';

/**
 * Splits a GA section's capacity over its shards as evenly as possible (the first `capacity % shards` shards get
 * one more); never more shards than units, so no shard starts empty. Pure.
 */
export function splitCapacity(capacity: number, shards: number = DEFAULT_GA_SHARDS): number[] {
  if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a positive integer');
  if (!Number.isInteger(shards) || shards < 1) throw new RangeError('shards must be a positive integer');
  const n = Math.min(shards, capacity, MAX_GA_SHARDS);
  const base = Math.floor(capacity / n);
  const extra = capacity % n;
  return Array.from({ length: n }, (_, i) => base + (i < extra ? 1 : 0));
}
