import { sql, type Insertable, type Selectable } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import type { LotteriesTable, LotteryRegistrationsTable, LotteryWinnersTable } from './lottery.table.js';

export type LotteryRow = Selectable<LotteriesTable>;
export type RegistrationRow = Selectable<LotteryRegistrationsTable>;
export type WinnerRow = Selectable<LotteryWinnersTable>;

export async function insertLottery(
  trx: Trx,
  row: Omit<
    Insertable<LotteriesTable>,
    | 'registration_count'
    | 'committed_at'
    | 'drawn_at'
    | 'drawn_by'
    | 'seats_offered'
    | 'target_requested_seats'
    | 'winners_count'
    | 'invited_seats'
  >,
): Promise<void> {
  await trx.insertInto('lotteries').values(row).execute();
}

/** Changes a lottery's settings (an edit before registration opens); the seed and its commitment stay. */
export async function updateLotterySettings(
  trx: Trx,
  eventId: string,
  s: { registrationOpensAt: string; registrationClosesAt: string; expectedConversion: number; cohorts: number; cohortMinutes: number },
): Promise<void> {
  await trx
    .updateTable('lotteries')
    .set({
      registration_opens_at: s.registrationOpensAt,
      registration_closes_at: s.registrationClosesAt,
      expected_conversion: s.expectedConversion,
      cohorts: s.cohorts,
      cohort_minutes: s.cohortMinutes,
    })
    .where('event_id', '=', eventId)
    .execute();
}

/** Removes a lottery (an edit away from REGISTRATION_LOTTERY before registration opens; its registrations and winners go with it). */
export async function deleteLottery(trx: Trx, eventId: string): Promise<void> {
  await trx.deleteFrom('lotteries').where('event_id', '=', eventId).execute();
}

/** The event's queue seed and commitment (initQueue), which the lottery shares. */
export function findQueueSeed(trx: Trx, eventId: string): Promise<{ seed_hex: string; seed_commitment: string } | undefined> {
  return trx.selectFrom('queue_state').select(['seed_hex', 'seed_commitment']).where('event_id', '=', eventId).executeTakeFirst();
}

export function findLottery(db: Db | Trx, eventId: string): Promise<LotteryRow | undefined> {
  return db.selectFrom('lotteries').selectAll().where('event_id', '=', eventId).executeTakeFirst();
}

/** The lottery row, locked: registrations and the draw of one event take turns on it. */
export function lockLottery(trx: Trx, eventId: string): Promise<LotteryRow | undefined> {
  return trx.selectFrom('lotteries').selectAll().where('event_id', '=', eventId).forUpdate().executeTakeFirst();
}

