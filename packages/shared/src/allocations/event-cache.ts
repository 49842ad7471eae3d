import type { Db } from '../db/connect.js';
import { getEvent, getSections, type EventSection, type OnsaleEvent } from '../events/events.service.js';
import { getTiers, type Tier } from './allocations.service.js';
import { findBlockedAccounts } from '../events/blocks.js';
import { eventCacheFingerprint } from './allocations.repository.js';
import { isUuid } from '../ids.js';

export interface CachedEvent {
  event: OnsaleEvent;
  sections: Map<string, EventSection>;
  /** Presale tiers in sale order, the general sale last; empty when the event has none. */
  tiers: Tier[];
  /** Fan accounts an operator blocked from the event (fan support): refused its queue, holds and checkout. */
  blockedAccounts: ReadonlySet<string>;
}

interface Entry {
  /** When the load (or the check) that filled it started. */
  at: number;
  value: Promise<CachedEvent>;
  /** What the event's rows were when `value` was read (eventCacheFingerprint); unknown after a first load. */
  fingerprint?: string;
}

/**
 * Event settings and sections, cached per process for a second: the hot paths (holds, seat map) read an
 * event's configuration on every request, and it changes rarely. Concurrent misses share one load.
 *
 * A lapsed entry is checked before it is read again: one statement (eventCacheFingerprint, read before the load, so
 * a change during a load is seen by the next check) tells whether the event, its sections, its tiers or its blocked
 * accounts changed since; if not, the entry serves another TTL, else the four statements read them as before. An
 * entry is never older than a check or load started within the TTL, as before.
 */
export class EventCache {
  private readonly entries = new Map<string, Entry>();
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
    const entry: Entry = { at: now, value: Promise.resolve(undefined as never) };
    // A first load reads as before. After one, a lapse is checked first: the fingerprint is read before the load it
    // may skip, so a change made during a load is seen by the next check. (An id that is not one never gets here
    // with a hit: getEvent refuses it before any statement, as before.)
    const previous = hit !== undefined && isUuid(eventId) ? hit : undefined;
    entry.value = (async () => {
      if (!previous) return EventCache.load(db, eventId);
      const fingerprint = await eventCacheFingerprint(db, eventId);
      const value =
        previous.fingerprint !== undefined && fingerprint === previous.fingerprint
          ? await previous.value
          : await EventCache.load(db, eventId);
      entry.fingerprint = fingerprint;
      return value;
    })();
    this.entries.set(eventId, entry);
    entry.value.catch(() => this.entries.delete(eventId));
    if (this.entries.size > 10_000) this.entries.clear();
    return entry.value;
  }

  private static async load(db: Db, eventId: string): Promise<CachedEvent> {
    const event = await getEvent(db, eventId);
    const [sections, tiers, blocked] = await Promise.all([
      getSections(db, eventId),
      getTiers(db, eventId),
      findBlockedAccounts(db, eventId),
    ]);
    return { event, sections: new Map(sections.map((s) => [s.code, s])), tiers, blockedAccounts: new Set(blocked) };
  }
}
