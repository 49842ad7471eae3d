// A tier with its live counts as the console shows it (event page, war room): dates as ISO text and where the
// tier stands in its life. Pure: the BFF and the war-room reader shape tiers with it.
import type { TierInventory } from './allocations.service.js';

/**
 * Where a tier stands at `now`: UPCOMING before its window, SELLING in it, CLOSED once its window has shut but its
 * unsold seats have not rolled forward yet, ROLLED after (the roll job sweeps again if seats come back). The
 * general sale is UPCOMING or SELLING.
 */
export type TierPhase = 'UPCOMING' | 'SELLING' | 'CLOSED' | 'ROLLED';

export function tierPhase(t: Pick<TierInventory, 'general' | 'opensAt' | 'closesAt' | 'rolledAt'>, now: Date): TierPhase {
  if (!t.general && t.rolledAt) return 'ROLLED';
  if (now.getTime() < t.opensAt.getTime()) return 'UPCOMING';
  if (!t.general && t.closesAt && now.getTime() >= t.closesAt.getTime()) return 'CLOSED';
  return 'SELLING';
}

/** A tier for a client: its rule, window, roll and live counts (available + held + sold = capacity, drift 0). */
export interface TierView {
  code: string;
  name: string;
  position: number;
  general: boolean;
  share: number | null;
  access: TierInventory['access'];
  binRanges: { from: string; to: string }[] | null;
  fairnessMode: TierInventory['fairnessMode'];
  opensAt: string;
  closesAt: string | null;
  rollsForwardAt: string | null;
  rollsInto: string | null;
  rolledAt: string | null;
  phase: TierPhase;
  capacity: number;
  available: number;
  held: number;
  sold: number;
  drift: number;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toTierView(t: TierInventory, now: Date): TierView {
  return {
    code: t.code,
    name: t.name,
    position: t.position,
    general: t.general,
    share: t.share,
    access: t.access,
    binRanges: t.binRanges?.map((r) => ({ from: r.from, to: r.to })) ?? null,
    fairnessMode: t.fairnessMode,
    opensAt: t.opensAt.toISOString(),
    closesAt: iso(t.closesAt),
    rollsForwardAt: iso(t.rollsForwardAt),
    rollsInto: t.rollsInto,
    rolledAt: iso(t.rolledAt),
    phase: tierPhase(t, now),
    capacity: t.capacity,
    available: t.available,
    held: t.held,
    sold: t.sold,
    drift: t.drift,
  };
}
