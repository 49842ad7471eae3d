import { randomUUID } from 'node:crypto';
import type { Db, Trx } from '../db/connect.js';
import { DomainError, invalid, notFound } from '../errors.js';
import type { CachedEvent, EventCache } from '../allocations/event-cache.js';
import { isUuid } from '../ids.js';
import type { Metrics } from '../metrics/index.js';
import { SectionAvailabilityCache } from './availability-cache.js';
import type { SingleSeatRule } from './best-available.js';
import { PartyMix } from './party-mix.js';
import * as repo from './holds.repository.js';
import { HoldBatcher, ReleaseBatcher } from './hold-batcher.js';
import type { HoldCommit } from './hold-commit.js';
import type { HoldRequest } from './holds.schema.js';
import type { HoldStatus } from './inventory.table.js';
import { assertSeatLimits, HeldUnderKey, holdExpired, holdLapsed, type HoldKey } from './hold-rules.js';
import type { SeatmapCache } from './seatmap.js';
import { unitsOfHold } from './ga.repository.js';
import { GaUnavailable, GeneralAdmission, isGeneralAdmission } from './ga.service.js';
import { assertTierSelling, tierOfAdmission, type Tier } from '../allocations/allocations.service.js';
import { assertNotBlocked } from '../events/blocks.js';
import { HoldReplay } from './hold-replay.js';
import { takeExact } from './hold-exact.js';
import { BestAvailableHolds, SectionFull } from './hold-best-available.js';
import { assertOwned, releaseHolds } from './hold-release.js';
import type { FanHoldStatus, Hold, HoldAnswer, HoldRequester, ReleaseRequest } from './hold-types.js';

// The hold service's parts, re-exported where their callers have always found them.
export type { FanHoldStatus, HeldSeat, Hold, HoldAnswer, HoldRequester, ReleaseRequest } from './hold-types.js';
export { holdRequestHash } from './hold-replay.js';
export { assertAdmittedFor, releaseHolds } from './hold-release.js';

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

/**
 * Holds: server-assigned best-available as conditional writes, with read-time expiry, the per-account
 * limit enforced atomically, and a truthful answer for hot sections. A hold attempt is one statement (its own
 * transaction); extend and release run in the caller's transaction. Its parts: idempotency and replay
 * (`hold-replay.ts`), exact seats (`hold-exact.ts`), best available (`hold-best-available.ts`) and release
 * (`hold-release.ts`).
 */
export class HoldService {
  private readonly availability: SectionAvailabilityCache;
  private readonly batcher: HoldBatcher;
  private readonly releases: ReleaseBatcher<ReleaseRequest, Hold>;
  private readonly generalAdmission: GeneralAdmission;
  private readonly bestAvailable: BestAvailableHolds;
  private readonly replay: HoldReplay;
  private readonly commit: HoldCommit;
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
    this.bestAvailable = new BestAvailableHolds({
      db: deps.db,
      seatmap: deps.seatmap,
      availability: this.availability,
      metrics: deps.metrics,
      random: deps.random ?? Math.random,
      maxAttempts: deps.maxAttempts ?? 8,
    });
    this.replay = new HoldReplay({
      db: deps.db,
      events: deps.events,
      repeatWindowSeconds: deps.repeatWindowSeconds,
      create: (accountId, eventId, req, requester, key) => this.create(accountId, eventId, req, requester, key),
      get: (db, accountId, holdId) => this.get(db, accountId, holdId),
    });
    this.now = deps.now ?? Date.now;
  }

  /** A hold request as the store API takes it: idempotent (see HoldReplay.hold). */
  hold(accountId: string, eventId: string, req: HoldRequest, requester: HoldRequester = {}, idempotencyKey?: string): Promise<HoldAnswer> {
    return this.replay.hold(accountId, eventId, req, requester, idempotencyKey);
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
      const cached = await this.deps.events.get(eventId, this.deps.db);
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
          throw await this.bestAvailable.refusal(cached, e.section, e.quantity, e.view, tier, e.rule);
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
      if (key) key.readUnderLock = true;
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
      const expiresAt = await takeExact(db, event.id, req.seatIds, attempt, tier, rule !== undefined);
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
    const { seats: taken, expiresAt } = await this.bestAvailable.take(
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

  /** See BestAvailableHolds.warmOpening: run every few seconds by the store API. */
  warmOpening(): Promise<void> {
    return this.bestAvailable.warmOpening();
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

// What other domains may use of this domain's repository (eslint-rules/onsale.js, onsale/domain-borders).
export * as holdsRepository from './holds.repository.js';
export { findHold, seatsOfHold } from './holds.repository.js';
