import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import type { FairnessMode } from '../events/fairness-modes.js';
import { signedOffSql } from '../events/signoff.service.js';

// SQL of the admission controller. Plain functions; the row-locking one takes a Transaction.

/** An event inside the controller's window, with its pacing settings and last reconciled availability. */
export interface ActiveEventRow {
  /** The queue's id: the event's own, or a presale tier's. */
  event_id: string;
  /** The event the queue sells. */
  owner_event_id: string;
  /** The tier whose seats the queue sells (the general sale's code for an event's own queue); null: no tiers. */
  allocation: string | null;
  /** The queue is the event's own (the general sale). */
  general: boolean;
  onsale_at: Date;
  starts_at: Date;
  /** The on-sale has opened (by the database clock). */
  open: boolean;
  fairness_mode: FairnessMode;
  capacity: number;
  target_sale_minutes: number;
  tickets_per_order: number;
  checkout_minutes: number;
  payment_tps: number;
  overbook_factor: number;
  inventory_state: 'AVAILABLE' | 'LAST_CHANCE' | 'SOLD_OUT';
  /** Seats not sold (available + held) at the last inventory reconciliation (every minute), null before the first. */
  reconciled_unsold: number | null;
  /** The event's fairness mode has a live sign-off (see events/signoff.service.ts: unsigned, it does not open). */
  signed_off: boolean;
  /** When the queue's pre-open cohort was sealed (it opened); null before. */
  sealed_at: Date | null;
  /** A rehearsal's event: how many times faster its clock runs (its fans poll that much sooner); null for a real sale. */
  rehearsal_time_scale: number | null;
}

/** Events whose on-sale window is active at `at` (the database's clock by default): from `beforeOpenSeconds` before `onsale_at` until `starts_at`. */
export async function findActiveEvents(db: Db | Trx, beforeOpenSeconds: number, at?: Date): Promise<ActiveEventRow[]> {
  const now = at ? sql`${at}::timestamptz` : sql`now()`;
  // Every event's own queue (selling its general tier when it has tiers), and each presale tier's queue in its window.
  const { rows } = await sql<ActiveEventRow>`
    SELECT * FROM (
      SELECT e.id AS event_id, e.id AS owner_event_id, g.code AS allocation, true AS general, e.onsale_at, e.starts_at, ${now} >= e.onsale_at AS open,
             e.fairness_mode, coalesce(g.capacity, e.capacity) AS capacity, e.target_sale_minutes,
             e.tickets_per_order, e.checkout_minutes, e.payment_tps, e.overbook_factor, q.inventory_state,
             CASE WHEN g.code IS NULL THEN r.available + r.held END AS reconciled_unsold,
             ${signedOffSql('e.id', 'e.fairness_mode')} AS signed_off, q.sealed_at, e.rehearsal_time_scale
      FROM events e
      JOIN queue_state q ON q.event_id = e.id
      LEFT JOIN allocations g ON g.event_id = e.id AND g.general
      LEFT JOIN inventory_reconciliations r ON r.event_id = e.id
      WHERE ${now} >= e.onsale_at - make_interval(secs => ${beforeOpenSeconds}) AND ${now} < e.starts_at
      UNION ALL
      SELECT a.queue_id, a.event_id, a.code, false, a.opens_at, a.closes_at, ${now} >= a.opens_at,
             a.fairness_mode, a.capacity, e.target_sale_minutes,
             e.tickets_per_order, e.checkout_minutes, e.payment_tps, e.overbook_factor, q.inventory_state, NULL,
             ${signedOffSql('e.id', 'e.fairness_mode')}, q.sealed_at, e.rehearsal_time_scale
      FROM allocations a
      JOIN events e ON e.id = a.event_id
      JOIN queue_state q ON q.event_id = a.queue_id
      WHERE NOT a.general AND a.rolled_at IS NULL
        AND ${now} >= a.opens_at - make_interval(secs => ${beforeOpenSeconds}) AND ${now} < a.closes_at) active
    ORDER BY onsale_at, event_id`.execute(db);
  return rows;
}

