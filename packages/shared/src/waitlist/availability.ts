import { randomUUID } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import { longestRun } from './criteria.js';
import type { AvailabilityCause, AvailabilityMode, AvailableSection } from './waitlist.table.js';

/** The system account that owns seats set aside for the waitlist. */
export const WAITLIST_ACCOUNT = '~waitlist';
/** Extra life of seats set aside for the waitlist beyond an offer's deadline, so a cascade never leaves a gap. */
export const POOL_GRACE_SECONDS = 120;

export interface ReturnedSeat {
  id: number;
  sectionCode: string;
  rowIndex: number;
  seatNumber: number;
}

export interface EmittedAvailability {
  availabilityId: number;
  mode: AvailabilityMode;
  /** True when the seats were set aside for the waitlist (the event had sold out): they are not on open sale. */
  pooled: boolean;
}

/**
 * Seats came back (a released or lapsed hold, a cancelled order, new inventory, an allocation rolled forward):
 * records the availability event and enqueues its fan-out, in the caller's transaction, so the change and the
 * event commit together or not at all. The seats must already be AVAILABLE in this transaction.
 *
 * After a sell-out the seats go to the waitlist, not to whoever refreshes fastest: they are set aside under a
 * waitlist hold (the pool) that the fan-out hands out as offers (OFFER mode) or that matching fans claim, first
 * come first served (BROADCAST mode). Before a sell-out they stay on open sale and matching fans are told so.
 */
export async function emitAvailability(
  trx: Trx,
  eventId: string,
  cause: AvailabilityCause,
  seats: ReturnedSeat[],
  opts: { deferFanout?: boolean } = {},
): Promise<EmittedAvailability | null> {
  if (seats.length === 0) return null;
  // The event's context and the returned sections' prices in one read.
  const { rows: ctx } = await sql<{
    listing_id: string;
    date: string;
    sold_out: boolean;
    mode: 'OFFER' | 'BROADCAST';
    offer_ttl_seconds: number;
    prices: { code: string; price_level: string; price_cents: number }[];
  }>`
    SELECT e.listing_id, to_char(e.starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date,
           coalesce(q.sold_out_at IS NOT NULL, false) AS sold_out, l.waitlist_mode AS mode, l.offer_ttl_seconds,
           (SELECT coalesce(json_agg(json_build_object('code', s.code, 'price_level', s.price_level, 'price_cents', p.price_cents)), '[]')
            FROM sections s JOIN price_levels p ON p.event_id = s.event_id AND p.code = s.price_level
            WHERE s.event_id = e.id AND s.code = ANY(${[...new Set(seats.map((s) => s.sectionCode))]}::text[])) AS prices
    FROM events e JOIN listings l ON l.id = e.listing_id LEFT JOIN queue_state q ON q.event_id = e.id
    WHERE e.id = ${eventId}`.execute(trx);
  const c = ctx[0];
  if (!c) return null;
  const sections = summarize(seats, new Map(c.prices.map((p) => [p.code, p])));

  let poolHoldId: string | null = null;
  let mode: AvailabilityMode = 'ON_SALE';
  if (c.sold_out) {
    mode = c.mode;
    poolHoldId = randomUUID();
    const ttl = c.offer_ttl_seconds + POOL_GRACE_SECONDS;
    await sql`
      INSERT INTO holds (id, event_id, account_id, section_code, quantity, status, expires_at)
      VALUES (${poolHoldId}, ${eventId}, ${WAITLIST_ACCOUNT}, NULL, ${seats.length}, 'WAITLIST', now() + make_interval(secs => ${ttl}))`.execute(trx);
    await sql`
      UPDATE seats SET status = 'HELD', hold_id = ${poolHoldId}, expires_at = now() + make_interval(secs => ${ttl}), version = version + 1
      WHERE event_id = ${eventId} AND id = ANY(${seats.map((s) => s.id)}::bigint[]) AND status = 'AVAILABLE'`.execute(trx);
  }
  // The availability event and its fan-out job in one statement; or, deferred, the event alone, for the relay
  // (relayFanouts) to enqueue: a job added here would notify the workers, and every transaction that notified
  // commits in turn behind one database-wide lock (see migration 2026_11_30_0010).
  const defer = opts.deferFanout === true;
  const { rows } = await sql<{ id: number }>`
    WITH av AS (
      INSERT INTO availability_events (listing_id, event_id, cause, performance_date, sections, seat_count, pool_hold_id, mode, fanout_enqueued)
      VALUES (${c.listing_id}, ${eventId}, ${cause}, ${c.date}, ${JSON.stringify(sections)}::jsonb, ${seats.length}, ${poolHoldId}, ${mode}, ${!defer})
      RETURNING id)
    SELECT av.id${defer ? sql`` : sql`, ${fanoutJob(sql`av.id`)}`} FROM av`.execute(trx);
  const availabilityId = Number(rows[0]!.id);
  return { availabilityId, mode, pooled: poolHoldId !== null };
}

/** The fan-out job of the availability event `id` (an SQL expression), added (or re-armed) where it is evaluated. */
function fanoutJob(id: RawBuilder<unknown>) {
  return sql`(graphile_worker.add_job('waitlist_fanout', json_build_object('availabilityId', ${id}::bigint),
                                      job_key := 'waitlist_fanout:' || ${id}::text, max_attempts := 25)).id AS job_id`;
}

/** Enqueues (or re-arms) the fan-out job of an availability event, in the caller's transaction. */
export async function enqueueFanout(trx: Trx, availabilityId: number): Promise<void> {
  await sql`SELECT ${fanoutJob(sql`${availabilityId}::bigint`)}`.execute(trx);
}

/**
 * The relay of deferred fan-outs: enqueues the jobs of up to `limit` availability events written with
 * `deferFanout`, oldest first, in one transaction (one commit, one notification). Concurrent relays take
 * disjoint rows (SKIP LOCKED). Returns how many it enqueued.
 */
export async function relayFanouts(db: Db, limit = 500): Promise<number> {
  const { rows } = await sql<{ id: number }>`
    WITH due AS (SELECT id FROM availability_events WHERE NOT fanout_enqueued ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED),
    marked AS (UPDATE availability_events a SET fanout_enqueued = true FROM due WHERE a.id = due.id RETURNING a.id)
    SELECT marked.id, ${fanoutJob(sql`marked.id`)} FROM marked`.execute(db);
  return rows.length;
}

/** Per section: the seats, their price and price level, and the longest run of adjacent seats. */
export function summarize(seats: ReturnedSeat[], prices: Map<string, { price_level: string; price_cents: number }>): AvailableSection[] {
  const bySection = new Map<string, ReturnedSeat[]>();
  for (const s of seats) bySection.set(s.sectionCode, [...(bySection.get(s.sectionCode) ?? []), s]);
  return [...bySection].map(([section, ss]) => ({
    section,
    priceLevel: prices.get(section)?.price_level ?? '',
    priceCents: prices.get(section)?.price_cents ?? 0,
    seatIds: ss.map((s) => s.id).sort((a, b) => a - b),
    longestRun: longestRun(ss),
  }));
}
