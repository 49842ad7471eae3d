import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';

// SQL of the war room. Every read takes a list of events and answers them in one statement, so a board of 40
// on-sales costs the same number of round trips as one event. Plain functions; no rules here.

/** An event with its pacing settings and queue row, and the database clock. */
export interface WarRoomEventRow {
  event_id: string;
  name: string;
  venue_name: string;
  listing_id: string;
  organisation_id: string | null;
  onsale_at: Date;
  starts_at: Date;
  capacity: number;
  hold_ttl_seconds: number;
  target_sale_minutes: number;
  tickets_per_order: number;
  checkout_minutes: number;
  payment_tps: number;
  overbook_factor: number;
  admitted_through: number;
  rate_per_min: number;
  rate_override_per_min: number | null;
  paused: boolean;
  paused_reason: string | null;
  paused_by: string | null;
  paused_at: Date | null;
  inventory_state: 'AVAILABLE' | 'LAST_CHANCE' | 'SOLD_OUT';
  sold_out_at: Date | null;
  heartbeat_at: Date | null;
  cohort_size: number | null;
  sealed_at: Date | null;
  controller_constraint: string | null;
  controller_reason: string | null;
  fans_inside: number | null;
  admit_cap: number | null;
  fairness_mode: string;
  /** The fairness mode has a live sign-off (events/signoff.service.ts: unsigned, the sale does not open). */
  signed_off: boolean;
  signed_off_by: string | null;
  signed_off_at: Date | null;
  /** ISO 4217 code of the event's prices and orders. */
  currency: string;
  now: Date;
}

/** The events' rows and the time they are judged at (`now`): `at`, or the database's clock when unset. */
export async function readEventRows(db: Db | Trx, eventIds: readonly string[], at?: Date): Promise<WarRoomEventRow[]> {
  if (eventIds.length === 0) return [];
  const now = at ? sql`${at}::timestamptz` : sql`now()`;
  const { rows } = await sql<WarRoomEventRow>`
    SELECT e.id AS event_id, e.name, e.venue_name, e.listing_id, e.organisation_id, e.onsale_at, e.starts_at, e.capacity, e.currency,
           e.hold_ttl_seconds, e.target_sale_minutes, e.tickets_per_order, e.checkout_minutes, e.payment_tps, e.overbook_factor,
           q.admitted_through, q.rate_per_min, q.rate_override_per_min, q.paused, q.paused_reason, q.paused_by, q.paused_at,
           q.inventory_state, q.sold_out_at, q.heartbeat_at, q.cohort_size, q.sealed_at, e.fairness_mode,
           s.id IS NOT NULL AS signed_off, s.signed_off_by, s.signed_off_at,
           q.controller_constraint, q.controller_reason, q.fans_inside, q.admit_cap, ${now} AS now
    FROM events e JOIN queue_state q ON q.event_id = e.id
    LEFT JOIN fairness_signoffs s ON s.event_id = e.id AND s.superseded_at IS NULL AND s.fairness_mode = e.fairness_mode
    WHERE e.id = ANY(${[...eventIds]}::uuid[])`.execute(db);
  return rows;
}

/**
 * Holds whose expiry has passed but that no sweeper has marked yet (their seats already count as available: expiry
 * is read-time). From the live-holds index, so it costs next to nothing; seats of such holds and the oldest expiry.
 */
export interface UnsweptHoldsRow {
  event_id: string;
  seats: number;
  oldest_expiry: Date | null;
}

export async function readUnsweptHolds(db: Db | Trx, eventIds: readonly string[]): Promise<UnsweptHoldsRow[]> {
  if (eventIds.length === 0) return [];
  const { rows } = await sql<UnsweptHoldsRow>`
    SELECT event_id, coalesce(sum(quantity), 0)::int AS seats, min(expires_at) AS oldest_expiry
    FROM holds
    WHERE status IN ('HELD', 'PAYING') AND expires_at <= now() AND event_id = ANY(${[...eventIds]}::uuid[])
    GROUP BY event_id`.execute(db);
  return rows;
}