/** The queue_state row as the tick sees it, locked, with the database clock read after the lock was granted. */
export interface LockedQueueState {
  admitted_through: number;
  paused: boolean;
  rate_override_per_min: number | null;
  seed_hex: string;
  seed_commitment: string;
  cohort_size: number | null;
  sealed_at: Date | null;
  inventory_state: 'AVAILABLE' | 'LAST_CHANCE' | 'SOLD_OUT';
  sold_out_at: Date | null;
  heartbeat_at: Date | null;
  controller_id: string | null;
  rate_per_min: number;
  /** The controller's advances over its arrival window, [[epoch ms, positions]]. */
  recent_advances: [number, number][];
  /** The congestion window (fans inside), null before the first admitting tick; when it was last halved. */
  admit_window: number | null;
  admit_window_cut_at: Date | null;
  /** When the watermark last moved. */
  last_advance_at: Date | null;
  /** [[epoch ms, admittedThrough]], at most one point per 10 s over 30 minutes: when each position was reached (the edge's claim window reads it). */
  watermark_history: [number, number][];
  now: Date;
}

/**
 * Locks the event's queue_state row (FOR UPDATE) and reads the clock after the lock is granted, in one round
 * trip: the outer projection runs only once the CTE has returned the locked row.
 */
export async function lockQueueState(trx: Trx, eventId: string): Promise<LockedQueueState | undefined> {
  const { rows } = await sql<LockedQueueState>`
    WITH locked AS (
      SELECT admitted_through, paused, rate_override_per_min, seed_hex, seed_commitment, cohort_size, sealed_at,
             inventory_state, sold_out_at, heartbeat_at, controller_id, rate_per_min, recent_advances,
             admit_window, admit_window_cut_at, last_advance_at, watermark_history
      FROM queue_state WHERE event_id = ${eventId} FOR UPDATE)
    SELECT locked.*, clock_timestamp() AS now FROM locked`.execute(trx);
  return rows[0];
}

/** Bounds the tick's transaction: it never waits long for a lock (a failed tick is retried; the queue fails closed). */
export async function boundTickTransaction(trx: Trx): Promise<void> {
  // Both in one round trip (a text of two statements, sent on the simple protocol): the tick runs every second.
  await sql`SET LOCAL lock_timeout = '2s'; SET LOCAL statement_timeout = '10s'`.execute(trx);
}

/**
 * Seals the pre-open cohort: its size is the highest PREOPEN join index + 1 (0 when nobody joined before the
 * open). The SHARE lock on queue_entries waits for joins already writing and holds new ones back for the few
 * milliseconds of this transaction, so no pre-open join can commit after the size was read.
 */
export async function sealCohort(trx: Trx, eventId: string, at: Date): Promise<number> {
  await sql`LOCK TABLE queue_entries IN SHARE MODE`.execute(trx);
  const { rows } = await sql<{ cohort_size: number }>`
    SELECT coalesce(max(join_index) + 1, 0)::int AS cohort_size
    FROM queue_entries WHERE event_id = ${eventId} AND cohort = 'PREOPEN'`.execute(trx);
  const cohortSize = rows[0]?.cohort_size ?? 0;
  await sql`
    UPDATE queue_state SET cohort_size = ${cohortSize}, sealed_at = ${at}, seed_revealed_at = ${at}, updated_at = ${at}
    WHERE event_id = ${eventId}`.execute(trx);
  return cohortSize;
}

