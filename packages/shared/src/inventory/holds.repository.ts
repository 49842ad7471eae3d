import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import type { SeatCell } from './best-available.js';
import type { HoldRow } from './inventory.table.js';
import type { AllocationAccess } from '../allocations/index.js';
import { commitModeExpression, type HoldCommit } from './hold-commit.js';

export interface AvailableSeat extends SeatCell {
  rowLabel: string;
}

/** Seats of a section (of one presale tier, or of an event without tiers: null) that are available now (AVAILABLE, or HELD with a passed expiry). */
export async function findAvailableSeats(
  db: Db | Trx,
  eventId: string,
  sectionCode: string,
  allocation: string | null = null,
): Promise<AvailableSeat[]> {
  const { rows } = await sql<AvailableSeat>`
    SELECT id, row_index AS "rowIndex", row_label AS "rowLabel", seat_number AS "seatNumber", quality
    FROM seats
    WHERE event_id = ${eventId} AND section_code = ${sectionCode} AND allocation IS NOT DISTINCT FROM ${allocation}::text
      AND (status = 'AVAILABLE' OR (status = 'HELD' AND expires_at <= now()))`.execute(db);
  return rows;
}

/**
 * The ids of the seats findAvailableSeats reads (same section, tier and predicate, read at the same moment), as one
 * row: a section's view is refreshed every few seconds, and what a seat is (its row, label, number, quality) never
 * changes, so the views' refreshes read only which seats are available (SeatDirectory knows the rest).
 */
export async function findAvailableSeatIds(
  db: Db | Trx,
  eventId: string,
  sectionCode: string,
  allocation: string | null = null,
): Promise<number[]> {
  const { rows } = await sql<{ ids: string | null }>`
    SELECT string_agg(id::text, ',') AS ids
    FROM seats
    WHERE event_id = ${eventId} AND section_code = ${sectionCode} AND allocation IS NOT DISTINCT FROM ${allocation}::text
      AND (status = 'AVAILABLE' OR (status = 'HELD' AND expires_at <= now()))`.execute(db);
  const ids = rows[0]?.ids;
  return ids ? ids.split(',').map(Number) : [];
}

/** The event's seats with these ids, whatever their status: what each seat is (SeatDirectory's misses). */
export async function findSeatsById(db: Db | Trx, eventId: string, seatIds: readonly number[]): Promise<AvailableSeat[]> {
  const { rows } = await sql<AvailableSeat>`
    SELECT id, row_index AS "rowIndex", row_label AS "rowLabel", seat_number AS "seatNumber", quality
    FROM seats
    WHERE event_id = ${eventId} AND id = ANY(${seatIds}::bigint[])`.execute(db);
  return rows;
}

/**
 * Every seat of the event's rows that hold one of `seatIds` (the picked seats among them), with its presale tier and
 * whether it is free now (as findAvailableSeats counts it): an exact-seat pick's checks and what the single-seat rule
 * judges it on, in one read. `rowIndex` numbers the rows across sections (rows of two sections never read as one).
 */
export async function findSeatsInRowsOf(
  db: Db | Trx,
  eventId: string,
  seatIds: number[],
): Promise<(AvailableSeat & { allocation: string | null; free: boolean })[]> {
  const { rows } = await sql<AvailableSeat & { allocation: string | null; free: boolean }>`
    SELECT s.id, dense_rank() OVER (ORDER BY s.section_code, s.row_index)::int AS "rowIndex", s.row_label AS "rowLabel",
           s.seat_number AS "seatNumber", s.quality, s.allocation,
           (s.status = 'AVAILABLE' OR (s.status = 'HELD' AND s.expires_at <= now())) AS free
    FROM seats s
    WHERE s.event_id = ${eventId}
      AND (s.section_code, s.row_index) IN (SELECT section_code, row_index FROM seats WHERE event_id = ${eventId} AND id = ANY(${seatIds}::bigint[]))
    ORDER BY s.section_code, s.row_index, s.seat_number`.execute(db);
  return rows;
}