/** Holds lost to a database crash (HOLD_COMMIT=async) per event: in all, and found in the last 5 minutes. */
export async function readHoldLosses(
  db: Db | Trx,
  eventIds: readonly string[],
): Promise<{ event_id: string; lost: number; lost_5m: number }[]> {
  if (eventIds.length === 0) return [];
  const { rows } = await sql<{ event_id: string; lost: number; lost_5m: number }>`
    SELECT event_id, count(*)::int AS lost, count(*) FILTER (WHERE detected_at > now() - interval '5 minutes')::int AS lost_5m
    FROM hold_losses WHERE event_id = ANY(${[...eventIds]}::uuid[])
    GROUP BY event_id`.execute(db);
  return rows;
}

/**
 * Positions issued per event: the highest join index + 1 (from the unique (event, join_index) index, one probe per
 * event). Counting queue_entries would read every row of a two-million-fan queue each second.
 */
export async function readQueuePositions(db: Db | Trx, eventIds: readonly string[]): Promise<{ event_id: string; positions: number }[]> {
  if (eventIds.length === 0) return [];
  const { rows } = await sql<{ event_id: string; positions: number }>`
    SELECT i.id AS event_id,
           coalesce((SELECT max(join_index) + 1 FROM queue_entries WHERE event_id = i.id), 0)::int AS positions
    FROM unnest(${[...eventIds]}::uuid[]) AS i(id)`.execute(db);
  return rows;
}

/** One minute of admissions as the controller and the store-API instances recorded it. */
export interface AdmissionMinuteRow {
  event_id: string;
  minute: Date;
  watermark_advanced: number;
  admission_tokens_issued: number;
  rate_per_min: number;
  holds_created: number;
  holds_refused: number;
}

/** The last `minutes` minutes of admission_minutes per event (the current, partial minute included), oldest first. */
export async function readAdmissionMinutes(db: Db | Trx, eventIds: readonly string[], minutes: number): Promise<AdmissionMinuteRow[]> {
  if (eventIds.length === 0) return [];
  const { rows } = await sql<AdmissionMinuteRow>`
    SELECT event_id, minute, watermark_advanced, admission_tokens_issued, rate_per_min, holds_created, holds_refused
    FROM admission_minutes
    WHERE event_id = ANY(${[...eventIds]}::uuid[]) AND minute >= date_trunc('minute', now()) - make_interval(mins => ${minutes})
    ORDER BY event_id, minute`.execute(db);
  return rows;
}

/** An event's confirmed orders and what they came to (minor units of its currency), and the orders cancelled since. */
export interface SalesTotalRow {
  event_id: string;
  orders: number;
  gross_cents: number;
  cancelled_orders: number;
}

/** Orders per event in all (orders_event_time_idx: an index-only scan). Events with no order are left out. */
export async function readSalesTotals(db: Db | Trx, eventIds: readonly string[]): Promise<SalesTotalRow[]> {
  if (eventIds.length === 0) return [];
  const { rows } = await sql<SalesTotalRow>`
    SELECT event_id,
           count(*) FILTER (WHERE status = 'CONFIRMED')::int AS orders,
           coalesce(sum(amount_cents) FILTER (WHERE status = 'CONFIRMED'), 0)::float8 AS gross_cents,
           count(*) FILTER (WHERE status = 'CANCELLED')::int AS cancelled_orders
    FROM orders WHERE event_id = ANY(${[...eventIds]}::uuid[])
    GROUP BY event_id`.execute(db);
  return rows;
}

/** Orders made in one minute (confirmed now) and what they came to. */
export interface SalesMinuteRow {
  event_id: string;
  minute: Date;
  orders: number;
  gross_cents: number;
}

/** The last `minutes` minutes of orders per event (the current, partial minute included), oldest first. */
export async function readSalesMinutes(db: Db | Trx, eventIds: readonly string[], minutes: number): Promise<SalesMinuteRow[]> {
  if (eventIds.length === 0) return [];
  const { rows } = await sql<SalesMinuteRow>`
    SELECT event_id, date_trunc('minute', created_at) AS minute, count(*)::int AS orders, sum(amount_cents)::float8 AS gross_cents
    FROM orders
    WHERE event_id = ANY(${[...eventIds]}::uuid[]) AND status = 'CONFIRMED'
      AND created_at >= date_trunc('minute', now()) - make_interval(mins => ${minutes})
    GROUP BY event_id, date_trunc('minute', created_at)
    ORDER BY event_id, minute`.execute(db);
  return rows;
}

