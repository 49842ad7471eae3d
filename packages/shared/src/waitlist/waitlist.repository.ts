import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import type { CriteriaRow } from './criteria.js';
import type { AvailabilityCause, AvailabilityMode, AvailableSection, WaitlistOffersTable } from './waitlist.table.js';

// The waitlist's SQL: availability events, the seats set aside for the waitlist, and the fan-out jobs. Plain
// functions taking `db` or the caller's transaction; the rules are in availability.ts, offers.ts and fanout.ts (a claim's: claims/offers.ts).

/** What emitting availability needs to know of the event: its listing's mode, whether it sold out, section prices. */
export interface AvailabilityContext {
  listing_id: string;
  date: string;
  sold_out: boolean;
  mode: 'OFFER' | 'BROADCAST';
  offer_ttl_seconds: number;
  prices: { code: string; price_level: string; price_cents: number }[];
}

/** The event's context and the prices of `sectionCodes`, in one read. */
export async function findAvailabilityContext(trx: Trx, eventId: string, sectionCodes: string[]): Promise<AvailabilityContext | undefined> {
  const { rows } = await sql<AvailabilityContext>`
    SELECT e.listing_id, to_char(e.starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date,
           coalesce(q.sold_out_at IS NOT NULL, false) AS sold_out, l.waitlist_mode AS mode, l.offer_ttl_seconds,
           (SELECT coalesce(json_agg(json_build_object('code', s.code, 'price_level', s.price_level, 'price_cents', p.price_cents)), '[]')
            FROM sections s JOIN price_levels p ON p.event_id = s.event_id AND p.code = s.price_level
            WHERE s.event_id = e.id AND s.code = ANY(${sectionCodes}::text[])) AS prices
    FROM events e JOIN listings l ON l.id = e.listing_id LEFT JOIN queue_state q ON q.event_id = e.id
    WHERE e.id = ${eventId}`.execute(trx);
  return rows[0];
}

/**
 * Sets `seatIds` (AVAILABLE in this transaction) aside under a new hold of `accountId` for `ttlSeconds` by the
 * database's clock: the pool the waitlist hands out.
 */
export async function setAsidePool(
  trx: Trx,
  a: { holdId: string; eventId: string; accountId: string; seatIds: number[]; ttlSeconds: number },
): Promise<void> {
  await sql`
    INSERT INTO holds (id, event_id, account_id, section_code, quantity, status, expires_at)
    VALUES (${a.holdId}, ${a.eventId}, ${a.accountId}, NULL, ${a.seatIds.length}, 'WAITLIST', now() + make_interval(secs => ${a.ttlSeconds}))`.execute(
    trx,
  );
  await sql`
    UPDATE seats SET status = 'HELD', hold_id = ${a.holdId}, expires_at = now() + make_interval(secs => ${a.ttlSeconds}), version = version + 1
    WHERE event_id = ${a.eventId} AND id = ANY(${a.seatIds}::bigint[]) AND status = 'AVAILABLE'`.execute(trx);
}

/** The fan-out job of the availability event `id` (an SQL expression), added (or re-armed) where it is evaluated. */
function fanoutJob(id: RawBuilder<unknown>) {
  return sql`(graphile_worker.add_job('waitlist_fanout', json_build_object('availabilityId', ${id}::bigint),
                                      job_key := 'waitlist_fanout:' || ${id}::text, max_attempts := 25)).id AS job_id`;
}

/**
 * Writes an availability event and, unless `deferFanout`, its fan-out job, in one statement; returns its id. A
 * deferred event is marked for the relay (relayDeferredFanouts) instead.
 */
