import { inPoolLane, type Db } from '../db/connect.js';
import { BACKGROUND } from '../db/pool-lanes.js';
import { DomainError } from '../errors.js';
import type { CachedEvent } from '../allocations/event-cache.js';
import type { Metrics } from '../metrics/index.js';
import type { Tier } from '../allocations/allocations.service.js';
import { BACKGROUND_REFRESH, type SectionAvailabilityCache } from './availability-cache.js';
import { bestBlocks, bestSplit, bySeat, hasRunOf, longestRun, type Block, type SingleSeatRule } from './best-available.js';
import * as repo from './holds.repository.js';
import type { AvailableSeat } from './holds.repository.js';
import { seatRange, type Attempt } from './hold-exact.js';
import { SeatDirectory } from './seat-directory.js';
import { alternativeSections, type SeatmapCache } from './seatmap.js';

/** Fresh reads of a section one hold request makes or joins before it answers SECTION_NEARLY_FULL. */
const MAX_READS = 3;

/** The availability cache's key for a section within a presale tier (the section's own code when no tiers). */
export const viewKey = (section: string, allocation: string | null) => (allocation === null ? section : `${section}\u0000${allocation}`);

/** Thrown inside the hold transaction when a section cannot seat the party; turned into a refusal outside it. */
export class SectionFull extends Error {
  constructor(
    readonly section: string,
    readonly quantity: number,
    readonly view: AvailableSeat[],
    readonly rule: SingleSeatRule | undefined,
  ) {
    super('section full');
  }
}

export interface BestAvailableDeps {
  db: Db;
  seatmap: SeatmapCache;
  availability: SectionAvailabilityCache;
  metrics?: Metrics;
  random: () => number;
  /** Conditional-write attempts before answering SECTION_NEARLY_FULL. */
  maxAttempts: number;
}

/**
 * Best available: a section and a quantity become seats, tried as candidate blocks against this process's view of
 * the section (SectionAvailabilityCache), and a refusal that says what the fan can have instead.
 */
export class BestAvailableHolds {
  private readonly availability: SectionAvailabilityCache;
  private readonly random: () => number;
  private readonly maxAttempts: number;
  /** What each seat is: a view's refresh reads only which seats are available (SeatDirectory). */
  private readonly directory = new SeatDirectory();

  constructor(private readonly deps: BestAvailableDeps) {
    this.availability = deps.availability;
    this.random = deps.random;
    this.maxAttempts = deps.maxAttempts;
  }

  /**
   * Tries candidate blocks (best tier first, randomized within a tier, steering around seats this process is
   * attempting) until one is taken whole; after a round of misses on a cached view, one fresh read.
   */
  async take(
    cached: CachedEvent,
    section: string,
    quantity: number,
    attempt: Attempt,
    allocation: string | null,
    rule?: SingleSeatRule,
    split = false,
  ): Promise<{ seats: AvailableSeat[]; expiresAt: Date }> {
    const eventId = cached.event.id;
    const cache = this.availability;
    const key = viewKey(section, allocation);
    const load = (background?: boolean) =>
      this.directory.available(background ? inPoolLane(this.deps.db, BACKGROUND_REFRESH) : this.deps.db, eventId, section, allocation);
    // After a miss, a read that started after it (shared with the section's other requests that missed before it
    // started), less our claims.
    let missedAt = performance.now();
    const reload = async (): Promise<AvailableSeat[]> => cache.unclaimed(eventId, key, await cache.refresh(eventId, key, load, missedAt));
    const { seats: first, fresh } = await cache.view(eventId, key, load, () => this.eventViews(eventId));
    let view = first;
    // The view is known stale when it came from the cache, or when an attempt missed after its read started: then,
    // before giving up on the section, a read that started after the miss (at most MAX_READS per request).
    let stale = !fresh;
    let reads = 0;
    let attempts = 0;
    while (attempts < this.maxAttempts) {
      let candidates: Block<AvailableSeat>[] = bestBlocks(view, quantity, this.maxAttempts - attempts, 3, this.random, rule);
      // No seats together and the fan takes a split: once the view is fresh (or the reads are spent), the best split
      // as one attempt (all its seats or none).
      if (candidates.length === 0 && split && (!stale || reads >= MAX_READS)) {
        const blocks = bestSplit(view, quantity, this.random, rule);
        if (blocks) candidates = [{ seats: blocks.flatMap((b) => b.seats).sort(bySeat), score: 0, tier: 0 }];
      }
      if (candidates.length === 0) {
        if (!stale || reads >= MAX_READS) break;
        view = await reload();
        reads++;
        stale = false;
        continue;
      }
      const tried = new Set<number>();
      for (const block of candidates) {
        // A miss shows the view is stale: read again (while reads remain) rather than try more of it.
        if (stale && tried.size > 0 && reads < MAX_READS) break;
        const ids = block.seats.map((s) => s.id);
        // Another request of this process took up part of this block since the candidates were picked: not ours to try.
        if (cache.claimed(eventId, key, ids)) continue;
        attempts++;
        for (const s of block.seats) tried.add(s.id);
        cache.claim(eventId, key, ids);
        try {
          const { taken, expiresAt } = await attempt(ids);
          if (expiresAt) {
            this.deps.metrics?.holdAttempts.inc({ event: eventId, section, outcome: 'hit' });
            cache.remove(eventId, key, ids);
            return { seats: block.seats, expiresAt };
          }
          this.deps.metrics?.holdAttempts.inc({ event: eventId, section, outcome: 'miss' });
          missedAt = performance.now();
          stale = true;
          const got = new Set(taken);
          cache.remove(
            eventId,
            key,
            ids.filter((id) => !got.has(id)),
          );
        } finally {
          cache.unclaim(eventId, key, ids);
        }
      }
      if (stale && reads < MAX_READS) {
        view = (await reload()).filter((s) => !tried.has(s.id));
        reads++;
        stale = false;
      } else {
        // The shared view, with what this process's other requests have learnt since (their hits and misses).
        view = cache.current(eventId, key).filter((s) => !tried.has(s.id));
      }
    }
    throw new SectionFull(section, quantity, view, rule);
  }