/**
 * Checkouts of the event over the last 2 minutes: attempts (recorded attempts plus the gateway failures the store
 * API counted, whose attempts are forgotten), how many the platform failed (gateway failures, payments that could
 * not complete, holds that lapsed during payment) and how many cards their issuers declined (the fans' outcome);
 * and the recorded attempts of the last 10 s and 60 s (the payment rate against the contracted TPS).
 */
export interface CheckoutWindowRow {
  event_id: string;
  attempts_2m: number;
  failed_2m: number;
  declined_2m: number;
  attempts_10s: number;
  attempts_60s: number;
}

export async function readCheckoutWindows(db: Db | Trx, eventIds: readonly string[]): Promise<CheckoutWindowRow[]> {
  if (eventIds.length === 0) return [];
  const { rows } = await sql<CheckoutWindowRow>`
    SELECT i.id AS event_id,
           (coalesce(c.attempts, 0) + coalesce(g.failures, 0))::int AS attempts_2m,
           (coalesce(c.failed, 0) + coalesce(g.failures, 0))::int AS failed_2m,
           coalesce(c.declined, 0)::int AS declined_2m,
           coalesce(c.attempts_10s, 0)::int AS attempts_10s,
           coalesce(c.attempts_60s, 0)::int AS attempts_60s
    FROM unnest(${[...eventIds]}::uuid[]) AS i(id)
    LEFT JOIN LATERAL (
      SELECT count(*) AS attempts,
             count(*) FILTER (WHERE a.status = 'FAILED' AND a.error_code IS DISTINCT FROM 'PAYMENT_DECLINED') AS failed,
             count(*) FILTER (WHERE a.status = 'FAILED' AND a.error_code = 'PAYMENT_DECLINED') AS declined,
             count(*) FILTER (WHERE a.created_at > now() - interval '10 seconds') AS attempts_10s,
             count(*) FILTER (WHERE a.created_at > now() - interval '60 seconds') AS attempts_60s
      FROM checkout_attempts a JOIN holds h ON h.id = a.hold_id
      WHERE a.created_at > now() - interval '2 minutes' AND h.event_id = i.id) c ON true
    LEFT JOIN LATERAL (
      SELECT sum(checkout_gateway_failures) AS failures FROM admission_minutes m
      WHERE m.event_id = i.id AND m.minute >= date_trunc('minute', now()) - interval '1 minute') g ON true
    WHERE c.attempts > 0 OR g.failures > 0`.execute(db);
  return rows;
}

/** The latest reconciliation per event (the worker's, every minute): sold seats vs seats in confirmed orders. */
export async function readReconciliations(
  db: Db | Trx,
  eventIds: readonly string[],
): Promise<{ event_id: string; order_drift: number; checked_at: Date }[]> {
  if (eventIds.length === 0) return [];
  const { rows } = await sql<{ event_id: string; order_drift: number; checked_at: Date }>`
    SELECT event_id, order_drift, checked_at FROM inventory_reconciliations WHERE event_id = ANY(${[...eventIds]}::uuid[])`.execute(db);
  return rows;
}

/** The waitlist behind an event: live entries of its listing, seats returned to it, notifications, open offers. */
export interface WaitlistRow {
  event_id: string;
  entries: number;
  availability_events: number;
  pending_availability_events: number;
  oldest_pending_at: Date | null;
  matched: number;
  notified: number;
  notified_10m: number;
  open_offers: number;
  last_fanout_seconds: number | null;
}

/**
 * Waitlist figures per event. Entries are counted per listing (one hash partition each; the listing id is a
 * constant per lateral probe, so PostgreSQL prunes to it); notifications are the availability events' own
 * counters rather than a count of the inbox, which has no index by listing.
 */