/** What the database can tell the controller about one event right now. Counts over recent windows. */
export interface LiveSignalsRow {
  /**
   * Checkouts of the event's holds over the last 2 minutes, and how many the platform failed: gateway failures
   * (counted by the store API; their attempts are forgotten), payments that could not complete and holds that
   * lapsed during payment. A card declined by its issuer is the fan's outcome and counts in neither.
   */
  checkout_total: number;
  checkout_failed: number;
  /** Holds made and refused for want of seats over the last 2 minutes (reported by the store-API instances). */
  holds_created_2m: number;
  holds_refused_2m: number;
  /** Fans (accounts) with a live hold on the queue's seats. */
  holding: number;
  /**
   * Fans who claimed their admission within the leaver time, hold nothing, have no order for the event and have not
   * let a hold made since their claim end unbought (released or lapsed: they left with it).
   */
  shopping: number;
  /** Claims recorded within the arrival window (whatever the fans did next). */
  claimed_recently: number;
  /**
   * Claims recorded within the positions' claim window (scope.claimWindowSeconds; 0 when it is not asked): set against
   * the positions passed within it, the fans let in who have not come yet (advance.ts admittedNotCome).
   */
  claimed_in_claim_window: number;
  /** Admission tokens issued and positions advanced in the 5 complete minutes before the current one. */
  tokens_5m: number;
  advanced_5m: number;
  /** Seats returned in the last minute: holds released (by updated_at) or lapsed (by expires_at), x quantity. */
  released_seats_1m: number;
  /** The highest join index of the event's queue, null when nobody joined. */
  max_join_index: number | null;
}

/** Which queue the live signals are about, beyond the event whose holds and orders it reads. */
export interface LiveSignalsScope {
  /** The queue (its admissions, joins and claims): the event's own, or a presale tier's. */
  queueId: string;
  /** The tier whose holds count as this queue's (null: the event has no tiers, every hold counts). */
  allocation: string | null;
  /** A fan who claimed admission this long ago and holds nothing is no longer counted as shopping (a leaver). */
  checkoutSeconds: number;
  /** Checkout attempts this recent count in the checkout error rate (default 120: two minutes). */
  checkoutErrorSeconds?: number;
  /** A claim this recent is counted against the positions the controller just passed. */
  arrivalSeconds: number;
  /** A claim this recent is counted against the positions passed within their claim window; absent: not counted (0). */
  claimWindowSeconds?: number;
}

