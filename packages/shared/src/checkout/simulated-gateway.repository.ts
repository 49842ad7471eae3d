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

/**
 * Records a charge; when one under the key exists already (another process made it first, or this is a retry), returns
 * that one instead: one statement either way (the insert, else the row that stopped it). Only a row committed by
 * another transaction while this statement ran (its insert waited for that one, its read did not see it) takes a
 * second read.
 */
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
  const { rows } = await sql<SimulatedChargeRow & { created: boolean }>`
    WITH ins AS (
      INSERT INTO simulated_gateway_charges (idempotency_key, request_fingerprint, status, reference, reason, amount_cents, currency)
      VALUES (${c.key}, ${c.fingerprint}, ${c.status}, ${c.reference}, ${c.reason}, ${c.amountCents}, ${c.currency})
      ON CONFLICT (idempotency_key) DO NOTHING
      RETURNING idempotency_key, request_fingerprint, status, reference, reason, refunded_at)
    SELECT ins.*, true AS created FROM ins
    UNION ALL
    SELECT idempotency_key, request_fingerprint, status, reference, reason, refunded_at, false AS created
      FROM simulated_gateway_charges WHERE idempotency_key = ${c.key} AND NOT EXISTS (SELECT 1 FROM ins)`.execute(db);
  const first = rows[0];
  if (first) {
    const { created, ...row } = first;
    return { row, created };
  }
  const existing = await findCharge(db, c.key);
  if (!existing) throw new Error(`simulated gateway: charge ${c.key} vanished`);
  return { row: existing, created: false };
}

export async function refundCharge(db: Db, reference: string): Promise<void> {
  await sql`UPDATE simulated_gateway_charges SET refunded_at = coalesce(refunded_at, now()) WHERE reference = ${reference}`.execute(db);
}

/** The condition the simulated gateway is in for one event, as its charges see it. */
export interface SimulatedConditionRow {
  busy_share: number;
  retry_after_seconds: number;
  delay_ms: number;
}

/**
 * The condition in force now for this event: none once its time is up, and none on an event that is not a
 * rehearsal's (whatever the table holds), so a real sale's charges are never touched by one.
 */
export async function activeCondition(db: Db, eventId: string): Promise<SimulatedConditionRow | undefined> {
  const { rows } = await sql<SimulatedConditionRow>`
    SELECT c.busy_share, c.retry_after_seconds, c.delay_ms
      FROM simulated_gateway_conditions c JOIN events e ON e.id = c.event_id
     WHERE c.event_id = ${eventId} AND e.rehearsal_time_scale IS NOT NULL AND c.until > now()`.execute(db);
  return rows[0];
}

/**
 * Puts a rehearsal's event in a condition for `forSeconds` from now (the database's clock, which every process
 * shares), replacing any it had. Returns when it ends; undefined when the event is not a rehearsal's (nothing written).
 */
export async function putCondition(
  db: Db,
  eventId: string,
  c: { busyShare: number; retryAfterSeconds: number; delayMs: number; forSeconds: number },
): Promise<{ started_at: Date; until: Date } | undefined> {
  const { rows } = await sql<{ started_at: Date; until: Date }>`
    INSERT INTO simulated_gateway_conditions (event_id, busy_share, retry_after_seconds, delay_ms, started_at, until)
    SELECT id, ${c.busyShare}, ${c.retryAfterSeconds}, ${c.delayMs}, now(), now() + make_interval(secs => ${c.forSeconds})
      FROM events WHERE id = ${eventId} AND rehearsal_time_scale IS NOT NULL
    ON CONFLICT (event_id) DO UPDATE
       SET busy_share = excluded.busy_share, retry_after_seconds = excluded.retry_after_seconds,
           delay_ms = excluded.delay_ms, started_at = excluded.started_at, until = excluded.until
    RETURNING started_at, until`.execute(db);
  return rows[0];
}

/** Ends the event's condition, if it has one; returns the moment it ended (the database's clock). */
export async function liftCondition(db: Db, eventId: string): Promise<Date> {
  const { rows } = await sql<{ lifted_at: Date }>`
    WITH lifted AS (DELETE FROM simulated_gateway_conditions WHERE event_id = ${eventId} RETURNING 1)
    SELECT now() AS lifted_at FROM (SELECT count(*) FROM lifted) l`.execute(db);
  return rows[0]!.lifted_at;
}
