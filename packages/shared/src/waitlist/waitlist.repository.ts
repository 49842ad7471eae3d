import { sql, type RawBuilder } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import type { AvailabilityCause, AvailabilityMode, AvailableSection } from './waitlist.table.js';

// The waitlist's SQL: availability events, the seats set aside for the waitlist, and the fan-out jobs. Plain
// functions taking `db` or the caller's transaction; the rules are in availability.ts, offers.ts and fanout.ts.

/** What emitting availability needs to know of the event: its listing's mode, whether it sold out, section prices. */
export interface AvailabilityContext {
  listing_id: string;
  date: string;
  sold_out: boolean;
  mode: 'OFFER' | 'BROADCAST';
  offer_ttl_seconds: number;
  prices: { code: string; price_level: string; price_cents: number }[];
}

/** The event's context and the prices of `sectionCodes`, in one read. */
export async function findAvailabilityContext(trx: Trx, eventId: string, sectionCodes: string[]): Promise<AvailabilityContext | undefined> {
  const { rows } = await sql<AvailabilityContext>`
    SELECT e.listing_id, to_char(e.starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date,
           coalesce(q.sold_out_at IS NOT NULL, false) AS sold_out, l.waitlist_mode AS mode, l.offer_ttl_seconds,
           (SELECT coalesce(json_agg(json_build_object('code', s.code, 'price_level', s.price_level, 'price_cents', p.price_cents)), '[]')
            FROM sections s JOIN price_levels p ON p.event_id = s.event_id AND p.code = s.price_level
            WHERE s.event_id = e.id AND s.code = ANY(${sectionCodes}::text[])) AS prices
    FROM events e JOIN listings l ON l.id = e.listing_id LEFT JOIN queue_state q ON q.event_id = e.id
    WHERE e.id = ${eventId}`.execute(trx);
  return rows[0];
}

/**
 * Sets `seatIds` (AVAILABLE in this transaction) aside under a new hold of `accountId` for `ttlSeconds` by the
 * database's clock: the pool the waitlist hands out.
 */
export async function setAsidePool(trx: Trx, a: { holdId: string; eventId: string; accountId: string; seatIds: number[]; ttlSeconds: number }): Promise<void> {
  await sql`
    INSERT INTO holds (id, event_id, account_id, section_code, quantity, status, expires_at)
    VALUES (${a.holdId}, ${a.eventId}, ${a.accountId}, NULL, ${a.seatIds.length}, 'WAITLIST', now() + make_interval(secs => ${a.ttlSeconds}))`.execute(trx);
  await sql`
    UPDATE seats SET status = 'HELD', hold_id = ${a.holdId}, expires_at = now() + make_interval(secs => ${a.ttlSeconds}), version = version + 1
    WHERE event_id = ${a.eventId} AND id = ANY(${a.seatIds}::bigint[]) AND status = 'AVAILABLE'`.execute(trx);
}

/** The fan-out job of the availability event `id` (an SQL expression), added (or re-armed) where it is evaluated. */
function fanoutJob(id: RawBuilder<unknown>) {
  return sql`(graphile_worker.add_job('waitlist_fanout', json_build_object('availabilityId', ${id}::bigint),
                                      job_key := 'waitlist_fanout:' || ${id}::text, max_attempts := 25)).id AS job_id`;
}

/**
 * Writes an availability event and, unless `deferFanout`, its fan-out job, in one statement; returns its id. A
 * deferred event is marked for the relay (relayDeferredFanouts) instead.
 */
export async function insertAvailabilityEvent(
  trx: Trx,
  a: {
    listingId: string;
    eventId: string;
    cause: AvailabilityCause;
    performanceDate: string;
    sections: AvailableSection[];
    seatCount: number;
    poolHoldId: string | null;
    mode: AvailabilityMode;
    deferFanout: boolean;
  },
): Promise<number> {
  const { rows } = await sql<{ id: number }>`
    WITH av AS (
      INSERT INTO availability_events (listing_id, event_id, cause, performance_date, sections, seat_count, pool_hold_id, mode, fanout_enqueued)
      VALUES (${a.listingId}, ${a.eventId}, ${a.cause}, ${a.performanceDate}, ${JSON.stringify(a.sections)}::jsonb, ${a.seatCount}, ${a.poolHoldId}, ${a.mode}, ${!a.deferFanout})
      RETURNING id)
    SELECT av.id${a.deferFanout ? sql`` : sql`, ${fanoutJob(sql`av.id`)}`} FROM av`.execute(trx);
  return Number(rows[0]!.id);
}

/** Enqueues (or re-arms) the fan-out job of an availability event, in the caller's transaction. */
export async function enqueueFanoutJob(trx: Trx, availabilityId: number): Promise<void> {
  await sql`SELECT ${fanoutJob(sql`${availabilityId}::bigint`)}`.execute(trx);
}

/**
 * Enqueues the jobs of up to `limit` deferred availability events, oldest first, in one statement, marking them
 * enqueued; concurrent callers take disjoint rows (SKIP LOCKED). Returns how many it enqueued.
 */
export async function relayDeferredFanouts(db: Db, limit: number): Promise<number> {
  const { rows } = await sql<{ id: number }>`
    WITH due AS (SELECT id FROM availability_events WHERE NOT fanout_enqueued ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED),
    marked AS (UPDATE availability_events a SET fanout_enqueued = true FROM due WHERE a.id = due.id RETURNING a.id)
    SELECT marked.id, ${fanoutJob(sql`marked.id`)} FROM marked`.execute(db);
  return rows.length;
}
