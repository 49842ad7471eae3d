import { createHash, randomUUID } from 'node:crypto';
import type { Db, Trx } from '../db/connect.js';
import { DomainError, invalid, notFound } from '../errors.js';
import type { CachedEvent, EventCache } from '../events/event-cache.js';
import { isUuid } from '../ids.js';
import type { Metrics } from '../metrics/index.js';
import { SectionAvailabilityCache } from './availability-cache.js';
import { bestBlocks, bestSplit, bySeat, hasRunOf, leftAlone, longestRun, type Block, type SingleSeatRule } from './best-available.js';
import { PartyMix } from './party-mix.js';
import * as repo from './holds.repository.js';
import type { AvailableSeat } from './holds.repository.js';
import { HoldBatcher, ReleaseBatcher } from './hold-batcher.js';
import type { HoldCommit } from './hold-commit.js';
import type { HoldRequest } from './holds.schema.js';
import type { HoldStatus } from './inventory.table.js';
import { assertSeatLimits, HeldUnderKey, holdExpired, holdLapsed, type HoldKey } from './hold-rules.js';
import { alternativeSections, type SeatmapCache } from './seatmap.js';
import { emitAvailability } from '../waitlist/availability.js';
import { moveGaUnits, unitsOfHold, type HeldUnits } from './ga.repository.js';
import { GaUnavailable, GeneralAdmission, isGeneralAdmission } from './ga.service.js';
import { assertTierSelling, tierOfAdmission, type Tier } from '../allocations/allocations.service.js';
import { assertNotBlocked } from '../support/blocks.js';

/** Fresh reads of a section one hold request makes or joins before it answers SECTION_NEARLY_FULL. */
const MAX_READS = 3;

/** The availability cache's key for a section within a presale tier (the section's own code when no tiers). */
const viewKey = (section: string, allocation: string | null) => (allocation === null ? section : `${section}\u0000${allocation}`);

export interface HeldSeat {
  id: number;
  section: string;
  row: string;
  number: number;
  priceCents: number;
}

export type FanHoldStatus = Exclude<HoldStatus, 'WAITLIST'>;

/** A hold as a fan sees it. `status` applies read-time expiry: a lapsed hold reads EXPIRED. */
export interface Hold {
  holdId: string;
  eventId: string;
  /** A fan's hold is never WAITLIST (those belong to the system's waitlist account). */
  status: FanHoldStatus;
  seats: HeldSeat[];
  /** General admission: the hold's units per section (a GA hold has no seats). */
  units?: HeldUnits[];
  quantity: number;
  amountCents: number;
  expiresAt: Date;
  extended: boolean;
}

export interface HoldServiceDeps {
  db: Db;
  events: EventCache;
  seatmap: SeatmapCache;
  availability?: SectionAvailabilityCache;
  metrics?: Metrics;
  /** Told of every hold made (true) or refused for want of seats (false): the admission controller's signal. */
  onOutcome?: (eventId: string, created: boolean) => void;
  /** Conditional-write attempts before answering SECTION_NEARLY_FULL. */
  maxAttempts?: number;
  /** How hold attempts and releases commit (see HoldCommit); default 'async'. */
  holdCommit?: HoldCommit;
  random?: () => number;
  now?: () => number;
  /**
   * A fan's identical hold request (no Idempotency-Key) within this many seconds of a live hold it made returns
   * that hold rather than a second (default 30): a retry whose first answer was lost. 0 turns it off.
   */
  repeatWindowSeconds?: number;
}

/** A hold request's answer, and whether it is an earlier request's hold given again (`Idempotent-Replayed`). */
export interface HoldAnswer {
  hold: Hold;
  replayed: boolean;
}

