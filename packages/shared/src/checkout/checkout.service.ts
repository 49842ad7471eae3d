import { createHash } from 'node:crypto';
import { cardEligible } from '../allocations/allocations.service.js';
import type { Db } from '../db/connect.js';
import { DomainError, notFound } from '../errors.js';
import { isUuid } from '../ids.js';
import { holdsRepository as holds } from '../inventory/holds.service.js';
import { amountOfGaHold } from '../inventory/ga.service.js';
import { assertAdmittedFor } from '../inventory/holds.service.js';
import { holdExpired, holdLapsed } from '../inventory/hold-rules.js';
import { accountBlocked } from '../events/blocks.js';
import type { Metrics } from '../metrics/index.js';
import * as repo from './checkout.repository.js';
import type { CheckoutRequest } from './checkout.schema.js';
import type { ChargeResult, PaymentProvider } from './payment.js';
import { LEASE_BEAT_MS, type ProcessLease } from './process-lease.js';
import { databaseFaultOf } from '../db/faults.js';
import { legacyCardFingerprint, LEGACY_FINGERPRINT_PREFIX, type CardFingerprints } from './card-fingerprint.js';
import { issueTicketsForOrder, priceOfSeats } from '../tickets/index.js';

export interface CheckoutResult {
  orderId: string;
  holdId: string;
  status: 'CONFIRMED';
  amountCents: number;
  seatCount: number;
  /** True when this answer is a replay of an earlier request with the same Idempotency-Key. */
  replayed: boolean;
}

export interface CheckoutDeps {
  db: Db;
  payments: PaymentProvider;
  /** The install's card fingerprints (keyed with CARD_FINGERPRINT_SECRET). */
  cards: CardFingerprints;
  metrics?: Metrics;
  /** While a payment is in flight the hold cannot lapse for at least this long (longer than any gateway call). */
  paymentWindowSeconds?: number;
  /**
   * How long a retry with the key of a checkout still in progress waits for it before answering
   * `409 CHECKOUT_IN_PROGRESS` with Retry-After (default 800 ms).
   */
  inProgressWaitMs?: number;
  currency?: string;
  /**
   * A checkout of the event the payment gateway failed (refused for load, errored, timed out): nothing was charged
   * and the attempt is forgotten so the fan can retry with the same key. The store API counts these for the war
   * room and the controller (a card declined by its issuer is the fan's outcome and is not one of these).
   */
  onGatewayFailure?: (eventId: string) => void;
  /**
   * This process's lease (store_processes): attempts it starts name it as their owner, and once it has been renewed
   * steadily it lets this process settle the attempts of processes that are gone. Without one, only the
   * stale-payment recovery (minutes) settles another process's attempts.
   */
  lease?: ProcessLease;
}

/** A charge's answer as the checkout saw it: the provider's, or an error reaching it (nothing charged). */
type ChargeOutcome = ChargeResult | { status: 'error'; error: unknown };

/** What the checkout's first step recorded, for its last step. */
interface Begun {
  eventId: string;
  quantity: number;
  fingerprint: string;
  originalExpiry: Date;
  amountCents: number;
  /** The hold has seats (its last step sells them in one statement); false: general admission. */
  seated?: boolean;
  /**
   * The first step moved the hold's expiry (and its seats') to the payment window's floor; false: the hold already
   * lived past it and nothing but its status changed, so giving it back is its status alone.
   */
  moved?: boolean;
}

/** A checkout this process started and has not finished: its last step failed (the database went away). */
interface Unfinished {
  accountId: string;
  key: string;
  holdId: string;
  begun: Begun;
  result?: ChargeOutcome;
  /** The request's Db (its pool lane); recovery's settlement uses the service's own. */
  db?: Db;
}

/**
 * What an Idempotency-Key is bound to: the whole request as the fan sent it (the hold, and every field of the
 * instrument, the card as its keyed fingerprint), so the same key with any other body is IDEMPOTENCY_KEY_REUSED.
 */
