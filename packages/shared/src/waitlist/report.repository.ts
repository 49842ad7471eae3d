import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';

// SQL of the console's waitlist view of one listing. Every query names the listing, so entry scans stay in its
// hash partition. Reads only.

export interface EntryTotalsRow {
  live: number;
  expired: number;
  with_dates: number;
  with_max_price: number;
  with_sections: number;
  with_price_levels: number;
  oldest_live_at: Date | null;
  newest_at: Date | null;
}

export async function findEntryTotals(db: Db | Trx, listingId: string): Promise<EntryTotalsRow> {
  const { rows } = await sql<EntryTotalsRow>`
    SELECT count(*) FILTER (WHERE expires_at > now())::int AS live,
           count(*) FILTER (WHERE expires_at <= now())::int AS expired,
           count(*) FILTER (WHERE expires_at > now() AND (date_from IS NOT NULL OR date_to IS NOT NULL))::int AS with_dates,
           count(*) FILTER (WHERE expires_at > now() AND max_price_cents IS NOT NULL)::int AS with_max_price,
           count(*) FILTER (WHERE expires_at > now() AND sections IS NOT NULL)::int AS with_sections,
           count(*) FILTER (WHERE expires_at > now() AND price_levels IS NOT NULL)::int AS with_price_levels,
           min(created_at) FILTER (WHERE expires_at > now()) AS oldest_live_at,
           max(created_at) AS newest_at
    FROM waitlist_entries WHERE listing_id = ${listingId}`.execute(db);
  return rows[0]!;
}

/** Live entries per quantity asked for. */
export async function findEntriesByQuantity(db: Db | Trx, listingId: string): Promise<{ quantity: number; entries: number }[]> {
  const { rows } = await sql<{ quantity: number; entries: number }>`
    SELECT quantity::int AS quantity, count(*)::int AS entries FROM waitlist_entries
    WHERE listing_id = ${listingId} AND expires_at > now() GROUP BY quantity ORDER BY quantity`.execute(db);
  return rows;
}

/** Live entries naming each section (or price level); entries naming none match every one and are not counted here. */
export async function findEntriesByArray(
  db: Db | Trx,
  listingId: string,
  column: 'sections' | 'price_levels',
): Promise<{ value: string; entries: number }[]> {
  const { rows } = await sql<{ value: string; entries: number }>`
    SELECT v AS value, count(*)::int AS entries
    FROM waitlist_entries, unnest(${sql.ref(column)}) AS v
    WHERE listing_id = ${listingId} AND expires_at > now()
    GROUP BY v ORDER BY count(*) DESC, v LIMIT 100`.execute(db);
  return rows;
}

/** Live entries whose date range takes in each performance date. */
export async function findEntriesByDate(db: Db | Trx, listingId: string, dates: string[]): Promise<{ date: string; entries: number }[]> {
  if (dates.length === 0) return [];
  const { rows } = await sql<{ date: string; entries: number }>`
    SELECT to_char(d, 'YYYY-MM-DD') AS date, count(w.account_id)::int AS entries
    FROM unnest(${dates}::date[]) AS d
    LEFT JOIN waitlist_entries w ON w.listing_id = ${listingId} AND w.expires_at > now()
      AND (w.date_from IS NULL OR w.date_from <= d) AND (w.date_to IS NULL OR w.date_to >= d)
    GROUP BY d ORDER BY d`.execute(db);
  return rows;
}

export interface AvailabilityTotalsRow {
  events: number;
  pending: number;
  fanning_out: number;
  done: number;
  seats: number;
  matched: number;
  notified: number;
}

export async function findAvailabilityTotals(db: Db | Trx, listingId: string): Promise<AvailabilityTotalsRow> {
  const { rows } = await sql<AvailabilityTotalsRow>`
    SELECT count(*)::int AS events,
           count(*) FILTER (WHERE status = 'PENDING')::int AS pending,
           count(*) FILTER (WHERE status = 'FANNING_OUT')::int AS fanning_out,
           count(*) FILTER (WHERE status = 'DONE')::int AS done,
           coalesce(sum(seat_count), 0)::int AS seats,
           coalesce(sum(matched), 0)::int AS matched,
           coalesce(sum(notified), 0)::int AS notified
    FROM availability_events WHERE listing_id = ${listingId}`.execute(db);
  return rows[0]!;
}

export interface AvailabilityRow {
  id: number;
  event_id: string;
  event_name: string;
  cause: string;
  mode: string;
  seat_count: number;
  status: string;
  matched: number;
  notified: number;
  created_at: Date;
  completed_at: Date | null;
}

export async function findRecentAvailability(db: Db | Trx, listingId: string, limit: number): Promise<AvailabilityRow[]> {
  const { rows } = await sql<AvailabilityRow>`
    SELECT a.id, a.event_id, e.name AS event_name, a.cause, a.mode, a.seat_count, a.status, a.matched, a.notified, a.created_at, a.completed_at
    FROM availability_events a JOIN events e ON e.id = a.event_id
    WHERE a.listing_id = ${listingId} ORDER BY a.id DESC LIMIT ${limit}`.execute(db);
  return rows;
}