  /** Every view of an event (by section and presale tier) from one read. */
  private async eventViews(eventId: string, db: Db = this.deps.db): Promise<Map<string, AvailableSeat[]>> {
    const views = new Map<string, AvailableSeat[]>();
    const seats: AvailableSeat[] = [];
    for (const { sectionCode, allocation, ...seat } of await repo.findAvailableSeatsOfEvent(db, eventId)) {
      const k = viewKey(sectionCode, allocation);
      const list = views.get(k);
      if (list) list.push(seat);
      else views.set(k, [seat]);
      seats.push(seat);
    }
    this.directory.learn(eventId, seats);
    return views;
  }

  /**
   * Fills this process's views of the events whose on-sale opens within the next two minutes or opened within
   * the last hour (the rush), so their first fans do not wait for the read. Run every few seconds by the store API.
   */
  async warmOpening(): Promise<void> {
    // Outside any request: the standard lane, whatever lane the service's Db is in (the store's: the hold's).
    const db = inPoolLane(this.deps.db, BACKGROUND);
    for (const id of await repo.eventsInRush(db)) await this.availability.warm(id, () => this.eventViews(id, db));
  }

  /**
   * SECTION_SOLD_OUT or SECTION_NEARLY_FULL, with sections that can seat the party now (from the seat map). When the
   * party cannot sit together in the section, the refusal also offers what it can have there: `split`, the best split
   * of the party (a hold request with `split: true` takes it), and `together`, the most seats that sit together.
   */
  async refusal(
    cached: CachedEvent,
    section: string,
    quantity: number,
    view: AvailableSeat[],
    tier: Tier | null,
    rule: SingleSeatRule | undefined,
  ) {
    // Alternatives from the fan's own tier: seats of another tier are not theirs to hold; and, where this process has
    // a view of the section, only those where the party can sit together (a count alone sent parties from one
    // section of single holes to the next).
    const map = await this.deps.seatmap.get(cached.event.id, cached.sections, tier ?? undefined, this.deps.db);
    const allocation = tier?.code ?? null;
    const together = (code: string) => {
      const seen = this.availability.peek(cached.event.id, viewKey(code, allocation));
      return seen === undefined ? undefined : hasRunOf(seen, quantity);
    };
    const alternatives = alternativeSections(map, cached.sections.get(section)!, quantity, together);
    if (view.length === 0)
      return new DomainError('conflict', 'SECTION_SOLD_OUT', `section ${section} has no seats left; try another section`, {
        field: 'section',
        alternatives,
      });
    const most = longestRun(view);
    if (most >= quantity)
      return new DomainError('conflict', 'SECTION_NEARLY_FULL', `section ${section} is nearly full; try another section`, {
        field: 'section',
        alternatives,
      });
    const split = bestSplit(view, quantity, this.random, rule);
    const offers = [
      ...(split
        ? [`${quantity} seats as ${split.map((b) => b.seats.length).join(' + ')} (${split.map((b) => seatRange(b.seats)).join('; ')})`]
        : []),
      `${most} ${most === 1 ? 'seat' : 'seats together'}`,
      ...(alternatives.length > 0 ? ['another section'] : []),
    ];
    return new DomainError(
      'conflict',
      'SECTION_NEARLY_FULL',
      `section ${section} has no ${quantity} seats together; you can have ${offers.slice(0, -1).join(', ')}${offers.length > 1 ? ' or ' : ''}${offers[offers.length - 1]}`,
      {
        field: 'section',
        alternatives,
        together: most,
        ...(split ? { split: split.map((b) => ({ row: b.seats[0]!.rowLabel, seats: b.seats.map((s) => s.seatNumber) })) } : {}),
      },
    );
  }
}