/** The hash a hold made under an Idempotency-Key keeps of its request: the same key with another request is refused. */
export function holdRequestHash(req: HoldRequest, tier: string | undefined): string {
  const canonical =
    'seatIds' in req
      ? { tier: tier ?? null, seatIds: [...req.seatIds].sort((a, b) => a - b) }
      : { tier: tier ?? null, section: req.section, quantity: req.quantity, ...(req.split ? { split: true } : {}) };
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

/** Adjacent seats of one row in words: "row C seats 5-6", "row C seat 5". */
function seatRange(seats: readonly AvailableSeat[]): string {
  const first = seats[0]!;
  const last = seats[seats.length - 1]!;
  return seats.length === 1
    ? `row ${first.rowLabel} seat ${first.seatNumber}`
    : `row ${first.rowLabel} seats ${first.seatNumber}-${last.seatNumber}`;
}

/**
 * The single-seat rule on an exact-seat pick, judged on a fresh read of its rows (`free`: their free seats of the fan's
 * tier): refused (`SINGLE_SEAT_LEFT`, with the seats it would leave alone and the same number of seats that would not)
 * when it leaves a seat alone that a pick of as many seats in the same run would not. A pick of a seat that is not free
 * goes on to its attempt, which answers SEATS_UNAVAILABLE.
 */
function assertLeavesNoSingle(free: AvailableSeat[], seatIds: number[]): void {
  const freeIds = new Set(free.map((s) => s.id));
  if (!seatIds.every((id) => freeIds.has(id))) return;
  const { avoidable, instead } = leftAlone(free, new Set(seatIds));
  if (avoidable.length === 0) return;
  const alone = avoidable.map((s) => `${s.rowLabel}${s.seatNumber}`).join(', ');
  const other = instead.map((b) => seatRange(b)).join(' and ');
  const one = avoidable.length === 1;
  throw new DomainError(
    'conflict',
    'SINGLE_SEAT_LEFT',
    `those seats would leave ${one ? 'seat' : 'seats'} ${alone} on ${one ? 'its' : 'their'} own, which nobody could then sit in with anyone; pick ${other} instead, or add ${alone} to your seats`,
    { field: 'seatIds', seats: avoidable.map((s) => s.id), instead: instead.flat().map((s) => s.id) },
  );
}

/** Thrown inside the hold transaction when a section cannot seat the party; turned into a refusal outside it. */
class SectionFull extends Error {
  constructor(
    readonly section: string,
    readonly quantity: number,
    readonly view: AvailableSeat[],
    readonly rule: SingleSeatRule | undefined,
  ) {
    super('section full');
  }
}

const keyReused = () =>
  new DomainError('invalid', 'IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used for a different hold request', {
    field: 'idempotency-key',
  });

/** A hold-scoped request must come with admission to the hold's own event. */
export function assertAdmittedFor(holdEventId: string, admittedEventId: string | undefined): void {
  if (admittedEventId !== undefined && admittedEventId !== holdEventId)
    throw new DomainError('forbidden', 'ADMISSION_WRONG_EVENT', 'the admission token is for another event', { field: 'x-admission-token' });
}

type Attempt = (seatIds: number[]) => Promise<{ used: number; taken: number[]; expiresAt: Date | null }>;

/** A fan touches only their own hold (HOLD_NOT_FOUND, HOLD_NOT_OWNED), with admission to its event when they carry one. */
function assertOwned<R extends { account_id: string; event_id: string }>(
  row: R | undefined,
  holdId: string,
  accountId: string,
  admittedEventId?: string,
): R {
  if (!row) throw notFound('HOLD_NOT_FOUND', `no hold ${holdId}`, 'id');
  if (row.account_id !== accountId)
    throw new DomainError('forbidden', 'HOLD_NOT_OWNED', 'this hold belongs to another account', { field: 'id' });
  assertAdmittedFor(row.event_id, admittedEventId);
  return row;
}

/** One fan's request to release one of their holds. */
export interface ReleaseRequest {
  accountId: string;
  holdId: string;
  /** The event the fan's admission token is for, when the request carries one. */
  admittedEventId?: string;
}

/** Who is asking, beyond the account: the device the request came from (its deviceFingerprint). */
export interface HoldRequester {
  deviceHash?: string | null;
  /** The presale tier the fan's admission is for (AdmissionTokenClaims.tier); absent: the general sale. */
  tier?: string;
}

/**
 * Holds: server-assigned best-available as conditional writes, with read-time expiry, the per-account
 * limit enforced atomically, and a truthful answer for hot sections. A hold attempt is one statement (its own
 * transaction); extend and release run in the caller's transaction.
 */
export class HoldService {
  private readonly availability: SectionAvailabilityCache;
  private readonly batcher: HoldBatcher;
  private readonly releases: ReleaseBatcher<ReleaseRequest, Hold>;
  private readonly generalAdmission: GeneralAdmission;
  private readonly maxAttempts: number;
  private readonly commit: HoldCommit;
  private readonly random: () => number;
  private readonly now: () => number;
  /** The party sizes this process sees asked for, per event: the single-seat rule leaves runs they can fill. */
  private readonly mix = new PartyMix();

  constructor(private readonly deps: HoldServiceDeps) {
    this.availability = deps.availability ?? new SectionAvailabilityCache();
    this.commit = deps.holdCommit ?? 'async';
    this.batcher = new HoldBatcher(deps.db, this.commit);
    this.releases = new ReleaseBatcher<ReleaseRequest, Hold>(deps.db, this.commit, (trx, reqs) => this.releaseMany(trx, reqs));
    this.generalAdmission = new GeneralAdmission({
      db: deps.db,
      seatmap: deps.seatmap,
      commit: this.commit,
      metrics: deps.metrics,
      random: deps.random,
    });
    this.maxAttempts = deps.maxAttempts ?? 8;
    this.random = deps.random ?? Math.random;
    this.now = deps.now ?? Date.now;
  }

  private readonly inFlight = new Map<string, { hash: string; answer: Promise<HoldAnswer> }>();

  /**
   * A hold request as the store API takes it: idempotent. With an Idempotency-Key, a retry gets the hold the key
   * made (whatever became of it since) and the key with another request is `400 IDEMPOTENCY_KEY_REUSED`; without
   * one, an identical request within `repeatWindowSeconds` of a live hold it made gets that hold. Either way the
   * fan's own limit never refuses the retry of a hold whose answer was lost. Identical requests in flight at once
   * in this process share one attempt. The key is written with the hold in the hold's own statement, which reads
   * the key under the account's lock first: across processes the second request with a key takes nothing and answers
   * with the first's hold, and a hold whose process died before answering is found by its key on the retry.
   */
  async hold(
    accountId: string,
    eventId: string,
    req: HoldRequest,
    requester: HoldRequester = {},
    idempotencyKey?: string,
  ): Promise<HoldAnswer> {
    const hash = holdRequestHash(req, requester.tier);
    const flight = `${eventId}\n${accountId}\n${idempotencyKey === undefined ? `=${hash}` : `#${idempotencyKey}`}`;
    const joined = this.inFlight.get(flight);
    if (joined) {
      if (joined.hash !== hash) throw keyReused();
      return { hold: (await joined.answer).hold, replayed: true };
    }
    const answer = this.holdOnce(accountId, eventId, req, requester, hash, idempotencyKey);
    this.inFlight.set(flight, { hash, answer });
    try {
      return await answer;
    } finally {
      this.inFlight.delete(flight);
    }
  }

  private async holdOnce(
    accountId: string,
    eventId: string,
    req: HoldRequest,
    requester: HoldRequester,
    hash: string,
    key: string | undefined,
  ): Promise<HoldAnswer> {
    const db = this.deps.db;
    if (!isUuid(eventId)) throw notFound('EVENT_NOT_FOUND', `no event ${eventId}`, 'id');
    if (key !== undefined) {
      const made = await repo.findHoldByKey(db, eventId, accountId, key);
      if (made) {
        if (made.request_hash !== hash) throw keyReused();
        return { hold: await this.get(db, accountId, made.id), replayed: true };
      }
    } else if ((this.deps.repeatWindowSeconds ?? 30) > 0) {
      const allocation = tierOfAdmission((await this.deps.events.get(eventId)).tiers, requester.tier)?.code ?? null;
      const repeat = await repo.findRepeatHold(db, eventId, accountId, req, allocation, this.deps.repeatWindowSeconds ?? 30);
      if (repeat) return { hold: await this.get(db, accountId, repeat), replayed: true };
    }
    try {
      // The key is written with the hold, in its statement: a hold commits with its key or not at all.
      return {
        hold: await this.create(accountId, eventId, req, requester, key === undefined ? undefined : { key, requestHash: hash }),
        replayed: false,
      };
    } catch (e) {
      if (!(e instanceof HeldUnderKey)) throw e;
      // A request with the same key made its hold first (on another process, or one whose answer was lost): that one.
      const made = await repo.findHoldByKey(db, eventId, accountId, key!);
      if (!made) throw new DomainError('unavailable', 'HOLD_RACE', 'please retry', { retryAfterSeconds: 1 });
      if (made.request_hash !== hash) throw keyReused();
      return { hold: await this.get(db, accountId, made.id), replayed: true };
    }
  }

  /**
   * Creates a hold in one transaction of its own; with `key`, the hold is written with its Idempotency-Key (and
   * HeldUnderKey is thrown, nothing taken, when the fan has a hold under that key already). The event's settings come from the cache before the
   * transaction opens, and a refusal's alternatives are computed after it ends, so a transaction holds one
   * pool connection and never waits for another.
   */
  async create(accountId: string, eventId: string, req: HoldRequest, requester: HoldRequester = {}, key?: HoldKey): Promise<Hold> {
    const started = performance.now();
    // Metrics are labelled with events that exist only: an id from the URL never becomes a label value.
    let known = false;
    try {
      const cached = await this.deps.events.get(eventId);
      known = true;
      assertNotBlocked(cached.blockedAccounts, accountId);
      this.validate(cached, req);
      const tier = tierOfAdmission(cached.tiers, requester.tier);
      if (tier) assertTierSelling(tier, this.now());
      let hold: Hold;
      try {
        if (isGeneralAdmission(cached, req))
          hold = await this.generalAdmission.hold(cached, accountId, req, requester.deviceHash ?? null, tier?.code ?? null, key);
        else hold = await this.createIn(cached, accountId, req, requester.deviceHash ?? null, tier, key);
      } catch (e) {
        if (e instanceof SectionFull) {
          this.deps.onOutcome?.(eventId, false);
          throw await this.sectionRefusal(cached, e.section, e.quantity, e.view, tier, e.rule);
        }
        if (e instanceof GaUnavailable) {
          this.deps.onOutcome?.(eventId, false);
          throw e.error;
        }
        throw e;
      }
      this.deps.onOutcome?.(eventId, true);
      this.deps.metrics?.holdsCreated.inc({ event: eventId });
      this.deps.metrics?.holdLatency.observe((performance.now() - started) / 1000);
      return hold;
    } catch (e) {
      if (e instanceof DomainError && known) this.deps.metrics?.holdFailures.inc({ event: eventId, code: e.code });
      throw e;
    }
  }

  private validate({ event, sections }: CachedEvent, req: HoldRequest) {
    const now = this.now();
    if (now < event.onsaleAt.getTime())
      throw new DomainError('conflict', 'ONSALE_NOT_OPEN', `the on-sale opens at ${event.onsaleAt.toISOString()}`, {
        opensAt: event.onsaleAt.toISOString(),
      });
    const quantity = 'seatIds' in req ? req.seatIds.length : req.quantity;
    if (quantity > event.perAccountSeatLimit)
      throw invalid(
        'QUANTITY_ABOVE_LIMIT',
        `at most ${event.perAccountSeatLimit} seats per account for this event`,
        'seatIds' in req ? 'seatIds' : 'quantity',
        {
          limit: event.perAccountSeatLimit,
        },
      );
    if ('section' in req && !sections.has(req.section))
      throw notFound('SECTION_NOT_FOUND', `event has no section ${req.section}`, 'section');
    if ('seatIds' in req) {
      if (now < event.seatPickingOpensAt.getTime())
        throw new DomainError(
          'conflict',
          'SEAT_PICKING_NOT_OPEN',
          `picking exact seats opens at ${event.seatPickingOpensAt.toISOString()}; until then ask for a section and quantity`,
          {
            field: 'seatIds',
            opensAt: event.seatPickingOpensAt.toISOString(),
          },
        );
      if (new Set(req.seatIds).size !== req.seatIds.length) throw invalid('DUPLICATE_SEAT', 'a seat is listed twice', 'seatIds');
    }
  }

  /** Each attempt is one statement and so one transaction (see `attemptHold`): no transaction spans attempts. */
  private async createIn(
    cached: CachedEvent,
    accountId: string,
    req: HoldRequest,
    deviceHash: string | null,
    tier: Tier | null,
    key?: HoldKey,
  ): Promise<Hold> {
    const db = this.deps.db;
    const { event } = cached;
    const allocation = tier?.code ?? null;
    const quantity = 'seatIds' in req ? req.seatIds.length : req.quantity;
    const holdId = randomUUID();
    // "No single seats" (the event's setting), judged against the party sizes still coming.
    const rule: SingleSeatRule | undefined = event.noSingleSeats ? { fills: this.mix.record(event.id, quantity) } : undefined;
    // Best-available attempts go through the batcher (their blocks are claimed in memory, so a batch's seats are
    // disjoint); exact-seat picks run alone.
    const run =
      'seatIds' in req ? (a: repo.HoldAttempt) => repo.attemptHold(db, a, this.commit) : (a: repo.HoldAttempt) => this.batcher.attempt(a);
    const attempt = async (seatIds: number[]) => {
      const r = await run({
        eventId: event.id,
        holdId,
        accountId,
        sectionCode: 'section' in req ? req.section : null,
        seatIds,
        ttlSeconds: event.holdTtlSeconds,
        limit: event.perAccountSeatLimit,
        deviceHash,
        deviceLimit: event.perDeviceSeatLimit,
        allocation,
        idempotencyKey: key?.key ?? null,
        requestHash: key?.requestHash ?? null,
      });
      if (r.keyed) throw new HeldUnderKey(r.keyed);
      assertSeatLimits({
        quantity,
        used: r.used,
        limit: event.perAccountSeatLimit,
        field: 'quantity',
        device: { hash: deviceHash, used: r.deviceUsed, limit: event.perDeviceSeatLimit },
      });
      return r;
    };

    if ('seatIds' in req) {
      const expiresAt = await this.takeExact(db, event.id, req.seatIds, attempt, tier, rule !== undefined);
      const seats = await repo.seatsOfHold(db, holdId);
      return {
        holdId,
        eventId: event.id,
        status: 'HELD',
        seats,
        quantity,
        amountCents: seats.reduce((a, s) => a + s.priceCents, 0),
        expiresAt,
        extended: false,
      };
    }
    const { seats: taken, expiresAt } = await this.takeBestAvailable(
      db,
      cached,
      req.section,
      req.quantity,
      attempt,
      allocation,
      rule,
      req.split,
    );
    const priceCents = cached.sections.get(req.section)!.priceCents;
    const seats = taken.map((s) => ({ id: s.id, section: req.section, row: s.rowLabel, number: s.seatNumber, priceCents }));
    return { holdId, eventId: event.id, status: 'HELD', seats, quantity, amountCents: priceCents * quantity, expiresAt, extended: false };
  }

  private async takeExact(
    db: Db,
    eventId: string,
    seatIds: number[],
    attempt: Attempt,
    tier: Tier | null,
    noSingleSeats: boolean,
  ): Promise<Date> {
    // The picked seats' rows in one read: the picks themselves, and what the single-seat rule judges them on.
    const rows = await repo.findSeatsInRowsOf(db, eventId, seatIds);
    const picked = new Set(seatIds);
    const existing = rows.filter((r) => picked.has(r.id));
    if (existing.length !== seatIds.length) {
      const known = new Set(existing.map((r) => r.id));
      throw new DomainError('not_found', 'SEAT_NOT_FOUND', 'some seats are not part of this event', {
        field: 'seatIds',
        missing: seatIds.filter((id) => !known.has(id)),
      });
    }
    const elsewhere = tier ? existing.filter((r) => r.allocation !== tier.code).map((r) => r.id) : [];
    if (tier && elsewhere.length > 0)
      throw new DomainError('conflict', 'SEAT_NOT_IN_TIER', `some seats are not part of the ${tier.name} sale`, {
        field: 'seatIds',
        tier: tier.code,
        seats: elsewhere,
      });
    if (noSingleSeats) {
      const allocation = tier?.code ?? null;
      assertLeavesNoSingle(
        rows.filter((r) => r.free && r.allocation === allocation),
        seatIds,
      );
    }
    const r = await attempt(seatIds);
    if (!r.expiresAt) {
      const got = new Set(r.taken);
      throw new DomainError('conflict', 'SEATS_UNAVAILABLE', 'some of those seats are no longer available', {
        field: 'seatIds',
        unavailable: seatIds.filter((id) => !got.has(id)),
      });
    }
    return r.expiresAt;
  }

  /**
   * Tries candidate blocks (best tier first, randomized within a tier, steering around seats this process is
   * attempting) until one is taken whole; after a round of misses on a cached view, one fresh read.
   */
  private async takeBestAvailable(
    db: Db,
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
    const load = () => repo.findAvailableSeats(db, eventId, section, allocation);
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
  private async eventViews(eventId: string): Promise<Map<string, AvailableSeat[]>> {
    const views = new Map<string, AvailableSeat[]>();
    for (const { sectionCode, allocation, ...seat } of await repo.findAvailableSeatsOfEvent(this.deps.db, eventId)) {
      const k = viewKey(sectionCode, allocation);
      const list = views.get(k);
      if (list) list.push(seat);
      else views.set(k, [seat]);
    }
    return views;
  }

  /**
   * Fills this process's views of the events whose on-sale opens within the next two minutes or opened within
   * the last hour (the rush), so their first fans do not wait for the read. Run every few seconds by the store API.
   */
  async warmOpening(): Promise<void> {
    for (const id of await repo.eventsInRush(this.deps.db)) await this.availability.warm(id, () => this.eventViews(id));
  }

  /**
   * SECTION_SOLD_OUT or SECTION_NEARLY_FULL, with sections that can seat the party now (from the seat map). When the
   * party cannot sit together in the section, the refusal also offers what it can have there: `split`, the best split
   * of the party (a hold request with `split: true` takes it), and `together`, the most seats that sit together.
   */
  private async sectionRefusal(
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
    const map = await this.deps.seatmap.get(cached.event.id, cached.sections, tier ?? undefined);
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

  /** The fan's own hold, or HOLD_NOT_FOUND / HOLD_NOT_OWNED. */
  async get(db: Db | Trx, accountId: string, holdId: string, admittedEventId?: string): Promise<Hold> {
    const row = await this.owned(db, accountId, holdId, false, admittedEventId);
    return this.toHold(db, row);
  }

  /** The single extension, granted while the hold is live and not yet extended. */
  async extend(trx: Trx, accountId: string, holdId: string, admittedEventId?: string): Promise<Hold> {
    const row = await this.owned(trx, accountId, holdId, true, admittedEventId);
    this.assertLive(row);
    if (row.extended) throw new DomainError('conflict', 'HOLD_ALREADY_EXTENDED', 'a hold can be extended once');
    if (row.hold_extension_seconds === 0) throw new DomainError('conflict', 'EXTENSION_NOT_OFFERED', 'this event offers no hold extension');
    const expiresAt = new Date(row.expires_at.getTime() + row.hold_extension_seconds * 1000);
    await repo.setHoldExpiry(trx, holdId, expiresAt, { extended: true });
    return this.toHold(trx, { ...row, expires_at: expiresAt, extended: true });
  }

  /** Gives the seats back. Releasing an already released or lapsed hold is a no-op that reports its state. */
  async release(trx: Trx, accountId: string, holdId: string, admittedEventId?: string): Promise<Hold> {
    const [r] = await this.releaseMany(trx, [{ accountId, holdId, admittedEventId }]);
    if (r instanceof Error) throw r;
    return r!;
  }

  /**
   * A fan's release through the release batcher: releases arriving within a few milliseconds share one
   * transaction (a handful of statements and one commit for all of them); each is still checked and answered alone.
   */
  releaseQueued(accountId: string, holdId: string, admittedEventId?: string): Promise<Hold> {
    return this.releases.release({ accountId, holdId, admittedEventId });
  }

  /**
   * Releases in the caller's transaction, each checked on its own (not found, another fan's, another event's
   * admission, a payment in flight, paid for): a refusal is that request's answer alone, as a DomainError in its
   * place. Holds are locked in id order; the seats of all of them go back in one statement, GA units in another,
   * and the waitlist hears once per event and cause.
   */
  async releaseMany(trx: Trx, reqs: ReleaseRequest[]): Promise<(Hold | DomainError)[]> {
    // Back in this process's view at once (a stale view only costs a miss; the write decides).
    return releaseHolds(trx, reqs, (eventId, key, seats) => this.availability.restore(eventId, key, seats));
  }

  private async owned(
    db: Db | Trx,
    accountId: string,
    holdId: string,
    lock: true,
    admittedEventId?: string,
  ): Promise<NonNullable<Awaited<ReturnType<typeof repo.lockHoldWithEvent>>>>;
  private async owned(
    db: Db | Trx,
    accountId: string,
    holdId: string,
    lock: false,
    admittedEventId?: string,
  ): Promise<NonNullable<Awaited<ReturnType<typeof repo.findHold>>>>;
  private async owned(db: Db | Trx, accountId: string, holdId: string, lock: boolean, admittedEventId?: string) {
    const row = isUuid(holdId) ? (lock ? await repo.lockHoldWithEvent(db as Trx, holdId) : await repo.findHold(db, holdId)) : undefined;
    return assertOwned(row, holdId, accountId, admittedEventId);
  }

  private assertLive(row: { status: HoldStatus; expires_at: Date }) {
    if (row.status === 'PURCHASED') throw new DomainError('conflict', 'HOLD_PURCHASED', 'this hold has been paid for');
    if (row.status === 'RELEASED') throw new DomainError('conflict', 'HOLD_RELEASED', 'this hold was released');
    if (holdLapsed(row, this.now())) throw holdExpired();
    if (row.status === 'PAYING') throw new DomainError('conflict', 'CHECKOUT_IN_PROGRESS', 'a payment for this hold is in progress');
  }

  private async toHold(
    db: Db | Trx,
    row: { id: string; event_id: string; status: HoldStatus; quantity: number; expires_at: Date; extended: boolean },
  ): Promise<Hold> {
    const lapsed = (row.status === 'HELD' || row.status === 'PAYING') && row.expires_at.getTime() <= this.now();
    // owned() admits only the fan's own holds, never the waitlist account's.
    const status = lapsed ? 'EXPIRED' : (row.status as FanHoldStatus);
    const owns = status === 'HELD' || status === 'PAYING' || status === 'PURCHASED';
    const seats = owns ? await repo.seatsOfHold(db, row.id) : [];
    // A hold that owns no seats is a general-admission hold: its units instead.
    const units = owns && seats.length === 0 ? await unitsOfHold(db, row.id) : [];
    return {
      holdId: row.id,
      eventId: row.event_id,
      status,
      seats,
      ...(units.length > 0 ? { units } : {}),
      quantity: row.quantity,
      amountCents: seats.reduce((a, s) => a + s.priceCents, 0) + units.reduce((a, u) => a + u.quantity * u.priceCents, 0),
      expiresAt: row.expires_at,
      extended: row.extended,
    };
  }
}

/**
 * Releases in the caller's transaction, each checked on its own (not found, another fan's, another event's
 * admission, a payment in flight, paid for): a refusal is that request's answer alone, as a DomainError in its
 * place. Holds are locked in id order; the seats of all of them go back in one statement, GA units in another,
 * and the waitlist hears once per event and cause. `restored` is told of seats back on open sale (a process's
 * availability view); fan support releases a fan's hold through this too, as that fan.
 */
export async function releaseHolds(
  trx: Trx,
  reqs: ReleaseRequest[],
  restored?: (eventId: string, viewKey: string, seats: AvailableSeat[]) => void,
): Promise<(Hold | DomainError)[]> {
  const ids = [...new Set(reqs.map((r) => r.holdId).filter(isUuid))];
  const rows = new Map((ids.length > 0 ? await repo.lockHoldsWithEvent(trx, ids) : []).map((r) => [r.id, r]));
  const out: (Hold | DomainError)[] = [];
  const releasing = new Map<string, { row: NonNullable<ReturnType<typeof rows.get>>; lapsed: boolean }>();
  for (const req of reqs) {
    try {
      const row = assertOwned(rows.get(req.holdId), req.holdId, req.accountId, req.admittedEventId);
      const lapsed = row.expires_at.getTime() <= row.db_now.getTime();
      if (row.status === 'PAYING' && !lapsed)
        throw new DomainError('conflict', 'CHECKOUT_IN_PROGRESS', 'a payment for this hold is in progress');
      if (row.status === 'PURCHASED') throw new DomainError('conflict', 'HOLD_PURCHASED', 'this hold has been paid for');
      if (row.status === 'HELD' || row.status === 'PAYING') {
        releasing.set(row.id, { row, lapsed });
        row.status = lapsed ? 'EXPIRED' : 'RELEASED'; // a second request for the same hold reports the new state
      }
      out.push({
        holdId: row.id,
        eventId: row.event_id,
        status: row.status as FanHoldStatus,
        seats: [],
        quantity: row.quantity,
        amountCents: 0,
        expiresAt: row.expires_at,
        extended: row.extended,
      });
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      out.push(e);
    }
  }
  if (releasing.size === 0) return out;

  const released = await repo.releaseHoldsSeats(
    trx,
    [...releasing.values()].map(({ row, lapsed }) => ({ holdId: row.id, status: lapsed ? 'EXPIRED' : 'RELEASED' })),
  );
  // A hold without seats is general admission: its units go back to their shards' counters.
  const withSeats = new Set(released.map((r) => r.holdId));
  await moveGaUnits(
    trx,
    [...releasing.keys()].filter((id) => !withSeats.has(id)),
    'HELD',
    'RETURNED',
  );
  // Seats came back: the waitlist hears of it in this transaction (after a sell-out they go to it, not on sale),
  // once per event and cause. Its fan-out job goes through the worker's relay (see emitAvailability).
  const groups = new Map<string, { eventId: string; cause: 'HOLD_EXPIRED' | 'HOLD_RELEASED'; seats: typeof released }>();
  for (const seat of released) {
    const { row, lapsed } = releasing.get(seat.holdId)!;
    const cause = lapsed ? 'HOLD_EXPIRED' : 'HOLD_RELEASED';
    const k = `${row.event_id}\u0000${cause}`;
    const g = groups.get(k) ?? groups.set(k, { eventId: row.event_id, cause, seats: [] }).get(k)!;
    g.seats.push(seat);
  }
  for (const g of groups.values()) {
    const emitted = await emitAvailability(trx, g.eventId, g.cause, g.seats, { deferFanout: true });
    // Pooled seats are the waitlist's; the rest are on sale again.
    if (emitted?.pooled) continue;
    const byView = new Map<string, AvailableSeat[]>();
    for (const r of g.seats) {
      const key = viewKey(r.sectionCode, r.allocation);
      byView.set(key, [...(byView.get(key) ?? []), r]);
    }
    for (const [key, seats] of byView) restored?.(g.eventId, key, seats);
  }
  return out;
}
