import { sql, type Selectable } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import { moveGaUnits } from '../inventory/ga.service.js';
import { holdsRepository } from '../inventory/holds.service.js';
import type { CheckoutAttemptsTable } from './checkout.table.js';

/** The account's attempt under this key (one SQL text, not the builder's: it runs twice in every checkout). */
export async function findAttempt(db: Db | Trx, accountId: string, key: string): Promise<Selectable<CheckoutAttemptsTable> | undefined> {
  const { rows } = await sql<Selectable<CheckoutAttemptsTable>>`
    SELECT * FROM checkout_attempts WHERE account_id = ${accountId} AND idempotency_key = ${key}`.execute(db);
  return rows[0];
}

/**
 * Locks the hold, then reads the account's attempt under the key after the lock is held (`onsale_lock_hold_attempt`:
 * the read is a statement of its own inside the function, so an attempt settled by whoever held the lock before is
 * seen settled): the checkout's last step's lock and read in one round trip.
 */
export async function lockHoldAndFindAttempt(
  trx: Trx,
  holdId: string,
  accountId: string,
  key: string,
): Promise<Selectable<CheckoutAttemptsTable> | undefined> {
  const { rows } = await sql<Selectable<CheckoutAttemptsTable>>`
    SELECT * FROM onsale_lock_hold_attempt(${holdId}::uuid, ${accountId}::text, ${key}::text)`.execute(trx);
  return rows[0];
}

/**
 * The checkout's first step's reads and lock in one round trip: `onsale_checkout_replay_or_lock` (a retry of this
 * very checkout answered from its attempt without the hold's lock; else the hold locked and the account's attempt
 * under the key read after the lock), then, when it is not a replay, the hold with its event's settings
 * (`lockHoldWithEvent`'s read). The hold's row is read FOR UPDATE, so it is its latest version whatever committed
 * while the function waited for the lock (READ COMMITTED follows the row's update chain), as the separate statement
 * after the lock read it. Was two statements.
 */
export async function replayOrLockHoldWithEvent(
  trx: Trx,
  accountId: string,
  key: string,
  holdId: string,
): Promise<
  | { replay: { request_hash: string; event_id: string; account_blocked: boolean }; prior?: undefined; hold?: undefined }
  | { replay?: undefined; prior: { request_hash: string } | undefined; hold: holdsRepository.HoldWithEvent | undefined }
> {
  const { rows } = await sql<
    Partial<holdsRepository.HoldWithEvent> & {
      r_replay: boolean | null;
      r_request_hash: string | null;
      r_event_id: string | null;
      r_account_blocked: boolean | null;
    }
  >`
    WITH r AS MATERIALIZED (SELECT * FROM onsale_checkout_replay_or_lock(${holdId}::uuid, ${accountId}::text, ${key}::text))
    SELECT r.replay AS r_replay, r.request_hash AS r_request_hash, r.event_id AS r_event_id, r.account_blocked AS r_account_blocked, hw.*
    FROM (SELECT 1) one
    LEFT JOIN r ON true
    LEFT JOIN LATERAL (${holdsRepository.HOLD_WITH_EVENT} WHERE h.id = ${holdId}::uuid AND r.replay IS NOT TRUE FOR UPDATE OF h) hw ON true`.execute(
    trx,
  );
  const { r_replay, r_request_hash, r_event_id, r_account_blocked, ...hold } = rows[0]!;
  if (r_replay) return { replay: { request_hash: r_request_hash!, event_id: r_event_id!, account_blocked: r_account_blocked! } };
  return {
    prior: r_request_hash === null ? undefined : { request_hash: r_request_hash },
    hold: hold.id === null || hold.id === undefined ? undefined : (hold as holdsRepository.HoldWithEvent),
  };
}

/**
 * The checkout's first step's writes in one statement (one round trip instead of three): the attempt recorded
 * PENDING, the hold PAYING and kept from lapsing until at least `floor` (its expiry and its HELD seats' together,
 * as `setHoldExpiry` moves them). Run under the hold's lock.
 *
 * `floor` null: the hold already lives past the payment window (its expiry, read under this lock, is at or after the
 * floor, so `greatest` would keep it): the hold's expiry and its seats' stay as they are, equal, and the seats are not
 * written at all. A seat is then written once by the checkout (the sale), not twice: the seats' update would have
 * been a new version of every seat (no HOT: `expires_at` is in `seats_lapsed_idx`), four index entries each, and the
 * seat-count trigger's transition tables, for an expiry set to the value it had.
 */