export async function readWaitlist(db: Db | Trx, events: readonly { eventId: string; listingId: string }[]): Promise<WaitlistRow[]> {
  if (events.length === 0) return [];
  const { rows } = await sql<WaitlistRow>`
    SELECT i.event_id,
           (SELECT count(*) FROM waitlist_entries w WHERE w.listing_id = i.listing_id AND w.expires_at > now())::int AS entries,
           a.availability_events, a.pending_availability_events, a.oldest_pending_at, a.matched, a.notified, a.notified_10m,
           a.last_fanout_seconds,
           (SELECT count(*) FROM waitlist_offers o WHERE o.event_id = i.event_id AND o.status = 'OPEN' AND o.expires_at > now())::int AS open_offers
    FROM unnest(${events.map((e) => e.eventId)}::uuid[], ${events.map((e) => e.listingId)}::uuid[]) AS i(event_id, listing_id)
    CROSS JOIN LATERAL (
      SELECT count(*)::int AS availability_events,
             count(*) FILTER (WHERE status <> 'DONE')::int AS pending_availability_events,
             min(created_at) FILTER (WHERE status <> 'DONE') AS oldest_pending_at,
             coalesce(sum(matched), 0)::int AS matched,
             coalesce(sum(notified), 0)::int AS notified,
             coalesce(sum(notified) FILTER (WHERE created_at > now() - interval '10 minutes'), 0)::int AS notified_10m,
             (SELECT extract(epoch FROM completed_at - created_at)::float8 FROM availability_events l
              WHERE l.event_id = i.event_id AND l.completed_at IS NOT NULL ORDER BY l.completed_at DESC LIMIT 1) AS last_fanout_seconds
      FROM availability_events v WHERE v.event_id = i.event_id) a`.execute(db);
  return rows;
}

/**
 * The events on the board: on sale today in `timeZone` (their onsale_at falls on today's date there), or on sale
 * now (opened, not started, not sold out); optionally one organisation's. Ordered by on-sale time, then name.
 */
export async function findBoardEventIds(
  db: Db | Trx,
  opts: { timeZone: string; organisationId: string | null; limit: number },
): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    SELECT e.id
    FROM events e JOIN queue_state q ON q.event_id = e.id
    WHERE ((e.onsale_at >= date_trunc('day', now() AT TIME ZONE ${opts.timeZone}) AT TIME ZONE ${opts.timeZone}
            AND e.onsale_at < (date_trunc('day', now() AT TIME ZONE ${opts.timeZone}) + interval '1 day') AT TIME ZONE ${opts.timeZone})
        OR (e.onsale_at <= now() AND now() < e.starts_at AND q.inventory_state <> 'SOLD_OUT'))
      AND (${opts.organisationId}::uuid IS NULL OR e.organisation_id = ${opts.organisationId}::uuid)
    ORDER BY e.onsale_at, e.name, e.id
    LIMIT ${opts.limit}`.execute(db);
  return rows.map((r) => r.id);
}

/** The events (of `ids`) that have presale tiers. */
export async function readTieredEventIds(db: Db | Trx, ids: string[]): Promise<string[]> {
  const { rows } = await sql<{ event_id: string }>`SELECT DISTINCT event_id FROM allocations WHERE event_id = ANY(${ids}::uuid[])`.execute(
    db,
  );
  return rows.map((r) => r.event_id);
}

/** A presale tier's own queue row (keyed by the tier's queue id), with the positions its queue has issued. */
export interface TierQueueRow extends Pick<
  WarRoomEventRow,
  | 'event_id'
  | 'admitted_through'
  | 'rate_per_min'
  | 'rate_override_per_min'
  | 'paused'
  | 'paused_reason'
  | 'paused_by'
  | 'paused_at'
  | 'heartbeat_at'
> {
  code: string;
  queue_id: string;
  positions: number;
}

/**
 * Every presale tier's queue of `eventIds` in one statement (the general sale's queue is the event's own, read by
 * readEventRows): the queue_state row and positions issued (the same one-probe max(join_index) + 1 as readQueuePositions).
 */
export async function readTierQueues(db: Db | Trx, eventIds: readonly string[]): Promise<TierQueueRow[]> {
  if (eventIds.length === 0) return [];
  const { rows } = await sql<TierQueueRow>`
    SELECT a.event_id, a.code, a.queue_id,
           q.admitted_through, q.rate_per_min, q.rate_override_per_min, q.paused, q.paused_reason, q.paused_by, q.paused_at, q.heartbeat_at,
           coalesce((SELECT max(join_index) + 1 FROM queue_entries WHERE event_id = a.queue_id), 0)::int AS positions
    FROM allocations a JOIN queue_state q ON q.event_id = a.queue_id
    WHERE a.event_id = ANY(${[...eventIds]}::uuid[]) AND NOT a.general
    ORDER BY a.event_id, a.position`.execute(db);
  return rows;
}
