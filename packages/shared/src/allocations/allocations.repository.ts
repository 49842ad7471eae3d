import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import type { Insertable } from 'kysely';
import type { AllocationRow, AllocationsTable } from './allocations.table.js';
import { signedOffSql } from '../events/signoff.service.js';

export function findAllocations(db: Db | Trx, eventId: string): Promise<AllocationRow[]> {
  return db.selectFrom('allocations').selectAll().where('event_id', '=', eventId).orderBy('position').execute();
}

/** The event's tiers locked in sale order (a roll forward moves seats between two of them). */
export function lockAllocations(trx: Trx, eventId: string): Promise<AllocationRow[]> {
  return trx.selectFrom('allocations').selectAll().where('event_id', '=', eventId).orderBy('position').forUpdate().execute();
}

/**
 * Seats and GA units per tier by effective status (read-time expiry, as everywhere: units of a lapsed hold not yet
 * given back count as available, as in countBySection).
 */
export async function countByAllocation(db: Db | Trx, eventId: string) {
  const { rows } = await sql<{ allocation: string; available: number; held: number; sold: number }>`
    SELECT allocation, sum(available)::int AS available, sum(held)::int AS held, sum(sold)::int AS sold FROM (
      SELECT allocation,
             count(*) FILTER (WHERE status = 'AVAILABLE' OR (status = 'HELD' AND expires_at <= now())) AS available,
             count(*) FILTER (WHERE status = 'HELD' AND expires_at > now()) AS held,
             count(*) FILTER (WHERE status = 'SOLD') AS sold
      FROM seats WHERE event_id = ${eventId} AND allocation IS NOT NULL
      GROUP BY allocation
      UNION ALL
      SELECT s.allocation, sum(s.available) + coalesce(sum(u.lapsed), 0), coalesce(sum(u.held), 0), sum(s.sold)
      FROM ga_shards s
      LEFT JOIN (
        SELECT u.section_code, u.shard,
               sum(u.quantity) FILTER (WHERE h.status IN ('HELD', 'PAYING', 'WAITLIST') AND h.expires_at > now()) AS held,
               sum(u.quantity) FILTER (WHERE NOT (h.status IN ('HELD', 'PAYING', 'WAITLIST') AND h.expires_at > now())) AS lapsed
        FROM ga_hold_units u JOIN holds h ON h.id = u.hold_id
        WHERE u.event_id = ${eventId} AND u.state = 'HELD'
        GROUP BY u.section_code, u.shard) u ON u.section_code = s.section_code AND u.shard = s.shard
      WHERE s.event_id = ${eventId} AND s.allocation IS NOT NULL
      GROUP BY s.allocation) t
    GROUP BY allocation`.execute(db);
  return rows;
}

/**
 * Moves a tier's free GA units to another tier, section by section: every shard of the event's GA sections locked
 * in (section, shard) order (the order every GA writer uses), lapsed units reclaimed first, then each source
 * shard's available units leave it (its capacity shrinks by as much) and join the target tier's smallest shard in
 * that section (a new shard if the target has none there). Every shard keeps available + held + sold = capacity.
 * Returns the units moved per section.
 */