export async function beginPayment(
  trx: Trx,
  a: { accountId: string; key: string; holdId: string; requestHash: string; instrument: string; seatCount: number; owner: string | null },
  floor: Date | null,
): Promise<void> {
  const attempt = sql`
    INSERT INTO checkout_attempts (account_id, idempotency_key, hold_id, request_hash, instrument_fingerprint, seat_count, owner)
    VALUES (${a.accountId}, ${a.key}, ${a.holdId}, ${a.requestHash}, ${a.instrument}, ${a.seatCount}, ${a.owner})`;
  if (floor === null) {
    await sql`
      WITH attempt AS (${attempt})
      UPDATE holds SET status = 'PAYING', updated_at = now() WHERE id = ${a.holdId}`.execute(trx);
    return;
  }
  await sql`
    WITH attempt AS (${attempt}),
    h AS (UPDATE holds SET expires_at = greatest(expires_at, ${floor}::timestamptz), status = 'PAYING', updated_at = now()
          WHERE id = ${a.holdId} RETURNING expires_at)
    UPDATE seats SET expires_at = (SELECT expires_at FROM h), version = version + 1
    WHERE hold_id = ${a.holdId} AND status = 'HELD'`.execute(trx);
}

/** A seat sold by `sellAndOrder`, as its ticket needs it. */
export interface SoldSeatRow {
  id: number;
  section: string;
  row: string;
  number: number;
  price_cents: number;
}

/**
 * The checkout's last step for a seated hold, in one statement (one round trip instead of five): HELD -> SOLD for
 * every seat of the hold, all or nothing (as `sellHoldSeats`), and only when all `quantity` moved: the order, the
 * hold PURCHASED and the attempt SUCCEEDED. Returns the order and its seats (for the tickets), or null when nothing
 * moved (a seat no longer the hold's, or a hold without seats: general admission), with nothing written.
 */
export async function sellAndOrder(
  trx: Trx,
  o: {
    holdId: string;
    eventId: string;
    accountId: string;
    key: string;
    quantity: number;
    amountCents: number;
    instrument: string;
    reference: string;
  },
): Promise<{ orderId: string; seats: SoldSeatRow[] } | null> {
  const { rows } = await sql<{ order_id: string | null; seats: SoldSeatRow[] | null }>`
    WITH mine AS MATERIALIZED (SELECT event_id, id FROM seats WHERE hold_id = ${o.holdId} AND status = 'HELD' FOR UPDATE),
    whole AS MATERIALIZED (SELECT count(*) = ${o.quantity} AND count(*) > 0 AS ok FROM mine),
    sold AS (
      UPDATE seats s SET status = 'SOLD', expires_at = NULL, version = s.version + 1
      FROM mine WHERE s.event_id = mine.event_id AND s.id = mine.id AND (SELECT ok FROM whole)
      RETURNING s.id, s.event_id, s.section_code, s.row_label, s.row_index, s.seat_number),
    ord AS (
      INSERT INTO orders (hold_id, event_id, account_id, idempotency_key, seat_count, amount_cents, instrument_fingerprint, payment_reference)
      SELECT ${o.holdId}, ${o.eventId}, ${o.accountId}, ${o.key}, ${o.quantity}, ${o.amountCents}, ${o.instrument}, ${o.reference}
      WHERE (SELECT ok FROM whole)
      RETURNING id),
    purchased AS (UPDATE holds SET status = 'PURCHASED', updated_at = now() WHERE id = ${o.holdId} AND EXISTS (SELECT 1 FROM ord)),
    succeeded AS (
      UPDATE checkout_attempts SET status = 'SUCCEEDED', order_id = (SELECT id FROM ord), error_code = NULL, updated_at = now()
      WHERE account_id = ${o.accountId} AND idempotency_key = ${o.key} AND EXISTS (SELECT 1 FROM ord))
    SELECT (SELECT id FROM ord) AS order_id,
           (SELECT json_agg(json_build_object('id', x.id, 'section', x.section_code, 'row', x.row_label, 'number', x.seat_number,
                                              'price_cents', p.price_cents)
                            ORDER BY x.section_code, x.row_index, x.seat_number)
            FROM sold x
            JOIN sections c ON c.event_id = x.event_id AND c.code = x.section_code
            JOIN price_levels p ON p.event_id = c.event_id AND p.code = c.price_level) AS seats`.execute(trx);
  const r = rows[0];
  if (!r?.order_id) return null;
  return { orderId: r.order_id, seats: (r.seats ?? []).map((x) => ({ ...x, id: Number(x.id) })) };
}

