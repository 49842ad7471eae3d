import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import type { AllocationRow } from './allocations.table.js';

export function findAllocations(db: Db | Trx, eventId: string): Promise<AllocationRow[]> {
  return db.selectFrom('allocations').selectAll().where('event_id', '=', eventId).orderBy('position').execute();
}

/** The event's tiers locked in sale order (a roll forward moves seats between two of them). */
export function lockAllocations(trx: Trx, eventId: string): Promise<AllocationRow[]> {
  return trx.selectFrom('allocations').selectAll().where('event_id', '=', eventId).orderBy('position').forUpdate().execute();
}

/** Seats per tier by effective status (read-time expiry, as everywhere). */
export async function countByAllocation(db: Db | Trx, eventId: string) {
  const { rows } = await sql<{ allocation: string; available: number; held: number; sold: number }>`
    SELECT allocation,
           count(*) FILTER (WHERE status = 'AVAILABLE' OR (status = 'HELD' AND expires_at <= now()))::int AS available,
           count(*) FILTER (WHERE status = 'HELD' AND expires_at > now())::int AS held,
           count(*) FILTER (WHERE status = 'SOLD')::int AS sold
    FROM seats WHERE event_id = ${eventId} AND allocation IS NOT NULL
    GROUP BY allocation`.execute(db);
  return rows;
}

/**
 * Moves a tier's unsold seats (available now, or held by a hold that has lapsed) to another tier, and returns
 * them. Seats of live holds stay: if those holds lapse or are released, a later roll moves them.
 */
export async function moveUnsoldSeats(trx: Trx, eventId: string, from: string, into: string) {
  const { rows } = await sql<{ id: string; sectionCode: string; rowIndex: number; rowLabel: string; seatNumber: number; quality: number; lapsedHold: string | null }>`
    WITH moved AS (
      SELECT id, hold_id FROM seats
      WHERE event_id = ${eventId} AND allocation = ${from}
        AND (status = 'AVAILABLE' OR (status = 'HELD' AND expires_at <= now()))
      FOR UPDATE)
    UPDATE seats s SET allocation = ${into}, status = 'AVAILABLE', hold_id = NULL, expires_at = NULL, version = s.version + 1
    FROM moved WHERE s.event_id = ${eventId} AND s.id = moved.id
    RETURNING s.id, s.section_code AS "sectionCode", s.row_index AS "rowIndex", s.row_label AS "rowLabel", s.seat_number AS "seatNumber",
              s.quality, moved.hold_id AS "lapsedHold"`.execute(trx);
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}

export async function addCapacity(trx: Trx, eventId: string, code: string, delta: number, rolled: boolean): Promise<void> {
  await sql`
    UPDATE allocations SET capacity = capacity + ${delta}, rolled_at = CASE WHEN ${rolled} THEN coalesce(rolled_at, now()) ELSE rolled_at END
    WHERE event_id = ${eventId} AND code = ${code}`.execute(trx);
}

/** Tiers whose roll-forward time has come and that still own unsold seats (or have never rolled). */
export async function findDueRolls(db: Db | Trx): Promise<{ event_id: string; code: string }[]> {
  const { rows } = await sql<{ event_id: string; code: string }>`
    SELECT a.event_id, a.code FROM allocations a
    WHERE a.rolls_into IS NOT NULL AND a.rolls_forward_at <= now()
      AND (a.rolled_at IS NULL OR EXISTS (
        SELECT 1 FROM seats s WHERE s.event_id = a.event_id AND s.allocation = a.code
          AND (s.status = 'AVAILABLE' OR (s.status = 'HELD' AND s.expires_at <= now()))))
    ORDER BY a.rolls_forward_at, a.event_id, a.position`.execute(db);
  return rows;
}

/** Binds an access code to the account that first uses it; returns the account it is bound to. */
export async function redeemAccessCode(db: Db | Trx, eventId: string, codeId: string, tier: string, accountId: string): Promise<string> {
  const inserted = await db
    .insertInto('access_code_redemptions')
    .values({ event_id: eventId, code_id: codeId, allocation: tier, account_id: accountId })
    .onConflict((oc) => oc.columns(['event_id', 'code_id']).doNothing())
    .returning('account_id')
    .executeTakeFirst();
  if (inserted) return inserted.account_id;
  // Taken already (a new statement, so a redemption that committed while this one waited is seen).
  const row = await db.selectFrom('access_code_redemptions').select('account_id').where('event_id', '=', eventId).where('code_id', '=', codeId).executeTakeFirstOrThrow();
  return row.account_id;
}
