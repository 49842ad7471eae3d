import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import pg from 'pg';
import type pino from 'pino';
import type { Db, Trx } from '../db/connect.js';
import { isConnectionLost, markDatabaseFault } from '../db/faults.js';
import { insertAudit } from '../audit/index.js';
import { awaitsSignOff } from '../events/signoff.service.js';
import { foldInventoryCounts, getInventoryCounts } from '../inventory/inventory.service.js';
import { DEFAULT_HEARTBEAT_STALE_MS, POSITION_CLAIM_WINDOW_MS } from '../queue/edge.js';
import {
  advanceWatermark,
  admittedNotCome,
  arrivalWindowMs,
  arrivingFans,
  claimRatioOf,
  effectivePaymentTps,
  eventBudgetShares,
  fewSeatsLeft,
  inventoryStateOf,
  recordAdvance,
  type InventoryState,
} from './advance.js';
import * as repo from './controller.repository.js';
import type { ActiveEventRow } from './controller.repository.js';
import { planAdmission, type AdmissionPlan } from './plan.js';
import { nextAdmissionRate, type AdmissionConstraint, type AdmissionRate } from './rate.js';
import { readStoreLoad } from '../queue/store-load.service.js';
import {
  BaseLag,
  lagTargetMs,
  leaverSeconds,
  nextWindow,
  queuedBeforeStoreMs,
  storeLagMs,
  tailGapMs,
  type StoreLoad,
  type WindowStep,
} from './window.js';

/** The controller works on an event from this long before its open until it starts. */
export const ADMISSION_WINDOW_BEFORE_OPEN_MS = 2 * 60 * 60 * 1000;
/**
 * The longest interval one tick makes up for. Beyond the heartbeat's staleness limit every status already read
 * PAUSED, so time without a controller is not paid back in a burst.
 */
export const MAX_TICK_ELAPSED_MS = DEFAULT_HEARTBEAT_STALE_MS;
/** How many events one controller ticks at once (each tick is one short transaction on a pooled connection). */
export const TICK_CONCURRENCY = 4;

/**
 * The pass interval while an event it leads is in LAST_CHANCE (ms, when shorter than tickMs): the sell-out is seen
 * within a quarter second of the last sale, not a second (issue 28: sold-out propagation's 2 s p99).
 */
export const NEAR_END_TICK_MS = 250;

/** What the tick did for one event. `reason` and `constraint` say why it admitted what it did (kept for the war room). */
export type EventTickOutcome =
  | {
      eventId: string;
      status: 'ticked';
      /**
       * BEFORE_OPEN, AWAITING_SIGNOFF (the on-sale time has come but the fairness mode is not signed off: the queue
       * does not open), PAUSED and SOLD_OUT only keep the heartbeat; ADMITTING advanced (or could have).
       */
      phase: 'BEFORE_OPEN' | 'AWAITING_SIGNOFF' | 'PAUSED' | 'SOLD_OUT' | 'ADMITTING';
      advanced: number;
      admittedThrough: number;
      /** Admits per minute (real fans) from nextAdmissionRate; 0 unless ADMITTING. */
      ratePerMinute: number;
      /** Positions per minute the watermark moves (ratePerMinute / claimRatio): what queue_state.rate_per_min publishes. */
      watermarkPerMinute: number;
      /** What bound the admission on this tick (the phase's own code when not ADMITTING: paused, sold_out, before_open). */
      constraint: AdmissionConstraint | 'paused' | 'before_open' | 'awaiting_signoff';
      /** The constraint in words, starting with its code; kept in queue_state.controller_reason for the war room. */
      reason: string;
      cap: number;
      /** Fans counted inside (able to buy), by why: the cap is the plausible fans less their total. */
      inside: FansInside;
      /** Fans let in at once because the store was empty (nextAdmissionRate's admitAtOnce), 0 or 1. */
      admitAtOnce: number;
      claimRatio: number;
      /** The congestion window after this tick (fans inside the store follows now), and what the store reported. */
      window: number | null;
      storeLagMs: number;
      /** How long the fans let in wait before the store answers them, beyond their seat choice (window.ts queuedBeforeStoreMs). */
      queuedMs: number;
      /** A fan who collected an admission and has not held within this many seconds is a leaver (not inside). */
      leaverSeconds: number;
      /** How long fans whose holds reached the store had waited since their admission (window.ts leaverSeconds), ms. */
      admittedWaitMs: number;
      inventoryState: InventoryState;
      available: number;
      held: number;
      /** Set on the tick that sealed the pre-open cohort. */
      sealedCohortSize?: number;
      /** True on the tick that saw the first sell-out. */
      soldOut: boolean;
      carry: number;
    }
  | { eventId: string; status: 'fenced'; lastTickBy: string | null; lastTickAgoMs: number }
  | { eventId: string; status: 'missing' }
  | { eventId: string; status: 'failed'; error: string };