export async function finishAttempt(
  trx: Trx,
  accountId: string,
  key: string,
  f: { status: 'SUCCEEDED' | 'FAILED'; orderId?: string; errorCode?: string },
) {
  await sql`UPDATE checkout_attempts SET status = ${f.status}, order_id = ${f.orderId ?? null}, error_code = ${f.errorCode ?? null}, updated_at = now()
            WHERE account_id = ${accountId} AND idempotency_key = ${key}`.execute(trx);
}

export async function deleteAttempt(trx: Trx, accountId: string, key: string) {
  await trx.deleteFrom('checkout_attempts').where('account_id', '=', accountId).where('idempotency_key', '=', key).execute();
}

/**
 * The card's lock for the event and the seats bought (confirmed orders) or being paid for (pending attempts) with it
 * for the event, counted after the lock is held (`onsale_lock_instrument_seats`): its keyed fingerprint, or the same
 * card's rows from before fingerprints were keyed (`legacy`, until they are keyed in place). With them, the hold's
 * seats and their price as the tickets' priceOfHold reads them (a seat listed on the exchange at its listed price):
 * one round trip for what took three (the lock, the count, the price). Run under the hold's lock.
 */
export async function lockInstrumentAndPriceHold(
  trx: Trx,
  eventId: string,
  fingerprint: string,
  legacy: string,
  holdId: string,
): Promise<{ used: number; seats: number; amountCents: number }> {
  const { rows } = await sql<{ used: number; seats: number; amount_cents: number }>`
    SELECT onsale_lock_instrument_seats(${eventId}::text, ${fingerprint}::text, ${legacy}::text) AS used, p.seats, p.amount_cents
    FROM (SELECT count(*)::int AS seats, coalesce(sum(coalesce(r.price_cents, pl.price_cents)), 0)::bigint AS amount_cents
          FROM seats s
          JOIN sections c ON c.event_id = s.event_id AND c.code = s.section_code
          JOIN price_levels pl ON pl.event_id = c.event_id AND pl.code = c.price_level
          LEFT JOIN LATERAL (SELECT price_cents FROM ticket_resales x
                             WHERE x.event_id = s.event_id AND x.seat_id = s.id AND x.status = 'LISTED' LIMIT 1) r ON true
          WHERE s.hold_id = ${holdId}) p`.execute(trx);
  const r = rows[0]!;
  return { used: r.used, seats: r.seats, amountCents: Number(r.amount_cents) };
}

/** Up to `limit` fingerprints still marked `legacy:` (orders and attempts), for keying in place. */
export async function legacyFingerprints(db: Db | Trx, prefix: string, limit: number): Promise<string[]> {
  const { rows } = await sql<{ f: string }>`
    SELECT f FROM (SELECT instrument_fingerprint AS f FROM orders WHERE instrument_fingerprint LIKE ${`${prefix}%`}
                   UNION SELECT instrument_fingerprint FROM checkout_attempts WHERE instrument_fingerprint LIKE ${`${prefix}%`}) x
    LIMIT ${limit}`.execute(db);
  return rows.map((r) => r.f);
}