export function checkoutRequestHash(holdId: string, fingerprint: string, req: CheckoutRequest): string {
  const i = req.payment.instrument;
  const canonical = { holdId, instrument: { type: i.type, fingerprint, expMonth: i.expMonth ?? null, expYear: i.expYear ?? null } };
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

/** The request hash attempts recorded before keyed fingerprints (hold and card only), still honoured on a replay. */
function legacyRequestHash(holdId: string, number: string): string {
  return createHash('sha256')
    .update(JSON.stringify({ holdId, fingerprint: legacyCardFingerprint(number) }))
    .digest('hex');
}

/**
 * Keys in place every card fingerprint a migration marked `legacy:` (written before fingerprints were keyed), in
 * batches; run by every process that holds the secret when it starts (npm start, the store API, `onsale migrate`).
 * Idempotent; returns how many distinct fingerprints it keyed.
 */
export async function rekeyLegacyCardFingerprints(db: Db, cards: CardFingerprints, batch = 500): Promise<number> {
  let done = 0;
  for (;;) {
    const marked = await repo.legacyFingerprints(db, LEGACY_FINGERPRINT_PREFIX, batch);
    if (marked.length === 0) return done;
    await repo.replaceFingerprints(
      db,
      marked.map((from) => ({ from, to: cards.rekey(from.slice(LEGACY_FINGERPRINT_PREFIX.length)) })),
    );
    done += marked.length;
  }
}

/**
 * Checkout: idempotent per (account, Idempotency-Key), one order per hold, per-instrument limit. Three short
 * transactions around the payment call, so no database transaction waits on the gateway:
 *   1. lock the hold, record the attempt PENDING, mark the hold PAYING and keep it from lapsing;
 *   2. charge with the same idempotency key;
 *   3. HELD -> SOLD for exactly the hold's seats plus the order (unique per hold), or back to HELD.
 * A concurrent or retried request with the same key waits for, then returns, the first one's answer.
 */
export class CheckoutService {
  private readonly windowSeconds: number;
  private readonly inProgressWaitMs: number;
  private readonly unfinished = new Map<string, Unfinished>();
  constructor(private readonly deps: CheckoutDeps) {
    this.windowSeconds = deps.paymentWindowSeconds ?? 120;
    this.inProgressWaitMs = deps.inProgressWaitMs ?? 800;
  }

  /**
   * `signal`: the client went away (a retry waiting for the first request stops waiting). `requestDb`: the request's
   * own Db for its statements (the store API's: its pool lane with a tag of its own, so the second transaction, after
   * the payment, waits ahead of checkouts not yet begun); default the service's.
   */
  async checkout(
    accountId: string,
    holdId: string,
    idempotencyKey: string,
    req: CheckoutRequest,
    admittedEventId?: string,
    signal?: AbortSignal,
    requestDb?: Db,
  ): Promise<CheckoutResult> {
    if (!isUuid(holdId)) throw notFound('HOLD_NOT_FOUND', `no hold ${holdId}`, 'id');
    const number = req.payment.instrument.number;
    const fingerprint = this.deps.cards.of(number);
    const legacyMarked = `${LEGACY_FINGERPRINT_PREFIX}${legacyCardFingerprint(number)}`;
    const requestHash = checkoutRequestHash(holdId, fingerprint, req);
    const db = requestDb ?? this.deps.db;

    const begun = await db.transaction().execute(async (trx) => {
      // A retry of this very checkout is answered from its attempt without the hold's lock, which the attempt's own
      // last step, or its settlement by another process (its owner killed), may be holding. Else the hold is locked
      // and the account's attempt under the key read after the lock (`prior`), with the hold and its event's settings:
      // one round trip.
      const { replay: retried, prior, hold } = await repo.replayOrLockHoldWithEvent(trx, accountId, idempotencyKey, holdId);
      if (retried) {
        assertAdmittedFor(retried.event_id, admittedEventId);
        if (retried.account_blocked) throw accountBlocked();
        if (retried.request_hash !== requestHash && retried.request_hash !== legacyRequestHash(holdId, number))
          throw keyReusedForCheckout();
        return { kind: 'replay' as const };
      }
      if (!hold) throw notFound('HOLD_NOT_FOUND', `no hold ${holdId}`, 'id');
      if (hold.account_id !== accountId)
        throw new DomainError('forbidden', 'HOLD_NOT_OWNED', 'this hold belongs to another account', { field: 'id' });
      assertAdmittedFor(hold.event_id, admittedEventId);
      if (hold.account_blocked) throw accountBlocked();

      if (prior) {
        if (prior.request_hash !== requestHash && prior.request_hash !== legacyRequestHash(holdId, number)) throw keyReusedForCheckout();
        return { kind: 'replay' as const };
      }
      if (hold.status === 'PURCHASED') {
        const order = await repo.findOrderByHold(trx, holdId);
        throw new DomainError('conflict', 'HOLD_PURCHASED', 'this hold has already been paid for', { orderId: order?.id });
      }
      if (hold.status === 'PAYING')
        throw new DomainError('conflict', 'CHECKOUT_IN_PROGRESS', 'a payment for this hold is in progress under another key');
      if (hold.status === 'RELEASED') throw new DomainError('conflict', 'HOLD_RELEASED', 'this hold was released');
      if (holdLapsed(hold, hold.db_now.getTime())) throw holdExpired();

      // A card-partner presale's seats are paid for with a partner card.
      if (hold.tier_access === 'CARD_BIN' && !cardEligible(hold.tier_bin_ranges ?? [], req.payment.instrument.number))
        throw new DomainError('forbidden', 'CARD_NOT_ELIGIBLE', `the ${hold.tier_name} presale takes only the partner's cards`, {
          field: 'payment.instrument.number',
        });

      // The card's lock and its seats, and the hold's seats and price (a seat listed on the face-value exchange is
      // charged at its listed price): one read.
      const priced = await repo.lockInstrumentAndPriceHold(trx, hold.event_id, fingerprint, legacyMarked, holdId);
      const used = priced.used;
      if (used + hold.quantity > hold.per_instrument_seat_limit)
        throw new DomainError(
          'limit',
          'INSTRUMENT_LIMIT_EXCEEDED',
          `this payment card already has ${used} of ${hold.per_instrument_seat_limit} seats for this event`,
          {
            field: 'payment.instrument',
            limit: hold.per_instrument_seat_limit,
            current: used,
          },
        );

      const floor = new Date(hold.db_now.getTime() + this.windowSeconds * 1000);
      const originalExpiry = hold.expires_at;
      // The hold's expiry as read under its lock: at or past the floor, it already outlives the payment window and
      // neither it nor its seats' moves (a seat is then written once, by the sale). A Date has whole milliseconds and
      // the column microseconds: a read expiry at or past the floor is one the database's greatest() would keep too.
      const moved = originalExpiry.getTime() < floor.getTime();
      // The attempt, the hold PAYING and its expiry (hold and seats) kept past the payment window: one statement.
      await repo.beginPayment(
        trx,
        {
          accountId,
          key: idempotencyKey,
          holdId,
          requestHash,
          instrument: fingerprint,
          seatCount: hold.quantity,
          owner: this.deps.lease?.id ?? null,
        },
        moved ? floor : null,
      );
      return {
        kind: 'new' as const,
        eventId: hold.event_id,
        quantity: hold.quantity,
        fingerprint,
        originalExpiry,
        moved,
        seated: priced.seats > 0,
        amountCents: priced.seats > 0 ? priced.amountCents : await amountOfGaHold(trx, holdId),
        currency: hold.currency,
      };
    });

    if (begun.kind === 'replay') return this.awaitAttempt(accountId, idempotencyKey, signal, db);

    const pending: Unfinished = { accountId, key: idempotencyKey, holdId, begun, db };
    try {
      const result: ChargeOutcome = await this.deps.payments
        .charge({
          idempotencyKey: `${accountId}:${idempotencyKey}`,
          amountCents: begun.amountCents,
          // The event's currency (its prices are in it); a configured one only overrides it for tests and rehearsals.
          currency: this.deps.currency ?? begun.currency,
          instrument: req.payment.instrument,
          eventId: begun.eventId,
        })
        .catch((e: unknown) => ({ status: 'error' as const, error: e }));
      this.deps.metrics?.paymentAttempts.inc({ result: result.status });
      pending.result = result;
      const outcome = await this.finish(pending, result);
      if (outcome instanceof DomainError) throw outcome;
      // Settled by another process meanwhile: its outcome is the answer.
      if (outcome === 'settled') return await this.awaitAttempt(accountId, idempotencyKey, signal, db);
      return outcome;
    } catch (err) {
      // The flow broke after the attempt was recorded (the database went away, most likely): this process settles
      // it as soon as it can (recoverOrphanedPayments, every second), with the charge's answer it already has.
      if (!(err instanceof DomainError)) this.unfinished.set(`${accountId}\n${idempotencyKey}`, { ...pending, db: undefined });
      throw err;
    }
  }

  /**
   * The checkout's last step, in one transaction under the hold's lock: with the charge's answer, write the order
   * (HELD -> SOLD for exactly the hold's seats), or refund when the seats are no longer the hold's, or give the hold
   * back (declined, or nothing charged). Returns the refusal rather than throwing it, so what it recorded commits.
   * 'settled' when the attempt was settled meanwhile (by another process, or by this one's own retry of the step).
   */
  private finish(p: Unfinished, result: ChargeOutcome): Promise<CheckoutResult | DomainError | 'settled'> {
    const { accountId, key: idempotencyKey, holdId, begun } = p;
    return (p.db ?? this.deps.db).transaction().execute(async (trx): Promise<CheckoutResult | DomainError | 'settled'> => {
      // The hold's lock, then the attempt read under it (one round trip). Another process may have settled the attempt
      // meanwhile (this one was taken for dead: its lease went silent or its lease connection dropped). Its
      // settlement stands; a charge it did not see (still in flight when it asked the provider, so it gave the hold
      // back) is refunded here: never money without the seats.
      const still = await repo.lockHoldAndFindAttempt(trx, holdId, accountId, idempotencyKey);
      if (still?.status !== 'PENDING') {
        if (result.status === 'succeeded' && still?.status !== 'SUCCEEDED') await this.deps.payments.refund(result.reference);
        return 'settled';
      }
      const restore = async () => {
        await repo.setHoldStatus(trx, holdId, 'HELD');
        // Unmoved (begun.moved false), the hold kept its own expiry and its seats theirs: nothing else moves a PAYING
        // hold's expiry (an extension is refused while it pays), so its status is all there is to give back.
        if (begun.moved !== false) await holds.setHoldExpiry(trx, holdId, begun.originalExpiry);
      };
      if (result.status === 'rate_limited' || result.status === 'error') {
        // Nothing was charged: forget the attempt so the same key can be retried.
        await repo.deleteAttempt(trx, accountId, idempotencyKey);
        await restore();
        this.deps.metrics?.checkouts.inc({ event: begun.eventId, result: 'gateway_unavailable' });
        this.deps.onGatewayFailure?.(begun.eventId);
        return new DomainError('unavailable', 'PAYMENT_GATEWAY_BUSY', 'the payment provider is busy; retry with the same Idempotency-Key', {
          retryAfterSeconds: result.status === 'rate_limited' ? result.retryAfterSeconds : 2,
        });
      }
      if (result.status === 'declined') {
        await repo.finishAttempt(trx, accountId, idempotencyKey, { status: 'FAILED', errorCode: 'PAYMENT_DECLINED' });
        await restore();
        this.deps.metrics?.checkouts.inc({ event: begun.eventId, result: 'declined' });
        return declined();
      }
      if (begun.seated) {
        // Seats sold, order, hold PURCHASED and attempt SUCCEEDED in one statement; null: a seat is no longer the
        // hold's (nothing written), which the step-by-step path below refunds.
        const done = await repo.sellAndOrder(trx, {
          holdId,
          eventId: begun.eventId,
          accountId,
          key: idempotencyKey,
          quantity: begun.quantity,
          amountCents: begun.amountCents,
          instrument: begun.fingerprint,
          reference: result.reference,
        });
        if (done) {
          await issueTicketsForOrder(
            trx,
            { orderId: done.orderId, holdId, eventId: begun.eventId, accountId, quantity: begun.quantity },
            done.seats,
          );
          this.deps.metrics?.checkouts.inc({ event: begun.eventId, result: 'confirmed' });
          return {
            orderId: done.orderId,
            holdId,
            status: 'CONFIRMED' as const,
            amountCents: begun.amountCents,
            seatCount: begun.quantity,
            replayed: false,
          };
        }
      }
      const sold = await repo.sellHoldSeats(trx, holdId, begun.quantity);
      if (sold !== begun.quantity) {
        // Only reachable if the payment outlived the payment window: never keep money for seats we cannot give.
        await this.deps.payments.refund(result.reference);
        await repo.finishAttempt(trx, accountId, idempotencyKey, { status: 'FAILED', errorCode: 'HOLD_EXPIRED' });
        await repo.setHoldStatus(trx, holdId, 'HELD');
        this.deps.metrics?.holdExpiredDuringPayment.inc();
        return lapsedDuringPayment();
      }
      const orderId = await repo.insertOrder(trx, {
        holdId,
        eventId: begun.eventId,
        accountId,
        key: idempotencyKey,
        seatCount: sold,
        amountCents: begun.amountCents,
        instrument: begun.fingerprint,
        reference: result.reference,
      });
      await repo.setHoldStatus(trx, holdId, 'PURCHASED');
      await repo.finishAttempt(trx, accountId, idempotencyKey, { status: 'SUCCEEDED', orderId });
      // The order's tickets (and a resale it completes) in the order's own transaction.
      await issueTicketsForOrder(trx, {
        orderId,
        holdId,
        eventId: begun.eventId,
        accountId,
        quantity: sold,
      });
      this.deps.metrics?.checkouts.inc({ event: begun.eventId, result: 'confirmed' });
      return { orderId, holdId, status: 'CONFIRMED' as const, amountCents: begun.amountCents, seatCount: sold, replayed: false };
    });
  }

  /**
   * Settles the checkouts left unfinished, within seconds: first this process's own (the database went away between
   * the charge and the order; the charge's answer is known), then those of processes that are gone (their lease
   * ended, their lease connection ended and they did not renew since, or, while this process's lease is steady,
   * their lease went silent: see ProcessLease), by asking the provider. Run every second by each store-API instance.
   * Never settles an attempt twice.
   */
  async recoverOrphanedPayments(): Promise<{ settled: number; confirmed: number }> {
    let settled = 0;
    let confirmed = 0;
    for (const [k, p] of this.unfinished) {
      try {
        const outcome = p.result ? await this.finish(p, p.result) : await this.settleByLookup(p.accountId, p.key, p.holdId);
        this.unfinished.delete(k);
        settled++;
        if (outcome === 'confirmed' || (typeof outcome === 'object' && !(outcome instanceof DomainError))) confirmed++;
      } catch (err) {
        if (databaseFaultOf(err)) return { settled, confirmed }; // still down: the next beat tries again
        this.unfinished.delete(k); // not ours to fix here: the stale-payment recovery settles it by asking the provider
      }
    }
    const lease = this.deps.lease;
    if (!lease) return { settled, confirmed };
    const orphans = await repo.orphanedAttempts(this.deps.db, lease.id, lease.goneRule(), this.windowSeconds + 60);
    // A few at a time: a killed process leaves every payment it had in flight, and each waits on the provider.
    const queue = [...orphans];
    const settleNext = async (): Promise<void> => {
      for (let a = queue.shift(); a; a = queue.shift()) {
        const outcome = await this.settleByLookup(a.account_id, a.idempotency_key, a.hold_id);
        if (outcome !== 'skipped') settled++;
        if (outcome === 'confirmed') confirmed++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(SETTLE_CONCURRENCY, queue.length) }, settleNext));
    return { settled, confirmed };
  }

  /** Checkouts this process started and has yet to settle (the database went away before their last step). */
  get unfinishedCount(): number {
    return this.unfinished.size;
  }

  /**
   * Finishes checkouts whose process died between "payment started" and "order written" and that nobody settled
   * for `olderThanSeconds` (the safety net under recoverOrphanedPayments): see settleByLookup. Safe to run from any
   * number of processes: each attempt is settled under its hold's lock, once.
   */
  async recoverStalePayments(olderThanSeconds = this.windowSeconds + 60): Promise<{ settled: number; confirmed: number }> {
    const stale = await repo.stalePendingAttempts(this.deps.db, olderThanSeconds);
    let confirmed = 0;
    let settled = 0;
    for (const a of stale) {
      const outcome = await this.settleByLookup(a.account_id, a.idempotency_key, a.hold_id);
      if (outcome !== 'skipped') settled++;
      if (outcome === 'confirmed') confirmed++;
    }
    return { settled, confirmed };
  }

  /**
   * Settles one PENDING attempt whose own process cannot: asks the provider what became of the charge under the
   * attempt's idempotency key, then writes the order (if every seat is still the hold's) or refunds, or, when
   * nothing was charged (or it was declined), fails the attempt and gives the hold back. Under the hold's lock, once.
   */
  private async settleByLookup(accountId: string, key: string, holdId: string): Promise<'confirmed' | 'refunded' | 'failed' | 'skipped'> {
    const result = await this.deps.payments.lookup(`${accountId}:${key}`);
    return this.deps.db.transaction().execute(async (trx) => {
      const hold = await holds.lockHoldWithEvent(trx, holdId);
      const still = await repo.findAttempt(trx, accountId, key);
      if (!hold || still?.status !== 'PENDING') return 'skipped' as const;
      if (result?.status === 'succeeded') {
        const sold = await repo.sellHoldSeats(trx, holdId, hold.quantity);
        if (sold === hold.quantity) {
          const seats = await holds.seatsOfHold(trx, holdId);
          const orderId = await repo.insertOrder(trx, {
            holdId,
            eventId: hold.event_id,
            accountId,
            key,
            seatCount: sold,
            amountCents: seats.length > 0 ? await priceOfSeats(trx, seats) : await amountOfGaHold(trx, holdId),
            instrument: still.instrument_fingerprint,
            reference: result.reference,
          });
          await repo.setHoldStatus(trx, holdId, 'PURCHASED');
          await repo.finishAttempt(trx, accountId, key, { status: 'SUCCEEDED', orderId });
          await issueTicketsForOrder(trx, {
            orderId,
            holdId,
            eventId: hold.event_id,
            accountId,
            quantity: sold,
          });
          this.deps.metrics?.checkouts.inc({ event: hold.event_id, result: 'recovered' });
          return 'confirmed' as const;
        }
        await this.deps.payments.refund(result.reference);
        await repo.finishAttempt(trx, accountId, key, { status: 'FAILED', errorCode: 'HOLD_EXPIRED' });
        await repo.setHoldStatus(trx, holdId, 'HELD');
        this.deps.metrics?.holdExpiredDuringPayment.inc();
        return 'refunded' as const;
      }
      // Declined, or never charged (the process died before the call reached the provider).
      await repo.finishAttempt(trx, accountId, key, { status: 'FAILED', errorCode: 'PAYMENT_NOT_COMPLETED' });
      await repo.setHoldStatus(trx, holdId, 'HELD');
      return 'failed' as const;
    });
  }

  /**
   * Waits a moment for the attempt under this key to finish, then answers exactly what it answered; still pending
   * after `inProgressWaitMs` (or the client gone: `signal`), `409 CHECKOUT_IN_PROGRESS` with Retry-After. The wait is
   * short on purpose: well inside the server's socket timeouts, so a retry is always answered, never left to a
   * closed socket. The database is read with a growing pause (50 ms to 400 ms), not every 50 ms. An attempt whose
   * owner is another process no longer renewing its lease (killed mid-payment) is not waited on at all.
   */
  private async awaitAttempt(accountId: string, key: string, signal?: AbortSignal, db: Db = this.deps.db): Promise<CheckoutResult> {
    const deadline = Date.now() + this.inProgressWaitMs;
    for (let pause = 50, first = true; ; pause = Math.min(400, pause * 2), first = false) {
      const a = await repo.findAttempt(db, accountId, key);
      if (!a)
        throw new DomainError('unavailable', 'PAYMENT_GATEWAY_BUSY', 'the payment provider is busy; retry with the same Idempotency-Key', {
          retryAfterSeconds: 1,
        });
      if (a.status === 'SUCCEEDED') {
        const order = await repo.findOrder(db, a.order_id!);
        return {
          orderId: order!.id,
          holdId: order!.hold_id,
          status: 'CONFIRMED',
          amountCents: order!.amount_cents,
          seatCount: order!.seat_count,
          replayed: true,
        };
      }
      if (a.status === 'FAILED')
        throw a.error_code === 'HOLD_EXPIRED'
          ? lapsedDuringPayment()
          : a.error_code === 'PAYMENT_NOT_COMPLETED'
            ? notCompleted()
            : declined();
      // Its owner is another process that is not renewing its lease, or whose lease connection is gone (killed, or
      // stopped): nobody will finish it while this retry waits; recovery settles it within seconds. Answer at once,
      // without waiting on it.
      const orphaned =
        first &&
        a.owner !== null &&
        a.owner !== (this.deps.lease?.id ?? null) &&
        !(await repo.leaseIsLive(db, a.owner, (LEASE_BEAT_MS * 2.5) / 1000));
      const left = deadline - Date.now();
      if (orphaned || left <= 0 || signal?.aborted)
        throw new DomainError(
          'conflict',
          'CHECKOUT_IN_PROGRESS',
          'the first request with this Idempotency-Key is still being processed; retry with the same key',
          {
            retryAfterSeconds: IN_PROGRESS_RETRY_AFTER_SECONDS,
          },
        );
      await new Promise((r) => setTimeout(r, Math.min(pause, left)));
    }
  }
}

/** Orphaned checkouts one process settles at once (each asks the provider, then writes in a short transaction). */
const SETTLE_CONCURRENCY = 4;

/** Retry-After of a checkout still in progress under the same key. */
export const IN_PROGRESS_RETRY_AFTER_SECONDS = 2;

const keyReusedForCheckout = () =>
  new DomainError('invalid', 'IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used for a different request', {
    field: 'idempotency-key',
  });
const lapsedDuringPayment = () =>
  new DomainError('gone', 'HOLD_EXPIRED', 'the hold lapsed while the payment was in flight; the charge was refunded');
const notCompleted = () =>
  new DomainError(
    'conflict',
    'PAYMENT_NOT_COMPLETED',
    'this payment did not complete and nothing was charged; pay again with a new Idempotency-Key',
  );
const declined = () =>
  new DomainError('payment', 'PAYMENT_DECLINED', 'the payment was declined; try another card', { field: 'payment.instrument' });