/** Fans the controller counts as inside: they can still buy. */
export interface FansInside {
  /** Fans with a live hold on the queue's seats. */
  holding: number;
  /** Fans who claimed admission within the checkout time and hold nothing yet (a fan who left gives the slot back after it). */
  shopping: number;
  /** Fans on their way to claim a position passed within the arrival window (see arrivingFans). */
  arriving: number;
  /** holding + shopping + arriving: what the window weighs (the fans loading the store or about to). */
  total: number;
  /**
   * Not in `total`: fans let in who have not come yet and may still come within their position's claim window
   * (advance.ts admittedNotCome). Set against the seats left only (the plausible seats' cap), so the end of a sale
   * does not let in more fans than the seats left take while those ahead of them are still to come.
   */
  notCome: number;
}

export interface EventTickContext {
  event: ActiveEventRow;
  controllerId: string;
  tickMs: number;
  /** This event's share of the shared payment budget, buyers per minute; undefined uses its own payment TPS. */
  budgetBuyersPerMinute?: number;
  /** The fraction of a position carried from this controller's previous tick. */
  carry?: number;
  /** The store's base lag per event, as this controller saw it (window.ts BaseLag); absent: the latency target alone. */
  baseLag?: BaseLag;
  /** The fans who collected their admission and hold nothing yet (shopping) at this controller's previous tick of the event; absent: 0. */
  notHolding?: number;
  /**
   * The tick's time. Unset: the database's clock, read once the queue row is locked (one clock for every process).
   * Tests pass an injected clock's time instead of waiting for the wall clock.
   */
  now?: Date;
}

const actorOf = (controllerId: string) => `admission-controller:${controllerId}`;
/** A presale tier's queue names its tier (and queue id) in the event's audit entries. */
const tierOf = (e: ActiveEventRow) => (e.general ? {} : { tier: e.allocation, queueId: e.event_id });

/**
 * One event's tick, in one short transaction: lock the event's queue_state row, skip when another controller
 * ticked it less than tickMs/2 ago (the fence that makes a take-over never double-advance), seal the pre-open
 * cohort at the open (cohort size, seed revealed, audited), set the inventory state from live counts (first
 * sell-out audited), compute the rate (plan on the remaining seats with the event's payment budget share, then
 * nextAdmissionRate on live signals), advance the watermark (not while paused, before the open or sold out),
 * write the heartbeat (always), and add the advance to the minute's admission row.
 */