export async function insertAvailabilityEvent(
  trx: Trx,
  a: {
    listingId: string;
    eventId: string;
    cause: AvailabilityCause;
    performanceDate: string;
    sections: AvailableSection[];
    seatCount: number;
    poolHoldId: string | null;
    mode: AvailabilityMode;
    deferFanout: boolean;
  },
): Promise<number> {
  const { rows } = await sql<{ id: number }>`
    WITH av AS (
      INSERT INTO availability_events (listing_id, event_id, cause, performance_date, sections, seat_count, pool_hold_id, mode, fanout_enqueued)
      VALUES (${a.listingId}, ${a.eventId}, ${a.cause}, ${a.performanceDate}, ${JSON.stringify(a.sections)}::jsonb, ${a.seatCount}, ${a.poolHoldId}, ${a.mode}, ${!a.deferFanout})
      RETURNING id)
    SELECT av.id${a.deferFanout ? sql`` : sql`, ${fanoutJob(sql`av.id`)}`} FROM av`.execute(trx);
  return Number(rows[0]!.id);
}

/** Enqueues (or re-arms) the fan-out job of an availability event, in the caller's transaction. */
export async function enqueueFanoutJob(trx: Trx, availabilityId: number): Promise<void> {
  await sql`SELECT ${fanoutJob(sql`${availabilityId}::bigint`)}`.execute(trx);
}

/**
 * Enqueues the jobs of up to `limit` deferred availability events, oldest first, in one statement, marking them
 * enqueued; concurrent callers take disjoint rows (SKIP LOCKED). Returns how many it enqueued.
 */
export async function relayDeferredFanouts(db: Db, limit: number): Promise<number> {
  const { rows } = await sql<{ id: number }>`
    WITH due AS (SELECT id FROM availability_events WHERE NOT fanout_enqueued ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED),
    marked AS (UPDATE availability_events a SET fanout_enqueued = true FROM due WHERE a.id = due.id RETURNING a.id)
    SELECT marked.id, ${fanoutJob(sql`marked.id`)} FROM marked`.execute(db);
  return rows.length;
}

/** An offer row, with whether its deadline has passed by the database's clock. */
export type OfferRow = Selectable<WaitlistOffersTable> & { expired: boolean };

export async function lockOffer(trx: Trx, offerId: string): Promise<OfferRow | undefined> {
  const { rows } = await sql<OfferRow>`
    SELECT *, expires_at <= now() AS expired FROM waitlist_offers WHERE id = ${offerId} FOR UPDATE`.execute(trx);
  return rows[0] ? { ...rows[0], availability_id: Number(rows[0].availability_id), entry_id: Number(rows[0].entry_id) } : undefined;
}

export async function lockAvailabilityEvent(trx: Trx, availabilityId: number) {
  const { rows } = await sql<{ id: number; listing_id: string; event_id: string; mode: string; pool_hold_id: string | null }>`
    SELECT id, listing_id, event_id, mode, pool_hold_id FROM availability_events WHERE id = ${availabilityId} FOR UPDATE`.execute(trx);
  return rows[0];
}

/** The account's claim of a BROADCAST release, if it made one. */
export function findClaimedOffer(trx: Trx, availabilityId: number, accountId: string) {
  return trx
    .selectFrom('waitlist_offers')
    .select('id')
    .where('availability_id', '=', availabilityId)
    .where('account_id', '=', accountId)
    .where('status', '=', 'CLAIMED')
    .executeTakeFirst();
}

/** The account's entry on the listing's waitlist while it lives, with its criteria. */
export async function findLiveEntry(trx: Trx, listingId: string, accountId: string): Promise<(CriteriaRow & { id: number }) | undefined> {
  const { rows } = await sql<CriteriaRow & { id: number }>`
    SELECT id, date_from::text, date_to::text, max_price_cents, quantity, sections, price_levels FROM waitlist_entries
    WHERE listing_id = ${listingId} AND account_id = ${accountId} AND expires_at > now()`.execute(trx);
  return rows[0];
}

