import type { SeatCell } from './best-available.js';

interface Entry {
  at: number;
  seats: SeatCell[];
}

/**
 * A short-lived, per-process view of which seats of a section are available (the source's 1-2 s stale
 * seat map). Best-available picks candidates from it; the conditional write is the truth, so staleness costs
 * at most a retry. Seats this process takes are removed at once, so its own concurrent requests spread.
 */
export class SectionAvailabilityCache {
  private readonly entries = new Map<string, Entry>();
  constructor(private readonly ttlMs = 1000) {}

  private key(eventId: string, section: string) {
    return `${eventId}\u0000${section}`;
  }

  get(eventId: string, section: string, now = Date.now()): SeatCell[] | undefined {
    const e = this.entries.get(this.key(eventId, section));
    return e && now - e.at < this.ttlMs ? e.seats : undefined;
  }

  set(eventId: string, section: string, seats: SeatCell[], now = Date.now()): void {
    this.entries.set(this.key(eventId, section), { at: now, seats });
  }

  /** Drops seats from the cached view (taken by us, or found taken by someone else). */
  remove(eventId: string, section: string, seatIds: Iterable<number>): void {
    const e = this.entries.get(this.key(eventId, section));
    if (!e) return;
    const gone = new Set(seatIds);
    e.seats = e.seats.filter((s) => !gone.has(s.id));
  }

  invalidate(eventId: string, section: string): void {
    this.entries.delete(this.key(eventId, section));
  }
}