export async function tickEvent(db: Db, ctx: EventTickContext): Promise<EventTickOutcome> {
  const e = ctx.event;
  return db.transaction().execute(async (trx): Promise<EventTickOutcome> => {
    await repo.boundTickTransaction(trx);
    const q = await repo.lockQueueState(trx, e.event_id);
    if (!q) return { eventId: e.event_id, status: 'missing' };
    const now = ctx.now ?? q.now;
    const sinceLastMs = q.heartbeat_at ? now.getTime() - q.heartbeat_at.getTime() : Infinity;
    if (q.controller_id !== ctx.controllerId && sinceLastMs < ctx.tickMs / 2)
      return { eventId: e.event_id, status: 'fenced', lastTickBy: q.controller_id, lastTickAgoMs: sinceLastMs };
    const elapsedMs = Number.isFinite(sinceLastMs) ? Math.min(Math.max(0, sinceLastMs), MAX_TICK_ELAPSED_MS) : 0;
    const actor = actorOf(ctx.controllerId);

    // An event whose fairness mode is not signed off does not open: no seal, no reveal, nobody admitted.
    const timeHasCome = now.getTime() >= e.onsale_at.getTime();
    const open = timeHasCome && !awaitsSignOff({ signedOff: e.signed_off, sealedAt: q.sealed_at });
    const read = await readTick(trx, e, q, now, actor, ctx.notHolding ?? 0);
    const decided = decide(e, q, ctx, read, now, elapsedMs);
    // Sealing holds joins back (see sealCohort), so it comes last, just before the commit.
    const sealedCohortSize = open && q.sealed_at === null ? await seal(trx, e, q, now, actor) : undefined;
    const phase = phaseOf(open, timeHasCome, q.paused, decided.inventoryState);
    const { rate, step } = decided;
    const { advanced, carry } =
      phase === 'ADMITTING'
        ? advanceWatermark({
            ratePerMinute: rate.ratePerMinute,
            elapsedMs,
            claimRatio: read.claimRatio,
            carry: ctx.carry ?? 0,
            cap: rate.cap,
            room: decided.highestPosition - q.admitted_through,
            admitAtOnce: rate.admitAtOnce,
          })
        : { advanced: 0, carry: 0 };
    const constraint = phase === 'ADMITTING' ? rate.constraint : PHASE_CONSTRAINT[phase];
    const reason = phase === 'ADMITTING' ? rate.reason : `${phase.toLowerCase()}: ${rate.reason}`;
    const ratePerMinute = phase === 'ADMITTING' ? rate.ratePerMinute : 0;
    const watermarkPerMinute = Math.round((ratePerMinute / read.claimRatio) * 1e6) / 1e6;
    // The window moves only while the queue admits: a pause or a sell-out keeps it where it was.
    const window = phase === 'ADMITTING' && step ? step.window : q.admit_window;
    const admittedThrough = await repo.writeTick(trx, e.event_id, {
      advanced,
      ratePerMin: watermarkPerMinute,
      inventoryState: decided.inventoryState,
      soldOutAt: read.soldOut ? now : null,
      now,
      controllerId: ctx.controllerId,
      changed:
        advanced > 0 ||
        Math.abs(watermarkPerMinute - q.rate_per_min) > 1e-9 ||
        decided.inventoryState !== q.inventory_state ||
        sealedCohortSize !== undefined,
      recentAdvances: recordAdvance(q.recent_advances ?? [], now.getTime(), advanced, read.windowMs),
      constraint,
      reason,
      fansInside: read.inside.total,
      cap: rate.cap,
      window,
      windowCutAt: phase === 'ADMITTING' && step?.cutAtMs ? new Date(step.cutAtMs) : q.admit_window_cut_at,
      // The whole event's count (not a tier's share): what the store's seat map serves instead of counting again.
      sectionCounts: e.allocation ? null : read.counts.sections,
    });
    if (open && (phase !== 'SOLD_OUT' || advanced > 0)) await repo.upsertAdmissionMinute(trx, e.event_id, now, advanced, ratePerMinute);

    return {
      eventId: e.event_id,
      status: 'ticked',
      phase,
      advanced,
      admittedThrough,
      ratePerMinute,
      watermarkPerMinute,
      constraint,
      reason,
      cap: rate.cap,
      inside: read.inside,
      admitAtOnce: phase === 'ADMITTING' ? rate.admitAtOnce : 0,
      claimRatio: read.claimRatio,
      window,
      storeLagMs: read.lagMs,
      queuedMs: read.queuedMs,
      leaverSeconds: read.leaver,
      admittedWaitMs: read.storeLoad.admittedWaitMs ?? 0,
      inventoryState: decided.inventoryState,
      available: read.counts.available,
      held: read.counts.held,
      ...(sealedCohortSize !== undefined ? { sealedCohortSize } : {}),
      soldOut: read.soldOut,
      carry,
    };
  });
}

type TickPhase = Extract<EventTickOutcome, { status: 'ticked' }>['phase'];

/** The phase of the tick: not open (before the open, or awaiting the sign-off), paused, sold out, or admitting. */
function phaseOf(open: boolean, timeHasCome: boolean, paused: boolean, inventoryState: InventoryState): TickPhase {
  if (!open) return timeHasCome ? 'AWAITING_SIGNOFF' : 'BEFORE_OPEN';
  if (paused) return 'PAUSED';
  return inventoryState === 'SOLD_OUT' ? 'SOLD_OUT' : 'ADMITTING';
}

/** The constraint a tick that does not admit reports: its phase's own code. */
const PHASE_CONSTRAINT = {
  BEFORE_OPEN: 'before_open',
  AWAITING_SIGNOFF: 'awaiting_signoff',
  PAUSED: 'paused',
  SOLD_OUT: 'sold_out',
} as const satisfies Record<Exclude<TickPhase, 'ADMITTING'>, string>;

