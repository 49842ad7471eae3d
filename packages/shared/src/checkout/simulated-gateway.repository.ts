import { sql } from 'kysely';
import type { Db } from '../db/connect.js';

// SQL of the simulated payment gateway's own ledger: what it charged, under which idempotency key. A real provider
// keeps this on its side; the simulator keeps it in a table of its own so that it, too, remembers across crashes.

export interface SimulatedChargeRow {
  idempotency_key: string;
  request_fingerprint: string;
  status: 'succeeded' | 'declined';
  reference: string | null;
  reason: string | null;
  refunded_at: Date | null;
}

export async function findCharge(db: Db, key: string): Promise<SimulatedChargeRow | undefined> {
  return db
    .selectFrom('simulated_gateway_charges')
    .select(['idempotency_key', 'request_fingerprint', 'status', 'reference', 'reason', 'refunded_at'])
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
}

/** Records a charge; when one under the key exists already (another process made it first), returns that one. */
export async function recordCharge(
  db: Db,
  c: {
    key: string;
    fingerprint: string;
    status: 'succeeded' | 'declined';
    reference: string | null;
    reason: string | null;
    amountCents: number;
    currency: string;
  },
): Promise<{ row: SimulatedChargeRow; created: boolean }> {
  const { rows } = await sql<SimulatedChargeRow>`
    INSERT INTO simulated_gateway_charges (idempotency_key, request_fingerprint, status, reference, reason, amount_cents, currency)
    VALUES (${c.key}, ${c.fingerprint}, ${c.status}, ${c.reference}, ${c.reason}, ${c.amountCents}, ${c.currency})
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING idempotency_key, request_fingerprint, status, reference, reason, refunded_at`.execute(db);
  if (rows[0]) return { row: rows[0], created: true };
  const existing = await findCharge(db, c.key);
  if (!existing) throw new Error(`simulated gateway: charge ${c.key} vanished`);
  return { row: existing, created: false };
}

export async function refundCharge(db: Db, reference: string): Promise<void> {
  await sql`UPDATE simulated_gateway_charges SET refunded_at = coalesce(refunded_at, now()) WHERE reference = ${reference}`.execute(db);
}
