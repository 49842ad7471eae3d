import type { FanLanguage, QueueCopy } from './copy.js';
import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import { signedOffSql } from '../events/signoff.service.js';

/** Each event's join order comes from its own sequence: cheap under a burst, no hot counter row. */
export const joinSequenceName = (eventId: string) => `queue_join_${eventId.replaceAll('-', '')}`;

export async function insertQueueState(trx: Trx, eventId: string, seedHex: string, commitment: string): Promise<void> {
  await trx.insertInto('queue_state').values({ event_id: eventId, seed_hex: seedHex, seed_commitment: commitment }).execute();
  await sql`CREATE SEQUENCE IF NOT EXISTS ${sql.id(joinSequenceName(eventId))} MINVALUE 0 START 0`.execute(trx);
}

/**
 * Removes a queue that has not been used (a presale tier's, when an edit replaces the tiers): its state, any
 * entries and admission minutes, and its join sequence.
 */
export async function deleteQueue(trx: Trx, queueId: string): Promise<void> {
  await trx.deleteFrom('queue_entries').where('event_id', '=', queueId).execute();
  await trx.deleteFrom('admission_minutes').where('event_id', '=', queueId).execute();
  await trx.deleteFrom('queue_state').where('event_id', '=', queueId).execute();
  await sql`DROP SEQUENCE IF EXISTS ${sql.id(joinSequenceName(queueId))}`.execute(trx);
}

export interface JoinRow {
  join_index: number;
  cohort: 'PREOPEN' | 'FIFO';
  device_hash: string;
  joined_at: Date;
  created: boolean;
  /** How often the place has moved to another device. */
  device_moves: number;
}

/**
 * Moves an account's place to another device, if it is still on `fromDeviceHash` and has moved fewer than
 * `maxMoves` times: one conditional update, so of two devices taking it at once one wins and the other reads the
 * winner (and tries again from there). The place itself (join index, cohort, when it was taken) is kept.
 */
export async function moveEntryToDevice(
  db: Db,
  queueId: string,
  accountId: string,
  fromDeviceHash: string,
  toDeviceHash: string,
  maxMoves: number,
): Promise<JoinRow | undefined> {
  const { rows } = await sql<Omit<JoinRow, 'created'>>`
    UPDATE queue_entries SET device_hash = ${toDeviceHash}, device_moves = device_moves + 1, moved_at = now()
    WHERE event_id = ${queueId} AND account_id = ${accountId} AND device_hash = ${fromDeviceHash} AND device_moves < ${maxMoves}
    RETURNING join_index, cohort, device_hash, joined_at, device_moves`.execute(db);
  return rows[0] ? { ...rows[0], created: false } : undefined;
}

/** An account's place in a queue as it is now (after a move lost to another device's). */
export async function findEntry(db: Db, queueId: string, accountId: string): Promise<JoinRow | undefined> {
  const { rows } = await sql<Omit<JoinRow, 'created'>>`
    SELECT join_index, cohort, device_hash, joined_at, device_moves FROM queue_entries
    WHERE event_id = ${queueId} AND account_id = ${accountId}`.execute(db);
  return rows[0] ? { ...rows[0], created: false } : undefined;
}

export interface WatermarkRow {
  event_id: string;
  admitted_through: number;
  rate_per_min: number;
  paused: boolean;
  inventory_state: 'AVAILABLE' | 'LAST_CHANCE' | 'SOLD_OUT';
  onsale_at: Date;
  updated_at: Date;
  heartbeat_at: Date | null;
  cohort_size: number | null;
  seed_hex: string;
  seed_revealed_at: Date | null;
  seed_commitment: string;
  fairness_mode: string;
  listing_id: string;
  sold_out_at: Date | null;
  queue_copy: Record<string, string> | null;
  /** The event's words per state in languages beside English (the look's `copy`). */
  look_copy: Partial<Record<FanLanguage, Partial<QueueCopy>>> | null;
  /** The event's hold time: its words say it ({hold}). */
  hold_ttl_seconds: number;
  watermark_history: [number, number][];
  /** The event the queue sells (event_id is the queue's id: the event's, or a presale tier's). */
  owner_event_id: string;
  /** A presale tier's queue: its code, name and close; null for an event's own queue. */
  tier: string | null;
  tier_name: string | null;
  closes_at: Date | null;
  /** The event's fairness mode is not signed off and the queue has not opened: it stays closed (signoff.service.ts). */
  awaiting_signoff: boolean;
  /** The places that moved to another device: [join index, moves] (QueueFacts.moves). */
  moves: [number, number][];
  /** The admission controller's last count of the event's seats by section ([code, available, held, sold]), and when. */
  section_counts: [string, number, number, number][] | null;
  counted_at: Date | null;
}