/** The record of a BROADCAST claim: an open offer of the seats the fan picked, until the claim token's expiry. */
export async function insertClaimRecord(
  trx: Trx,
  a: {
    offerId: string;
    availabilityId: number;
    listingId: string;
    eventId: string;
    entryId: number;
    accountId: string;
    quantity: number;
    expiresAtSeconds: number;
  },
): Promise<void> {
  await sql`
    INSERT INTO waitlist_offers (id, availability_id, listing_id, event_id, entry_id, account_id, quantity, status, expires_at)
    VALUES (${a.offerId}, ${a.availabilityId}, ${a.listingId}, ${a.eventId}, ${a.entryId}, ${a.accountId}, ${a.quantity}, 'OPEN', to_timestamp(${a.expiresAtSeconds}))`.execute(
    trx,
  );
}

/** The event's hold time and per-account limit, and the seats the account has (its row locked for the count). */
export async function lockAccountSeats(trx: Trx, eventId: string, accountId: string) {
  const { rows } = await sql<{ hold_ttl_seconds: number; per_account_seat_limit: number; used: number }>`
    SELECT hold_ttl_seconds, per_account_seat_limit, onsale_lock_account_seats(id, ${accountId}) AS used FROM events WHERE id = ${eventId}`.execute(
    trx,
  );
  return rows[0]!;
}

/** A fan's new hold of `quantity` seats (their account recorded first), for `ttlSeconds`; returns its expiry. */
export async function insertFanHold(
  trx: Trx,
  a: { holdId: string; eventId: string; accountId: string; quantity: number; ttlSeconds: number },
): Promise<Date> {
  await sql`INSERT INTO accounts (id) VALUES (${a.accountId}) ON CONFLICT DO NOTHING`.execute(trx);
  const { rows } = await sql<{ expires_at: Date }>`
    INSERT INTO holds (id, event_id, account_id, section_code, quantity, expires_at)
    VALUES (${a.holdId}, ${a.eventId}, ${a.accountId}, NULL, ${a.quantity}, now() + make_interval(secs => ${a.ttlSeconds}))
    RETURNING expires_at`.execute(trx);
  return rows[0]!.expires_at;
}

/** Moves the held seats of `fromHold` (all, or `seatIds` of them) into `toHold`; returns how many moved. */
export async function moveHeldSeats(
  trx: Trx,
  a: { fromHold: string; toHold: string; expiresAt: Date; seatIds: number[] | null },
): Promise<number> {
  const moved = await sql`
    UPDATE seats SET hold_id = ${a.toHold}, expires_at = ${a.expiresAt}, version = version + 1
    WHERE hold_id = ${a.fromHold} AND status = 'HELD' AND (${a.seatIds}::bigint[] IS NULL OR id = ANY(${a.seatIds}::bigint[]))`.execute(
    trx,
  );
  return Number(moved.numAffectedRows);
}

export async function setHoldSection(trx: Trx, holdId: string, section: string): Promise<void> {
  await sql`UPDATE holds SET section_code = ${section} WHERE id = ${holdId}`.execute(trx);
}

export async function releaseHold(trx: Trx, holdId: string): Promise<void> {
  await sql`UPDATE holds SET status = 'RELEASED', updated_at = now() WHERE id = ${holdId}`.execute(trx);
}

export async function markOfferClaimed(trx: Trx, offerId: string, holdId: string): Promise<void> {
  await sql`UPDATE waitlist_offers SET status = 'CLAIMED', claimed_hold_id = ${holdId}, decided_at = now() WHERE id = ${offerId}`.execute(
    trx,
  );
}

export async function markOfferDecided(trx: Trx, offerId: string, status: 'DECLINED' | 'EXPIRED'): Promise<void> {
  await sql`UPDATE waitlist_offers SET status = ${status}, decided_at = now() WHERE id = ${offerId}`.execute(trx);
}

export async function deleteEntry(trx: Trx, listingId: string, accountId: string): Promise<void> {
  await sql`DELETE FROM waitlist_entries WHERE listing_id = ${listingId} AND account_id = ${accountId}`.execute(trx);
}

