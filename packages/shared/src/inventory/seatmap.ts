import type { Db } from '../db/connect.js';
import type { EventSection } from '../events/events.service.js';
import { countBySection, sectionSeats } from './inventory.repository.js';
import { DomainError } from '../errors.js';

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

/**
 * What a refused hold offers instead: up to five other sections of `map` that can take `quantity` now, those
 * nearest in quality to `here` first, then the cheaper. `together`, when given, says whether the party can sit
 * together in a section (true, false, or undefined when not known): a section known to have the seats only apart is
 * left out. It is asked of the best candidates in turn, only until five are found.
 */
export function alternativeSections(
  map: Seatmap,
  here: { code: string; qualityRank: number },
  quantity: number,
  together?: (section: string) => boolean | undefined,
) {
  const out: { section: string; name: string; available: number; priceCents: number }[] = [];
  const candidates = map.sections
    .filter((s) => s.code !== here.code && s.available >= quantity)
    .sort((a, b) => Math.abs(a.qualityRank - here.qualityRank) - Math.abs(b.qualityRank - here.qualityRank) || a.priceCents - b.priceCents);
  for (const s of candidates) {
    if (out.length >= 5) break;
    if (together?.(s.code) === false) continue;
    out.push({ section: s.code, name: s.name, available: s.available, priceCents: s.priceCents });
  }
  return out;
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
 * A count of an event's seats by section that another part has taken already (the admission controller's, on its
 * tick, as the store keeps it in memory): [code, available, held, sold] per section, and when (epoch ms).
 */
export type CountedSections = (
  eventId: string,
) => { at: number; rows: readonly (readonly [string, number, number, number])[] } | null | undefined;

/**
 * Section availability served from a short cache (1-2 s stale by design): at an on-sale, thousands of
 * fans read it and none of them needs it fresher than the conditional write that follows.
 *
 * With `counted` (the admission controller's count of the event, taken every second and read by every store
 * process from memory), the whole event's map is built from that count while it is younger than `ttlMs + 500` ms,
 * so the store processes do not each count every seat again; an older count (no controller ticking the event, a
 * presale tier's view) is read from the database as before.
 */
export class SeatmapCache {
  private readonly entries = new Map<string, { at: number; value: Promise<Seatmap> }>();
  /** The map built from the controller's count, per event: rebuilt when a newer count arrives. */
  private readonly fromCounts = new Map<string, { countedAt: number; value: Promise<Seatmap> }>();
  constructor(
    private readonly db: Db,
    private readonly ttlMs = 1500,
    /** The cache's clock (epoch ms); tests move an injected one instead of waiting out the TTL. */
    private readonly now: () => number = Date.now,
    private readonly counted?: CountedSections,
  ) {}

  /** The event's section availability, or one presale tier's (`tier`: its code and whether it is the general sale). */
  /** `db`: where a miss reads (the caller's pool lane: a hold's); default the cache's. */
  get(eventId: string, sections: Map<string, EventSection>, tier?: { code: string; general: boolean }, db: Db = this.db): Promise<Seatmap> {
    const now = this.now();
    if (!tier && this.counted) {
      const c = this.counted(eventId);
      // Never older than a map this cache would have served from its own read (the TTL and the read's time); a count
      // stamped more than a second ahead of this clock (clocks apart) is not trusted either.
      if (c && now - c.at < this.ttlMs + 500 && c.at - now < 1000) return this.mapOfCount(eventId, sections, c);
    }
    const key = tier ? `${eventId}/${tier.code}` : eventId;
    const hit = this.entries.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    const value = countBySection(db, eventId, tier).then((rows) => {
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

  private mapOfCount(
    eventId: string,
    sections: Map<string, EventSection>,
    c: { at: number; rows: readonly (readonly [string, number, number, number])[] },
  ): Promise<Seatmap> {
    const hit = this.fromCounts.get(eventId);
    if (hit && hit.countedAt === c.at) return hit.value;
    const value = Promise.resolve({
      eventId,
      generatedAt: new Date(c.at),
      sections: sectionAvailability(
        sections.values(),
        c.rows.map(([code, available, held, sold]) => ({ code, available, held, sold })),
      ),
    });
    this.fromCounts.set(eventId, { countedAt: c.at, value });
    return value;
  }
}

/** One section's seats for the seat map: where each seat is and whether it can be held now. */
export interface SectionSeatMap {
  eventId: string;
  section: string;
  generatedAt: Date;
  seats: { id: number; row: string; number: number; available: boolean }[];
}

/**
 * A reserved section's seats for picking exact seats, served from a 1 s cache per section (and presale tier): the
 * map is a guide, and the conditional write of the hold that follows is what decides.
 */
export class SectionSeatsCache {
  private readonly entries = new Map<string, { at: number; value: Promise<SectionSeatMap> }>();
  constructor(
    private readonly db: Db,
    private readonly ttlMs = 1000,
    /** The cache's clock (epoch ms); tests move an injected one instead of waiting out the TTL. */
    private readonly now: () => number = Date.now,
  ) {}

  get(eventId: string, section: EventSection, allocation?: string): Promise<SectionSeatMap> {
    if (section.kind === 'GA')
      throw new DomainError('conflict', 'NO_SEAT_MAP', `section ${section.code} is general admission: ask for a quantity`, {
        field: 'code',
      });
    const now = this.now();
    const key = `${eventId}/${section.code}/${allocation ?? ''}`;
    const hit = this.entries.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    const value = sectionSeats(this.db, eventId, section.code, allocation).then((rows) => ({
      eventId,
      section: section.code,
      generatedAt: new Date(now),
      seats: rows.map((r) => ({ id: Number(r.id), row: r.row_label, number: r.seat_number, available: r.available })),
    }));
    this.entries.set(key, { at: now, value });
    value.catch(() => this.entries.delete(key));
    if (this.entries.size > 5000) this.entries.clear();
    return value;
  }
}
