import { createHash, randomUUID } from 'node:crypto';

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
}

/** Test card numbers with a fixed answer, as real gateways publish. */
export const TEST_CARDS = { success: '4242424242424242', declined: '4000000000000002' } as const;

/**
 * A simulated gateway: a TPS ceiling, latency and a failure rate, and idempotency keys honoured the way
 * providers do (the same key returns the first answer, even while that answer is still being computed;
 * the same key with a different request is refused).
 */
export class SimulatedPaymentGateway implements PaymentProvider {
  private readonly byKey = new Map<string, { fingerprint: string; result: Promise<ChargeResult> }>();
  private windowStart = 0;
  private inWindow = 0;
  readonly refunds: string[] = [];
  /** Number of distinct charges actually made (replays excluded). */
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
    const result = (async (): Promise<ChargeResult> => {
      const jitter = this.opts.latencyMs * (0.5 + random());
      if (jitter > 0) await new Promise((r) => setTimeout(r, jitter));
      this.charges++;
      if (req.instrument.number === TEST_CARDS.declined) return { status: 'declined', reason: 'card_declined' };
      if (random() < this.opts.failureRate) return { status: 'declined', reason: 'issuer_declined' };
      return { status: 'succeeded', reference: `sim_${randomUUID()}` };
    })();
    this.byKey.set(req.idempotencyKey, { fingerprint, result });
    return result;
  }

  async refund(reference: string): Promise<void> {
    this.refunds.push(reference);
  }

  async lookup(idempotencyKey: string): Promise<ChargeResult | null> {
    const prior = this.byKey.get(idempotencyKey);
    return prior ? prior.result : null;
  }
}
