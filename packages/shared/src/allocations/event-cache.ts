import type { Db } from '../db/connect.js';
import { getEvent, getSections, type EventSection, type OnsaleEvent } from '../events/events.service.js';
import { getTiers, type Tier } from './allocations.service.js';
import { findBlockedAccounts } from '../events/blocks.js';

export interface CachedEvent {
  event: OnsaleEvent;
  sections: Map<string, EventSection>;
  /** Presale tiers in sale order, the general sale last; empty when the event has none. */
  tiers: Tier[];
  /** Fan accounts an operator blocked from the event (fan support): refused its queue, holds and checkout. */
  blockedAccounts: ReadonlySet<string>;
}

/**
 * Event settings and sections, cached per process for a second: the hot paths (holds, seat map) read an
 * event's configuration on every request, and it changes rarely. Concurrent misses share one load.
 */
export class EventCache {
  private readonly entries = new Map<string, { at: number; value: Promise<CachedEvent> }>();
  constructor(
    private readonly db: Db,
    private readonly ttlMs = 1000,
    /** The cache's clock (epoch ms); tests move an injected one instead of waiting out the TTL. */
    private readonly now: () => number = Date.now,
  ) {}

  /** `db`: where a miss reads (the caller's pool lane: a hold's); default the cache's. */
  get(eventId: string, db: Db = this.db): Promise<CachedEvent> {
    const now = this.now();
    const hit = this.entries.get(eventId);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    const value = (async () => {
      const event = await getEvent(db, eventId);
      const [sections, tiers, blocked] = await Promise.all([
        getSections(db, eventId),
        getTiers(db, eventId),
        findBlockedAccounts(db, eventId),
      ]);
      return { event, sections: new Map(sections.map((s) => [s.code, s])), tiers, blockedAccounts: new Set(blocked) };
    })();
    this.entries.set(eventId, { at: now, value });
    value.catch(() => this.entries.delete(eventId));
    if (this.entries.size > 10_000) this.entries.clear();
    return value;
  }
}