/** How many offers of the release were made up to and including `offerId` (the fan's place in it). */
export async function offerPlace(trx: Trx, availabilityId: number, offerId: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM waitlist_offers WHERE availability_id = ${availabilityId} AND created_at <= (SELECT created_at FROM waitlist_offers WHERE id = ${offerId})`.execute(
    trx,
  );
  return rows[0]!.n;
}

export function findOpenOffers(trx: Trx, accountId: string, listingId: string) {
  return trx
    .selectFrom('waitlist_offers')
    .select('id')
    .where('account_id', '=', accountId)
    .where('listing_id', '=', listingId)
    .where('status', '=', 'OPEN')
    .execute();
}

/** The release's pool hold and its listing's offer time, the release locked. */
export async function lockReleasePool(trx: Trx, availabilityId: number): Promise<{ pool_hold_id: string; offer_ttl_seconds: number }> {
  const { rows } = await sql<{ pool_hold_id: string; offer_ttl_seconds: number }>`
    SELECT a.pool_hold_id, l.offer_ttl_seconds FROM availability_events a JOIN listings l ON l.id = a.listing_id
    WHERE a.id = ${availabilityId} FOR UPDATE OF a`.execute(trx);
  return rows[0]!;
}

/** An offer's reserved seats go back into the release's pool (kept `ttlSeconds` more); the reserve is released. */
export async function returnSeatsToPool(trx: Trx, a: { poolHoldId: string; reserveHoldId: string; ttlSeconds: number }): Promise<void> {
  await sql`UPDATE holds SET status = 'WAITLIST', expires_at = now() + make_interval(secs => ${a.ttlSeconds}), updated_at = now() WHERE id = ${a.poolHoldId}`.execute(
    trx,
  );
  await sql`
    UPDATE seats SET hold_id = ${a.poolHoldId}, expires_at = now() + make_interval(secs => ${a.ttlSeconds}), version = version + 1
    WHERE hold_id = ${a.reserveHoldId} AND status = 'HELD'`.execute(trx);
  await releaseHold(trx, a.reserveHoldId);
}

/** The release fans out again (from where it stopped). */
export async function resumeFanout(trx: Trx, availabilityId: number): Promise<void> {
  await sql`UPDATE availability_events SET status = 'FANNING_OUT', completed_at = NULL, updated_at = now() WHERE id = ${availabilityId}`.execute(
    trx,
  );
}

/** Tells the fan (in the inbox) that their offer lapsed. */
export async function insertOfferExpiredNotice(trx: Trx, offer: OfferRow): Promise<void> {
  await sql`INSERT INTO notifications (account_id, listing_id, availability_id, entry_id, kind, offer_id)
            VALUES (${offer.account_id}, ${offer.listing_id}, ${offer.availability_id}, ${offer.entry_id}, 'OFFER_EXPIRED', ${offer.id})`.execute(
    trx,
  );
}

// The fan-out.

/** A release being fanned out, with its listing's offer time and inline threshold. */
export interface AvailabilityRow {
  id: number;
  listing_id: string;
  event_id: string;
  mode: AvailabilityMode;
  status: 'PENDING' | 'FANNING_OUT' | 'DONE';
  pool_hold_id: string | null;
  performance_date: string;
  sections: AvailableSection[];
  offer_ttl_seconds: number;
  inline_threshold: number;
  created_at: Date;
  /** The fan-out's cursor: the last entry considered (created_at as text, to keep its microseconds), and its id. */
  cursor_at: string | null;
  cursor_id: number | null;
}

export async function lockAvailability(trx: Trx, id: number): Promise<AvailabilityRow | undefined> {
  const { rows } = await sql<AvailabilityRow>`
    SELECT a.id, a.listing_id, a.event_id, a.mode, a.status, a.pool_hold_id, a.performance_date::text AS performance_date, a.sections, a.created_at,
           a.cursor_created_at::text AS cursor_at, a.cursor_id,
           l.offer_ttl_seconds, l.fanout_inline_threshold AS inline_threshold
    FROM availability_events a JOIN listings l ON l.id = a.listing_id
    WHERE a.id = ${id} FOR UPDATE OF a`.execute(trx);
  return rows[0];
}

/**
 * The match predicate over one listing's partition, in FIFO order after the availability event's cursor, against
 * the sections in the `secs` CTE (see secsCte). The rule is criteriaMatch's, property-tested against it. The listing
 * and the cursor are bound as values (not read from a join), so the planner walks the primary key
 * (listing_id, created_at, id) in order and stops at the page's LIMIT instead of sorting the rest of the listing.
 */
function matchSql(av: AvailabilityRow) {
  return sql`
  w.listing_id = ${av.listing_id}::uuid AND w.expires_at > now()
  AND (w.date_from IS NULL OR w.date_from <= ${av.performance_date}::date)
  AND (w.date_to IS NULL OR w.date_to >= ${av.performance_date}::date)
  AND (w.created_at, w.id) > (coalesce(${av.cursor_at}::timestamptz, '-infinity'::timestamptz), coalesce(${av.cursor_id}::bigint, 0))
  AND EXISTS (SELECT 1 FROM secs s
              WHERE (w.sections IS NULL OR s.section = ANY(w.sections))
                AND (w.price_levels IS NULL OR s.price_level = ANY(w.price_levels))
                AND (w.max_price_cents IS NULL OR s.price_cents <= w.max_price_cents)
                AND s.longest_run >= w.quantity)`;
}

/** The sections an availability event offers, as a small materialized relation the match predicate reads. */
function secsCte(sections: Pick<AvailableSection, 'section' | 'priceLevel' | 'priceCents' | 'longestRun'>[]) {
  return sql`secs AS MATERIALIZED (
    SELECT * FROM unnest(${sections.map((x) => x.section)}::text[], ${sections.map((x) => x.priceLevel)}::text[],
                         ${sections.map((x) => x.priceCents)}::int[], ${sections.map((x) => x.longestRun)}::int[])
      AS t(section, price_level, price_cents, longest_run))`;
}

/** How many entries match the release, counting no further than `cap`. */
export async function countMatches(trx: Trx, av: AvailabilityRow, cap: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    WITH ${secsCte(av.sections)}
    SELECT count(*)::int AS n FROM (
      SELECT 1 FROM waitlist_entries w WHERE ${matchSql(av)} LIMIT ${cap}) m`.execute(trx);
  return rows[0]!.n;
}