/** Replaces marked fingerprints by their keyed values, in orders and attempts alike. */
export async function replaceFingerprints(db: Db | Trx, pairs: { from: string; to: string }[]): Promise<void> {
  if (pairs.length === 0) return;
  const from = pairs.map((p) => p.from);
  const to = pairs.map((p) => p.to);
  await sql`UPDATE orders o SET instrument_fingerprint = m.to_fp FROM unnest(${from}::text[], ${to}::text[]) AS m(from_fp, to_fp)
            WHERE o.instrument_fingerprint = m.from_fp`.execute(db);
  await sql`UPDATE checkout_attempts a SET instrument_fingerprint = m.to_fp FROM unnest(${from}::text[], ${to}::text[]) AS m(from_fp, to_fp)
            WHERE a.instrument_fingerprint = m.from_fp`.execute(db);
}

/**
 * The conditional transition HELD -> SOLD for every seat of the hold, all or nothing: if any seat is no longer
 * the hold's, nothing moves. Returns how many seats moved (0 or `quantity`). A general-admission hold (no seats)
 * moves its units from held to sold in their shards, on the same terms.
 */
export async function sellHoldSeats(trx: Trx, holdId: string, quantity: number): Promise<number> {
  const { rows } = await sql<{ id: number }>`
    WITH mine AS (SELECT event_id, id FROM seats WHERE hold_id = ${holdId} AND status = 'HELD' FOR UPDATE)
    UPDATE seats s SET status = 'SOLD', expires_at = NULL, version = s.version + 1
    FROM mine WHERE s.event_id = mine.event_id AND s.id = mine.id AND (SELECT count(*) FROM mine) = ${quantity}
    RETURNING s.id`.execute(trx);
  return rows.length > 0 ? rows.length : moveGaUnits(trx, [holdId], 'HELD', 'SOLD', quantity);
}

