import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { NotificationKind } from '../notify/notify.schema.js';
import type { AvailableSection, OfferStatus } from './waitlist.table.js';

// Notifications' SQL (notifications.ts renders them): each with its listing, release, offer and lottery outcome.

export interface NotificationRow {
  id: number;
  account_id: string;
  kind: NotificationKind;
  created_at: Date;
  read_at: Date | null;
  listing_id: string;
  listing_name: string;
  availability_id: number | null;
  event_id: string | null;
  event_name: string | null;
  starts_at: Date | null;
  currency: string | null;
  sections: AvailableSection[] | null;
  av_created_at: Date | null;
  offer_ttl_seconds: number;
  offer_id: string | null;
  offer_status: OfferStatus | null;
  offer_quantity: number | null;
  offer_expires_at: Date | null;
  lottery_rank: number | null;
  lottery_cohort: number | null;
  window_opens_at: Date | null;
  window_closes_at: Date | null;
}

// A waitlist notification's event is its availability event's; a lottery notification's is its own.
const selectViews = sql`
  SELECT n.id, n.account_id, n.kind, n.created_at, n.read_at, n.listing_id, l.name AS listing_name, n.availability_id,
         coalesce(a.event_id, n.event_id) AS event_id, e.name AS event_name, e.starts_at, e.currency, a.sections, a.created_at AS av_created_at, l.offer_ttl_seconds,
         o.id AS offer_id, o.status AS offer_status, o.quantity AS offer_quantity, o.expires_at AS offer_expires_at,
         lw.rank AS lottery_rank, lw.cohort AS lottery_cohort, lw.window_opens_at, lw.window_closes_at
  FROM notifications n
  JOIN listings l ON l.id = n.listing_id
  LEFT JOIN availability_events a ON a.id = n.availability_id
  LEFT JOIN events e ON e.id = coalesce(a.event_id, n.event_id)
  LEFT JOIN waitlist_offers o ON o.id = n.offer_id
  LEFT JOIN lottery_winners lw ON n.kind = 'LOTTERY_WON' AND lw.event_id = n.event_id AND lw.account_id = n.account_id`;

/** Notifications by id, in id order. */
export async function findNotificationRows(db: Db, ids: number[]): Promise<NotificationRow[]> {
  const { rows } = await sql<NotificationRow>`${selectViews} WHERE n.id = ANY(${ids}::bigint[]) ORDER BY n.id`.execute(db);
  return rows;
}

/** A fan's notifications, newest first, before `beforeId` when given, at most `limit` (1-200, default 50). */
export async function findInboxRows(db: Db, accountId: string, opts: { beforeId?: number; limit?: number }): Promise<NotificationRow[]> {
  const { rows } = await sql<NotificationRow>`${selectViews}
    WHERE n.account_id = ${accountId} AND (${opts.beforeId ?? null}::bigint IS NULL OR n.id < ${opts.beforeId ?? null}::bigint)
    ORDER BY n.id DESC LIMIT ${Math.min(Math.max(opts.limit ?? 50, 1), 200)}`.execute(db);
  return rows;
}

/** Marks a fan's notifications read, up to and including `upToId`. Returns how many changed. */
export async function markNotificationsRead(db: Db, accountId: string, upToId: number): Promise<number> {
  const r = await db
    .updateTable('notifications')
    .set({ read_at: new Date() })
    .where('account_id', '=', accountId)
    .where('id', '<=', upToId as never)
    .where('read_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}
