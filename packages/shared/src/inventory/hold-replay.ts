import { createHash } from 'node:crypto';
import type { Db, Trx } from '../db/connect.js';
import { DomainError, notFound } from '../errors.js';
import type { EventCache } from '../allocations/event-cache.js';
import { isUuid } from '../ids.js';
import { tierOfAdmission } from '../allocations/allocations.service.js';
import * as repo from './holds.repository.js';
import type { HoldRequest } from './holds.schema.js';
import { HeldUnderKey, type HoldKey } from './hold-rules.js';
import type { Hold, HoldAnswer, HoldRequester } from './hold-types.js';

/** The hash a hold made under an Idempotency-Key keeps of its request: the same key with another request is refused. */
export function holdRequestHash(req: HoldRequest, tier: string | undefined): string {
  const canonical =
    'seatIds' in req
      ? { tier: tier ?? null, seatIds: [...req.seatIds].sort((a, b) => a - b) }
      : { tier: tier ?? null, section: req.section, quantity: req.quantity, ...(req.split ? { split: true } : {}) };
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

const keyReused = () =>
  new DomainError('invalid', 'IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used for a different hold request', {
    field: 'idempotency-key',
  });

export interface HoldReplayDeps {
  db: Db;
  events: EventCache;
  /** See HoldServiceDeps.repeatWindowSeconds. */
  repeatWindowSeconds?: number;
  /** Makes the hold (HoldService.create): with `key`, written with its Idempotency-Key, or HeldUnderKey. */
  create: (accountId: string, eventId: string, req: HoldRequest, requester: HoldRequester, key?: HoldKey) => Promise<Hold>;
  /** The fan's own hold as it stands (HoldService.get). */
  get: (db: Db | Trx, accountId: string, holdId: string) => Promise<Hold>;
}

/** Idempotency and replay of hold requests: the same request (or key) answers with the hold it made, never a second. */
export class HoldReplay {
  constructor(private readonly deps: HoldReplayDeps) {}

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
    if (key === undefined) {
      if ((this.deps.repeatWindowSeconds ?? 30) > 0) {
        const allocation = tierOfAdmission((await this.deps.events.get(eventId, this.deps.db)).tiers, requester.tier)?.code ?? null;
        const repeat = await repo.findRepeatHold(db, eventId, accountId, req, allocation, this.deps.repeatWindowSeconds ?? 30);
        if (repeat) return { hold: await this.deps.get(db, accountId, repeat), replayed: true };
      }
      return { hold: await this.deps.create(accountId, eventId, req, requester), replayed: false };
    }
    // With a key, no read before the hold: the hold's own statement reads the fan's hold under the key, under the
    // account's lock (exact across processes), and takes nothing when there is one (HeldUnderKey). A request refused
    // before any of its statements read the key (a section this process sees as full, an exact seat taken, a closed
    // tier, a quantity above the event's limit) may still be the retry of a hold the key made: the key is read then,
    // and its hold is the answer (as it was when the key was read first), else the refusal. A refusal after a
    // statement read the key and found no hold (the account's or the device's limit) is the request's own.
    const held: HoldKey = { key, requestHash: hash };
    try {
      return { hold: await this.deps.create(accountId, eventId, req, requester, held), replayed: false };
    } catch (e) {
      if (!(e instanceof HeldUnderKey) && !(e instanceof DomainError && !held.readUnderLock)) throw e;
      // A request with the same key made its hold first (on another process, or one whose answer was lost): that one.
      const made = await repo.findHoldByKey(db, eventId, accountId, key);
      if (!made) {
        if (e instanceof HeldUnderKey) throw new DomainError('unavailable', 'HOLD_RACE', 'please retry', { retryAfterSeconds: 1 });
        throw e;
      }
      if (made.request_hash !== hash) throw keyReused();
      return { hold: await this.deps.get(db, accountId, made.id), replayed: true };
    }
  }
}