/**
 * One page of a BROADCAST or ON_SALE fan-out in one statement: the next `limit` matches after the cursor get a
 * notification of `kind` (at most once per entry), and the cursor, the counts and the status move. Returns the
 * new notifications' ids and how many matched.
 */
export async function notifyMatchesPage(
  trx: Trx,
  av: AvailabilityRow,
  limit: number,
  kind: 'ON_SALE' | 'BROADCAST',
): Promise<{ ids: number[]; n: number }> {
  const { rows } = await sql<{ ids: number[]; n: number }>`
    WITH ${secsCte(av.sections)},
    page AS (
      SELECT w.created_at, w.id, w.account_id FROM waitlist_entries w
      WHERE ${matchSql(av)}
      ORDER BY w.created_at, w.id LIMIT ${limit}),
    ins AS (
      INSERT INTO notifications (account_id, listing_id, availability_id, entry_id, kind)
      SELECT p.account_id, ${av.listing_id}::uuid, ${av.id}::bigint, p.id, ${kind} FROM page p ORDER BY p.created_at, p.id
      ON CONFLICT DO NOTHING
      RETURNING id),
    last AS (SELECT created_at, id FROM page ORDER BY created_at DESC, id DESC LIMIT 1),
    upd AS (
      UPDATE availability_events a SET
        cursor_created_at = coalesce((SELECT created_at FROM last), a.cursor_created_at),
        cursor_id = coalesce((SELECT id FROM last), a.cursor_id),
        matched = a.matched + (SELECT count(*) FROM page),
        notified = a.notified + (SELECT count(*) FROM ins),
        status = CASE WHEN (SELECT count(*) FROM page) < ${limit} THEN 'DONE' ELSE 'FANNING_OUT' END,
        completed_at = CASE WHEN (SELECT count(*) FROM page) < ${limit} THEN now() END,
        updated_at = now()
      WHERE a.id = ${av.id})
    SELECT ARRAY(SELECT id FROM ins ORDER BY id) AS ids, (SELECT count(*) FROM page)::int AS n`.execute(trx);
  return rows[0]!;
}