export async function moveUnsoldUnits(trx: Trx, eventId: string, from: string, into: string): Promise<Map<string, number>> {
  const moved = new Map<string, number>();
  const { rows: sections } = await sql<{ section_code: string }>`
    SELECT DISTINCT section_code FROM ga_shards WHERE event_id = ${eventId} AND allocation = ${from}`.execute(trx);
  if (sections.length === 0) return moved;
  await sql`SELECT 1 FROM ga_shards WHERE event_id = ${eventId} ORDER BY section_code, shard FOR UPDATE`.execute(trx);
  for (const { section_code: section } of sections) {
    await sql`SELECT onsale_ga_reclaim(${eventId}::uuid, ${section}::text)`.execute(trx);
    const { rows } = await sql<{ n: number }>`
      WITH src AS (SELECT shard, available FROM ga_shards WHERE event_id = ${eventId} AND section_code = ${section} AND allocation = ${from} AND available > 0),
      emptied AS (
        UPDATE ga_shards g SET capacity = g.capacity - src.available, available = 0
        FROM src WHERE g.event_id = ${eventId} AND g.section_code = ${section} AND g.shard = src.shard
        RETURNING src.available)
      SELECT coalesce(sum(available), 0)::int AS n FROM emptied`.execute(trx);
    const n = rows[0]!.n;
    if (n === 0) continue;
    const target = await sql<{ shard: number }>`
      SELECT shard FROM ga_shards WHERE event_id = ${eventId} AND section_code = ${section} AND allocation = ${into}
      ORDER BY capacity, shard LIMIT 1`.execute(trx);
    if (target.rows[0])
      await sql`UPDATE ga_shards SET capacity = capacity + ${n}, available = available + ${n}
                WHERE event_id = ${eventId} AND section_code = ${section} AND shard = ${target.rows[0].shard}`.execute(trx);
    else
      await sql`INSERT INTO ga_shards (event_id, section_code, shard, capacity, available, allocation)
                SELECT ${eventId}, ${section}, coalesce(max(shard), -1) + 1, ${n}, ${n}, ${into} FROM ga_shards
                WHERE event_id = ${eventId} AND section_code = ${section}`.execute(trx);
    moved.set(section, n);
  }
  return moved;
}

/**
 * Moves a tier's unsold seats (available now, or held by a hold that has lapsed) to another tier, and returns
 * them. Seats of live holds stay: if those holds lapse or are released, a later roll moves them.
 */