/** What the tick reads inside its transaction: the inventory (the first sell-out audited), the store's load, the live signals, the fans inside. */
async function readTick(trx: Trx, e: ActiveEventRow, q: repo.LockedQueueState, now: Date, actor: string, notHolding: number) {
  // The seats' kept counts take in the last second's changes (one statement, no scan of the seats), then are read.
  await foldInventoryCounts(trx, e.owner_event_id);
  const counts = await getInventoryCounts(
    trx,
    e.owner_event_id,
    e.capacity,
    e.allocation ? { code: e.allocation, general: e.general } : undefined,
  );
  const soldOutState = inventoryStateOf(counts);
  const soldOut = soldOutState === 'SOLD_OUT' && q.sold_out_at === null;
  if (soldOut)
    await insertAudit(trx, {
      actor,
      action: 'queue.sold_out',
      eventId: e.owner_event_id,
      details: { soldOutAt: now.toISOString(), capacity: counts.capacity, sold: counts.sold, ...tierOf(e) },
    });
  const windowMs = arrivalWindowMs(e.rehearsal_time_scale);
  const scale = e.rehearsal_time_scale;
  // A sold-out queue admits nobody: its tick keeps the heartbeat and the state, and reads nothing else (a product
  // with many finished sales ticks each of them every second).
  const quiet = soldOutState === 'SOLD_OUT';
  const storeLoad: StoreLoad = quiet ? NO_LOAD : toStoreLoad(await readStoreLoad(trx, e.owner_event_id, now));
  const lagMs = storeLagMs(storeLoad);
  const queuedMs = queuedBeforeStoreMs(notHolding, storeLoad, scale);
  const leaver = leaverSeconds(Math.round(e.checkout_minutes * 60), scale, lagMs, queuedMs, storeLoad.admittedWaitMs ?? 0);
  const signals = quiet
    ? NO_SIGNALS
    : await repo.liveSignals(
        trx,
        e.owner_event_id,
        {
          queueId: e.event_id,
          allocation: e.allocation,
          checkoutSeconds: leaver,
          checkoutErrorSeconds: checkoutErrorSeconds(scale),
          arrivalSeconds: windowMs / 1000,
          claimWindowSeconds: POSITION_CLAIM_WINDOW_MS / 1000,
        },
        now,
      );
  const claimRatio = claimRatioOf(signals.tokens_5m, signals.advanced_5m);
  // Every position passed within the arrival window is a fan owed its turn until then, whatever share of positions
  // the last minutes' claims suggest: that share lags a rate that jumps (the positions just passed have not been
  // claimed yet, their fans told to come back up to 30 s later), and counting only it gave away the slots of fans
  // polling as told (controller-store.test.ts, "a turn a fan keeps"). A place nobody uses is given back after the window.
  const arriving = arrivingFans(q.recent_advances ?? [], now.getTime(), 1, signals.claimed_recently, windowMs);
  const notCome = quiet
    ? 0
    : admittedNotCome({
        history: q.watermark_history ?? [],
        admittedThrough: q.admitted_through,
        nowMs: now.getTime(),
        claimWindowMs: POSITION_CLAIM_WINDOW_MS,
        claimedInClaimWindow: signals.claimed_in_claim_window,
        arriving,
      });
  const inside: FansInside = {
    holding: signals.holding,
    shopping: signals.shopping,
    arriving,
    total: signals.holding + signals.shopping + arriving,
    notCome,
  };
  return { counts, soldOut, windowMs, storeLoad, lagMs, queuedMs, leaver, signals, claimRatio, inside };
}

/** The plan on the seats left, the window's step on the store's load, the inventory state and the rate. */
function decide(
  e: ActiveEventRow,
  q: repo.LockedQueueState,
  ctx: EventTickContext,
  r: Awaited<ReturnType<typeof readTick>>,
  now: Date,
  elapsedMs: number,
) {
  const { counts, signals, inside } = r;
  const baseLagMs = ctx.baseLag ? ctx.baseLag.note(e.event_id, now.getTime(), r.lagMs) : null;
  const plan = planOf(e, counts, ctx.budgetBuyersPerMinute, q.sealed_at ? (now.getTime() - q.sealed_at.getTime()) / 60_000 : 0);
  const step: WindowStep | null =
    plan === null
      ? null
      : nextWindow({
          window: q.admit_window,
          cutAtMs: q.admit_window_cut_at?.getTime() ?? null,
          nowMs: now.getTime(),
          elapsedMs,
          plannedInside: plan.concurrentShoppers,
          inside: inside.total,
          holding: inside.holding,
          plausibleFans: Math.ceil(((counts.available + counts.held) / e.tickets_per_order) * e.overbook_factor),
          load: r.storeLoad,
          baseLagMs,
          clockScale: e.rehearsal_time_scale,
        });
  const highestPosition = signals.max_join_index === null ? 0 : signals.max_join_index + 1;
  const waiting = highestPosition - q.admitted_through > 0;
  // LAST_CHANCE also while only a few seats are left and fans still wait for them: waiting fans are told the end is
  // near (and poll every 5 s, so they hear SOLD_OUT at once).
  const inventoryState = inventoryStateOf(counts, waiting ? fewSeatsLeft(e.capacity, e.tickets_per_order) : 0);
  const sinceLastAdvanceMs = q.last_advance_at ? Math.max(0, now.getTime() - q.last_advance_at.getTime()) : Number.MAX_SAFE_INTEGER;
  const rate = admissionRate(e, plan, counts, signals, inside, q.rate_override_per_min, {
    window: step?.window,
    storeLagMs: r.lagMs,
    storeHoldsShed: r.storeLoad.holdsShed ?? 0,
    storeLagTargetMs: step?.targetMs ?? lagTargetMs(baseLagMs),
    tail: waiting ? { sinceLastAdvanceMs, gapMs: tailGapMs(inside.shopping + inside.arriving, e.rehearsal_time_scale) } : undefined,
    insideParts: { holding: inside.holding, notHolding: inside.shopping, arriving: inside.arriving, leaverSeconds: r.leaver },
  });
  return { step, highestPosition, inventoryState, rate };
}

