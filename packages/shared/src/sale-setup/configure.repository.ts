import { sql, type Updateable } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import type { EventsTable } from '../events/index.js';

// SQL of event configuration from the console: the event row under its lock, the layout as rows, whether the
// layout or the queue is in use, listing ownership, and fairness sign-offs.

/** The event row, locked until the caller's transaction ends (edits and sign-offs serialize on it). */
export function lockEvent(trx: Trx, id: string) {
  return trx.selectFrom('events').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export function findEventRow(db: Db | Trx, id: string) {
  return db.selectFrom('events').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findListing(db: Db | Trx, id: string) {
  return db.selectFrom('listings').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The organisation of every event on a listing (null: a house event). Empty: no such listing, or no events. */
export async function findListingOrganisations(db: Db | Trx, listingId: string): Promise<(string | null)[]> {
  const rows = await db.selectFrom('events').select('organisation_id').distinct().where('listing_id', '=', listingId).execute();
  return rows.map((r) => r.organisation_id);
}

/** Sections as stored (not joined with prices), best first. */
export function findSectionRows(db: Db | Trx, eventId: string) {
  return db
    .selectFrom('sections')
    .select(['code', 'name', 'kind', 'price_level', 'quality_rank', 'capacity'])
    .where('event_id', '=', eventId)
    .orderBy('quality_rank')
    .orderBy('code')
    .execute();
}

export function findPriceLevelRows(db: Db | Trx, eventId: string) {
  return db
    .selectFrom('price_levels')
    .select(['code', 'name', 'price_cents'])
    .where('event_id', '=', eventId)
    .orderBy('price_cents', 'desc')
    .orderBy('code')
    .execute();
}

/** Every row of every section with its seat count, front to back. */
export async function findRows(
  db: Db | Trx,
  eventId: string,
): Promise<{ section_code: string; row_index: number; row_label: string; seats: number }[]> {
  const { rows } = await sql<{ section_code: string; row_index: number; row_label: string; seats: number }>`
    SELECT section_code, row_index, row_label, count(*)::int AS seats
    FROM seats WHERE event_id = ${eventId}
    GROUP BY section_code, row_index, row_label
    ORDER BY section_code, row_index`.execute(db);
  return rows;
}

/** Shard rows per general-admission section. */
export async function findGaShardCounts(db: Db | Trx, eventId: string): Promise<Map<string, number>> {
  const { rows } = await sql<{ section_code: string; shards: number }>`
    SELECT section_code, count(*)::int AS shards FROM ga_shards WHERE event_id = ${eventId} GROUP BY section_code`.execute(db);
  return new Map(rows.map((r) => [r.section_code, r.shards]));
}

/** Whether any fan has joined the event's waiting room. */
export async function queueHasFans(db: Db | Trx, eventId: string): Promise<boolean> {
  const { rows } = await sql<{ any: boolean }>`SELECT EXISTS (SELECT 1 FROM queue_entries WHERE event_id = ${eventId}) AS any`.execute(db);
  return rows[0]?.any ?? false;
}

/** Whether any seat of the event is held or sold (an expired hold counts: its row still names the hold). */
export async function seatsInUse(db: Db | Trx, eventId: string): Promise<boolean> {
  const { rows } = await sql<{ any: boolean }>`
    SELECT EXISTS (SELECT 1 FROM seats WHERE event_id = ${eventId} AND status <> 'AVAILABLE')
        OR EXISTS (SELECT 1 FROM holds WHERE event_id = ${eventId}) AS any`.execute(db);
  return rows[0]?.any ?? false;
}

export async function updateEvent(trx: Trx, id: string, set: Updateable<EventsTable>): Promise<number> {
  const r = await trx
    .updateTable('events')
    .set({ ...set, version: sql<number>`version + 1`, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .returning('version')
    .executeTakeFirstOrThrow();
  return r.version;
}

export async function setEventOrganisation(trx: Trx, id: string, organisationId: string): Promise<string | null> {
  await trx.updateTable('events').set({ organisation_id: organisationId }).where('id', '=', id).execute();
  const org = await trx.selectFrom('organisations').select('name').where('id', '=', organisationId).executeTakeFirst();
  return org?.name ?? null;
}

/** Removes every seat, section (and with it, by cascade, its GA shards) and price level of an event, before a new layout is written. */
export async function deleteLayout(trx: Trx, eventId: string): Promise<void> {
  await trx.deleteFrom('seats').where('event_id', '=', eventId).execute();
  await trx.deleteFrom('sections').where('event_id', '=', eventId).execute();
  await trx.deleteFrom('price_levels').where('event_id', '=', eventId).execute();
}

/** Removes an event's GA counter shards (an edit that replaces the tiers splits the counters anew; no unit is in use). */
export async function deleteGaShards(trx: Trx, eventId: string): Promise<void> {
  await trx.deleteFrom('ga_shards').where('event_id', '=', eventId).execute();
}

/** When the event's own queue opened (its pre-open cohort sealed at the first tick after the open); null before. */
export async function queueOpenedAt(db: Db | Trx, eventId: string): Promise<Date | null> {
  const r = await db.selectFrom('queue_state').select('sealed_at').where('event_id', '=', eventId).executeTakeFirst();
  return r?.sealed_at ?? null;
}

/** Listings with their events' organisations and live waitlist size, newest first. */
export async function findListingsOverview(db: Db | Trx, organisationId: string | undefined) {
  const { rows } = await sql<{
    id: string;
    name: string;
    waitlist_mode: 'OFFER' | 'BROADCAST';
    waitlist_ttl_seconds: number;
    offer_ttl_seconds: number;
    created_at: Date;
    event_count: number;
    organisation_ids: (string | null)[];
    live_entries: number;
  }>`
    SELECT l.id, l.name, l.waitlist_mode, l.waitlist_ttl_seconds, l.offer_ttl_seconds, l.created_at,
           count(e.id)::int AS event_count,
           array_agg(DISTINCT e.organisation_id::text) AS organisation_ids,
           (SELECT count(*)::int FROM waitlist_entries w WHERE w.listing_id = l.id AND w.expires_at > now()) AS live_entries
    FROM listings l JOIN events e ON e.listing_id = l.id
    GROUP BY l.id
    HAVING ${organisationId === undefined ? sql`true` : sql`bool_and(e.organisation_id IS NOT DISTINCT FROM ${organisationId}::uuid)`}
    ORDER BY l.created_at DESC, l.id
    LIMIT 500`.execute(db);
  return rows;
}
