import type { AvailableSeat } from './holds.repository.js';

interface Entry {
  at: number;
  seats: AvailableSeat[];
}

/** Seats this process is attempting right now, per section: its other requests steer around them. */
type Claims = Map<number, number>;

/**
 * A short-lived, per-process view of which seats of a section are available (the source's 1-2 s stale
 * seat map). Best-available picks candidates from it; the conditional write is the truth, so staleness costs
 * at most a retry. Seats this process takes are removed at once, so its own concurrent requests spread.
 */
export class SectionAvailabilityCache {
  private readonly entries = new Map<string, Entry>();
  private readonly claims = new Map<string, Claims>();
  constructor(private readonly ttlMs = 5000) {}

  private key(eventId: string, section: string) {
    return `${eventId}\u0000${section}`;
  }

  /** The cached available seats, less those another request of this process is attempting. */
  get(eventId: string, section: string, now = Date.now()): AvailableSeat[] | undefined {
    const e = this.entries.get(this.key(eventId, section));
    return e && now - e.at < this.ttlMs ? this.unclaimed(eventId, section, e.seats) : undefined;
  }

  unclaimed(eventId: string, section: string, seats: AvailableSeat[]): AvailableSeat[] {
    const c = this.claims.get(this.key(eventId, section));
    return c && c.size > 0 ? seats.filter((s) => !c.has(s.id)) : seats;
  }

  claim(eventId: string, section: string, seatIds: readonly number[]): void {
    const k = this.key(eventId, section);
    let c = this.claims.get(k);
    if (!c) this.claims.set(k, (c = new Map()));
    for (const id of seatIds) c.set(id, (c.get(id) ?? 0) + 1);
  }

  unclaim(eventId: string, section: string, seatIds: readonly number[]): void {
    const k = this.key(eventId, section);
    const c = this.claims.get(k);
    if (!c) return;
    for (const id of seatIds) {
      const n = (c.get(id) ?? 1) - 1;
      if (n <= 0) c.delete(id);
      else c.set(id, n);
    }
    if (c.size === 0) this.claims.delete(k);
  }

  set(eventId: string, section: string, seats: AvailableSeat[], now = Date.now()): void {
    this.entries.set(this.key(eventId, section), { at: now, seats });
  }

  /** Drops seats from the cached view (taken by us, or found taken by someone else). */
  remove(eventId: string, section: string, seatIds: Iterable<number>): void {
    const e = this.entries.get(this.key(eventId, section));
    if (!e) return;
    const gone = new Set(seatIds);
    e.seats = e.seats.filter((s) => !gone.has(s.id));
  }

  /** Puts seats back into the cached view (released by this process: available again at once). */
  restore(eventId: string, section: string, seats: readonly AvailableSeat[]): void {
    const e = this.entries.get(this.key(eventId, section));
    if (!e) return;
    const have = new Set(e.seats.map((s) => s.id));
    e.seats = [...e.seats, ...seats.filter((s) => !have.has(s.id))];
  }

  invalidate(eventId: string, section: string): void {
    this.entries.delete(this.key(eventId, section));
  }
}
