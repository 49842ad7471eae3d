import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import type { RehearsalReportRow, RehearsalStatus } from './rehearsal.table.js';
import type { EventClock } from './plan.js';

// Every query of the rehearsal: marking its event, keeping its report, and the read-backs the report's integrity
// figures come from.

/** Marks a just-created event as a rehearsal's, with its compressed clock and its open. */
export async function markRehearsalEvent(
  trx: Trx,
  eventId: string,
  listingId: string,
  timeScale: number,
  clock: EventClock,
  onsaleAt: Date,
): Promise<void> {
  await trx
    .updateTable('events')
    .set({
      rehearsal_time_scale: timeScale,
      hold_ttl_seconds: clock.holdTtlSeconds,
      hold_extension_seconds: clock.holdExtensionSeconds,
      target_sale_minutes: clock.targetSaleMinutes,
      checkout_minutes: clock.checkoutMinutes,
      onsale_at: onsaleAt,
      seat_picking_opens_at: new Date(onsaleAt.getTime() + clock.seatPickingOpensAfterMinutes * 60_000),
    })
    .where('id', '=', eventId)
    .execute();
  await trx.updateTable('listings').set({ offer_ttl_seconds: clock.offerTtlSeconds }).where('id', '=', listingId).execute();
}

/** The waitlist offer TTL of a listing (the one clock setting the event file does not carry). */
export async function listingOfferTtlSeconds(db: Db | Trx, listingId: string): Promise<number> {
  const r = await db.selectFrom('listings').select('offer_ttl_seconds').where('id', '=', listingId).executeTakeFirstOrThrow();
  return r.offer_ttl_seconds;
}

export async function insertRehearsalRun(
  db: Db,
  run: { eventId: string | null; eventName: string; target: string; fans: number; timeScale: number; settings: Record<string, unknown> },
): Promise<string> {
  const r = await db
    .insertInto('rehearsal_reports')
    .values({
      event_id: run.eventId,
      event_name: run.eventName,
      target: run.target,
      fans: run.fans,
      time_scale: run.timeScale,
      settings: JSON.stringify(run.settings),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return r.id;
}

export async function setRehearsalEvent(db: Db, id: string, eventId: string): Promise<void> {
  await db.updateTable('rehearsal_reports').set({ event_id: eventId }).where('id', '=', id).execute();
}

export async function finishRehearsalRun(
  db: Db,
  id: string,
  status: Exclude<RehearsalStatus, 'RUNNING'>,
  report: Record<string, unknown>,
): Promise<void> {
  await db
    .updateTable('rehearsal_reports')
    .set({ status, finished_at: new Date(), report: JSON.stringify(report) })
    .where('id', '=', id)
    .execute();
}

/** The latest runs first. */
export async function listRehearsalRuns(db: Db, limit = 50): Promise<RehearsalReportRow[]> {
  return db.selectFrom('rehearsal_reports').selectAll().orderBy('started_at', 'desc').limit(limit).execute();
}

export async function getRehearsalRun(db: Db, id: string): Promise<RehearsalReportRow | undefined> {
  return db.selectFrom('rehearsal_reports').selectAll().where('id', '=', id).executeTakeFirst();
}

/** What the database says about the rehearsal's sales at the end. */
export interface SalesReadBack {
  orders: number;
  orderSeats: number;
  /** Confirmed orders beyond the first for one hold, or for one (account, idempotency key). */
  duplicateOrders: number;
  /** Seats in confirmed orders of accounts whose id starts with the bots' prefix. */
  botSeats: number;
  lastSaleAt: Date | null;
  firstSaleAt: Date | null;
  /** Waitlist notifications of the listing created at or after `since`. */
  waitlistNotified: number;
  /** Fans with an admission minute recorded by the controller: the watermark's advance, per minute. */
  admittedThrough: number;
}

export async function readBackSales(
  db: Db,
  eventId: string,
  listingId: string,
  botPrefix: string,
  notifiedSince: Date | null,
): Promise<SalesReadBack> {
  const orders = await db
    .selectFrom('orders')
    .select([
      sql<number>`count(*)::int`.as('orders'),
      sql<number>`coalesce(sum(seat_count), 0)::int`.as('seats'),
      sql<number>`coalesce(sum(seat_count) FILTER (WHERE starts_with(account_id, ${botPrefix})), 0)::int`.as('bot_seats'),
      sql<Date | null>`max(created_at)`.as('last'),
      sql<Date | null>`min(created_at)`.as('first'),
    ])
    .where('event_id', '=', eventId)
    .where('status', '=', 'CONFIRMED')
    .executeTakeFirstOrThrow();
  const { rows: dup } = await sql<{ n: number }>`
    SELECT (SELECT coalesce(sum(c - 1), 0) FROM (SELECT count(*) AS c FROM orders WHERE event_id = ${eventId} AND status = 'CONFIRMED' GROUP BY hold_id HAVING count(*) > 1) a)
         + (SELECT coalesce(sum(c - 1), 0) FROM (SELECT count(*) AS c FROM orders WHERE event_id = ${eventId} AND status = 'CONFIRMED' GROUP BY account_id, idempotency_key HAVING count(*) > 1) b) AS n`.execute(
    db,
  );
  const notified = await db
    .selectFrom('notifications')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('listing_id', '=', listingId)
    .$if(notifiedSince !== null, (q) => q.where('created_at', '>=', notifiedSince!))
    .executeTakeFirstOrThrow();
  const admitted = await db.selectFrom('queue_state').select('admitted_through').where('event_id', '=', eventId).executeTakeFirst();
  return {
    orders: orders.orders,
    orderSeats: orders.seats,
    duplicateOrders: Number(dup[0]?.n ?? 0),
    botSeats: orders.bot_seats,
    lastSaleAt: orders.last,
    firstSaleAt: orders.first,
    waitlistNotified: notified.n,
    admittedThrough: Number(admitted?.admitted_through ?? 0),
  };
}

/** Of these hold ids, the ones the database has and never lost (a hold lost to a crash was never really made). */
export async function durableHolds(db: Db, eventId: string, holdIds: readonly string[]): Promise<Set<string>> {
  if (holdIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('holds')
    .select('id')
    .where('event_id', '=', eventId)
    .where('id', 'in', [...holdIds])
    .where((eb) => eb.not(eb.exists(eb.selectFrom('hold_losses').select('hold_id').whereRef('hold_losses.hold_id', '=', 'holds.id'))))
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** A run whose driver stopped without finishing it (killed, crashed): ERROR, so no page shows it running for ever. */
export async function abandonRehearsalRun(db: Db, id: string): Promise<void> {
  await db
    .updateTable('rehearsal_reports')
    .set({ status: 'ERROR', finished_at: new Date() })
    .where('id', '=', id)
    .where('status', '=', 'RUNNING')
    .execute();
}

/** Whether the event has a confirmed order made after `since` (a payment that went through after a fault lifted). */
export async function confirmedOrderSince(db: Db, eventId: string, since: Date): Promise<boolean> {
  const r = await db
    .selectFrom('orders')
    .select('id')
    .where('event_id', '=', eventId)
    .where('status', '=', 'CONFIRMED')
    .where('created_at', '>', since)
    .limit(1)
    .executeTakeFirst();
  return r !== undefined;
}

/** The newest rehearsal run of `fans` fans started at or after `since` (the one a launch just started), if any. */
export function findRehearsalStartedSince(db: Db, since: Date, fans: number) {
  return db
    .selectFrom('rehearsal_reports')
    .select('id')
    .where('started_at', '>=', since)
    .where('fans', '=', fans)
    .orderBy('started_at', 'desc')
    .executeTakeFirst();
}
