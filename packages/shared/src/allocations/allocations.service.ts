import { randomUUID } from 'node:crypto';
import type { Db, Trx } from '../db/connect.js';
import { DomainError, notFound } from '../errors.js';
import type { EventSpec } from '../events/events.schema.js';
import { insertAudit } from '../audit/index.js';
import { expandSeats } from '../events/layout.js';
import type { TokenKey } from '../tokens/signing.js';
import { emitAvailability } from '../waitlist/availability.js';
import { ACCESS_CODE_MESSAGES, checkAccessCode, signAccessCode } from './access-code.js';
import * as repo from './allocations.repository.js';
import { assignAllocations, tierCapacities } from './assign.js';
import type { AllocationAccess, AllocationRow } from './allocations.table.js';

/** A presale tier as the domain sees it. */
export interface Tier {
  id: string;
  eventId: string;
  code: string;
  name: string;
  position: number;
  /** The general sale: the event's own queue and window, and the last tier. */
  general: boolean;
  /** The queue the tier sells through (the event's id for the general sale). */
  queueId: string;
  share: number | null;
  access: AllocationAccess;
  binRanges: { from: string; to: string }[] | null;
  fairnessMode: 'RANDOMIZED_PREOPEN_THEN_FIFO' | 'FIFO';
  opensAt: Date;
  closesAt: Date | null;
  rollsForwardAt: Date | null;
  rollsInto: string | null;
  rolledAt: Date | null;
  capacity: number;
}

export const toTier = (r: AllocationRow): Tier => ({
  id: r.id,
  eventId: r.event_id,
  code: r.code,
  name: r.name,
  position: r.position,
  general: r.general,
  queueId: r.queue_id,
  share: r.share,
  access: r.access,
  binRanges: r.bin_ranges,
  fairnessMode: r.fairness_mode,
  opensAt: r.opens_at,
  closesAt: r.closes_at,
  rollsForwardAt: r.rolls_forward_at,
  rollsInto: r.rolls_into,
  rolledAt: r.rolled_at,
  capacity: r.capacity,
});

/**
 * A presale tier's own queue, opened and removed by the queue domain: handed in by the orchestration that sets a
 * sale up (sale-setup/tier-queues.ts), because the queue's join reads the tiers (queue/ sits above allocations/ in
 * docs/architecture.md, "The layers") and so allocations/ may not import queue/.
 */
export interface TierQueues {
  /** Starts a new presale tier's queue (its seed and commitment), in the creating transaction. */
  open(trx: Trx, queueId: string): Promise<unknown>;
  /** Removes a presale tier's queue and its fans, in the edit's transaction. */
  remove(trx: Trx, queueId: string): Promise<void>;
}

/** The general sale sells under the event's own fairness mode. */
const generalFairness = (spec: EventSpec) => (spec.fairnessMode === 'FIFO' ? 'FIFO' : 'RANDOMIZED_PREOPEN_THEN_FIFO');

/**
 * Creates an event's tiers (in the event's creating transaction): one row each with the seats the split gave it
 * (`seatsPerTier`), a queue of its own for every presale (seed and commitment, like the event's, opened by
 * `queues.open`), and the roll forward into the next tier.
 */
export async function createAllocations(
  trx: Trx,
  eventId: string,
  spec: EventSpec,
  seatsPerTier: Map<string, number>,
  queues: Pick<TierQueues, 'open'>,
): Promise<Tier[]> {
  const tiers = spec.allocations;
  if (!tiers) return [];
  const out: Tier[] = [];
  for (const [i, t] of tiers.entries()) {
    const general = i === tiers.length - 1;
    const id = randomUUID();
    const queueId = general ? eventId : id;
    if (!general) await queues.open(trx, queueId);
    const row = await repo.insertAllocation(trx, {
      id,
      event_id: eventId,
      code: t.code,
      name: t.name,
      position: i,
      general,
      queue_id: queueId,
      share: general ? null : (t.share ?? null),
      access: t.access,
      bin_ranges: t.binRanges ? JSON.stringify(t.binRanges) : null,
      fairness_mode: general ? generalFairness(spec) : t.fairnessMode,
      opens_at: new Date(general ? spec.onsaleAt : t.opensAt!),
      closes_at: general ? null : new Date(t.closesAt!),
      rolls_forward_at: general ? null : new Date(t.rollsForwardAt ?? t.closesAt!),
      rolls_into: general ? null : tiers[i + 1]!.code,
      capacity: seatsPerTier.get(t.code) ?? 0,
    });
    out.push(toTier(row));
    // The roll runs at its time (the every-minute job also catches any roll this misses).
    if (!general) await scheduleRoll(trx, eventId, t.code, row.rolls_forward_at!);
  }
  return out;
}

