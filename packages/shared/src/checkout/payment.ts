import { createHash, randomUUID } from 'node:crypto';
import type { Db } from '../db/connect.js';
import { notFound } from '../errors.js';
import * as ledger from './simulated-gateway.repository.js';

/** What a checkout hands the payment provider. The card number never leaves this call. */
export interface ChargeRequest {
  idempotencyKey: string;
  amountCents: number;
  currency: string;
  instrument: { type: 'card'; number: string; expMonth?: number; expYear?: number };
  /** The event the charge is for (providers keep it as the charge's metadata; the simulator reads its condition by it). */
  eventId?: string;
}

export type ChargeResult =
  | { status: 'succeeded'; reference: string }
  | { status: 'declined'; reason: string }
  /** The provider refused for load (HTTP 429 at a real gateway): retry later with the same key. */
  | { status: 'rate_limited'; retryAfterSeconds: number };

/** The payment provider behind checkout. A real gateway plugs in here; it must honour idempotency keys. */
export interface PaymentProvider {
  charge(req: ChargeRequest): Promise<ChargeResult>;
  refund(reference: string): Promise<void>;
  /** What became of the charge made under this idempotency key; null when none was made. */
  lookup(idempotencyKey: string): Promise<ChargeResult | null>;
}

export interface SimulatedGatewayOptions {
  /** Contracted ceiling: requests above it within a second are answered rate_limited. */
  tps: number;
  /** Mean latency of a charge. */
  latencyMs: number;
  /** Share of charges declined at random (0..1), on top of the test card that always declines. */
  failureRate: number;
  random?: () => number;
  /**
   * Where the simulator keeps what it charged (its table `simulated_gateway_charges`). With it, the simulator
   * remembers every charge across crashes and processes, as a real provider does: a charge is recorded when it is
   * made, its answer reaches the caller after the latency, and `lookup` finds it from any process afterwards.
   * Without it (unit tests), charges live in this object's memory only.
   */
  db?: Db;
  /**
   * How long a charge trusts the condition it read for its event (`simulated_gateway_conditions`, with `db` only),
   * default 1000 ms: a condition put or lifted reaches every process within about this long, and a busy sale reads
   * it once a second per event and process, not once a charge.
   */
  conditionCacheMs?: number;
}

/** A condition the simulated gateway is in for one rehearsal's event (the rehearsal's `slow-payments` fault). */
export interface SimulatedGatewayCondition {
  /** Share of the event's charges answered rate_limited (0..1): nothing charged, the caller retries with the same key. */
  busyShare: number;
  /** The Retry-After of those answers. */
  retryAfterSeconds: number;
  /** Added to the latency of the event's other charges (before the ±50% jitter). */
  delayMs: number;
}

/** Test card numbers with a fixed answer, as real gateways publish. */
export const TEST_CARDS = { success: '4242424242424242', declined: '4000000000000002' } as const;

/**
 * A simulated gateway: a TPS ceiling, latency and a failure rate, and idempotency keys honoured the way
 * providers do (the same key returns the first answer, even while that answer is still being computed, and from
 * any process once recorded; the same key with a different request is refused). A charge is made (recorded) before
 * its answer travels back, so a caller that dies during the latency leaves a charge for recovery to find.
 */
export class SimulatedPaymentGateway implements PaymentProvider {
  private readonly byKey = new Map<string, { fingerprint: string; result: Promise<ChargeResult> }>();
  private windowStart = 0;
  private inWindow = 0;
  /** Each event's condition as last read, and when (ms): the gateway's view of the shared table. */
  private readonly conditions = new Map<string, { readAtMs: number; condition: Promise<SimulatedGatewayCondition | null> }>();
  readonly refunds: string[] = [];
  /** Number of distinct charges actually made by this object (replays and other processes' charges excluded). */
  charges = 0;

  constructor(private readonly opts: SimulatedGatewayOptions) {}

