import type { Db } from '../db/connect.js';
import { getEvent, getSections, type EventSection, type OnsaleEvent } from './events.service.js';

export interface CachedEvent {
  event: OnsaleEvent;
  sections: Map<string, EventSection>;
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
  ) {}

  get(eventId: string): Promise<CachedEvent> {
    const now = Date.now();
    const hit = this.entries.get(eventId);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    const value = (async () => {
      const event = await getEvent(this.db, eventId);
      const sections = new Map((await getSections(this.db, eventId)).map((s) => [s.code, s]));
      return { event, sections };
    })();
    this.entries.set(eventId, { at: now, value });
    value.catch(() => this.entries.delete(eventId));
    if (this.entries.size > 10_000) this.entries.clear();
    return value;
  }
}
