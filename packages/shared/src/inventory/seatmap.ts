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

  get(eventId: string, sections: Map<string, EventSection>): Promise<Seatmap> {
    const now = Date.now();
    const hit = this.entries.get(eventId);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    const value = countBySection(this.db, eventId).then((rows) => ({
      eventId,
      generatedAt: new Date(now),
      sections: sectionAvailability(
        sections.values(),
        rows.map((r) => ({ code: r.section_code, available: r.available, held: r.held, sold: r.sold })),
      ),
    }));
    this.entries.set(eventId, { at: now, value });
    value.catch(() => this.entries.delete(eventId));
    return value;
  }
}