/** Keeps the pool alive while offers are being made from it (seats and hold together). */
export async function renewPool(trx: Trx, poolHoldId: string, ttlSeconds: number): Promise<void> {
  await sql`UPDATE holds SET status = 'WAITLIST', expires_at = now() + make_interval(secs => ${ttlSeconds}), updated_at = now() WHERE id = ${poolHoldId}`.execute(
    trx,
  );
  await sql`UPDATE seats SET expires_at = now() + make_interval(secs => ${ttlSeconds}) WHERE hold_id = ${poolHoldId} AND status = 'HELD'`.execute(
    trx,
  );
}

/** The pool's seats go back on open sale. */
export async function returnPoolToSale(trx: Trx, poolHoldId: string): Promise<void> {
  await sql`UPDATE seats SET status = 'AVAILABLE', hold_id = NULL, expires_at = NULL, version = version + 1
            WHERE hold_id = ${poolHoldId} AND status = 'HELD'`.execute(trx);
}

export async function markReleaseDone(trx: Trx, availabilityId: number): Promise<void> {
  await sql`UPDATE availability_events SET status = 'DONE', completed_at = now(), updated_at = now() WHERE id = ${availabilityId}`.execute(
    trx,
  );
}

/** The next `limit` matches of an OFFER release after its cursor that have not been told of it, in FIFO order. */
export async function findOfferCandidates(
  trx: Trx,
  av: AvailabilityRow,
  summary: Pick<AvailableSection, 'section' | 'priceLevel' | 'priceCents' | 'longestRun'>[],
  limit: number,
): Promise<(CriteriaRow & { id: number; cursor_at: string; account_id: string })[]> {
  const { rows } = await sql<CriteriaRow & { id: number; cursor_at: string; account_id: string }>`
    WITH ${secsCte(summary)}
    SELECT w.id, w.created_at::text AS cursor_at, w.account_id, w.date_from::text AS date_from, w.date_to::text AS date_to,
           w.max_price_cents, w.quantity, w.sections, w.price_levels
    FROM waitlist_entries w
    WHERE ${matchSql(av)}
      AND NOT EXISTS (SELECT 1 FROM notifications n WHERE n.availability_id = ${av.id} AND n.entry_id = w.id)
    ORDER BY w.created_at, w.id LIMIT ${limit}`.execute(trx);
  return rows;
}

/**
 * An offer to one fan: `seatIds` move from the pool into a reserve hold (kept `reserveSeconds`), the offer lives
 * the listing's offer time, and its lapse is scheduled as a job at its deadline.
 */
