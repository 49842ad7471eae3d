import { randomUUID } from 'node:crypto';
import type { Db } from '../db/connect.js';
import { DomainError } from '../errors.js';
import type { CachedEvent } from '../allocations/event-cache.js';
import type { Metrics } from '../metrics/index.js';
import { attemptGaHold, type HeldUnits } from './ga.repository.js';
import { assertSeatLimits, HeldUnderKey, type HoldKey } from './hold-rules.js';
import { alternativeSections, type SeatmapCache } from './seatmap.js';
import type { HoldCommit } from './hold-commit.js';

export type { HeldUnits } from './ga.repository.js';

/** A general-admission hold as made: no seats, units per section instead. */
export interface GaHold {
  holdId: string;
  eventId: string;
  status: 'HELD';
  seats: [];
  units: HeldUnits[];
  quantity: number;
  amountCents: number;
  expiresAt: Date;
  extended: false;
}

/** Thrown when a GA section has fewer units than asked for: the caller reports the outcome, then rethrows `error`. */
export class GaUnavailable extends Error {
  constructor(readonly error: DomainError) {
    super(error.message);
  }
}

/** True when a request is for a section whose kind is GA (a counter, not seat rows). */
export function isGeneralAdmission(
  cached: CachedEvent,
  req: { section: string } | { seatIds: number[] },
): req is { section: string; quantity: number } {
  return 'section' in req && cached.sections.get(req.section)?.kind === 'GA';
}

/**
 * Holds on general-admission sections: a sharded counter per section, one statement per hold (see
 * `onsale_hold_ga`), the same per-account and per-device limits as reserved seats (one count across both kinds), and a truthful
 * refusal: SECTION_SOLD_OUT when nothing is left, GA_QUANTITY_UNAVAILABLE (with how many are) when fewer are left
 * than asked for, each with sections that could take the party now.
 */
export class GeneralAdmission {
  constructor(private readonly deps: { db: Db; seatmap: SeatmapCache; commit: HoldCommit; metrics?: Metrics; random?: () => number }) {}

  async hold(
    cached: CachedEvent,
    accountId: string,
    req: { section: string; quantity: number },
    deviceHash: string | null = null,
    allocation: string | null = null,
    key?: HoldKey,
  ): Promise<GaHold> {
    const { event } = cached;
    const section = cached.sections.get(req.section)!;
    const holdId = randomUUID();
    const r = await attemptGaHold(
      this.deps.db,
      {
        eventId: event.id,
        holdId,
        accountId,
        sectionCode: section.code,
        quantity: req.quantity,
        ttlSeconds: event.holdTtlSeconds,
        limit: event.perAccountSeatLimit,
        deviceHash,
        deviceLimit: event.perDeviceSeatLimit,
        seed: Math.floor((this.deps.random ?? Math.random)() * 2 ** 30),
        allocation,
        idempotencyKey: key?.key ?? null,
        requestHash: key?.requestHash ?? null,
      },
      this.deps.commit,
    );
    if (r.keyed) throw new HeldUnderKey(r.keyed);
    if (key) key.readUnderLock = true;
    assertSeatLimits({
      quantity: req.quantity,
      used: r.used,
      limit: event.perAccountSeatLimit,
      field: 'quantity',
      device: { hash: deviceHash, used: r.deviceUsed, limit: event.perDeviceSeatLimit },
    });
    this.deps.metrics?.holdAttempts.inc({ event: event.id, section: section.code, outcome: r.expiresAt ? 'hit' : 'miss' });
    if (!r.expiresAt) throw new GaUnavailable(await this.refusal(cached, section.code, req.quantity, r.available ?? 0, allocation));
    return {
      holdId,
      eventId: event.id,
      status: 'HELD',
      seats: [],
      units: [{ section: section.code, quantity: req.quantity, priceCents: section.priceCents }],
      quantity: req.quantity,
      amountCents: section.priceCents * req.quantity,
      expiresAt: r.expiresAt,
      extended: false,
    };
  }

  private async refusal(
    cached: CachedEvent,
    code: string,
    quantity: number,
    available: number,
    allocation: string | null,
  ): Promise<DomainError> {
    // Alternatives from the fan's own tier (a presale's units in other sections), or the whole event without tiers.
    const tier = allocation === null ? undefined : cached.tiers.find((t) => t.code === allocation);
    const map = await this.deps.seatmap.get(cached.event.id, cached.sections, tier, this.deps.db);
    const alternatives = alternativeSections(map, cached.sections.get(code)!, quantity);
    return available === 0
      ? new DomainError('conflict', 'SECTION_SOLD_OUT', `section ${code} has no tickets left; try another section`, {
          field: 'section',
          available,
          alternatives,
        })
      : new DomainError('conflict', 'GA_QUANTITY_UNAVAILABLE', `section ${code} has only ${available} tickets left`, {
          field: 'quantity',
          available,
          alternatives,
        });
  }
}

// What other domains may use of this domain's repository (eslint-rules/onsale.js, onsale/domain-borders).
export { amountOfGaHold, insertGaShards, moveGaUnits } from './ga.repository.js';
