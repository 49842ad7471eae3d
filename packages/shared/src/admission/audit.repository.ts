import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';

// SQL of the public fairness audit. Everything read here is publishable once the seed is revealed; the seed
// itself is returned only when seed_revealed_at is set.

export interface PublicQueueRow {
  event_id: string;
  name: string;
  venue_name: string;
  onsale_at: Date;
  starts_at: Date;
  fairness_mode: string;
  capacity: number;
  seed_commitment: string;
  /** Null until the reveal. */
  seed: string | null;
  seed_revealed_at: Date | null;
  cohort_size: number | null;
  sealed_at: Date | null;
  sold_out_at: Date | null;
  admitted_through: number;
  /** The venue's time zone. */
  time_zone: string;
}

export async function findPublicQueue(db: Db | Trx, eventId: string): Promise<PublicQueueRow | undefined> {
  const { rows } = await sql<PublicQueueRow>`
    SELECT e.id AS event_id, e.name, e.venue_name, e.onsale_at, e.starts_at, e.fairness_mode, e.capacity, e.time_zone,
           q.seed_commitment, CASE WHEN q.seed_revealed_at IS NOT NULL THEN q.seed_hex END AS seed,
           q.seed_revealed_at, q.cohort_size, q.sealed_at, q.sold_out_at, q.admitted_through
    FROM events e JOIN queue_state q ON q.event_id = e.id
    WHERE e.id = ${eventId}`.execute(db);
  return rows[0];
}

/** A presale tier's queue as the audit sees it (the tier's window, fairness mode and seats; its own seed). */
export async function findPublicTierQueue(db: Db | Trx, eventId: string, tier: string): Promise<PublicQueueRow | undefined> {
  const { rows } = await sql<PublicQueueRow>`
    SELECT a.queue_id AS event_id, e.name || ' — ' || a.name AS name, e.venue_name, a.opens_at AS onsale_at, e.starts_at, a.fairness_mode, e.time_zone,
           a.capacity, q.seed_commitment, CASE WHEN q.seed_revealed_at IS NOT NULL THEN q.seed_hex END AS seed,
           q.seed_revealed_at, q.cohort_size, q.sealed_at, q.sold_out_at, q.admitted_through
    FROM allocations a JOIN events e ON e.id = a.event_id JOIN queue_state q ON q.event_id = a.queue_id
    WHERE a.event_id = ${eventId} AND a.code = ${tier} AND NOT a.general`.execute(db);
  return rows[0];
}

/** The event's presale tiers that have a queue of their own, in sale order. */
export async function findPresaleTiers(db: Db | Trx, eventId: string): Promise<string[]> {
  const { rows } = await sql<{
    code: string;
  }>`SELECT code FROM allocations WHERE event_id = ${eventId} AND NOT general ORDER BY position`.execute(db);
  return rows.map((r) => r.code);
}

/**
 * The pre-open cohort's join list: each account as a pseudonym, SHA-256 of the UTF-8 text
 * `<event id><account id>` (the event id in its lowercase 36-character form; a presale tier's queue id for its
 * queue) in hex, with its join index.
 */
export async function findPreopenJoins(db: Db | Trx, eventId: string): Promise<{ account: string; join_index: number }[]> {
  const { rows } = await sql<{ account: string; join_index: number }>`
    SELECT encode(sha256(convert_to(event_id::text || account_id, 'UTF8')), 'hex') AS account, join_index
    FROM queue_entries WHERE event_id = ${eventId} AND cohort = 'PREOPEN'
    ORDER BY join_index`.execute(db);
  return rows;
}

export interface AdmissionMinuteRow {
  minute: Date;
  watermark_advanced: number;
  admission_tokens_issued: number;
  rate_per_min: number;
}

export function findAdmissionMinutes(db: Db | Trx, eventId: string): Promise<AdmissionMinuteRow[]> {
  return db
    .selectFrom('admission_minutes')
    .select(['minute', 'watermark_advanced', 'admission_tokens_issued', 'rate_per_min'])
    .where('event_id', '=', eventId)
    .orderBy('minute')
    .execute();
}

export interface AuditRow {
  id: number;
  at: Date;
  actor: string;
  action: string;
  details: Record<string, unknown>;
}

/** The event's audit entries of the given actions (or prefixes ending in `.`), oldest first. */
export async function findAuditEntries(db: Db | Trx, eventId: string, actions: string[], prefixes: string[]): Promise<AuditRow[]> {
  const { rows } = await sql<AuditRow>`
    SELECT id, at, actor, action, details FROM audit_log
    WHERE event_id = ${eventId}
      AND (action = ANY(${actions}::text[]) OR EXISTS (SELECT 1 FROM unnest(${prefixes}::text[]) p WHERE starts_with(action, p)))
    ORDER BY at, id`.execute(db);
  return rows;
}
