import type { Db, Trx } from '../db/connect.js';
import * as repo from './holds.repository.js';
import type { AvailableSeat } from './holds.repository.js';

/** Events whose seats a process keeps at most (the oldest known is forgotten first). */
const MAX_EVENTS = 64;

/**
 * What each seat of an event is (its id, row, label, number, quality), per process: none of it changes after the
 * seats are created, so a section view's refresh (SectionAvailabilityCache) reads only the ids of the seats available
 * now and takes the rest from here. In the 20,000-fan stadium the views' refreshes read 1.85 million seat rows for
 * the store to parse (4,843 reads of about 400 seats each); now each refresh is one row of ids. A seat not known yet
 * (held when the event's views were filled, available again since) is read by id, once.
 */
export class SeatDirectory {
  private readonly events = new Map<string, Map<number, AvailableSeat>>();

  /** Records seats read in full elsewhere (the event-wide read that fills every view). */
  learn(eventId: string, seats: Iterable<AvailableSeat>): void {
    const known = this.of(eventId);
    for (const s of seats) known.set(s.id, s);
  }

  /**
   * The section's seats (of one presale tier, or null) available now: exactly what findAvailableSeats reads, from one
   * read of their ids (plus, for ids not known yet, one read of those seats).
   */
  async available(db: Db | Trx, eventId: string, section: string, allocation: string | null): Promise<AvailableSeat[]> {
    const ids = await repo.findAvailableSeatIds(db, eventId, section, allocation);
    const known = this.of(eventId);
    const missing = ids.filter((id) => !known.has(id));
    if (missing.length > 0) {
      for (const s of await repo.findSeatsById(db, eventId, missing)) known.set(s.id, s);
      // A seat gone between the two reads (an event's seats are never deleted while it sells): read in full instead.
      if (missing.some((id) => !known.has(id))) return repo.findAvailableSeats(db, eventId, section, allocation);
    }
    return ids.map((id) => known.get(id)!);
  }

  private of(eventId: string): Map<number, AvailableSeat> {
    let known = this.events.get(eventId);
    if (!known) {
      if (this.events.size >= MAX_EVENTS) this.events.delete(this.events.keys().next().value!);
      this.events.set(eventId, (known = new Map<number, AvailableSeat>()));
    }
    return known;
  }
}