/** The task that rolls tiers forward; queued for each tier's roll time (and run every minute as a sweep). */
export const ALLOCATION_ROLL_TASK = 'allocations_roll';

/** The roll job's key: one job per tier, so scheduling it again moves it. */
const rollJobKey = (eventId: string, code: string) => `allocation_roll:${eventId}:${code}`;

const scheduleRoll = (trx: Trx, eventId: string, code: string, at: Date) =>
  repo.addRollJob(trx, ALLOCATION_ROLL_TASK, { eventId, tier: code }, at, rollJobKey(eventId, code));

const unscheduleRoll = (trx: Trx, eventId: string, code: string) => repo.removeRollJob(trx, rollJobKey(eventId, code));

/**
 * Writes an event's tiers anew from an edited event file, in the edit's transaction (sale-setup/configure.service.ts calls it
 * only while no seat is in use, no fan is in a presale queue and no tier has opened): the old presales' queues
 * (`queues.remove`) and roll jobs go; each seat takes its tier from the new split (unless `seatsWritten`: the layout
 * was just written with its tiers); then the tiers are created as createEvent creates them, each presale with a
 * fresh queue (`queues.open`). A file without tiers leaves the event without them.
 */
export async function replaceAllocations(
  trx: Trx,
  eventId: string,
  spec: EventSpec,
  queues: TierQueues,
  opts: { seatsWritten?: boolean } = {},
): Promise<Tier[]> {
  for (const old of await repo.deleteAllocations(trx, eventId)) {
    if (!old.general) await queues.remove(trx, old.queue_id);
    if (old.rolls_into) await unscheduleRoll(trx, eventId, old.code);
  }
  const seats = assignAllocations(expandSeats(spec), spec.allocations);
  if (!opts.seatsWritten) await repo.setSeatAllocations(trx, eventId, seats);
  return createAllocations(trx, eventId, spec, tierCapacities(seats, spec), queues);
}

/**
 * Keeps an event's unchanged tiers in step with an edit of the rest of its file: the general sale opens at the
 * event's on-sale under its fairness mode, and after a new layout (written with the same split) each tier owns
 * the seats the split gave it.
 */
export async function alignAllocations(trx: Trx, eventId: string, spec: EventSpec, opts: { layoutRewritten: boolean }): Promise<void> {
  if (!spec.allocations) return;
  await repo.setGeneralSaleOpening(trx, eventId, new Date(spec.onsaleAt), generalFairness(spec));
  if (!opts.layoutRewritten) return;
  for (const [code, capacity] of tierCapacities(assignAllocations(expandSeats(spec), spec.allocations), spec))
    await repo.setCapacity(trx, eventId, code, capacity);
}

export async function getTiers(db: Db | Trx, eventId: string): Promise<Tier[]> {
  return (await repo.findAllocations(db, eventId)).map(toTier);
}

export interface TierInventory extends Tier {
  available: number;
  held: number;
  sold: number;
  /** available + held + sold - capacity: 0 unless something is wrong. */
  drift: number;
}

/** Each tier with its live counts: the per-tier invariant available + held + sold = capacity, checkable. */
export async function tierInventory(db: Db | Trx, eventId: string): Promise<TierInventory[]> {
  const [tiers, counts] = await Promise.all([getTiers(db, eventId), repo.countByAllocation(db, eventId)]);
  const byCode = new Map(counts.map((c) => [c.allocation, c]));
  return tiers.map((t) => {
    const c = byCode.get(t.code) ?? { available: 0, held: 0, sold: 0 };
    return { ...t, available: c.available, held: c.held, sold: c.sold, drift: c.available + c.held + c.sold - t.capacity };
  });
}

/**
 * The tier a fan joins: the named one, or the general sale when none is named. Null when the event has no tiers
 * (and none was named). TIER_NOT_FOUND (field `tier`) for an unknown code.
 */
export function tierToJoin(tiers: readonly Tier[], code: string | undefined): Tier | null {
  if (tiers.length === 0) {
    if (code === undefined) return null;
    throw notFound('TIER_NOT_FOUND', 'this event has no presale tiers', 'tier');
  }
  if (code === undefined) return tiers[tiers.length - 1]!;
  const tier = tiers.find((t) => t.code === code);
  if (!tier)
    throw new DomainError('not_found', 'TIER_NOT_FOUND', `this event has no tier ${code}`, {
      field: 'tier',
      tiers: tiers.map((t) => t.code),
    });
  return tier;
}