/** Seals the pre-open cohort at the open (its size, the seed revealed), audited. */
async function seal(trx: Trx, e: ActiveEventRow, q: repo.LockedQueueState, now: Date, actor: string): Promise<number> {
  const sealedCohortSize = await repo.sealCohort(trx, e.event_id, now);
  await insertAudit(trx, {
    actor,
    action: 'queue.sealed',
    eventId: e.owner_event_id,
    details: {
      seed: q.seed_hex,
      seedCommitment: q.seed_commitment,
      cohortSize: sealedCohortSize,
      sealedAt: now.toISOString(),
      fairnessMode: e.fairness_mode,
      ...tierOf(e),
    },
  });
  return sealedCohortSize;
}

/** What a sold-out queue's tick reads instead of the live signals: nothing is counted, nobody is let in. */
const NO_SIGNALS: repo.LiveSignalsRow = {
  checkout_total: 0,
  checkout_failed: 0,
  holds_created_2m: 0,
  holds_refused_2m: 0,
  holding: 0,
  shopping: 0,
  claimed_recently: 0,
  claimed_in_claim_window: 0,
  tokens_5m: 0,
  advanced_5m: 0,
  released_seats_1m: 0,
  max_join_index: null,
};
const NO_LOAD: StoreLoad = {
  reporting: 0,
  holdsInFlight: 0,
  checkoutsInFlight: 0,
  holdsAnswered: 0,
  holdLatencyP90Ms: 0,
  oldestInFlightMs: 0,
  admittedWaitMs: 0,
};

const toStoreLoad = (r: Awaited<ReturnType<typeof readStoreLoad>>): StoreLoad => ({
  reporting: r.reporting,
  holdsInFlight: r.holds_in_flight,
  checkoutsInFlight: r.checkouts_in_flight,
  holdsAnswered: r.holds_answered,
  holdLatencyP90Ms: r.hold_latency_p90_ms,
  oldestInFlightMs: r.oldest_in_flight_ms,
  admittedWaitMs: r.admitted_wait_p90_ms,
  holdsShed: r.holds_shed,
});

/**
 * The checkout error rate's window: two minutes of the event's clock (a rehearsal's runs `scale` times fast), at
 * least 20 real seconds so a handful of attempts is not a rate.
 */
export function checkoutErrorSeconds(scale: number | null | undefined): number {
  return scale && scale > 1 ? Math.max(20, Math.round(120 / scale)) : 120;
}

/** Past the target, the seats left are paced over this share of the target duration (never over nothing). */
export const REMAINING_TARGET_FLOOR = 0.1;

/**
 * The minutes the plan paces the unsold seats over: what is left of the target duration since the queue opened, at
 * least REMAINING_TARGET_FLOOR of it. Pacing the seats left over the whole target again at every tick would slow the
 * sale as it sells (the last 11 seats of a 10-minute club sale at one fan every 85 s): it would never end on time.
 */
export function remainingTargetMinutes(targetSaleMinutes: number, minutesSinceOpen: number): number {
  const floor = targetSaleMinutes * REMAINING_TARGET_FLOOR;
  return Math.max(floor, targetSaleMinutes - Math.max(0, Number.isFinite(minutesSinceOpen) ? minutesSinceOpen : 0));
}

/**
 * The event's plan on its unsold seats (available + held: held seats are still to sell, and in LAST_CHANCE a plan
 * on available seats alone would be 0 and never admit at the release rate) over what is left of its target duration,
 * with its budget share. Null for an event with no seats.
 */
function planOf(
  e: ActiveEventRow,
  counts: { available: number; held: number },
  budgetBuyersPerMinute: number | undefined,
  minutesSinceOpen: number,
): AdmissionPlan | null {
  if (e.capacity <= 0) return null;
  return planAdmission({
    seats: e.capacity,
    ticketsPerOrder: e.tickets_per_order,
    targetSaleMinutes: remainingTargetMinutes(e.target_sale_minutes, minutesSinceOpen),
    overbookFactor: e.overbook_factor,
    checkoutMinutes: e.checkout_minutes,
    paymentTps: effectivePaymentTps(e.payment_tps, budgetBuyersPerMinute),
    remainingSeats: Math.min(e.capacity, counts.available + counts.held),
  });
}

