import type { Db } from '../db/connect.js';
import type { EventSection } from '../events/events.service.js';
import { countBySection } from './inventory.repository.js';

export interface SeatmapSection {
  code: string;
  name: string;
  /** RESERVED: seats; GA: general admission, a count of identical units (no seat map, no seat picking). */
  kind: EventSection['kind'];
  priceLevel: string;
  priceCents: number;
  qualityRank: number;
  capacity: number;
  available: number;
  held: number;
  sold: number;
}

export interface Seatmap {
  eventId: string;
  /** A presale tier's view: only that tier's seats and units (capacity = what the tier owns of the section). */
  tier?: string;
  generatedAt: Date;
  sections: SeatmapSection[];
}

/** Joins an event's sections with their live counts (sections without seats in a state count 0). Pure. */
export function sectionAvailability(
  sections: Iterable<EventSection>,
  counts: Iterable<{ code: string; available: number; held: number; sold: number }>,
): SeatmapSection[] {
  const byCode = new Map([...counts].map((c) => [c.code, c]));
  return [...sections].map((s) => {
    const c = byCode.get(s.code);
    return {
      code: s.code,
      name: s.name,
      kind: s.kind,
      priceLevel: s.priceLevel,
      priceCents: s.priceCents,
      qualityRank: s.qualityRank,
      capacity: s.capacity,
      available: c?.available ?? 0,
      held: c?.held ?? 0,
      sold: c?.sold ?? 0,
    };
  });
}

/**
 * Section availability served from a short cache (1-2 s stale by design): at an on-sale, thousands of
 * fans read it and none of them needs it fresher than the conditional write that follows.
 */
export class SeatmapCache {
  private readonly entries = new Map<string, { at: number; value: Promise<Seatmap> }>();
  constructor(
    private readonly db: Db,
    private readonly ttlMs = 1500,
  ) {}

  /** The event's section availability, or one presale tier's (`tier`: its code and whether it is the general sale). */
  get(eventId: string, sections: Map<string, EventSection>, tier?: { code: string; general: boolean }): Promise<Seatmap> {
    const now = Date.now();
    const key = tier ? `${eventId}/${tier.code}` : eventId;
    const hit = this.entries.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    const value = countBySection(this.db, eventId, tier).then((rows) => {
      const counted = sectionAvailability(
        sections.values(),
        rows.map((r) => ({ code: r.section_code, available: r.available, held: r.held, sold: r.sold })),
      );
      return {
        eventId,
        ...(tier ? { tier: tier.code } : {}),
        generatedAt: new Date(now),
        // A tier owns part of each section: its capacity there is what it counts.
        sections: tier ? counted.map((s) => ({ ...s, capacity: s.available + s.held + s.sold })) : counted,
      };
    });
    this.entries.set(key, { at: now, value });
    value.catch(() => this.entries.delete(key));
    return value;
  }
}