export function findRegistration(db: Db | Trx, eventId: string, accountId: string): Promise<RegistrationRow | undefined> {
  return db
    .selectFrom('lottery_registrations')
    .selectAll()
    .where('event_id', '=', eventId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

/** A new registration with the next sequence number. Call with the lottery row locked (lockLottery). */
export async function insertRegistration(
  trx: Trx,
  eventId: string,
  accountId: string,
  sequence: number,
  quantity: number,
  at: Date,
): Promise<RegistrationRow> {
  await sql`INSERT INTO accounts (id) VALUES (${accountId}) ON CONFLICT (id) DO NOTHING`.execute(trx);
  const row = await trx
    .insertInto('lottery_registrations')
    .values({ event_id: eventId, account_id: accountId, sequence, quantity, registered_at: at, updated_at: at })
    .returningAll()
    .executeTakeFirstOrThrow();
  await trx
    .updateTable('lotteries')
    .set({ registration_count: sequence + 1 })
    .where('event_id', '=', eventId)
    .execute();
  return row;
}

export function updateRegistrationQuantity(
  trx: Trx,
  eventId: string,
  accountId: string,
  quantity: number,
  at: Date,
): Promise<RegistrationRow> {
  return trx
    .updateTable('lottery_registrations')
    .set({ quantity, updated_at: at })
    .where('event_id', '=', eventId)
    .where('account_id', '=', accountId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Every registration of the event, by sequence. */
export function findRegistrations(db: Db | Trx, eventId: string): Promise<RegistrationRow[]> {
  return db.selectFrom('lottery_registrations').selectAll().where('event_id', '=', eventId).orderBy('sequence').execute();
}

/** A page of the published registration list: pseudonymous accounts (SHA-256 of event id || account id). */
export async function findPublishedRegistrations(
  db: Db | Trx,
  eventId: string,
  page: { from: number; limit: number } | null,
): Promise<{ account: string; sequence: number; quantity: number; rank: number | null; cohort: number | null }[]> {
  const { rows } = await sql<{ account: string; sequence: number; quantity: number; rank: number | null; cohort: number | null }>`
    SELECT encode(sha256(convert_to(r.event_id::text || r.account_id, 'UTF8')), 'hex') AS account, r.sequence, r.quantity::int AS quantity,
           w.rank, w.cohort
    FROM lottery_registrations r
    LEFT JOIN lottery_winners w ON w.event_id = r.event_id AND w.account_id = r.account_id
    WHERE r.event_id = ${eventId} AND r.sequence >= ${page?.from ?? 0}
    ORDER BY r.sequence
    ${page ? sql`LIMIT ${page.limit}` : sql``}`.execute(db);
  return rows;
}

export function findWinner(db: Db | Trx, eventId: string, accountId: string): Promise<WinnerRow | undefined> {
  return db
    .selectFrom('lottery_winners')
    .selectAll()
    .where('event_id', '=', eventId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

export function findWinners(db: Db | Trx, eventId: string): Promise<WinnerRow[]> {
  return db.selectFrom('lottery_winners').selectAll().where('event_id', '=', eventId).orderBy('rank').execute();
}

/** Winners per cohort: how many and their requested seats, with the window. */
export async function winnersPerCohort(db: Db | Trx, eventId: string) {
  const { rows } = await sql<{ cohort: number; winners: number; seats: number; window_opens_at: Date; window_closes_at: Date }>`
    SELECT cohort, count(*)::int AS winners, sum(quantity)::int AS seats, min(window_opens_at) AS window_opens_at, min(window_closes_at) AS window_closes_at
    FROM lottery_winners WHERE event_id = ${eventId} GROUP BY cohort ORDER BY cohort`.execute(db);
  return rows;
}

const CHUNK = 10_000;

/** Writes the winners in chunks of 10,000 rows per statement. */
export async function insertWinners(trx: Trx, eventId: string, winners: Omit<WinnerRow, 'event_id'>[]): Promise<void> {
  for (let i = 0; i < winners.length; i += CHUNK) {
    const part = winners.slice(i, i + CHUNK);
    await sql`
      INSERT INTO lottery_winners (event_id, account_id, rank, sequence, quantity, cohort, window_opens_at, window_closes_at)
      SELECT ${eventId}::uuid, t.account_id, t.rank, t.sequence, t.quantity, t.cohort, t.opens, t.closes
      FROM unnest(${part.map((w) => w.account_id)}::text[], ${part.map((w) => w.rank)}::int[], ${part.map((w) => w.sequence)}::int[],
                  ${part.map((w) => w.quantity)}::smallint[], ${part.map((w) => w.cohort)}::int[],
                  ${part.map((w) => w.window_opens_at.toISOString())}::timestamptz[], ${part.map((w) => w.window_closes_at.toISOString())}::timestamptz[])
           AS t(account_id, rank, sequence, quantity, cohort, opens, closes)`.execute(trx);
  }
}

export async function markDrawn(
  trx: Trx,
  eventId: string,
  d: { drawnAt: Date; drawnBy: string; seatsOffered: number; targetRequestedSeats: number; winnersCount: number; invitedSeats: number },
): Promise<void> {
  await trx
    .updateTable('lotteries')
    .set({
      drawn_at: d.drawnAt,
      drawn_by: d.drawnBy,
      seats_offered: d.seatsOffered,
      target_requested_seats: d.targetRequestedSeats,
      winners_count: d.winnersCount,
      invited_seats: d.invitedSeats,
    })
    .where('event_id', '=', eventId)
    .execute();
}

/**
 * The draw's notifications, one per registration: LOTTERY_WON for each winner, LOTTERY_NOT_DRAWN for everyone else
 * (winners first in rank order, then the rest in registration order). At most one per registration (a unique
 * key): run again, it writes nothing. Returns the new ids, ascending.
 */
export async function insertLotteryNotifications(trx: Trx, eventId: string, listingId: string): Promise<number[]> {
  const { rows } = await sql<{ id: number }>`
    INSERT INTO notifications (account_id, listing_id, event_id, kind)
    SELECT r.account_id, ${listingId}::uuid, r.event_id, CASE WHEN w.account_id IS NULL THEN 'LOTTERY_NOT_DRAWN' ELSE 'LOTTERY_WON' END
    FROM lottery_registrations r
    LEFT JOIN lottery_winners w ON w.event_id = r.event_id AND w.account_id = r.account_id
    WHERE r.event_id = ${eventId}
    ORDER BY w.rank NULLS LAST, r.sequence
    ON CONFLICT DO NOTHING
    RETURNING id`.execute(trx);
  return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
}

/** Of `accountIds`, those with a live waitlist entry on the listing (their own criteria are kept). */
export async function accountsOnWaitlist(db: Db | Trx, listingId: string, accountIds: string[]): Promise<Set<string>> {
  if (accountIds.length === 0) return new Set();
  const { rows } = await sql<{ account_id: string }>`
    SELECT account_id FROM waitlist_entries
    WHERE listing_id = ${listingId} AND expires_at > now() AND account_id = ANY(${accountIds}::text[])`.execute(db);
  return new Set(rows.map((r) => r.account_id));
}

export async function listingTtlSeconds(db: Db | Trx, listingId: string): Promise<number> {
  const r = await db.selectFrom('listings').select('waitlist_ttl_seconds').where('id', '=', listingId).executeTakeFirstOrThrow();
  return r.waitlist_ttl_seconds;
}