/** Offers per status; an OPEN offer past its expiry is counted as such (read-time expiry, like holds). */
export async function findOfferTotals(db: Db | Trx, listingId: string): Promise<{ status: string; offers: number }[]> {
  const { rows } = await sql<{ status: string; offers: number }>`
    SELECT CASE WHEN status = 'OPEN' AND expires_at <= now() THEN 'EXPIRED' ELSE status END AS status, count(*)::int AS offers
    FROM waitlist_offers WHERE listing_id = ${listingId} GROUP BY 1`.execute(db);
  return rows;
}

export interface OpenOfferRow {
  id: string;
  event_id: string;
  account_id: string;
  quantity: number;
  created_at: Date;
  expires_at: Date;
}

/** Offers out now, soonest to expire first. */
export async function findOpenOffers(db: Db | Trx, listingId: string, limit: number): Promise<OpenOfferRow[]> {
  const { rows } = await sql<OpenOfferRow>`
    SELECT id, event_id, account_id, quantity, created_at, expires_at FROM waitlist_offers
    WHERE listing_id = ${listingId} AND status = 'OPEN' AND expires_at > now()
    ORDER BY expires_at, id LIMIT ${limit}`.execute(db);
  return rows;
}

/**
 * Webhook deliveries of the listing's notifications: through their availability event, or (for deliveries with
 * none, such as offer expiries) through their first notification.
 */
const listingDeliveries = (listingId: string) => sql`
  SELECT d.* FROM webhook_deliveries d JOIN availability_events a ON a.id = d.availability_id WHERE a.listing_id = ${listingId}
  UNION ALL
  SELECT d.* FROM webhook_deliveries d JOIN notifications n ON n.id = d.notification_ids[1]
  WHERE d.availability_id IS NULL AND n.listing_id = ${listingId}`;

export async function findDeliveryTotals(
  db: Db | Trx,
  listingId: string,
): Promise<{ status: string; deliveries: number; notifications: number }[]> {
  const { rows } = await sql<{ status: string; deliveries: number; notifications: number }>`
    SELECT status, count(*)::int AS deliveries, coalesce(sum(cardinality(notification_ids)), 0)::int AS notifications
    FROM (${listingDeliveries(listingId)}) d GROUP BY status`.execute(db);
  return rows;
}

export interface FailingDeliveryRow {
  id: number;
  endpoint_id: string;
  url: string;
  status: string;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  updated_at: Date;
}

/** Deliveries not through yet or given up on (RETRYING, DEAD), newest first. */
export async function findFailingDeliveries(db: Db | Trx, listingId: string, limit: number): Promise<FailingDeliveryRow[]> {
  const { rows } = await sql<FailingDeliveryRow>`
    SELECT d.id, d.endpoint_id, w.url, d.status, d.attempts, d.last_status_code, d.last_error, d.updated_at
    FROM (${listingDeliveries(listingId)}) d JOIN webhook_endpoints w ON w.id = d.endpoint_id
    WHERE d.status IN ('RETRYING', 'DEAD') ORDER BY d.updated_at DESC, d.id DESC LIMIT ${limit}`.execute(db);
  return rows;
}

export interface LatencyRow {
  count: number;
  p50: number | null;
  p95: number | null;
  max: number | null;
}

/** Fan-out time of the latest `sample` finished availability events: created_at -> completed_at, in seconds. */
export async function findFanoutLatency(db: Db | Trx, listingId: string, sample: number): Promise<LatencyRow> {
  const { rows } = await sql<LatencyRow>`
    SELECT count(*)::int AS count,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY s) AS p50,
           percentile_cont(0.95) WITHIN GROUP (ORDER BY s) AS p95,
           max(s) AS max
    FROM (SELECT extract(epoch FROM completed_at - created_at)::float8 AS s FROM availability_events
          WHERE listing_id = ${listingId} AND completed_at IS NOT NULL ORDER BY id DESC LIMIT ${sample}) t`.execute(db);
  return rows[0]!;
}

/** Availability to webhook delivery of the latest `sample` delivered deliveries, in seconds. */
export async function findDeliveryLatency(db: Db | Trx, listingId: string, sample: number): Promise<LatencyRow> {
  const { rows } = await sql<LatencyRow>`
    SELECT count(*)::int AS count,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY s) AS p50,
           percentile_cont(0.95) WITHIN GROUP (ORDER BY s) AS p95,
           max(s) AS max
    FROM (SELECT extract(epoch FROM d.delivered_at - a.created_at)::float8 AS s
          FROM webhook_deliveries d JOIN availability_events a ON a.id = d.availability_id
          WHERE a.listing_id = ${listingId} AND d.delivered_at IS NOT NULL ORDER BY d.id DESC LIMIT ${sample}) t`.execute(db);
  return rows[0]!;
}
