// Pure (no I/O, type imports only): the console's form shows the split live with these, so keep it browser-safe.
import type { EventSpec } from '../events/events.schema.js';
import type { SeatSpec } from '../events/layout.js';
import type { AllocationSpec } from '../events/allocations.schema.js';

/**
 * Splits every reserved section between the tiers by share, in seat order (front row first, left to right):
 * tier i takes the seats from round(N x shares before it) to round(N x shares through it); the last tier (the
 * general sale) takes the rest. Earlier tiers therefore sit nearer the front, and each tier's seats in a section
 * are one run, so best-available still finds seats together. Pure: the same file always gives the same split.
 */
export function assignAllocations<S extends Pick<SeatSpec, 'sectionCode' | 'rowIndex' | 'seatNumber'>>(
  seats: S[],
  tiers: AllocationSpec[] | undefined,
): (S & { allocation: string | null })[] {
  if (!tiers || tiers.length === 0) return seats.map((s) => ({ ...s, allocation: null }));
  const bySection = new Map<string, S[]>();
  for (const s of seats) {
    let list = bySection.get(s.sectionCode);
    if (!list) bySection.set(s.sectionCode, (list = []));
    list.push(s);
  }
  const out: (S & { allocation: string | null })[] = [];
  for (const list of bySection.values()) {
    list.sort((a, b) => a.rowIndex - b.rowIndex || a.seatNumber - b.seatNumber);
    const n = list.length;
    let cumulative = 0;
    let start = 0;
    tiers.forEach((t, i) => {
      const last = i === tiers.length - 1;
      cumulative += last ? 0 : (t.share ?? 0);
      const end = last ? n : Math.min(n, Math.round(n * cumulative));
      for (let k = start; k < end; k++) out.push({ ...list[k]!, allocation: t.code });
      start = Math.max(start, end);
    });
  }
  return out;
}

/**
 * A general-admission section's units per tier: round(capacity x share) for each presale, the rest to the general
 * sale (the last tier), and the section's shards in proportion (at least one per tier). Without tiers, the whole
 * counter with no tier.
 */
export function splitGaByTier(
  capacity: number,
  shards: number,
  tiers: readonly { code: string; share?: number }[] | undefined,
): { allocation: string | null; capacity: number; shards: number }[] {
  if (!tiers || tiers.length === 0) return [{ allocation: null, capacity, shards }];
  let left = capacity;
  return tiers.map((t, i) => {
    const last = i === tiers.length - 1;
    const units = last ? left : Math.min(left, Math.round(capacity * (t.share ?? 0)));
    left -= units;
    return { allocation: t.code, capacity: units, shards: Math.max(1, Math.round((shards * units) / capacity)) };
  });
}

/**
 * Units each tier owns after the split: its reserved seats and its part of every general-admission counter
 * (splitGaByTier). Empty when the event has no tiers.
 */
export function tierCapacities(
  seats: readonly { allocation?: string | null }[],
  spec: Pick<EventSpec, 'allocations' | 'sections'>,
): Map<string, number> {
  const perTier = new Map<string, number>();
  const tiers = spec.allocations ?? [];
  if (tiers.length === 0) return perTier;
  for (const t of tiers) perTier.set(t.code, 0);
  for (const s of seats) if (s.allocation) perTier.set(s.allocation, (perTier.get(s.allocation) ?? 0) + 1);
  for (const s of spec.sections)
    if (s.kind === 'GA')
      for (const part of splitGaByTier(s.capacity, s.shards, tiers))
        perTier.set(part.allocation!, (perTier.get(part.allocation!) ?? 0) + part.capacity);
  return perTier;
}