export async function moveUnsoldSeats(trx: Trx, eventId: string, from: string, into: string) {
  const { rows } = await sql<{
    id: string;
    sectionCode: string;
    rowIndex: number;
    rowLabel: string;
    seatNumber: number;
    quality: number;
    lapsedHold: string | null;
  }>`
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
      AND (a.rolled_at IS NULL
        OR EXISTS (
          SELECT 1 FROM seats s WHERE s.event_id = a.event_id AND s.allocation = a.code
            AND (s.status = 'AVAILABLE' OR (s.status = 'HELD' AND s.expires_at <= now())))
        OR EXISTS (SELECT 1 FROM ga_shards g WHERE g.event_id = a.event_id AND g.allocation = a.code AND g.available > 0))
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
  const row = await db
    .selectFrom('access_code_redemptions')
    .select('account_id')
    .where('event_id', '=', eventId)
    .where('code_id', '=', codeId)
    .executeTakeFirstOrThrow();
  return row.account_id;
}

/** Removes every tier row of an event and returns them (an edit writes the tiers anew). */
export function deleteAllocations(trx: Trx, eventId: string): Promise<AllocationRow[]> {
  return trx.deleteFrom('allocations').where('event_id', '=', eventId).returningAll().execute();
}

/** Sets each seat's tier (null: the event has no tiers), matched by section, row and seat number. */
export async function setSeatAllocations(
  trx: Trx,
  eventId: string,
  seats: { sectionCode: string; rowIndex: number; seatNumber: number; allocation: string | null }[],
): Promise<void> {
  const chunk = 20_000;
  for (let i = 0; i < seats.length; i += chunk) {
    const part = seats.slice(i, i + chunk);
    await sql`
      UPDATE seats s SET allocation = t.a
      FROM unnest(${part.map((x) => x.sectionCode)}::text[], ${part.map((x) => x.rowIndex)}::int[], ${part.map((x) => x.seatNumber)}::int[],
                  ${part.map((x) => x.allocation)}::text[]) AS t(sc, ri, n, a)
      WHERE s.event_id = ${eventId} AND s.section_code = t.sc AND s.row_index = t.ri AND s.seat_number = t.n
        AND s.allocation IS DISTINCT FROM t.a`.execute(trx);
  }
}

/** Whether any fan has joined one of the event's presale queues. */
export async function presaleQueueHasFans(db: Db | Trx, eventId: string): Promise<boolean> {
  const { rows } = await sql<{ any: boolean }>`
    SELECT EXISTS (
      SELECT 1 FROM allocations a JOIN queue_entries q ON q.event_id = a.queue_id
      WHERE a.event_id = ${eventId} AND NOT a.general) AS any`.execute(db);
  return rows[0]?.any ?? false;
}

export function insertAllocation(trx: Trx, row: Insertable<AllocationsTable>): Promise<AllocationRow> {
  return trx.insertInto('allocations').values(row).returningAll().executeTakeFirstOrThrow();
}

/** The general sale opens at the event's on-sale, under its fairness mode. */
export async function setGeneralSaleOpening(
  trx: Trx,
  eventId: string,
  opensAt: Date,
  fairnessMode: AllocationRow['fairness_mode'],
): Promise<void> {
  await trx
    .updateTable('allocations')
    .set({ opens_at: opensAt, fairness_mode: fairnessMode })
    .where('event_id', '=', eventId)
    .where('general', '=', true)
    .execute();
}

export async function setCapacity(trx: Trx, eventId: string, code: string, capacity: number): Promise<void> {
  await trx.updateTable('allocations').set({ capacity }).where('event_id', '=', eventId).where('code', '=', code).execute();
}

/** Queues the graphile-worker job `task` for `runAt` under `jobKey` (a job with that key is moved, not doubled). */
export async function addRollJob(
  trx: Trx,
  task: string,
  payload: { eventId: string; tier: string },
  runAt: Date,
  jobKey: string,
): Promise<void> {
  await sql`
    SELECT graphile_worker.add_job(${task}, json_build_object('eventId', ${payload.eventId}::text, 'tier', ${payload.tier}::text),
                                   run_at := ${runAt}::timestamptz, job_key := ${jobKey}, max_attempts := 5)`.execute(trx);
}

export async function removeRollJob(trx: Trx, jobKey: string): Promise<void> {
  await sql`SELECT graphile_worker.remove_job(${jobKey})`.execute(trx);
}

/** The database's clock (roll times are compared with it, as the roll sweep does). */
export async function databaseNow(db: Db | Trx): Promise<Date> {
  const { rows } = await sql<{ now: Date }>`SELECT now() AS now`.execute(db);
  return rows[0]!.now;
}

/**
 * One value that changes whenever anything EventCache loads for the event changes (the event's row with its sign-off
 * and whether its queue opened, its sections with their prices, its tiers, its blocked accounts): an md5 of those
 * rows' text, read in one statement, so a lapsed cache entry whose event did not change is kept without reading the
 * event, its 150 sections, its tiers and its blocks again (four statements a second in every store process).
 */
export async function eventCacheFingerprint(db: Db | Trx, eventId: string): Promise<string> {
  const { rows } = await sql<{ fingerprint: string }>`
    SELECT md5(concat_ws(E'\n',
      (SELECT e::text || ${signedOffSql('e.id', 'e.fairness_mode')}::text
              || EXISTS (SELECT 1 FROM queue_state q WHERE q.event_id = e.id AND q.sealed_at IS NOT NULL)::text
       FROM events e WHERE e.id = ${eventId}),
      (SELECT string_agg(s::text || p::text, E'\t' ORDER BY s.code, p.code)
       FROM sections s JOIN price_levels p ON p.event_id = s.event_id AND p.code = s.price_level WHERE s.event_id = ${eventId}),
      (SELECT string_agg(a::text, E'\t' ORDER BY a.position, a.id) FROM allocations a WHERE a.event_id = ${eventId}),
      (SELECT string_agg(b::text, E'\t' ORDER BY b::text) FROM account_blocks b WHERE b.event_id = ${eventId}))) AS fingerprint`.execute(
    db,
  );
  return rows[0]!.fingerprint;
}
