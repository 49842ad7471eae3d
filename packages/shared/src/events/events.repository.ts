import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import type { SeatSpec } from './layout.js';
import type { EventsTable } from './events.table.js';
import { signedOffSql } from './signoff.repository.js';
import type { Insertable } from 'kysely';

export async function insertListing(trx: Trx, name: string): Promise<string> {
  const r = await trx.insertInto('listings').values({ name }).returning('id').executeTakeFirstOrThrow();
  return r.id;
}

export async function listingExists(db: Db | Trx, id: string): Promise<boolean> {
  return !!(await db.selectFrom('listings').select('id').where('id', '=', id).executeTakeFirst());
}

export async function insertEvent(trx: Trx, row: Insertable<EventsTable>): Promise<string> {
  const r = await trx.insertInto('events').values(row).returning('id').executeTakeFirstOrThrow();
  return r.id;
}

export async function insertPriceLevels(
  trx: Trx,
  eventId: string,
  levels: { code: string; name: string; priceCents: number }[],
): Promise<void> {
  await trx
    .insertInto('price_levels')
    .values(levels.map((l) => ({ event_id: eventId, code: l.code, name: l.name, price_cents: l.priceCents })))
    .execute();
}

export async function insertSections(
  trx: Trx,
  eventId: string,
  sections: { code: string; name: string; kind?: 'RESERVED' | 'GA'; priceLevel: string; qualityRank: number; capacity: number }[],
): Promise<void> {
  await trx
    .insertInto('sections')
    .values(
      sections.map((s) => ({
        event_id: eventId,
        code: s.code,
        name: s.name,
        kind: s.kind ?? 'RESERVED',
        price_level: s.priceLevel,
        quality_rank: s.qualityRank,
        capacity: s.capacity,
      })),
    )
    .execute();
}

/** Inserts every seat in one statement (unnest of arrays): 60,000 seats in well under a second. */
export async function insertSeats(trx: Trx, eventId: string, seats: SeatSpec[]): Promise<void> {
  const chunk = 20_000;
  for (let i = 0; i < seats.length; i += chunk) {
    const part = seats.slice(i, i + chunk);
    await sql`
      INSERT INTO seats (event_id, section_code, row_label, row_index, seat_number, quality, allocation)
      SELECT ${eventId}::uuid, s, r, ri, n, q, a
      FROM unnest(${part.map((x) => x.sectionCode)}::text[], ${part.map((x) => x.rowLabel)}::text[],
                  ${part.map((x) => x.rowIndex)}::int[], ${part.map((x) => x.seatNumber)}::int[],
                  ${part.map((x) => x.quality)}::int[], ${part.map((x) => x.allocation ?? null)}::text[]) AS t(s, r, ri, n, q, a)`.execute(
      trx,
    );
  }
}

/** Every column of the event, with whether its fairness mode is signed off and whether its queue has opened (sealed). */
function eventsWithSignOff(db: Db | Trx) {
  return db
    .selectFrom('events')
    .selectAll()
    .select([
      signedOffSql('events.id', 'events.fairness_mode').as('fairness_signed_off'),
      sql<boolean>`EXISTS (SELECT 1 FROM queue_state q WHERE q.event_id = events.id AND q.sealed_at IS NOT NULL)`.as('queue_opened'),
    ]);
}

export function findEvent(db: Db | Trx, id: string) {
  return eventsWithSignOff(db).where('id', '=', id).executeTakeFirst();
}

export function listEvents(db: Db | Trx, limit = 200, organisationId?: string) {
  let q = eventsWithSignOff(db);
  if (organisationId !== undefined) q = q.where('organisation_id', '=', organisationId);
  return q.orderBy('onsale_at', 'desc').orderBy('id').limit(limit).execute();
}

export function findSections(db: Db | Trx, eventId: string) {
  return db
    .selectFrom('sections as s')
    .innerJoin('price_levels as p', (j) => j.onRef('p.event_id', '=', 's.event_id').onRef('p.code', '=', 's.price_level'))
    .select(['s.code', 's.name', 's.kind', 's.price_level', 's.quality_rank', 's.capacity', 'p.price_cents', 'p.name as price_level_name'])
    .where('s.event_id', '=', eventId)
    .orderBy('s.quality_rank')
    .orderBy('s.code')
    .execute();
}

export function findPriceLevels(db: Db | Trx, eventId: string) {
  return db.selectFrom('price_levels').selectAll().where('event_id', '=', eventId).orderBy('price_cents', 'desc').execute();
}

/** What the events board needs beyond the event rows: organisation name, paused, sold out, signed off. */
export async function findBoardFacts(db: Db | Trx, eventIds: string[]) {
  if (eventIds.length === 0) return [];
  const { rows } = await sql<{ id: string; organisation_name: string | null; paused: boolean; sold_out: boolean; signed_off: boolean }>`
    SELECT e.id, o.name AS organisation_name, COALESCE(q.paused, false) AS paused, COALESCE(q.inventory_state = 'SOLD_OUT', false) AS sold_out,
           EXISTS (SELECT 1 FROM fairness_signoffs f WHERE f.event_id = e.id AND f.fairness_mode = e.fairness_mode AND f.superseded_at IS NULL) AS signed_off
    FROM events e
    LEFT JOIN organisations o ON o.id = e.organisation_id
    LEFT JOIN queue_state q ON q.event_id = e.id
    WHERE e.id = ANY(${eventIds}::uuid[])`.execute(db);
  return rows;
}

/** Fan accounts an operator blocked from the event (fan support writes the blocks: support/support.repository.ts). */
export async function findBlockedAccounts(db: Db | Trx, eventId: string): Promise<string[]> {
  const rows = await db.selectFrom('account_blocks').select('account_id').where('event_id', '=', eventId).execute();
  return rows.map((r) => r.account_id);
}