  charge(req: ChargeRequest): Promise<ChargeResult> {
    const fingerprint = createHash('sha256').update(`${req.amountCents}|${req.currency}|${req.instrument.number}`).digest('hex');
    const prior = this.byKey.get(req.idempotencyKey);
    if (prior) {
      if (prior.fingerprint !== fingerprint) return Promise.resolve({ status: 'declined', reason: 'idempotency_key_reused' });
      return prior.result;
    }
    const now = Date.now();
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.inWindow = 0;
    }
    if (++this.inWindow > this.opts.tps) return Promise.resolve({ status: 'rate_limited', retryAfterSeconds: 1 });
    const random = this.opts.random ?? Math.random;
    const latency = (extraMs: number) => {
      const jitter = (this.opts.latencyMs + extraMs) * (0.5 + random());
      return jitter > 0 ? new Promise((r) => setTimeout(r, jitter)) : Promise.resolve();
    };
    const decide = (): ChargeResult => {
      if (req.instrument.number === TEST_CARDS.declined) return { status: 'declined', reason: 'card_declined' };
      if (random() < this.opts.failureRate) return { status: 'declined', reason: 'issuer_declined' };
      return { status: 'succeeded', reference: `sim_${randomUUID()}` };
    };
    const db = this.opts.db;
    const result = (async (): Promise<ChargeResult> => {
      if (!db) {
        await latency(0);
        this.charges++;
        return decide();
      }
      // The event's condition (a rehearsal's slow-payments fault): refused for load before anything is charged, as a
      // real provider's 429 is, or answered late.
      const condition = req.eventId ? await this.conditionOf(db, req.eventId) : null;
      if (condition && random() < condition.busyShare) return { status: 'rate_limited', retryAfterSeconds: condition.retryAfterSeconds };
      // One statement: the charge recorded, or, charged before (by another process, or by this one before a
      // restart), the first answer as recorded, at once (the decision made here for it is dropped).
      const outcome = decide();
      const { row, created } = await ledger.recordCharge(db, {
        key: req.idempotencyKey,
        fingerprint,
        status: outcome.status === 'succeeded' ? 'succeeded' : 'declined',
        reference: outcome.status === 'succeeded' ? outcome.reference : null,
        reason: outcome.status === 'declined' ? outcome.reason : null,
        amountCents: req.amountCents,
        currency: req.currency,
      });
      if (created) {
        this.charges++;
        await latency(condition?.delayMs ?? 0);
      }
      return row.request_fingerprint === fingerprint ? resultOf(row) : { status: 'declined', reason: 'idempotency_key_reused' };
    })();
    this.byKey.set(req.idempotencyKey, { fingerprint, result });
    // A charge that could not be made (its ledger unreachable) is forgotten, so the same key can be tried again; one
    // that was made is the ledger's to remember from then on (this map only joins requests while one is in flight).
    const forget = () => this.byKey.get(req.idempotencyKey)?.result === result && this.byKey.delete(req.idempotencyKey);
    result.then(() => db && forget(), forget);
    return result;
  }

  /**
   * The condition in force for the event, read from the shared table at most once per `conditionCacheMs` (in-flight
   * reads shared). A read that fails counts as no condition: the charge then meets the database's own trouble.
   */
  private conditionOf(db: Db, eventId: string): Promise<SimulatedGatewayCondition | null> {
    const now = Date.now();
    const cached = this.conditions.get(eventId);
    if (cached && now - cached.readAtMs < (this.opts.conditionCacheMs ?? 1000)) return cached.condition;
    // Entries of events long over are dropped now and then; a sale has one, a machine a handful.
    if (this.conditions.size > 1000) this.conditions.clear();
    const condition = ledger.activeCondition(db, eventId).then(
      (r) => (r ? { busyShare: r.busy_share, retryAfterSeconds: r.retry_after_seconds, delayMs: r.delay_ms } : null),
      () => null,
    );
    this.conditions.set(eventId, { readAtMs: now, condition });
    return condition;
  }

  async refund(reference: string): Promise<void> {
    this.refunds.push(reference);
    if (this.opts.db) await ledger.refundCharge(this.opts.db, reference);
  }

  async lookup(idempotencyKey: string): Promise<ChargeResult | null> {
    const prior = this.byKey.get(idempotencyKey);
    if (prior) return prior.result;
    if (!this.opts.db) return null;
    const row = await ledger.findCharge(this.opts.db, idempotencyKey);
    return row ? resultOf(row) : null;
  }
}

function resultOf(row: ledger.SimulatedChargeRow): ChargeResult {
  return row.status === 'succeeded'
    ? { status: 'succeeded', reference: row.reference! }
    : { status: 'declined', reason: row.reason ?? 'declined' };
}

/**
 * Puts the simulated gateway in a condition for one rehearsal's event, for `forSeconds` (the database's clock): every
 * store process's simulated gateway reads it within about a second, and it ends by itself at its time even if whoever
 * put it is gone. Never touches a real payment provider, nor an event that is not a rehearsal's (EVENT_NOT_FOUND).
 * Returns when it started and when it ends.
 */
export async function putSimulatedGatewayCondition(
  db: Db,
  eventId: string,
  c: SimulatedGatewayCondition & { forSeconds: number },
): Promise<{ startedAt: Date; until: Date }> {
  if (!(c.busyShare >= 0 && c.busyShare <= 1)) throw new RangeError(`busyShare must be 0..1; got ${c.busyShare}`);
  if (!(c.forSeconds > 0 && c.forSeconds <= 3600))
    throw new RangeError(`forSeconds must be more than 0 and at most 3600; got ${c.forSeconds}`);
  const r = await ledger.putCondition(db, eventId, {
    busyShare: c.busyShare,
    retryAfterSeconds: Math.max(1, Math.min(60, Math.round(c.retryAfterSeconds))),
    delayMs: Math.max(0, Math.min(30_000, Math.round(c.delayMs))),
    forSeconds: c.forSeconds,
  });
  if (!r) throw notFound('EVENT_NOT_FOUND', `no rehearsal event ${eventId}: the simulated gateway's conditions are for rehearsals only`);
  return { startedAt: r.started_at, until: r.until };
}

/** Lifts the event's condition, if any; returns when (the database's clock), for "paid after the lift". */
export function liftSimulatedGatewayCondition(db: Db, eventId: string): Promise<Date> {
  return ledger.liftCondition(db, eventId);
}