/** `eventId`: the event (its holds, orders, checkouts); `scope`: the queue and the windows (the event's own queue by default). */
export async function liveSignals(db: Db | Trx, eventId: string, scope: LiveSignalsScope, at?: Date): Promise<LiveSignalsRow> {
  // The windows end at the tick's own time (an injected clock in tests), or the database's.
  const now = at ? sql`${at}::timestamptz` : sql`now()`;
  const queueId = scope.queueId;
  const tierHolds = scope.allocation === null ? sql`` : sql`AND h.allocation = ${scope.allocation}`;
  const { rows } = await sql<LiveSignalsRow>`
    SELECT c.checkout_total + g.gateway_failures_2m AS checkout_total, c.checkout_failed + g.gateway_failures_2m AS checkout_failed,
           m.holds_created_2m, m.holds_refused_2m, m.tokens_5m, m.advanced_5m,
           r.released_seats_1m, j.max_join_index, f.holding, s.shopping, n.claimed_recently, w.claimed_in_claim_window
    FROM (SELECT count(*)::int AS checkout_total,
                 count(*) FILTER (WHERE a.status = 'FAILED' AND a.error_code IS DISTINCT FROM 'PAYMENT_DECLINED')::int AS checkout_failed
          -- The window's attempts from their index, each one's event by its hold's key (a scalar subquery: the planner
          -- may not hash-join them against a scan of every hold of the event, which grows with the sale).
          FROM checkout_attempts a
          WHERE a.created_at > ${now} - make_interval(secs => ${scope.checkoutErrorSeconds ?? 120})
            AND (SELECT h.event_id FROM holds h WHERE h.id = a.hold_id) = ${eventId}) c,
         (SELECT coalesce(sum(holds_created) FILTER (WHERE minute >= date_trunc('minute', ${now}) - interval '1 minute'), 0)::int AS holds_created_2m,
                 coalesce(sum(holds_refused) FILTER (WHERE minute >= date_trunc('minute', ${now}) - interval '1 minute'), 0)::int AS holds_refused_2m,
                 coalesce(sum(admission_tokens_issued) FILTER (WHERE minute < date_trunc('minute', ${now})
                                                              AND minute >= date_trunc('minute', ${now}) - interval '5 minutes'), 0)::int AS tokens_5m,
                 coalesce(sum(watermark_advanced) FILTER (WHERE minute < date_trunc('minute', ${now})
                                                         AND minute >= date_trunc('minute', ${now}) - interval '5 minutes'), 0)::int AS advanced_5m
          FROM admission_minutes
          WHERE event_id = ${queueId} AND minute >= date_trunc('minute', ${now}) - interval '5 minutes') m,
         (SELECT coalesce(sum(checkout_gateway_failures), 0)::int AS gateway_failures_2m FROM admission_minutes
          WHERE event_id = ${eventId} AND minute >= date_trunc('minute', ${now}) - interval '1 minute') g,
         -- Each state from its own index (holds_released_idx, holds_live_idx, holds_expired_idx): the last minute's
         -- rows, not every hold of the event.
         (SELECT coalesce(sum(quantity), 0)::int AS released_seats_1m FROM (
            SELECT quantity FROM holds
            WHERE status = 'RELEASED' AND updated_at > ${now} - interval '1 minute' AND event_id = ${eventId}
            UNION ALL
            SELECT quantity FROM holds
            WHERE status IN ('HELD', 'PAYING') AND expires_at > ${now} - interval '1 minute' AND expires_at <= ${now} AND event_id = ${eventId}
            UNION ALL
            SELECT quantity FROM holds
            WHERE status = 'EXPIRED' AND expires_at > ${now} - interval '1 minute' AND expires_at <= ${now} AND event_id = ${eventId}) x) r,
         (SELECT max(join_index) AS max_join_index FROM queue_entries WHERE event_id = ${queueId}) j,
         -- Claims over the positions' claim window (minutes of them at a big sale): counted on the claims index alone.
         (SELECT count(*)::int AS claimed_in_claim_window FROM queue_entries
          WHERE ${scope.claimWindowSeconds ?? 0} > 0 AND event_id = ${queueId}
            AND claimed_at > ${now} - make_interval(secs => ${scope.claimWindowSeconds ?? 0})) w,
         -- Live holds come from the live-holds index (expires_at, HELD/PAYING only): a few thousand rows at most.
         (SELECT count(DISTINCT h.account_id)::int AS holding FROM holds h
          WHERE h.status IN ('HELD', 'PAYING') AND h.expires_at > ${now} AND h.event_id = ${eventId} ${tierHolds}) f,
         -- Fans who claimed within the leaver time, hold nothing, have no order for the event and have not let a hold
         -- made since their claim end unbought (released, or lapsed: they left with it, so their slot is back at once
         -- rather than the leaver time after their claim, up to the admission token's 10 minutes when fans' round
         -- trips are long). A fan who holds again is holding again. claimed_at is written by a batch up to a second
         -- late: holds from 5 s before it count, and an order at all (not "since the claim") means done. Anti-joins
         -- in the FROM list (not a count's FILTER, which runs them as a subplan per fan): the planner probes the
         -- indexes or hashes the event's rows, whichever is cheaper; one probe of the fan's holds for both rules.
         (SELECT count(*)::int AS shopping FROM queue_entries e
          WHERE e.event_id = ${queueId} AND e.claimed_at > ${now} - make_interval(secs => ${scope.checkoutSeconds})
            AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.event_id = ${eventId} AND h.account_id = e.account_id ${tierHolds}
                              AND ((h.status IN ('HELD', 'PAYING') AND h.expires_at > ${now})
                                   OR (h.created_at >= e.claimed_at - interval '5 seconds'
                                       AND (h.status IN ('RELEASED', 'EXPIRED') OR (h.status IN ('HELD', 'PAYING') AND h.expires_at <= ${now})))))
            AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.event_id = ${eventId} AND o.account_id = e.account_id
                              AND o.status = 'CONFIRMED')) s,
         (SELECT count(*)::int AS claimed_recently FROM queue_entries e
          WHERE e.event_id = ${queueId} AND e.claimed_at > ${now} - make_interval(secs => ${scope.arrivalSeconds})) n`.execute(db);
  return rows[0]!;
}