/** Events in their on-sale rush: opening within two minutes or opened within the hour, not yet started. */
export async function eventsInRush(db: Db): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    SELECT id FROM events WHERE onsale_at BETWEEN now() - interval '1 hour' AND now() + interval '2 minutes' AND starts_at > now()`.execute(
    db,
  );
  return rows.map((r) => r.id);
}

/** Every available seat of an event, with its section and presale tier: one read that fills a process's views at once. */
export async function findAvailableSeatsOfEvent(
  db: Db | Trx,
  eventId: string,
): Promise<(AvailableSeat & { sectionCode: string; allocation: string | null })[]> {
  const { rows } = await sql<AvailableSeat & { sectionCode: string; allocation: string | null }>`
    SELECT id, row_index AS "rowIndex", row_label AS "rowLabel", seat_number AS "seatNumber", quality, section_code AS "sectionCode", allocation
    FROM seats
    WHERE event_id = ${eventId} AND (status = 'AVAILABLE' OR (status = 'HELD' AND expires_at <= now()))`.execute(db);
  return rows;
}

/** Serializes the limit check of one key (account or payment instrument) within an event, until commit. */
export async function lockKey(trx: Trx, scope: string, eventId: string, key: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${scope}:${eventId}:${key}`}, 0))`.execute(trx);
}

export function findHold(db: Db | Trx, id: string) {
  return db.selectFrom('holds').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * A hold locked with its event's settings (lockHoldWithEvent, lockHoldsWithEvent, the checkout's first step): the
 * statement before its WHERE.
 */
export const HOLD_WITH_EVENT = sql`
    SELECT h.*, e.hold_extension_seconds, e.per_instrument_seat_limit, e.currency,
           a.access AS tier_access, a.bin_ranges AS tier_bin_ranges, a.name AS tier_name,
           -- An operator may have blocked the account from the event since it held: checkout refuses it (fan support).
           EXISTS (SELECT 1 FROM account_blocks b WHERE b.event_id = h.event_id AND b.account_id = h.account_id) AS account_blocked,
           -- The database's clock, read with the lock (a lapse is judged by it, not by this process's clock).
           now() AS db_now
    FROM holds h
    JOIN events e ON e.id = h.event_id
    LEFT JOIN allocations a ON a.event_id = h.event_id AND a.code = h.allocation`;

/**
 * Locks a hold and reads the event settings its rules need in the same statement, so a transaction never
 * waits on a second pool connection (which could starve the pool under load).
 */
export async function lockHoldWithEvent(trx: Trx, id: string): Promise<HoldWithEvent | undefined> {
  const { rows } = await sql<HoldWithEvent>`${HOLD_WITH_EVENT} WHERE h.id = ${id}::uuid FOR UPDATE OF h`.execute(trx);
  return rows[0];
}

/** A hold row as lockHoldsWithEvent reads it: the hold, its event's settings its rules need, and the database's clock. */
export type HoldWithEvent = HoldRow & {
  hold_extension_seconds: number;
  per_instrument_seat_limit: number;
  currency: string;
  tier_access: AllocationAccess | null;
  tier_bin_ranges: { from: string; to: string }[] | null;
  tier_name: string | null;
  account_blocked: boolean;
  db_now: Date;
};

/**
 * Holds by id, locked in id order (so two lockers never wait on each other in a cycle), with their event's settings.
 * Written as one SQL text for any number of ids (`= ANY`), not with the query builder: it runs in every checkout and
 * release, and building and compiling the builder's query cost more of the store's time than the statement's send.
 * One hold (every checkout, most releases) takes `lockHoldWithEvent`'s `= $1` instead: PostgreSQL plans an `= ANY`
 * of a parameter array again on every call (its generic plan, costed for an array of unknown length, never wins
 * over a custom one), which the rehearsal's statements showed as 80% of this statement's time; `= $1` is planned
 * once per connection.
 */
export async function lockHoldsWithEvent(trx: Trx, ids: string[]): Promise<HoldWithEvent[]> {
  if (ids.length === 1) {
    const one = await lockHoldWithEvent(trx, ids[0]!);
    return one ? [one] : [];
  }
  const { rows } = await sql<HoldWithEvent>`${HOLD_WITH_EVENT} WHERE h.id = ANY(${ids}::uuid[]) ORDER BY h.id FOR UPDATE OF h`.execute(trx);
  return rows;
}

export async function seatsOfHold(db: Db | Trx, holdId: string) {
  const { rows } = await sql<{ id: number; section: string; row: string; number: number; priceCents: number }>`
    SELECT s.id, s.section_code AS section, s.row_label AS row, s.seat_number AS number, p.price_cents AS "priceCents"
    FROM seats s
    JOIN sections c ON c.event_id = s.event_id AND c.code = s.section_code
    JOIN price_levels p ON p.event_id = c.event_id AND p.code = c.price_level
    WHERE s.hold_id = ${holdId}
    ORDER BY s.section_code, s.row_index, s.seat_number`.execute(db);
  return rows;
}

/** Moves a hold's expiry (hold row and its HELD seats together); returns the new expiry. */
export async function setHoldExpiry(
  trx: Trx,
  holdId: string,
  expiresAt: Date | 'keep',
  fields: { extended?: boolean; status?: 'HELD' | 'PAYING' } = {},
) {
  const { rows } = await sql<{ expires_at: Date }>`
    UPDATE holds SET expires_at = ${expiresAt === 'keep' ? sql`expires_at` : sql`${expiresAt}`},
                     extended = ${fields.extended ?? null}::boolean IS TRUE OR extended,
                     status = coalesce(${fields.status ?? null}, status),
                     updated_at = now()
    WHERE id = ${holdId} RETURNING expires_at`.execute(trx);
  const exp = rows[0]!.expires_at;
  await sql`UPDATE seats SET expires_at = ${exp}, version = version + 1 WHERE hold_id = ${holdId} AND status = 'HELD'`.execute(trx);
  return exp;
}

/** Returns a hold's HELD seats to AVAILABLE and sets the hold's final status. */
/** Holds' seats back to AVAILABLE and the holds' new statuses, in one statement; the seats with the hold each left. */
export async function releaseHoldsSeats(
  trx: Trx,
  holds: { holdId: string; status: 'RELEASED' | 'EXPIRED' }[],
): Promise<(AvailableSeat & { sectionCode: string; allocation: string | null; holdId: string })[]> {
  if (holds.length === 0) return [];
  const { rows } = await sql<AvailableSeat & { sectionCode: string; allocation: string | null; holdId: string }>`
    WITH input AS (SELECT * FROM unnest(${holds.map((h) => h.holdId)}::uuid[], ${holds.map((h) => h.status)}::text[]) AS t(hold_id, status)),
    hold AS (UPDATE holds h SET status = i.status, updated_at = now() FROM input i WHERE h.id = i.hold_id)
    UPDATE seats s SET status = 'AVAILABLE', hold_id = NULL, expires_at = NULL, version = s.version + 1
    FROM input i
    WHERE s.hold_id = i.hold_id AND s.status = 'HELD'
    RETURNING s.id, s.section_code AS "sectionCode", s.row_index AS "rowIndex", s.row_label AS "rowLabel", s.seat_number AS "seatNumber", s.quality,
              s.allocation, i.hold_id AS "holdId"`.execute(trx);
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}

export interface HoldAttempt {
  eventId: string;
  holdId: string;
  accountId: string;
  sectionCode: string | null;
  seatIds: number[];
  ttlSeconds: number;
  /** The per-account seat limit for the event. */
  limit: number;
  /** deviceFingerprint of the fan's device, recorded on the hold; null: no device limit applies. */
  deviceHash?: string | null;
  /** The per-device seat limit for the event (counted over every account on the device). */
  deviceLimit?: number;
  /** The presale tier the seats must belong to (the fan's admission's); null: the event has no tiers. */
  allocation?: string | null;
  /** The request's Idempotency-Key, written with the hold (in its statement); null: none. */
  idempotencyKey?: string | null;
  /** The hash of the request the key is bound to (holdRequestHash), written with the key. */
  requestHash?: string | null;
}

/** What a hold attempt did: the counts, the seats taken (all or none), the hold's expiry (null: no hold made). */
export interface HoldAttemptResult {
  used: number;
  deviceUsed: number;
  taken: number[];
  expiresAt: Date | null;
  /** synchronous_commit as the attempt's transaction committed ('off' under HoldCommit 'async'). */
  commitMode: string;
  /**
   * The fan's hold made under the attempt's Idempotency-Key already (read under the account's lock): nothing was
   * done, and the answer is that hold. Null when the key is new (or there is none).
   */
  keyed: string | null;
}

/**
 * One attempt at a hold as one statement, hence one transaction and one round trip (the hot path of an
 * on-sale): takes the account's lock and counts its seats (onsale_lock_account_seats: live holds + confirmed
 * orders, with a snapshot taken after the lock), then the device's (onsale_lock_device_seats, the same over
 * every account on the device); reads the fan's hold under the request's Idempotency-Key (onsale_hold_of_key,
 * under the same lock), and when there is one does nothing else; then, only if both limits allow and every seat
 * is available now, takes them all (SKIP LOCKED: a seat another transaction is writing counts as taken; all or
 * nothing, so a lost race writes nothing) and records the account and the hold with its key. Locks end with the
 * statement. The key commits with the hold or not at all: a process that dies before the answer leaves a hold the
 * fan's retry finds by its key.
 */
export async function attemptHold(db: Db | Trx, a: HoldAttempt, commit: HoldCommit): Promise<HoldAttemptResult> {
  const quantity = a.seatIds.length;
  const device = a.deviceHash ?? null;
  const key = a.idempotencyKey ?? null;
  const { rows } = await sql<{
    used: number;
    device_used: number;
    taken: number[];
    expires_at: Date | null;
    commit_mode: string;
    keyed: string | null;
  }>`
    WITH used AS MATERIALIZED (
      SELECT onsale_lock_account_seats(${a.eventId}::uuid, ${a.accountId}::text) AS n,
             onsale_lock_device_seats(${a.eventId}::uuid, ${device}::text) AS d,
             onsale_hold_of_key(${a.eventId}::uuid, ${a.accountId}::text, ${key}::text) AS keyed,
             ${commitModeExpression(commit)} AS commit_mode),
    free AS (
      SELECT event_id, id FROM seats
      WHERE event_id = ${a.eventId} AND id = ANY(${a.seatIds}::bigint[]) AND allocation IS NOT DISTINCT FROM ${a.allocation ?? null}::text
        AND (status = 'AVAILABLE' OR (status = 'HELD' AND expires_at <= now()))
        AND (SELECT keyed FROM used) IS NULL
        AND (SELECT n FROM used) + ${quantity} <= ${a.limit}
        AND (SELECT d FROM used) + ${quantity} <= ${a.deviceLimit ?? a.limit}
      FOR UPDATE SKIP LOCKED),
    taken AS (
      UPDATE seats s SET status = 'HELD', hold_id = ${a.holdId}, expires_at = now() + make_interval(secs => ${a.ttlSeconds}),
                         version = s.version + 1
      FROM free WHERE s.event_id = free.event_id AND s.id = free.id AND (SELECT count(*) FROM free) = ${quantity}
      RETURNING s.id),
    account AS (
      INSERT INTO accounts (id) SELECT ${a.accountId} WHERE (SELECT count(*) FROM taken) = ${quantity}
      ON CONFLICT (id) DO NOTHING),
    hold AS (
      INSERT INTO holds (id, event_id, account_id, section_code, quantity, expires_at, device_hash, allocation, idempotency_key, request_hash)
      SELECT ${a.holdId}, ${a.eventId}, ${a.accountId}, ${a.sectionCode}, ${quantity}, now() + make_interval(secs => ${a.ttlSeconds}), ${device}, ${a.allocation ?? null},
             ${key}::text, ${key === null ? null : (a.requestHash ?? null)}::text
      WHERE (SELECT count(*) FROM taken) = ${quantity}
      RETURNING expires_at)
    SELECT (SELECT n FROM used)::int AS used, (SELECT d FROM used)::int AS device_used, ARRAY(SELECT id FROM taken) AS taken,
           (SELECT expires_at FROM hold) AS expires_at, (SELECT commit_mode FROM used) AS commit_mode, (SELECT keyed FROM used) AS keyed`.execute(
    db,
  );
  const r = rows[0]!;
  return {
    used: r.used,
    deviceUsed: r.device_used,
    taken: r.taken.map(Number),
    expiresAt: r.expires_at,
    commitMode: r.commit_mode,
    keyed: r.keyed,
  };
}

/** A fan's hold made under an Idempotency-Key (one per event and account), with the hash of the request that made it. */
export async function findHoldByKey(
  db: Db | Trx,
  eventId: string,
  accountId: string,
  key: string,
): Promise<{ id: string; request_hash: string | null } | undefined> {
  return db
    .selectFrom('holds')
    .select(['id', 'request_hash'])
    .where('event_id', '=', eventId)
    .where('account_id', '=', accountId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
}

/**
 * The fan's live hold made by the same request within the last `windowSeconds` (same tier; same section and
 * quantity, or exactly the same seats), newest first: a repeated request whose first answer was lost.
 */
export async function findRepeatHold(
  db: Db | Trx,
  eventId: string,
  accountId: string,
  req: { section: string; quantity: number } | { seatIds: number[] },
  allocation: string | null,
  windowSeconds: number,
): Promise<string | undefined> {
  const same =
    'seatIds' in req
      ? sql`h.quantity = ${req.seatIds.length}
            AND (SELECT count(*) FROM seats s WHERE s.event_id = h.event_id AND s.hold_id = h.id AND s.id = ANY(${req.seatIds}::bigint[])) = ${req.seatIds.length}`
      : sql`h.section_code = ${req.section} AND h.quantity = ${req.quantity}`;
  const { rows } = await sql<{ id: string }>`
    SELECT h.id FROM holds h
    WHERE h.event_id = ${eventId} AND h.account_id = ${accountId} AND h.status = 'HELD' AND h.expires_at > now()
      AND h.created_at > now() - make_interval(secs => ${windowSeconds}) AND h.allocation IS NOT DISTINCT FROM ${allocation}
      AND ${same}
    ORDER BY h.created_at DESC LIMIT 1`.execute(db);
  return rows[0]?.id;
}

/** Records a hold lost to a database crash, once per hold (a second report of the same hold changes nothing); true when this call recorded it. */
export async function recordHoldLoss(db: Db | Trx, loss: { holdId: string; eventId: string; accountId: string }): Promise<boolean> {
  const r = await db
    .insertInto('hold_losses')
    .values({ hold_id: loss.holdId, event_id: loss.eventId, account_id: loss.accountId })
    .onConflict((oc) => oc.column('hold_id').doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
}