export async function reserveOffer(
  trx: Trx,
  av: AvailabilityRow,
  a: {
    offerId: string;
    reserveId: string;
    accountId: string;
    fan: { entryId: number; accountId: string };
    sectionCode: string;
    seatIds: number[];
    poolHoldId: string;
    reserveSeconds: number;
  },
): Promise<void> {
  await sql`
    INSERT INTO holds (id, event_id, account_id, section_code, quantity, status, expires_at)
    VALUES (${a.reserveId}, ${av.event_id}, ${a.accountId}, ${a.sectionCode}, ${a.seatIds.length}, 'WAITLIST',
            now() + make_interval(secs => ${a.reserveSeconds}))`.execute(trx);
  await sql`
    UPDATE seats SET hold_id = ${a.reserveId}, expires_at = now() + make_interval(secs => ${a.reserveSeconds}), version = version + 1
    WHERE hold_id = ${a.poolHoldId} AND status = 'HELD' AND id = ANY(${a.seatIds}::bigint[])`.execute(trx);
  await sql`
    INSERT INTO waitlist_offers (id, availability_id, listing_id, event_id, entry_id, account_id, quantity, reserve_hold_id, expires_at)
    VALUES (${a.offerId}, ${av.id}, ${av.listing_id}, ${av.event_id}, ${a.fan.entryId}, ${a.fan.accountId}, ${a.seatIds.length}, ${a.reserveId},
            now() + make_interval(secs => ${av.offer_ttl_seconds}))`.execute(trx);
  await sql`
    SELECT graphile_worker.add_job('waitlist_offer_expire', json_build_object('offerId', ${a.offerId}::text),
      run_at := now() + make_interval(secs => ${av.offer_ttl_seconds}), job_key := ${`waitlist_offer_expire:${a.offerId}`}, max_attempts := 25)`.execute(
    trx,
  );
}

/** The inbox notices of new offers, in the order of `offerIds`; returns their ids. */
export async function insertOfferNotices(trx: Trx, offerIds: string[]): Promise<number[]> {
  const { rows } = await sql<{ id: number }>`
    INSERT INTO notifications (account_id, listing_id, availability_id, entry_id, kind, offer_id)
    SELECT o.account_id, o.listing_id, o.availability_id, o.entry_id, 'OFFER', o.id
    FROM unnest(${offerIds}::uuid[]) WITH ORDINALITY AS t(id, ord) JOIN waitlist_offers o ON o.id = t.id
    ORDER BY t.ord
    RETURNING id`.execute(trx);
  return rows.map((r) => Number(r.id));
}

export async function advanceOfferCursor(
  trx: Trx,
  availabilityId: number,
  a: { cursorAt: string; cursorId: number; matched: number; notified: number },
): Promise<void> {
  await sql`UPDATE availability_events SET cursor_created_at = ${a.cursorAt}::timestamptz, cursor_id = ${a.cursorId},
              matched = matched + ${a.matched}, notified = notified + ${a.notified}, status = 'FANNING_OUT', updated_at = now()
            WHERE id = ${availabilityId}`.execute(trx);
}

/** A listing's waitlist entries: live, and expired but not yet deleted. */
export async function countListingEntries(db: Db | Trx, listingId: string): Promise<{ live: number; expired: number }> {
  const { rows } = await sql<{ live: number; expired: number }>`
    SELECT count(*) FILTER (WHERE expires_at > now())::int AS live, count(*) FILTER (WHERE expires_at <= now())::int AS expired
    FROM waitlist_entries WHERE listing_id = ${listingId}`.execute(db);
  return rows[0]!;
}

/** A listing's latest availability events, newest first: what came back, how it went out, how many were told. */
export async function recentAvailability(db: Db | Trx, listingId: string, limit: number) {
  const { rows } = await sql<{
    id: number;
    eventId: string;
    cause: AvailabilityCause;
    mode: AvailabilityMode;
    seats: number;
    status: string;
    matched: number;
    notified: number;
    createdAt: Date;
    completedAt: Date | null;
  }>`
    SELECT id, event_id AS "eventId", cause, mode, seat_count AS "seats", status, matched, notified, created_at AS "createdAt", completed_at AS "completedAt"
    FROM availability_events WHERE listing_id = ${listingId} ORDER BY id DESC LIMIT ${limit}`.execute(db);
  return rows;
}
