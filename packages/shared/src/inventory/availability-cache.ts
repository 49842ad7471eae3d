import { bySeat } from './best-available.js';
import type { AvailableSeat } from './holds.repository.js';
import type { PoolTag } from '../db/pool-lanes.js';

/**
 * A lapsed view's background refresh waits for the pool in the standard lane, whatever request found it lapsed (a
 * hold's would otherwise carry the purchase lane): no fan waits for it, and holds go first (issue 28). The loader
 * is called with `background` true for it, and reads on a Db in this lane (inPoolLane).
 */
export const BACKGROUND_REFRESH: PoolTag = { lane: 'standard', kind: 'section_view' };

interface Entry {
  /** When the read that filled it started (the view is at least this old). */
  at: number;
  /** This entry's own lifetime: the TTL with jitter, so sections read together do not all expire together. */
  ttlMs: number;
  seats: AvailableSeat[];
}

interface Loading {
  startedAt: number;
  promise: Promise<AvailableSeat[]>;
}

/** Seats this process is attempting right now, per section: its other requests steer around them. */
type Claims = Map<number, number>;

/** `background`: a lapsed view's refresh (read in BACKGROUND_REFRESH's lane); else a request's own read. */
export type SeatLoader = (background?: boolean) => Promise<AvailableSeat[]>;
/** Every view of an event at once, by view key (a key with no available seats may be absent). */
export type EventSeatLoader = () => Promise<Map<string, AvailableSeat[]>>;

/**
 * A short-lived, per-process view of which seats of a section are available (the contract's 1-2 s stale
 * seat map). Best-available picks candidates from it; the conditional write is the truth, so staleness costs
 * at most a retry. Seats this process takes are removed at once, so its own concurrent requests spread.
 *
 * The first request for an event fills every view of it with one read (an on-sale's opening burst touches every
 * section at once); after that, reads are single-flight per section (the requests that need a section's seats at
 * once share one query), and a view past its TTL is refreshed in the background while requests keep using it (one
 * background read at a time), so neither the opening burst nor the TTL's lapse sends a read per request to the
 * database, takes the pool's connections from the hold attempts, or makes fans wait for a read.
 */
export class SectionAvailabilityCache {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Loading>();
  /** Events whose views have been filled by an event-wide read (or are being): the promise of that read. */
  private readonly events = new Map<string, Promise<void>>();
  private readonly claims = new Map<string, Claims>();
  /** Lapsed views waiting for a background read, in the order they lapsed (each once). */
  private readonly backlog = new Map<string, () => Promise<unknown>>();
  private backgroundReads = 0;
  /**
   * @param ttlMs how long a view serves before a background read refreshes it (jittered by +-25% per view)
   * @param random the jitter's source
   * @param maxBackgroundReads background refreshes in flight at once: the rest wait their turn, so the views of
   *   a whole stadium lapsing together take one of the pool's connections (by default), never all of them from the
   *   hold attempts (150 sections refreshed at once stalled every hold for 150-300 ms every 5 s).
   */
  constructor(
    private readonly ttlMs = 5000,
    private readonly random: () => number = Math.random,
    private readonly maxBackgroundReads = 1,
  ) {}

  private key(eventId: string, section: string) {
    return `${eventId}\u0000${section}`;
  }

  /**
   * The section's seats for a request, less those this process is attempting: the cached view (a lapsed one
   * starts a background refresh and is used meanwhile), else the result of a read (`fresh`).
   */
  async view(
    eventId: string,
    section: string,
    load: SeatLoader,
    loadEvent?: EventSeatLoader,
    now = Date.now(),
  ): Promise<{ seats: AvailableSeat[]; fresh: boolean }> {
    if (loadEvent && !this.events.has(eventId)) await this.fillEvent(eventId, loadEvent);
    else if (loadEvent) await this.events.get(eventId);
    const e = this.entries.get(this.key(eventId, section));
    if (e) {
      if (now - e.at >= e.ttlMs) this.refreshInBackground(eventId, section, load);
      return { seats: this.unclaimed(eventId, section, e.seats), fresh: false };
    }
    // No view yet: any read in flight will do.
    return { seats: this.unclaimed(eventId, section, await this.refresh(eventId, section, load, -Infinity)), fresh: true };
  }