/** The live rule (nextAdmissionRate) on the plan and what the database and the store report. */
function admissionRate(
  e: ActiveEventRow,
  plan: AdmissionPlan | null,
  counts: { available: number; held: number },
  s: repo.LiveSignalsRow,
  inside: FansInside,
  override: number | null,
  store: {
    window: number | undefined;
    storeLagMs: number;
    storeLagTargetMs: number;
    storeHoldsShed: number;
    tail: { sinceLastAdvanceMs: number; gapMs: number } | undefined;
    insideParts?: { holding: number; notHolding: number; arriving: number; leaverSeconds: number };
  },
): AdmissionRate {
  if (plan === null)
    return { ratePerMinute: 0, constraint: 'sold_out', reason: 'sold_out: the event has no seats', cap: 0, admitAtOnce: 0 };
  return nextAdmissionRate({
    plan,
    checkoutErrorRate: s.checkout_total > 0 ? s.checkout_failed / s.checkout_total : 0,
    // Reported by every store-API instance (counted in memory, flushed each half second into admission_minutes).
    holdFailureRate: s.holds_created_2m + s.holds_refused_2m > 0 ? s.holds_refused_2m / (s.holds_created_2m + s.holds_refused_2m) : 0,
    remainingSeats: counts.available,
    heldSeats: counts.held,
    fansInside: inside.total,
    admittedNotCome: inside.notCome,
    ticketsPerOrder: e.tickets_per_order,
    overrideRatePerMinute: override,
    releasedSeatsPerMinute: s.released_seats_1m,
    clockScale: e.rehearsal_time_scale ?? 1,
    ...(store.window !== undefined ? { window: store.window } : {}),
    storeLagMs: store.storeLagMs,
    storeLagTargetMs: store.storeLagTargetMs,
    storeHoldsShed: store.storeHoldsShed,
    ...(store.tail ? { tail: store.tail } : {}),
    ...(store.insideParts ? { insideParts: store.insideParts } : {}),
  });
}

/** Options of an AdmissionController. */
export interface AdmissionControllerOptions {
  /** The pool the ticks run their short transactions on. */
  db: Db;
  /** For the dedicated connection that holds the leadership locks (never a pooled one). */
  connectionString: string;
  /** Tick interval (default 1000 ms). */
  tickMs?: number;
  /** Names this controller in queue_state.controller_id and the audit log (default host:pid:random). */
  instanceId?: string;
  /** Payment TPS shared by every event on sale at once (default 1000). */
  paymentTpsBudget?: number;
  logger?: pino.Logger;
  /**
   * The controller's clock, in epoch milliseconds. Unset (production): each tick reads the database's clock, and
   * the reconnect back-off uses the process's. Tests inject a clock they move themselves.
   */
  clock?: () => number;
}

/** What one pass of the controller did. */
export interface ControllerTickReport {
  /** Events this controller leads after the pass. */
  leading: string[];
  events: EventTickOutcome[];
  /** Set when the pass could not run (no database, lost connection): nothing was ticked, heartbeats go stale. */
  error?: string;
}

const LOCK_KEY = `hashtextextended('admission-controller:' || id::text, 0)`;

/**
 * The admission controller: one leader per event across any number of processes. A dedicated `pg.Client` (not
 * the pool) holds a session-level `pg_try_advisory_lock` for each event it leads; when that connection is lost
 * the locks go with it and another process takes over on its next tick. Every `tickMs` it ticks each event it
 * leads whose on-sale window is active (2 h before the open until the event starts), each in its own short,
 * fenced transaction (see tickEvent). A failed tick writes no heartbeat, so the queue fails closed.
 */
export class AdmissionController {
  readonly instanceId: string;
  readonly tickMs: number;
  readonly paymentTpsBudget: number;
  private readonly db: Db;
  private readonly connectionString: string;
  private readonly log: pino.Logger | undefined;
  private client: pg.Client | undefined;
  private pid: number | undefined;
  private readonly led = new Set<string>();
  private readonly carry = new Map<string, number>();
  private readonly baseLag = new BaseLag();
  private readonly notHolding = new Map<string, number>();
  private readonly applied = new Map<string, number>();
  private chain: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  /** The last pass ticked an event in LAST_CHANCE: the next pass comes NEAR_END_TICK_MS after it started. */
  private nearEnd = false;
  private lastProblem = { message: '', at: 0 };
  private reconnectAt = 0;
  /** Why the dedicated connection was last lost (the cause of a 'waiting to reconnect' refusal). */
  private lostWith: unknown;
  private readonly clock: (() => number) | undefined;

  constructor(opts: AdmissionControllerOptions) {
    this.db = opts.db;
    this.connectionString = opts.connectionString;
    this.tickMs = opts.tickMs ?? 1000;
    if (!(this.tickMs >= 10)) throw new RangeError('tickMs must be at least 10');
    this.paymentTpsBudget = opts.paymentTpsBudget ?? 1000;
    if (!(this.paymentTpsBudget > 0)) throw new RangeError('paymentTpsBudget must be positive');
    this.instanceId = opts.instanceId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    this.log = opts.logger;
    this.clock = opts.clock;
  }