/** The tier an admission sells from: the presale it names, else the general sale; null when the event has no tiers. */
export function tierOfAdmission(tiers: readonly Tier[], code: string | undefined): Tier | null {
  if (tiers.length === 0) return null;
  const tier = code === undefined ? tiers[tiers.length - 1]! : tiers.find((t) => t.code === code);
  if (!tier) throw new DomainError('forbidden', 'TIER_NOT_FOUND', `this event has no tier ${code}`, { field: 'x-admission-token' });
  return tier;
}

/** A presale sells only inside its window, and not once it has rolled forward. `now`: ms since the epoch. */
export function assertTierSelling(tier: Tier, now: number): void {
  if (tier.general) return;
  if (now < tier.opensAt.getTime())
    throw new DomainError('conflict', 'TIER_NOT_OPEN', `the ${tier.name} presale opens at ${tier.opensAt.toISOString()}`, {
      tier: tier.code,
      opensAt: tier.opensAt.toISOString(),
    });
  if ((tier.closesAt && now >= tier.closesAt.getTime()) || tier.rolledAt)
    throw new DomainError('conflict', 'TIER_CLOSED', `the ${tier.name} presale has closed; its unsold seats go to the next sale`, {
      tier: tier.code,
    });
}

/** A queue may be joined until the tier's window closes (before it opens, joins form the pre-open cohort). */
export function assertTierJoinable(tier: Tier, now: number): void {
  if (tier.general) return;
  if ((tier.closesAt && now >= tier.closesAt.getTime()) || tier.rolledAt)
    throw new DomainError('conflict', 'TIER_CLOSED', `the ${tier.name} presale has closed; join the general sale`, {
      field: 'tier',
      tier: tier.code,
    });
}

/**
 * The access rule of an ACCESS_CODE tier, at the queue: a genuine code for this event and tier, not expired,
 * and not used by another account (its first use binds it). Other tiers need no code.
 */
export async function admitWithAccessCode(
  db: Db | Trx,
  key: TokenKey,
  tier: Tier,
  accountId: string,
  code: string | undefined,
  now: number,
): Promise<void> {
  if (tier.access !== 'ACCESS_CODE') return;
  if (!code)
    throw new DomainError('forbidden', 'ACCESS_CODE_REQUIRED', `the ${tier.name} presale needs an access code (X-Access-Code)`, {
      field: 'x-access-code',
      tier: tier.code,
    });
  const checked = await checkAccessCode(key, code, { eventId: tier.eventId, tier: tier.code, accountId, now });
  if (!checked.ok)
    throw new DomainError('forbidden', checked.problem, ACCESS_CODE_MESSAGES[checked.problem], { field: 'x-access-code', tier: tier.code });
  const owner = await repo.redeemAccessCode(db, tier.eventId, checked.claims.codeId, tier.code, accountId);
  if (owner !== accountId)
    throw new DomainError('conflict', 'ACCESS_CODE_USED', 'this access code has been used by another account', {
      field: 'x-access-code',
      tier: tier.code,
    });
}

/**
 * Issues signed access codes for an ACCESS_CODE tier: bound to `accountId` when given, else to their first user;
 * valid until `validUntil` (which must be in the future), else the tier's close. With `actor`, audited
 * `allocation.codes_issued` (how many, for whom, until when; never the codes).
 */
export async function issueAccessCodes(
  db: Db | Trx,
  key: TokenKey,
  eventId: string,
  tierCode: string,
  opts: { count?: number; accountId?: string; validUntil?: Date; actor?: string } = {},
): Promise<{ tier: string; expiresAt: string; codes: string[] }> {
  const tiers = await getTiers(db, eventId);
  const tier = tiers.find((t) => t.code === tierCode);
  if (!tier) throw notFound('TIER_NOT_FOUND', `event ${eventId} has no tier ${tierCode}`, 'tier');
  if (tier.access !== 'ACCESS_CODE')
    throw new DomainError('invalid', 'TIER_TAKES_NO_CODES', `tier ${tierCode} is ${tier.access}, not ACCESS_CODE`, { field: 'tier' });
  const count = opts.count ?? 1;
  if (!Number.isInteger(count) || count < 1 || count > 100_000)
    throw new DomainError('invalid', 'INVALID_COUNT', 'count must be 1-100000', { field: 'count' });
  if (opts.accountId !== undefined && count !== 1)
    throw new DomainError('invalid', 'INVALID_COUNT', 'a code bound to an account is issued one at a time', { field: 'count' });
  if (opts.validUntil !== undefined && !(opts.validUntil.getTime() > Date.now()))
    throw new DomainError('invalid', 'INVALID_VALID_UNTIL', 'codes must be valid until a time in the future', { field: 'validUntil' });
  const until = opts.validUntil ?? tier.closesAt ?? tier.opensAt;
  const exp = Math.floor(until.getTime() / 1000);
  const codes: string[] = [];
  for (let i = 0; i < count; i++)
    codes.push(
      await signAccessCode(key, {
        kind: 'access',
        eventId,
        tier: tierCode,
        codeId: randomUUID(),
        ...(opts.accountId ? { accountId: opts.accountId } : {}),
        exp,
      }),
    );
  if (opts.actor !== undefined)
    await insertAudit(db, {
      actor: opts.actor,
      action: 'allocation.codes_issued',
      eventId,
      details: { tier: tierCode, count, accountId: opts.accountId ?? null, expiresAt: until.toISOString() },
    });
  return { tier: tierCode, expiresAt: until.toISOString(), codes };
}