/** Every event's queue numbers (a small row per event): what each store-API instance keeps in memory. */
export async function loadWatermarks(db: Db, eventId?: string): Promise<WatermarkRow[]> {
  const { rows } = await sql<WatermarkRow>`
    SELECT q.event_id, q.admitted_through, q.rate_per_min, q.paused, q.inventory_state, coalesce(a.opens_at, e.onsale_at) AS onsale_at, q.updated_at,
           q.heartbeat_at, q.cohort_size, q.seed_hex, q.seed_revealed_at, q.seed_commitment, coalesce(a.fairness_mode, e.fairness_mode) AS fairness_mode,
           e.listing_id, q.sold_out_at, e.queue_copy, e.look -> 'copy' AS look_copy, e.hold_ttl_seconds, q.watermark_history, e.id AS owner_event_id, a.code AS tier, a.name AS tier_name,
           CASE WHEN a.rolled_at IS NOT NULL THEN least(a.closes_at, a.rolled_at) ELSE a.closes_at END AS closes_at,
           (q.sealed_at IS NULL AND NOT ${signedOffSql('e.id', 'e.fairness_mode')}) AS awaiting_signoff, q.section_counts, q.counted_at,
           (SELECT coalesce(jsonb_agg(jsonb_build_array(m.join_index, m.device_moves)), '[]'::jsonb)
              FROM queue_entries m WHERE m.event_id = q.event_id AND m.moved_at IS NOT NULL) AS moves
    FROM queue_state q
    LEFT JOIN allocations a ON a.queue_id = q.event_id AND NOT a.general
    JOIN events e ON e.id = coalesce(a.event_id, q.event_id)
    ${eventId ? sql`WHERE q.event_id = ${eventId}` : sql``}`.execute(db);
  return rows;
}

/**
 * Records admission tokens issued, counted in memory and flushed in batches (no write per poll), as claimed at `at`
 * (the database's clock by default; tests pass their injected clock's time, the one the controller ticks on).
 */
export async function recordClaims(db: Db, claims: { eventId: string; accountId: string }[], at?: Date): Promise<void> {
  if (claims.length === 0) return;
  const now = at ? sql`${at}::timestamptz` : sql`now()`;
  await sql`
    UPDATE queue_entries q SET claimed_at = ${now}
    FROM unnest(${claims.map((c) => c.eventId)}::uuid[], ${claims.map((c) => c.accountId)}::text[]) AS c(event_id, account_id)
    WHERE q.event_id = c.event_id AND q.account_id = c.account_id AND q.claimed_at IS NULL`.execute(db);
  const perEvent = new Map<string, number>();
  for (const c of claims) perEvent.set(c.eventId, (perEvent.get(c.eventId) ?? 0) + 1);
  await sql`
    INSERT INTO admission_minutes (event_id, minute, admission_tokens_issued)
    SELECT e, date_trunc('minute', ${now}), n FROM unnest(${[...perEvent.keys()]}::uuid[], ${[...perEvent.values()]}::int[]) AS t(e, n)
    ON CONFLICT (event_id, minute) DO UPDATE SET admission_tokens_issued = admission_minutes.admission_tokens_issued + excluded.admission_tokens_issued`.execute(
    db,
  );
}

/** Per event, the last full minute: admission tokens issued and holds created (for the admission metrics). */
export async function lastMinuteAdmissions(db: Db): Promise<{ event_id: string; admitted: number; holds: number }[]> {
  const { rows } = await sql<{ event_id: string; admitted: number; holds: number }>`
    SELECT q.event_id,
           coalesce((SELECT admission_tokens_issued FROM admission_minutes m
                     WHERE m.event_id = q.event_id AND m.minute = date_trunc('minute', now()) - interval '1 minute'), 0)::int AS admitted,
           (SELECT count(*) FROM holds h WHERE h.event_id = q.event_id
              AND h.created_at >= date_trunc('minute', now()) - interval '1 minute' AND h.created_at < date_trunc('minute', now()))::int AS holds
    FROM queue_state q JOIN events e ON e.id = q.event_id
    WHERE now() BETWEEN e.onsale_at - interval '2 hours' AND e.starts_at`.execute(db);
  return rows;
}

/** Adds hold outcomes and gateway-failed checkouts (counted in memory by a store-API instance) to the current minute, per event. */
export async function recordHoldOutcomes(
  db: Db,
  outcomes: Map<string, { created: number; refused: number; gatewayFailures?: number }>,
): Promise<void> {
  if (outcomes.size === 0) return;
  const ids = [...outcomes.keys()];
  await sql`
    INSERT INTO admission_minutes (event_id, minute, holds_created, holds_refused, checkout_gateway_failures)
    SELECT e, date_trunc('minute', now()), c, r, g
    FROM unnest(${ids}::uuid[], ${ids.map((k) => outcomes.get(k)!.created)}::int[], ${ids.map((k) => outcomes.get(k)!.refused)}::int[],
                ${ids.map((k) => outcomes.get(k)!.gatewayFailures ?? 0)}::int[]) AS t(e, c, r, g)
    ON CONFLICT (event_id, minute) DO UPDATE SET holds_created = admission_minutes.holds_created + excluded.holds_created,
                                                 holds_refused = admission_minutes.holds_refused + excluded.holds_refused,
                                                 checkout_gateway_failures = admission_minutes.checkout_gateway_failures + excluded.checkout_gateway_failures`.execute(
    db,
  );
}

/** A fan whose position expired unused goes to the back of the line: a new join index, FIFO, unclaimed. */
export async function requeueEntry(
  db: Db,
  eventId: string,
  accountId: string,
): Promise<{ join_index: number; cohort: 'FIFO'; joined_at: Date } | undefined> {
  const { rows } = await sql<{ join_index: number; cohort: 'FIFO'; joined_at: Date }>`
    UPDATE queue_entries SET join_index = nextval(${joinSequenceName(eventId)}::regclass), cohort = 'FIFO', joined_at = now(), claimed_at = NULL
    WHERE event_id = ${eventId} AND account_id = ${accountId}
    RETURNING join_index, cohort, joined_at`.execute(db);
  return rows[0];
}