export async function insertOrder(
  trx: Trx,
  o: {
    holdId: string;
    eventId: string;
    accountId: string;
    key: string;
    seatCount: number;
    amountCents: number;
    instrument: string;
    reference: string;
  },
): Promise<string> {
  const r = await trx
    .insertInto('orders')
    .values({
      hold_id: o.holdId,
      event_id: o.eventId,
      account_id: o.accountId,
      idempotency_key: o.key,
      seat_count: o.seatCount,
      amount_cents: o.amountCents,
      instrument_fingerprint: o.instrument,
      payment_reference: o.reference,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return r.id;
}

export function findOrder(db: Db | Trx, id: string) {
  return db.selectFrom('orders').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findOrderByHold(db: Db | Trx, holdId: string) {
  return db.selectFrom('orders').selectAll().where('hold_id', '=', holdId).executeTakeFirst();
}

export async function setHoldStatus(trx: Trx, holdId: string, status: 'HELD' | 'PAYING' | 'PURCHASED') {
  await sql`UPDATE holds SET status = ${status}, updated_at = now() WHERE id = ${holdId}`.execute(trx);
}

/** Checkout attempts still PENDING well after their payment window: their process died mid-payment. */
export async function stalePendingAttempts(db: Db, olderThanSeconds: number, limit = 100) {
  const { rows } = await sql<{
    account_id: string;
    idempotency_key: string;
    hold_id: string;
    instrument_fingerprint: string;
    seat_count: number;
  }>`
    SELECT account_id, idempotency_key, hold_id, instrument_fingerprint, seat_count FROM checkout_attempts
    WHERE status = 'PENDING' AND created_at < now() - make_interval(secs => ${olderThanSeconds})
    ORDER BY created_at LIMIT ${limit}`.execute(db);
  return rows;
}

/** A pending attempt as recovery needs it. */
export interface PendingAttemptRow {
  account_id: string;
  idempotency_key: string;
  hold_id: string;
  instrument_fingerprint: string;
  seat_count: number;
}

/** How a process judges that another one is gone (see orphanedAttempts). */
export interface GoneRule {
  /** Its lease not renewed for this long: gone (a lost machine, a stalled process). Null: this rule is not used now. */
  silentSeconds: number | null;
  /**
   * Its lease's connection ended (the backend is gone: the process died and took its connections with it) and the
   * lease not renewed for this long since (a live process whose connection dropped opens another and renews first).
   */
  connectionGoneSeconds: number;
  /**
   * The connection rule is used only while this process's own lease connection has been up this long and renewed
   * within connectionGoneSeconds: after a database restart every connection is new, and every live process has
   * had the time to renew over its new one.
   */
  ownConnectionUpSeconds: number;
}

/**
 * A lease's connection is gone: no backend with its pid and start (a start hidden from this role counts as there).
 * `pg_stat_get_activity(pid)` builds that one backend's row; the `pg_stat_activity` view builds every backend's
 * and joins the catalogs for their names, which this needs none of.
 */
const connectionGone = sql<boolean>`(p.backend_pid IS NOT NULL AND NOT EXISTS (
  SELECT 1 FROM pg_stat_get_activity(p.backend_pid) s WHERE s.backend_start = p.backend_start OR s.backend_start IS NULL))`;

/**
 * PENDING attempts whose owner is gone: its lease ended (a clean stop), or its connection ended (killed) and it has
 * not renewed since, or it was not renewed for `silentSeconds`, or (attempts with no owner, or an owner with no
 * lease row) older than `unownedAfterSeconds`. Never this process's own.
 */
export async function orphanedAttempts(
  db: Db,
  self: string,
  rule: GoneRule,
  unownedAfterSeconds: number,
  limit = 100,
): Promise<PendingAttemptRow[]> {
  const { rows } = await sql<PendingAttemptRow>`
    WITH me AS MATERIALIZED (
      SELECT EXISTS (SELECT 1 FROM store_processes WHERE id = ${self} AND stopped_at IS NULL
                       AND backend_start < now() - make_interval(secs => ${rule.ownConnectionUpSeconds})
                       AND seen_at > now() - make_interval(secs => ${rule.connectionGoneSeconds})) AS steady)
    SELECT a.account_id, a.idempotency_key, a.hold_id, a.instrument_fingerprint, a.seat_count
    FROM checkout_attempts a LEFT JOIN store_processes p ON p.id = a.owner
    WHERE a.status = 'PENDING' AND a.owner IS DISTINCT FROM ${self}
      AND (p.stopped_at IS NOT NULL
        OR ((SELECT steady FROM me) AND p.seen_at < now() - make_interval(secs => ${rule.connectionGoneSeconds}) AND ${connectionGone})
        OR p.seen_at < now() - make_interval(secs => ${rule.silentSeconds}::float8)
        OR (p.id IS NULL AND a.created_at < now() - make_interval(secs => ${unownedAfterSeconds})))
    ORDER BY a.created_at LIMIT ${limit}`.execute(db);
  return rows;
}

/**
 * Whether the process `owner` is renewing its lease now: renewed within `withinSeconds`, not ended, and its lease's
 * connection still there. False for an owner with no lease row.
 */
export async function leaseIsLive(db: Db, owner: string, withinSeconds: number): Promise<boolean> {
  const { rows } = await sql<{ live: boolean }>`
    SELECT (p.stopped_at IS NULL AND p.seen_at >= now() - make_interval(secs => ${withinSeconds}) AND NOT ${connectionGone}) AS live
    FROM store_processes p WHERE p.id = ${owner}`.execute(db);
  return rows[0]?.live ?? false;
}

/**
 * Renews a store-API process's lease (taking it on the first call), naming the backend of the connection it runs on:
 * run it over the process's own lease connection.
 */
export async function renewLease(db: Db, id: string): Promise<void> {
  await sql`
    INSERT INTO store_processes (id, backend_pid, backend_start)
    SELECT ${id}, pid, backend_start FROM pg_stat_get_activity(pg_backend_pid())
    ON CONFLICT (id) DO UPDATE SET seen_at = now(), stopped_at = NULL, backend_pid = EXCLUDED.backend_pid, backend_start = EXCLUDED.backend_start`.execute(
    db,
  );
}

export async function endLease(db: Db, id: string): Promise<void> {
  await sql`UPDATE store_processes SET stopped_at = now() WHERE id = ${id}`.execute(db);
}

/** Forgets leases ended or silent for a day (their attempts were settled long ago). */
export async function pruneLeases(db: Db): Promise<void> {
  await sql`DELETE FROM store_processes WHERE coalesce(stopped_at, seen_at) < now() - interval '1 day'
            AND NOT EXISTS (SELECT 1 FROM checkout_attempts a WHERE a.owner = store_processes.id AND a.status = 'PENDING')`.execute(db);
}