/** A CARD_BIN tier's rule, at checkout: the card's leading digits fall in one of the tier's ranges. */
export function cardEligible(ranges: readonly { from: string; to: string }[], cardNumber: string): boolean {
  return ranges.some((r) => {
    const bin = cardNumber.slice(0, r.from.length);
    return bin.length === r.from.length && bin >= r.from && bin <= r.to;
  });
}

export interface RollResult {
  eventId: string;
  from: string;
  into: string;
  moved: number;
}

/**
 * Rolls a presale's unsold seats forward into the next tier, in one transaction: the seats change tier, both
 * tiers' capacities move by the same count (so each keeps available + held + sold = capacity), the waitlist hears
 * of the seats (after a sell-out they go to it, not on sale), and the roll is audited. Seats of live holds stay
 * with the hold; if they come back, the next roll (the job runs every minute) moves them. Early rolls (before
 * `rollsForwardAt`) need `force`; `reason` (an operator's, from the console) goes to the audit entry.
 */
export async function rollForward(
  db: Db,
  eventId: string,
  code: string,
  actor: string,
  opts: { force?: boolean; reason?: string } = {},
): Promise<RollResult> {
  return db.transaction().execute(async (trx) => {
    const tiers = (await repo.lockAllocations(trx, eventId)).map(toTier);
    if (tiers.length === 0) throw notFound('TIER_NOT_FOUND', `event ${eventId} has no presale tiers`, 'tier');
    const tier = tiers.find((t) => t.code === code);
    if (!tier) throw notFound('TIER_NOT_FOUND', `event ${eventId} has no tier ${code}`, 'tier');
    if (tier.general || !tier.rollsInto)
      throw new DomainError('invalid', 'TIER_DOES_NOT_ROLL', 'the general sale is the last tier; nothing rolls out of it', {
        field: 'tier',
      });
    if (!opts.force && tier.rollsForwardAt && (await repo.databaseNow(trx)) < tier.rollsForwardAt)
      throw new DomainError(
        'conflict',
        'ROLL_NOT_DUE',
        `tier ${code} rolls forward at ${tier.rollsForwardAt.toISOString()}; pass force to roll now`,
        { rollsForwardAt: tier.rollsForwardAt.toISOString() },
      );
    const seats = await repo.moveUnsoldSeats(trx, eventId, code, tier.rollsInto);
    const units = await repo.moveUnsoldUnits(trx, eventId, code, tier.rollsInto);
    const unitCount = [...units.values()].reduce((a, n) => a + n, 0);
    const moved = seats.length + unitCount;
    await repo.addCapacity(trx, eventId, code, -moved, true);
    await repo.addCapacity(trx, eventId, tier.rollsInto, moved, false);
    // The waitlist hears of returned seats (GA units are counted, not offered: see README, General admission).
    await emitAvailability(trx, eventId, 'ALLOCATION_ROLLED', seats);
    if (moved > 0 || !tier.rolledAt)
      await insertAudit(trx, {
        actor,
        action: 'allocation.rolled',
        eventId,
        details: {
          from: code,
          into: tier.rollsInto,
          seats: seats.length,
          ...(unitCount > 0 ? { gaUnits: Object.fromEntries(units) } : {}),
          early: !!opts.force,
          ...(opts.reason ? { reason: opts.reason } : {}),
        },
      });
    return { eventId, from: code, into: tier.rollsInto, moved };
  });
}

/** Rolls every tier that is due (the every-minute job): each in its own transaction. */
export async function rollDueAllocations(db: Db, actor = 'allocations-job'): Promise<RollResult[]> {
  const out: RollResult[] = [];
  for (const due of await repo.findDueRolls(db)) out.push(await rollForward(db, due.event_id, due.code, actor));
  return out;
}

// What other domains may use of this domain's repository (eslint-rules/onsale.js, onsale/domain-borders).
export { findAllocations, presaleQueueHasFans } from './allocations.repository.js';
export type { AllocationRow } from './allocations.table.js';