  private nowMs(): number {
    return this.clock ? this.clock() : Date.now();
  }

  /** The events this controller leads now. */
  get leading(): string[] {
    return [...this.led];
  }

  /** The backend pid of the dedicated connection (undefined while disconnected). */
  get connectionPid(): number | undefined {
    return this.pid;
  }

  /** How long after a pass starts the next one does: tickMs, or NEAR_END_TICK_MS while an event it led was in LAST_CHANCE. */
  get passIntervalMs(): number {
    return this.nearEnd ? Math.min(this.tickMs, NEAR_END_TICK_MS) : this.tickMs;
  }

  /** How many ticks of this event this controller applied (not fenced, not failed). */
  appliedTicks(eventId: string): number {
    return this.applied.get(eventId) ?? 0;
  }

  /** Runs a first pass, then one every tickMs until stop(). A failing pass is logged and retried on the next. */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    await this.tickOnce();
    this.schedule();
  }

  /** Stops ticking, waits for a pass in flight, and gives up every lead (another process takes over at once). */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.chain;
    const client = this.client;
    this.client = undefined;
    this.pid = undefined;
    this.led.clear();
    this.carry.clear();
    this.baseLag.clear();
    this.notHolding.clear();
    if (client) {
      // Ignored on purpose: Stopping: closing the session releases its advisory locks anyway; this only makes it prompt.
      await client.query('SELECT pg_advisory_unlock_all()').catch(() => {});
      // Ignored on purpose: a session that fails to close is ended by the server when the process goes.
      await client.end().catch(() => {});
    }
  }

  /** One pass over every active event (serialized with the loop's passes). Never throws; problems are in the report. */
  tickOnce(): Promise<ControllerTickReport> {
    const pass = this.chain.then(() => this.pass());
    // Ignored on purpose: The chain only orders passes; each pass's own promise (returned) carries its outcome to the caller.
    this.chain = pass.catch(() => {});
    return pass;
  }

  private schedule(): void {
    if (!this.running) return;
    this.timer = setTimeout(() => this.loopOnce(), this.tickMs);
    this.timer.unref();
  }

  /** One pass, then the next one tickMs after this one started (or at once when a pass overran). */
  private loopOnce(): void {
    if (!this.running) return;
    const started = Date.now();
    void this.tickOnce().finally(() => {
      if (!this.running) return;
      this.timer = setTimeout(() => this.loopOnce(), Math.max(0, this.passIntervalMs - (Date.now() - started)));
      this.timer.unref();
    });
  }

  private async pass(): Promise<ControllerTickReport> {
    let active: ActiveEventRow[];
    try {
      active = await repo.findActiveEvents(
        this.db,
        ADMISSION_WINDOW_BEFORE_OPEN_MS / 1000,
        this.clock ? new Date(this.clock()) : undefined,
      );
      await this.lead(active.map((e) => e.event_id));
    } catch (err) {
      this.problem(err, 'admission controller pass failed; no event ticked (queues fail closed)');
      return { leading: this.leading, events: [], error: (err as Error).message };
    }
    const shares = eventBudgetShares(
      active
        .filter((e) => e.open && !awaitsSignOff({ signedOff: e.signed_off, sealedAt: e.sealed_at }) && e.inventory_state !== 'SOLD_OUT')
        .map((e) => ({
          eventId: e.event_id,
          capacity: e.capacity,
          remainingSeats: e.reconciled_unsold ?? e.capacity,
          targetSaleMinutes: e.target_sale_minutes,
          ticketsPerOrder: e.tickets_per_order,
          checkoutMinutes: e.checkout_minutes,
          overbookFactor: e.overbook_factor,
          paymentTps: e.payment_tps,
        })),
      this.paymentTpsBudget,
    );
    // Events tick side by side, a few at a time: one slow event (a big sale's signals, a lock) never holds up the
    // others' ticks, so a sell-out is published within a tick whatever else is on sale.
    const mine = active.filter((e) => this.led.has(e.event_id));
    const outcomes = new Array<EventTickOutcome>(mine.length);
    let next = 0;
    const lane = async () => {
      for (let i = next++; i < mine.length; i = next++) outcomes[i] = await this.tickOne(mine[i]!, shares.get(mine[i]!.event_id));
    };
    await Promise.all(Array.from({ length: Math.min(TICK_CONCURRENCY, mine.length) }, lane));
    const events = outcomes;
    this.nearEnd = events.some((o) => o.status === 'ticked' && o.inventoryState === 'LAST_CHANCE');
    return { leading: this.leading, events };
  }

  private async tickOne(event: ActiveEventRow, budgetBuyersPerMinute: number | undefined): Promise<EventTickOutcome> {
    try {
      const outcome = await tickEvent(this.db, {
        event,
        controllerId: this.instanceId,
        tickMs: this.tickMs,
        budgetBuyersPerMinute,
        carry: this.carry.get(event.event_id) ?? 0,
        baseLag: this.baseLag,
        notHolding: this.notHolding.get(event.event_id) ?? 0,
        ...(this.clock ? { now: new Date(this.clock()) } : {}),
      });
      if (outcome.status === 'ticked') {
        this.carry.set(event.event_id, outcome.carry);
        this.notHolding.set(event.event_id, outcome.inside.shopping);
        this.applied.set(event.event_id, (this.applied.get(event.event_id) ?? 0) + 1);
      }
      return outcome;
    } catch (err) {
      this.problem(err, 'admission tick failed; the event fails closed until a tick succeeds', { eventId: event.event_id });
      return { eventId: event.event_id, status: 'failed', error: (err as Error).message };
    }
  }

  /** Takes the lead of active events nobody leads, and gives up events that left the window. */
  private async lead(active: string[]): Promise<void> {
    const client = await this.connection();
    const wanted = new Set(active);
    const release = [...this.led].filter((id) => !wanted.has(id));
    const candidates = active.filter((id) => !this.led.has(id));
    try {
      if (release.length > 0) {
        await client.query(`SELECT pg_advisory_unlock(${LOCK_KEY}) FROM unnest($1::uuid[]) AS id`, [release]);
        for (const id of release) {
          this.led.delete(id);
          this.carry.delete(id);
          this.baseLag.forget(id);
          this.notHolding.delete(id);
        }
      }
      // Also the liveness check of the dedicated connection: it runs every pass, even with nothing to take.
      const { rows } = await client.query<{ id: string; got: boolean }>(
        `SELECT id::text AS id, pg_try_advisory_lock(${LOCK_KEY}) AS got FROM unnest($1::uuid[]) AS id`,
        [candidates],
      );
      for (const r of rows) if (r.got) this.led.add(r.id);
    } catch (err) {
      if (isConnectionLost(err)) markDatabaseFault(err, 'unavailable');
      this.drop(client, err);
      throw err;
    }
  }

  private async connection(): Promise<pg.Client> {
    if (this.client) return this.client;
    // After losing its connection a process sits out two ticks, so a healthy one takes its events over first.
    if (this.nowMs() < this.reconnectAt)
      throw new Error('waiting to reconnect after losing the dedicated connection', { cause: this.lostWith });
    this.led.clear();
    this.carry.clear();
    this.baseLag.clear();
    this.notHolding.clear();
    const client = new pg.Client({
      connectionString: this.connectionString,
      application_name: `onsale-admission ${this.instanceId}`.slice(0, 63),
      keepAlive: true,
      connectionTimeoutMillis: 5000,
      query_timeout: 5000,
    });
    client.on('error', (err) => this.drop(client, markDatabaseFault(err, 'unavailable')));
    client.on('end', () => this.drop(client, new Error('the dedicated connection ended')));
    try {
      await client.connect();
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      this.pid = rows[0]?.pid;
    } catch (err) {
      // Ignored on purpose: The connection never opened: closing it is tidying, and the outage is reported just below.
      await client.end().catch(() => {});
      // Whatever its code, a connection that cannot be obtained is the database's outage.
      throw markDatabaseFault(err, 'unavailable');
    }
    this.client = client;
    return client;
  }

  /** The dedicated connection is gone: so is every lead it held (the server released its locks). */
  private drop(client: pg.Client, err: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.pid = undefined;
    this.lostWith = err;
    this.reconnectAt = this.nowMs() + 2 * this.tickMs;
    if (this.led.size > 0)
      this.log?.warn({ err, instanceId: this.instanceId, events: [...this.led] }, 'admission controller lost its connection and its leads');
    this.led.clear();
    this.carry.clear();
    this.baseLag.clear();
    this.notHolding.clear();
    // Ignored on purpose: The connection is already lost (reported above): closing it is tidying.
    void client.end().catch(() => {});
  }

  /** Logs a problem, the same one at most every 30 s (a database outage would otherwise log every tick). */
  private problem(err: unknown, message: string, extra: Record<string, unknown> = {}): void {
    const text = `${message}: ${(err as Error)?.message ?? String(err)}`;
    const now = Date.now();
    if (text === this.lastProblem.message && now - this.lastProblem.at < 30_000) return;
    this.lastProblem = { message: text, at: now };
    this.log?.error({ err, instanceId: this.instanceId, ...extra }, message);
  }
}
