import { createHash, randomUUID } from 'node:crypto';
import type { Db } from '../db/connect.js';
import * as ledger from './simulated-gateway.repository.js';

/** What a checkout hands the payment provider. The card number never leaves this call. */
export interface ChargeRequest {
  idempotencyKey: string;
  amountCents: number;
  currency: string;
  instrument: { type: 'card'; number: string; expMonth?: number; expYear?: number };
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
    const latency = () => {
      const jitter = this.opts.latencyMs * (0.5 + random());
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
        await latency();
        this.charges++;
        return decide();
      }
      // Charged before (by another process, or by this one before a restart): the first answer, as recorded.
      const existing = await ledger.findCharge(db, req.idempotencyKey);
      if (existing)
        return existing.request_fingerprint === fingerprint ? resultOf(existing) : { status: 'declined', reason: 'idempotency_key_reused' };
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
      if (created) this.charges++;
      await latency();
      return row.request_fingerprint === fingerprint ? resultOf(row) : { status: 'declined', reason: 'idempotency_key_reused' };
    })();
    this.byKey.set(req.idempotencyKey, { fingerprint, result });
    // A charge that could not be made (its ledger unreachable) is forgotten, so the same key can be tried again; one
    // that was made is the ledger's to remember from then on (this map only joins requests while one is in flight).
    const forget = () => this.byKey.get(req.idempotencyKey)?.result === result && this.byKey.delete(req.idempotencyKey);
    result.then(() => db && forget(), forget);
    return result;
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