/** The tick's write: watermark, published rate, inventory state, heartbeat. `updated_at` moves only when a public number changed. */
export async function writeTick(
  trx: Trx,
  eventId: string,
  t: {
    advanced: number;
    ratePerMin: number;
    inventoryState: 'AVAILABLE' | 'LAST_CHANCE' | 'SOLD_OUT';
    soldOutAt: Date | null;
    now: Date;
    controllerId: string;
    changed: boolean;
    recentAdvances: [number, number][];
    constraint: string;
    reason: string;
    fansInside: number;
    cap: number;
    window: number | null;
    windowCutAt: Date | null;
    /** The tick's count of the event's seats by section, kept for the store's seat map; null: none kept (a presale tier's queue). */
    sectionCounts: { code: string; available: number; held: number; sold: number }[] | null;
  },
): Promise<number> {
  const counted = t.sectionCounts && JSON.stringify(t.sectionCounts.map((c) => [c.code, c.available, c.held, c.sold]));
  const { rows } = await sql<{ admitted_through: number }>`
    UPDATE queue_state
    SET admitted_through = admitted_through + ${t.advanced}, rate_per_min = ${t.ratePerMin},
        inventory_state = ${t.inventoryState}, sold_out_at = coalesce(sold_out_at, ${t.soldOutAt}::timestamptz),
        heartbeat_at = ${t.now}, controller_id = ${t.controllerId},
        recent_advances = ${JSON.stringify(t.recentAdvances)}::jsonb, controller_constraint = ${t.constraint},
        controller_reason = ${t.reason}, fans_inside = ${t.fansInside}, admit_cap = ${t.cap},
        admit_window = ${t.window}, admit_window_cut_at = ${t.windowCutAt},
        section_counts = ${counted}::jsonb, counted_at = ${counted ? t.now : null}::timestamptz,
        last_advance_at = CASE WHEN ${t.advanced} > 0 THEN ${t.now}::timestamptz ELSE last_advance_at END,
        watermark_history = CASE
          WHEN ${t.advanced} > 0 AND (jsonb_array_length(watermark_history) = 0
                                     OR ${t.now.getTime()}::bigint - (watermark_history->-1->>0)::bigint >= 10000)
          THEN coalesce((SELECT jsonb_agg(p) FROM jsonb_array_elements(watermark_history) p
                         WHERE (p->>0)::bigint >= ${t.now.getTime()}::bigint - 1800000), '[]'::jsonb)
               || jsonb_build_array(jsonb_build_array(${t.now.getTime()}::bigint, admitted_through + ${t.advanced}))
          ELSE watermark_history END,
        updated_at = CASE WHEN ${t.changed} THEN ${t.now}::timestamptz ELSE updated_at END
    WHERE event_id = ${eventId}
    RETURNING admitted_through`.execute(trx);
  return rows[0]!.admitted_through;
}

/** Adds the tick's advance to its minute and records the minute's admission rate. */
export async function upsertAdmissionMinute(trx: Trx, eventId: string, now: Date, advanced: number, ratePerMin: number): Promise<void> {
  await sql`
    INSERT INTO admission_minutes (event_id, minute, watermark_advanced, rate_per_min)
    VALUES (${eventId}, date_trunc('minute', ${now}::timestamptz), ${advanced}, ${ratePerMin})
    ON CONFLICT (event_id, minute) DO UPDATE
    SET watermark_advanced = admission_minutes.watermark_advanced + excluded.watermark_advanced,
        rate_per_min = excluded.rate_per_min`.execute(trx);
}