  /** Queues a lapsed view's refresh behind the other background reads (once; not if a read is in flight). */
  private refreshInBackground(eventId: string, section: string, load: SeatLoader): void {
    const k = this.key(eventId, section);
    if (this.loading.has(k) || this.backlog.has(k)) return;
    const lapsed = this.entries.get(k);
    this.backlog.set(k, async () => {
      // Replaced meanwhile (a request's own read after a miss): nothing to do.
      if (this.entries.get(k) !== lapsed) return;
      await this.refresh(eventId, section, () => load(true), -Infinity);
    });
    this.drainBacklog();
  }

  private drainBacklog(): void {
    while (this.backgroundReads < this.maxBackgroundReads && this.backlog.size > 0) {
      const [k, read] = this.backlog.entries().next().value!;
      this.backlog.delete(k);
      this.backgroundReads++;
      read()
        // Ignored on purpose: A warming read that fails leaves the view unwarmed: the fan's own request reads it (and reports a database fault) then.
        .catch(() => {})
        .finally(() => {
          this.backgroundReads--;
          this.drainBacklog();
        });
    }
  }

  /** Fills every view of the event with one read, unless that has been done (or is under way). */
  async warm(eventId: string, loadEvent: EventSeatLoader): Promise<void> {
    await (this.events.get(eventId) ?? this.fillEvent(eventId, loadEvent));
  }

  /** One read for every view of the event, shared by the requests that arrive while it runs. */
  private fillEvent(eventId: string, loadEvent: EventSeatLoader): Promise<void> {
    const startedAt = Date.now();
    const filled = loadEvent().then(
      (views) => {
        for (const [section, seats] of views)
          if (!this.entries.has(this.key(eventId, section))) this.set(eventId, section, seats, startedAt);
      },
      (e: unknown) => {
        this.events.delete(eventId); // the next request tries again
        throw e;
      },
    );
    this.events.set(eventId, filled);
    return filled;
  }

  /**
   * A read of the section that started at or after `since` (a `performance.now()` time, such as when a request
   * found its view stale): joins the one in flight if it qualifies, else starts one. The result replaces the
   * cached view. Returns all available seats (claims not applied).
   */
  refresh(eventId: string, section: string, load: SeatLoader, since = performance.now()): Promise<AvailableSeat[]> {
    const k = this.key(eventId, section);
    const current = this.loading.get(k);
    if (current && current.startedAt >= since) return current.promise;
    const startedAt = performance.now();
    const at = Date.now();
    const promise = load()
      .then((seats) => this.set(eventId, section, seats, at))
      .finally(() => {
        if (this.loading.get(k)?.promise === promise) this.loading.delete(k);
      });
    this.loading.set(k, { startedAt, promise });
    return promise;
  }

  /** The cached view as it is now, claims not applied; undefined when this process has none for the section. */
  peek(eventId: string, section: string): readonly AvailableSeat[] | undefined {
    return this.entries.get(this.key(eventId, section))?.seats;
  }

  /** The cached view as it is now (with every removal and restore since its read), less claims; lapsed or not. */
  current(eventId: string, section: string): AvailableSeat[] {
    const e = this.entries.get(this.key(eventId, section));
    return e ? this.unclaimed(eventId, section, e.seats) : [];
  }

  unclaimed(eventId: string, section: string, seats: AvailableSeat[]): AvailableSeat[] {
    const c = this.claims.get(this.key(eventId, section));
    return c && c.size > 0 ? seats.filter((s) => !c.has(s.id)) : seats;
  }

  /** Whether another request of this process is attempting any of these seats now. */
  claimed(eventId: string, section: string, seatIds: readonly number[]): boolean {
    const c = this.claims.get(this.key(eventId, section));
    return c !== undefined && seatIds.some((id) => c.has(id));
  }

  claim(eventId: string, section: string, seatIds: readonly number[]): void {
    const k = this.key(eventId, section);
    let c = this.claims.get(k);
    if (!c) this.claims.set(k, (c = new Map<number, number>()));
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

  /** Replaces the view with a read's seats, kept in seat order (best-available walks them in that order). */
  set(eventId: string, section: string, seats: AvailableSeat[], at = Date.now()): AvailableSeat[] {
    const sorted = [...seats].sort(bySeat);
    this.entries.set(this.key(eventId, section), { at, ttlMs: this.ttlMs * (0.75 + 0.5 * this.random()), seats: sorted });
    return sorted;
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
    e.seats = [...e.seats, ...seats.filter((s) => !have.has(s.id))].sort(bySeat);
  }
}
