import type { Db, Trx } from '../db/connect.js';
import { DomainError, notFound } from '../errors.js';
import { isUuid } from '../ids.js';
import { getInventoryCounts, type InventoryCounts } from '../inventory/inventory.service.js';
import { tierInventory } from '../allocations/allocations.service.js';
import { toTierView, type TierView } from '../allocations/tier-view.js';
import { planAdmission, type BindingConstraint } from '../admission/plan.js';
import { DEFAULT_HEARTBEAT_STALE_MS } from '../queue/edge.js';
import { awaitsSignOff } from '../events/signoff.service.js';
import { evaluateAlerts, type Alert, type AlertInput } from './alerts.js';
import { UNMEASURED_STORE_METRICS, type StoreMetrics } from './store-metrics.js';
import * as repo from './warroom.repository.js';

// The war room's reads: one event's figures, or many events' at once for the board, from PostgreSQL (and the
// store API's latency histograms when given). Rows are turned into the domain's words here; the BFF only shapes
// the transport. Times leave as ISO strings: the snapshot crosses tRPC as JSON.

/**
 * What the war room calls the queue's state, most important first:
 * SOLD_OUT (available = 0 and held = 0), PAUSED (an operator), NOT_OPEN, ENDED (the event started; the controller
 * stopped), AWAITING_SIGNOFF (the on-sale time has come but the fairness mode is not signed off: the sale does not
 * open), FAILED_CLOSED (no controller heartbeat: fans read PAUSED), LAST_CHANCE (nothing available, seats held),
 * ADMITTING.
 */
export type WarRoomState =
  'SOLD_OUT' | 'PAUSED' | 'NOT_OPEN' | 'ENDED' | 'AWAITING_SIGNOFF' | 'FAILED_CLOSED' | 'LAST_CHANCE' | 'ADMITTING';

/** What a fan who is not yet admitted reads on a status poll in each war-room state (the store API's computeStatus). */
export const FAN_STATE_OF: Record<WarRoomState, 'WAITING' | 'PAUSED' | 'LAST_CHANCE' | 'SOLD_OUT'> = {
  SOLD_OUT: 'SOLD_OUT',
  PAUSED: 'PAUSED',
  NOT_OPEN: 'WAITING',
  ENDED: 'PAUSED',
  AWAITING_SIGNOFF: 'WAITING',
  FAILED_CLOSED: 'PAUSED',
  LAST_CHANCE: 'LAST_CHANCE',
  ADMITTING: 'WAITING',
};

/** The war-room state from the queue row and the database clock (pure). */
export function warRoomStateOf(
  r: {
    now: Date;
    onsale_at: Date;
    starts_at: Date;
    paused: boolean;
    inventory_state: 'AVAILABLE' | 'LAST_CHANCE' | 'SOLD_OUT';
    heartbeat_at: Date | null;
    /** Absent: signed off. */
    signed_off?: boolean;
    sealed_at?: Date | null;
  },
  heartbeatStaleMs = DEFAULT_HEARTBEAT_STALE_MS,
): WarRoomState {
  const now = r.now.getTime();
  if (r.inventory_state === 'SOLD_OUT') return 'SOLD_OUT';
  if (r.paused) return 'PAUSED';
  if (now < r.onsale_at.getTime()) return 'NOT_OPEN';
  if (now >= r.starts_at.getTime()) return 'ENDED';
  if (awaitsSignOff({ signedOff: r.signed_off ?? true, sealedAt: r.sealed_at ?? null })) return 'AWAITING_SIGNOFF';
  if (r.heartbeat_at === null || now - r.heartbeat_at.getTime() > heartbeatStaleMs) return 'FAILED_CLOSED';
  if (r.inventory_state === 'LAST_CHANCE') return 'LAST_CHANCE';
  return 'ADMITTING';
}

/** One minute of admissions, for the admitted-against-plan chart. */
export interface WarRoomMinute {
  /** The minute's start, ISO. */
  minute: string;
  /** Admission tokens issued: fans actually let in. */
  admitted: number;
  /** Positions the watermark moved. */
  advanced: number;
  /** The controller's admits per minute at the minute's last tick (after its slow-downs). */
  controllerRatePerMin: number;
  holdsCreated: number;
  holdsRefused: number;
  /** Orders confirmed in the minute (and still confirmed), and what they came to in minor units of the event's currency. */
  orders: number;
  grossCents: number;
}

/** Everything the war room shows for one event at one instant. */
export interface WarRoomSnapshot {
  eventId: string;
  name: string;
  venueName: string;
  listingId: string;
  organisationId: string | null;
  onsaleAt: string;
  startsAt: string;
  /** The database clock when the figures were read. */
  at: string;
  state: WarRoomState;
  fanState: 'WAITING' | 'PAUSED' | 'LAST_CHANCE' | 'SOLD_OUT';
  /** The fairness sign-off: unsigned (and not opened), the sale does not open at its time. */
  fairness: { mode: string; signedOff: boolean; signedOffBy: string | null; signedOffAt: string | null; awaitingSignOff: boolean };
  queue: {
    /** Positions issued (highest join index + 1): fans who joined, plus the few who rejoined at the back. */
    joined: number;
    /** Positions beyond the watermark: fans still waiting. */
    waiting: number;
    /** The watermark: every position at or below it is admitted. */
    admittedThrough: number;
    /** How fast the watermark moves (positions per minute, published to the edges). */
    publishedRatePerMin: number;
    rateOverridePerMin: number | null;
    paused: boolean;
    pausedReason: string | null;
    pausedBy: string | null;
    pausedAt: string | null;
    heartbeatAgeSeconds: number | null;
    cohortSize: number | null;
    sealedAt: string | null;
  };
  admission: {
    /** Admission tokens issued in the last full minute (the admitted_per_min metric). */
    admittedLastMinute: number;
    /** ...and so far in the current minute. */
    admittedThisMinute: number;
    /** The controller's admits per minute now (0 while paused, before the open or sold out). */
    controllerRatePerMin: number;
    /**
     * Why the controller's last tick admitted what it did: `constraint` is the stable code (admission/rate.ts
     * AdmissionConstraint, or `paused`, `before_open`, `sold_out`), `reason` the words; `fansInside` the fans it counted
     * as able to buy (holding, shopping within the checkout time, or on their way in); `cap` the most more fans it
     * would let in. Null before the controller first ticked the event. With fans waiting, seats left and nobody let
     * in, this says why (e.g. `no_plausible_seats`, `override` at 0).
     */
    controller: { constraint: string; reason: string; fansInside: number; cap: number } | null;
    /** The published plan on the whole house (onsale plan), or null when the settings cannot be planned. */
    plan: {
      admitsPerMinute: number;
      buyersPerMinute: number;
      concurrentShoppers: number;
      expectedSaleMinutes: number;
      bindingConstraint: BindingConstraint;
    } | null;
    planError: string | null;
    /** The last 30 minutes, oldest first, every minute present. */
    minutes: WarRoomMinute[];
  };
  inventory: {
    capacity: number;
    available: number;
    held: number;
    sold: number;
    /** available + held + sold - capacity; must stay 0. */
    drift: number;
    /** Sold seats - seats in confirmed orders at the worker's last reconciliation (null before the first). */
    orderDrift: number | null;
    reconciledAt: string | null;
    expiredUnsweptSeats: number;
    inventoryState: 'AVAILABLE' | 'LAST_CHANCE' | 'SOLD_OUT';
    holdTtlSeconds: number;
  };
  /**
   * The money: confirmed orders and what they came to, in minor units (cents, pence) of `currency`, the event's.
   * Cancelled orders are left out of both (and counted apart); the last full minute's figures beside the totals.
   */
  sales: {
    currency: string;
    orders: number;
    grossCents: number;
    /** grossCents / orders, rounded to a minor unit; null before the first order. */
    averageOrderCents: number | null;
    ordersLastMinute: number;
    grossLastMinuteCents: number;
    cancelledOrders: number;
  };
  holds: {
    createdLastMinute: number;
    refusedLastMinute: number;
    /** Holds created per fan admitted over the last full minute (should stay <= ~1.2); null with no admissions. */
    perAdmittedFan: number | null;
    /**
     * Holds answered to fans but lost to a database crash (HOLD_COMMIT=async), found when each fan next touched
     * theirs (told 410 HOLD_LOST and to hold again): this sale's total, and those found in the last 5 minutes.
     */
    lost: number;
    lostLast5Minutes: number;
  };
  /** Platform-wide, from the store API's metrics (see store-metrics.ts). */
  holdLatency: { p99Ms: number | null; observed: number; windowSeconds: number };
  /**
   * Checkouts over the last 2 minutes: attempts, those the platform failed (gateway failures and timeouts,
   * payments that could not complete) and their share, and cards declined by their issuers (the fans' outcome:
   * shown, never alerted on, never slowing admissions).
   */
  checkout: { attempts2m: number; failed2m: number; declined2m: number; errorRate: number | null };
  payment: { attemptsPerSecond: number; attemptsLastMinute: number; ceilingTps: number };
  soldOut: { soldOutAt: string | null; propagationP99Seconds: number | null; pollsObserved: number };
  waitlist: {
    entries: number;
    availabilityEvents: number;
    pendingAvailabilityEvents: number;
    oldestPendingSeconds: number | null;
    matched: number;
    notified: number;
    notifiedLast10Min: number;
    openOffers: number;
    lastFanoutSeconds: number | null;
  };
  /** The store API as scraped: instances, refusals by the gate, 503s answered per minute and instances without a database. */
  store: {
    configured: boolean;
    instances: number;
    reachable: number;
    gateRefusalsPerMin: number | null;
    unavailablePerMin: number | null;
    databaseDownInstances: number;
    /** Instances counting request limits in their own memory while Redis does not answer, each at 1/limitsLocalDivisor. */
    limitsLocalInstances: number;
    limitsLocalDivisor: number;
  };
  /**
   * Presale tiers in sale order (the general sale last), each with its window, roll, live counts and its queue's
   * figures (the general sale's are the event's own queue, as in `queue`); empty without tiers.
   */
  tiers: WarRoomTier[];
  alerts: Alert[];
}

/** One tier's queue as the war room shows it: a presale's own queue, or (for the general sale) the event's. */
export interface WarRoomTierQueue {
  /** The queue_state key: the tier's queue id (the event's id for the general sale). */
  queueId: string;
  paused: boolean;
  pausedReason: string | null;
  pausedBy: string | null;
  pausedAt: string | null;
  /** The watermark: every position of this queue at or below it is admitted. */
  admittedThrough: number;
  /** Positions this queue issued. */
  joined: number;
  /** joined - admittedThrough (never below 0): fans still waiting in this queue. */
  waiting: number;
  /** How fast this queue's watermark moves (positions per minute). */
  publishedRatePerMin: number;
  rateOverridePerMin: number | null;
  heartbeatAgeSeconds: number | null;
  /** The controller's heartbeat on this queue is within the staleness limit (a stale one: its fans read PAUSED). */
  heartbeatFresh: boolean;
}

/** A tier in the war room: its view (window, access, counts) and its queue (null if the queue row is missing). */
export type WarRoomTier = TierView & { queue: WarRoomTierQueue | null };

/** How many minutes of admissions the snapshot carries. */
export const WAR_ROOM_MINUTES = 30;

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const seconds = (later: Date, earlier: Date | null) => (earlier ? Math.max(0, (later.getTime() - earlier.getTime()) / 1000) : null);
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

function indexBy<T extends { event_id: string }>(rows: T[]): Map<string, T> {
  return new Map(rows.map((r) => [r.event_id, r]));
}

function groupBy<T extends { event_id: string }>(rows: T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const list = out.get(r.event_id);
    if (list) list.push(r);
    else out.set(r.event_id, [r]);
  }
  return out;
}

function planOf(r: repo.WarRoomEventRow): { plan: WarRoomSnapshot['admission']['plan']; planError: string | null } {
  if (r.capacity <= 0) return { plan: null, planError: 'the event has no seats' };
  try {
    const p = planAdmission({
      seats: r.capacity,
      ticketsPerOrder: r.tickets_per_order,
      targetSaleMinutes: r.target_sale_minutes,
      overbookFactor: r.overbook_factor,
      checkoutMinutes: r.checkout_minutes,
      paymentTps: r.payment_tps,
    });
    return {
      plan: {
        admitsPerMinute: p.admitsPerMinute,
        buyersPerMinute: p.buyersPerMinute,
        concurrentShoppers: p.concurrentShoppers,
        expectedSaleMinutes: p.expectedSaleMinutes,
        bindingConstraint: p.bindingConstraint,
      },
      planError: null,
    };
  } catch (err) {
    if (err instanceof DomainError) return { plan: null, planError: err.message };
    throw err;
  }
}

/** The last WAR_ROOM_MINUTES minutes ending with the current one, every minute present (zeros where nothing happened). */
function fillMinutes(now: Date, rows: repo.AdmissionMinuteRow[], sales: repo.SalesMinuteRow[]): WarRoomMinute[] {
  const byMinute = new Map(rows.map((r) => [r.minute.getTime(), r]));
  const salesByMinute = new Map(sales.map((r) => [r.minute.getTime(), r]));
  const current = Math.floor(now.getTime() / 60_000) * 60_000;
  const out: WarRoomMinute[] = [];
  for (let m = current - (WAR_ROOM_MINUTES - 1) * 60_000; m <= current; m += 60_000) {
    const r = byMinute.get(m);
    out.push({
      minute: new Date(m).toISOString(),
      admitted: r?.admission_tokens_issued ?? 0,
      advanced: r?.watermark_advanced ?? 0,
      controllerRatePerMin: r ? round(r.rate_per_min) : 0,
      holdsCreated: r?.holds_created ?? 0,
      holdsRefused: r?.holds_refused ?? 0,
      orders: salesByMinute.get(m)?.orders ?? 0,
      grossCents: salesByMinute.get(m)?.gross_cents ?? 0,
    });
  }
  return out;
}

/**
 * Builds the snapshots of `eventIds` (unknown ids are left out) from one consistent read: a read-only REPEATABLE
 * READ transaction on one pooled connection, so every figure is of the same instant and the war room never takes
 * more than one connection from a pool the admission controller also uses. Each event's state is judged at `at`
 * (the database's clock when unset).
 */
export async function readWarRoomSnapshots(
  db: Db,
  eventIds: readonly string[],
  store: StoreMetrics = UNMEASURED_STORE_METRICS,
  at?: Date,
): Promise<WarRoomSnapshot[]> {
  const ids = [...new Set(eventIds.filter(isUuid))];
  if (ids.length === 0) return [];
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const events = await repo.readEventRows(trx, ids, at);
      if (events.length === 0) return [];
      const found = events.map((e) => e.event_id);
      // Inventory by the inventory domain's own count (one statement per event: it knows seat rows and whatever
      // else a section may be), so the war room and the event page can never disagree.
      const inventory = new Map<string, InventoryCounts>();
      for (const e of events) inventory.set(e.event_id, await getInventoryCounts(trx, e.event_id, e.capacity));
      const unswept = indexBy(await repo.readUnsweptHolds(trx, found));
      const losses = indexBy(await repo.readHoldLosses(trx, found));
      const positions = indexBy(await repo.readQueuePositions(trx, found));
      const minuteRows = await repo.readAdmissionMinutes(trx, found, WAR_ROOM_MINUTES);
      const salesTotals = indexBy(await repo.readSalesTotals(trx, found));
      const salesMinutes = groupBy(await repo.readSalesMinutes(trx, found, WAR_ROOM_MINUTES));
      const checkout = indexBy(await repo.readCheckoutWindows(trx, found));
      const reconciled = indexBy(await repo.readReconciliations(trx, found));
      const waitlist = indexBy(
        await repo.readWaitlist(
          trx,
          events.map((e) => ({ eventId: e.event_id, listingId: e.listing_id })),
        ),
      );
      // Per-tier counts, in the same snapshot as the totals (so the tiers add up to them), for events that have tiers.
      const tiers = new Map<string, Awaited<ReturnType<typeof tierInventory>>>();
      for (const id of await repo.readTieredEventIds(trx, found)) tiers.set(id, await tierInventory(trx, id));
      // Each presale tier's own queue, all events in one statement (the general sale's queue is the event row's).
      const tierQueues = new Map<string, repo.TierQueueRow>();
      if (tiers.size > 0) for (const q of await repo.readTierQueues(trx, [...tiers.keys()])) tierQueues.set(`${q.event_id}/${q.code}`, q);
      const minutesByEvent = groupBy(minuteRows);
      const order = new Map(ids.map((id, i) => [id, i]));
      return events
        .sort((a, b) => order.get(a.event_id)! - order.get(b.event_id)!)
        .map((e) =>
          toSnapshot(e, {
            inventory: inventory.get(e.event_id)!,
            unswept: unswept.get(e.event_id),
            losses: losses.get(e.event_id),
            positions: positions.get(e.event_id)?.positions ?? 0,
            minutes: minutesByEvent.get(e.event_id) ?? [],
            sales: salesTotals.get(e.event_id),
            salesMinutes: salesMinutes.get(e.event_id) ?? [],
            checkout: checkout.get(e.event_id),
            reconciliation: reconciled.get(e.event_id),
            waitlist: waitlist.get(e.event_id),
            tiers: tiers.get(e.event_id) ?? [],
            tierQueues,
            store,
          }),
        );
    });
}

/** One event's snapshot. EVENT_NOT_FOUND (field `eventId`) for an unknown or malformed id. */
export async function readWarRoomSnapshot(db: Db, eventId: string, store?: StoreMetrics): Promise<WarRoomSnapshot> {
  if (!isUuid(eventId)) throw notFound('EVENT_NOT_FOUND', `no event ${eventId}`, 'eventId');
  const [snapshot] = await readWarRoomSnapshots(db, [eventId], store);
  if (!snapshot) throw notFound('EVENT_NOT_FOUND', `no event ${eventId}`, 'eventId');
  return snapshot;
}

/** The events on the board (see findBoardEventIds), at most `limit` (default 200). */
export function findBoardEvents(
  db: Db | Trx,
  opts: { timeZone: string; organisationId: string | null; limit?: number },
): Promise<string[]> {
  return repo.findBoardEventIds(db, { timeZone: opts.timeZone, organisationId: opts.organisationId, limit: opts.limit ?? 200 });
}

interface SnapshotParts {
  inventory: InventoryCounts;
  unswept: repo.UnsweptHoldsRow | undefined;
  losses: { lost: number; lost_5m: number } | undefined;
  positions: number;
  minutes: repo.AdmissionMinuteRow[];
  sales: repo.SalesTotalRow | undefined;
  salesMinutes: repo.SalesMinuteRow[];
  checkout: repo.CheckoutWindowRow | undefined;
  reconciliation: { order_drift: number; checked_at: Date } | undefined;
  waitlist: repo.WaitlistRow | undefined;
  tiers: Awaited<ReturnType<typeof tierInventory>>;
  /** Presale tiers' queue rows, keyed `eventId/code`. */
  tierQueues: Map<string, repo.TierQueueRow>;
  store: StoreMetrics;
}

/** A queue row's war-room figures (the event's own queue or a presale tier's). */
function tierQueueOf(
  now: Date,
  queueId: string,
  q: Pick<
    repo.TierQueueRow,
    'admitted_through' | 'rate_per_min' | 'rate_override_per_min' | 'paused' | 'paused_reason' | 'paused_by' | 'paused_at' | 'heartbeat_at'
  >,
  positions: number,
): WarRoomTierQueue {
  const admittedThrough = Number(q.admitted_through);
  const age = seconds(now, q.heartbeat_at);
  return {
    queueId,
    paused: q.paused,
    pausedReason: q.paused_reason,
    pausedBy: q.paused_by,
    pausedAt: iso(q.paused_at),
    admittedThrough,
    joined: positions,
    waiting: Math.max(0, positions - admittedThrough),
    publishedRatePerMin: round(q.rate_per_min),
    rateOverridePerMin: q.rate_override_per_min,
    heartbeatAgeSeconds: age === null ? null : round(age, 1),
    heartbeatFresh: age !== null && age * 1000 <= DEFAULT_HEARTBEAT_STALE_MS,
  };
}

/** The figures of one minute, for the parts below: the last full minute and the current one. */
interface Minutes {
  all: WarRoomMinute[];
  last: WarRoomMinute;
  current: WarRoomMinute;
}

function queuePart(e: repo.WarRoomEventRow, positions: number): WarRoomSnapshot['queue'] {
  const admittedThrough = Number(e.admitted_through);
  const heartbeatAgeSeconds = seconds(e.now, e.heartbeat_at);
  return {
    joined: positions,
    waiting: Math.max(0, positions - admittedThrough),
    admittedThrough,
    publishedRatePerMin: round(e.rate_per_min),
    rateOverridePerMin: e.rate_override_per_min,
    paused: e.paused,
    pausedReason: e.paused_reason,
    pausedBy: e.paused_by,
    pausedAt: iso(e.paused_at),
    heartbeatAgeSeconds: heartbeatAgeSeconds === null ? null : round(heartbeatAgeSeconds, 1),
    cohortSize: e.cohort_size,
    sealedAt: iso(e.sealed_at),
  };
}

function admissionPart(e: repo.WarRoomEventRow, state: WarRoomState, m: Minutes): WarRoomSnapshot['admission'] {
  const { plan, planError } = planOf(e);
  return {
    admittedLastMinute: m.last.admitted,
    admittedThisMinute: m.current.admitted,
    controllerRatePerMin:
      state === 'ADMITTING' || state === 'LAST_CHANCE' ? m.current.controllerRatePerMin || m.last.controllerRatePerMin : 0,
    controller:
      e.controller_constraint !== null && e.controller_reason !== null
        ? { constraint: e.controller_constraint, reason: e.controller_reason, fansInside: e.fans_inside ?? 0, cap: e.admit_cap ?? 0 }
        : null,
    plan,
    planError,
    minutes: m.all,
  };
}

function inventoryPart(e: repo.WarRoomEventRow, p: SnapshotParts): WarRoomSnapshot['inventory'] {
  return {
    capacity: e.capacity,
    available: p.inventory.available,
    held: p.inventory.held,
    sold: p.inventory.sold,
    drift: p.inventory.drift,
    orderDrift: p.reconciliation?.order_drift ?? null,
    reconciledAt: iso(p.reconciliation?.checked_at ?? null),
    expiredUnsweptSeats: p.unswept?.seats ?? 0,
    inventoryState: e.inventory_state,
    holdTtlSeconds: e.hold_ttl_seconds,
  };
}

/** The money of one event (exported for its tests): totals, average order and the last full minute. */
export function salesPart(currency: string, totals: repo.SalesTotalRow | undefined, last: WarRoomMinute): WarRoomSnapshot['sales'] {
  const orders = totals?.orders ?? 0;
  const grossCents = totals?.gross_cents ?? 0;
  return {
    currency,
    orders,
    grossCents,
    averageOrderCents: orders > 0 ? Math.round(grossCents / orders) : null,
    ordersLastMinute: last.orders,
    grossLastMinuteCents: last.grossCents,
    cancelledOrders: totals?.cancelled_orders ?? 0,
  };
}

function holdsPart(p: SnapshotParts, last: WarRoomMinute): WarRoomSnapshot['holds'] {
  return {
    createdLastMinute: last.holdsCreated,
    refusedLastMinute: last.holdsRefused,
    perAdmittedFan: last.admitted > 0 ? round(last.holdsCreated / last.admitted) : null,
    lost: p.losses?.lost ?? 0,
    lostLast5Minutes: p.losses?.lost_5m ?? 0,
  };
}

function checkoutPart(c: repo.CheckoutWindowRow | undefined): WarRoomSnapshot['checkout'] {
  const attempts2m = c?.attempts_2m ?? 0;
  const failed2m = c?.failed_2m ?? 0;
  return { attempts2m, failed2m, declined2m: c?.declined_2m ?? 0, errorRate: attempts2m > 0 ? round(failed2m / attempts2m, 4) : null };
}

function waitlistPart(now: Date, w: repo.WaitlistRow | undefined): WarRoomSnapshot['waitlist'] {
  const oldestPendingSeconds = w ? seconds(now, w.oldest_pending_at) : null;
  return {
    entries: w?.entries ?? 0,
    availabilityEvents: w?.availability_events ?? 0,
    pendingAvailabilityEvents: w?.pending_availability_events ?? 0,
    oldestPendingSeconds: oldestPendingSeconds === null ? null : round(oldestPendingSeconds, 1),
    matched: w?.matched ?? 0,
    notified: w?.notified ?? 0,
    notifiedLast10Min: w?.notified_10m ?? 0,
    openOffers: w?.open_offers ?? 0,
    lastFanoutSeconds: w?.last_fanout_seconds === null || w?.last_fanout_seconds === undefined ? null : round(w.last_fanout_seconds, 1),
  };
}

function storePart(store: StoreMetrics): WarRoomSnapshot['store'] {
  return {
    configured: store.configured,
    instances: store.instances,
    reachable: store.reachable,
    gateRefusalsPerMin: store.gateRefusalsPerMin,
    unavailablePerMin: store.unavailablePerMin,
    databaseDownInstances: store.databaseDownInstances,
    limitsLocalInstances: store.limitsLocalInstances,
    limitsLocalDivisor: store.limitsLocalDivisor,
  };
}

function tiersPart(e: repo.WarRoomEventRow, p: SnapshotParts): WarRoomTier[] {
  return p.tiers.map((t) => {
    const q = p.tierQueues.get(`${e.event_id}/${t.code}`);
    const queue = t.general ? tierQueueOf(e.now, e.event_id, e, p.positions) : q ? tierQueueOf(e.now, q.queue_id, q, q.positions) : null;
    return { ...toTierView(t, e.now), queue };
  });
}

/** What the alert rules read of a snapshot (warroom/alerts.ts). */
function alertInputOf(e: repo.WarRoomEventRow, s: Omit<WarRoomSnapshot, 'alerts'>, p: SnapshotParts): AlertInput {
  const now = e.now;
  const open = now.getTime() >= e.onsale_at.getTime() && now.getTime() < e.starts_at.getTime();
  const heartbeatAgeSeconds = seconds(now, e.heartbeat_at);
  return {
    awaitingSignOff: s.fairness.awaitingSignOff ? { secondsToOpen: (e.onsale_at.getTime() - now.getTime()) / 1000 } : null,
    paused: e.paused,
    pausedBy: e.paused_by,
    pausedReason: e.paused_reason,
    controllerSilent:
      open && e.inventory_state !== 'SOLD_OUT' && (heartbeatAgeSeconds === null || heartbeatAgeSeconds * 1000 > DEFAULT_HEARTBEAT_STALE_MS),
    heartbeatAgeSeconds,
    inventoryState: e.inventory_state,
    admittedLastMinute: s.admission.admittedLastMinute,
    holdsCreatedLastMinute: s.holds.createdLastMinute,
    holdsRefusedLastMinute: s.holds.refusedLastMinute,
    planAdmitsPerMin: s.admission.plan?.admitsPerMinute ?? 0,
    rateOverridePerMin: e.rate_override_per_min,
    holdLatencyP99Ms: p.store.holdLatencyP99Ms,
    holdLatencyObserved: p.store.holdsObserved,
    checkoutAttempts: s.checkout.attempts2m,
    checkoutFailed: s.checkout.failed2m,
    checkoutDeclined: s.checkout.declined2m,
    paymentTps: s.payment.attemptsPerSecond,
    paymentAttempts10s: p.checkout?.attempts_10s ?? 0,
    paymentTpsCeiling: e.payment_tps,
    drift: s.inventory.drift,
    orderDrift: s.inventory.orderDrift,
    soldOutPropagationP99Seconds: p.store.soldOutPropagationP99Seconds,
    soldOutPollsObserved: p.store.soldOutPollsObserved,
    storeDatabaseDownInstances: p.store.databaseDownInstances,
    storeUnavailablePerMin: p.store.unavailablePerMin,
    storeLimitsLocalInstances: p.store.limitsLocalInstances,
    storeLimitsLocalDivisor: p.store.limitsLocalDivisor,
    soldOutOnce: e.sold_out_at !== null,
    available: s.inventory.available,
    oldestExpiredUnsweptSeconds: p.unswept ? seconds(now, p.unswept.oldest_expiry) : null,
    expiredUnsweptSeats: s.inventory.expiredUnsweptSeats,
    waitlistOldestPendingSeconds: s.waitlist.oldestPendingSeconds,
    presaleQueues: s.tiers.flatMap((t) =>
      !t.general && t.queue
        ? [
            {
              tier: t.code,
              paused: t.queue.paused,
              pausedBy: t.queue.pausedBy,
              pausedReason: t.queue.pausedReason,
              selling: t.phase === 'SELLING',
              heartbeatFresh: t.queue.heartbeatFresh,
              heartbeatAgeSeconds: t.queue.heartbeatAgeSeconds,
            },
          ]
        : [],
    ),
  };
}

/** One event's snapshot from its rows: each part of the answer built on its own, then the alerts over all of them. */
function toSnapshot(e: repo.WarRoomEventRow, p: SnapshotParts): WarRoomSnapshot {
  const now = e.now;
  const state = warRoomStateOf(e);
  const all = fillMinutes(now, p.minutes, p.salesMinutes);
  const minutes: Minutes = { all, last: all[all.length - 2]!, current: all[all.length - 1]! };
  const snapshot: Omit<WarRoomSnapshot, 'alerts'> = {
    eventId: e.event_id,
    name: e.name,
    venueName: e.venue_name,
    listingId: e.listing_id,
    organisationId: e.organisation_id,
    onsaleAt: e.onsale_at.toISOString(),
    startsAt: e.starts_at.toISOString(),
    at: now.toISOString(),
    state,
    fanState: FAN_STATE_OF[state],
    fairness: {
      mode: e.fairness_mode,
      signedOff: e.signed_off,
      signedOffBy: e.signed_off_by,
      signedOffAt: iso(e.signed_off_at),
      awaitingSignOff: awaitsSignOff({ signedOff: e.signed_off, sealedAt: e.sealed_at }),
    },
    queue: queuePart(e, p.positions),
    admission: admissionPart(e, state, minutes),
    inventory: inventoryPart(e, p),
    sales: salesPart(e.currency, p.sales, minutes.last),
    holds: holdsPart(p, minutes.last),
    holdLatency: { p99Ms: p.store.holdLatencyP99Ms, observed: p.store.holdsObserved, windowSeconds: p.store.windowSeconds },
    checkout: checkoutPart(p.checkout),
    payment: {
      attemptsPerSecond: round((p.checkout?.attempts_10s ?? 0) / 10, 1),
      attemptsLastMinute: p.checkout?.attempts_60s ?? 0,
      ceilingTps: e.payment_tps,
    },
    soldOut: {
      soldOutAt: iso(e.sold_out_at),
      propagationP99Seconds: p.store.soldOutPropagationP99Seconds,
      pollsObserved: p.store.soldOutPollsObserved,
    },
    waitlist: waitlistPart(now, p.waitlist),
    store: storePart(p.store),
    tiers: tiersPart(e, p),
  };
  return { ...snapshot, alerts: evaluateAlerts(alertInputOf(e, snapshot, p)) };
}

/** One event's compact tile on the board of all on-sales (dozens at once on a busy day). */
export interface WarRoomTile {
  eventId: string;
  name: string;
  venueName: string;
  onsaleAt: string;
  state: WarRoomState;
  /** Not signed off and not opened: the sale will not open at its time. */
  awaitingSignOff: boolean;
  pausedReason: string | null;
  pausedBy: string | null;
  joined: number;
  waiting: number;
  admittedLastMinute: number;
  planAdmitsPerMin: number | null;
  rateOverridePerMin: number | null;
  capacity: number;
  available: number;
  held: number;
  sold: number;
  drift: number;
  paymentAttemptsPerSecond: number;
  paymentCeilingTps: number;
  /** The money so far, in minor units of `currency` (the event's): confirmed orders, what they came to, and the last full minute's. */
  sales: { currency: string; orders: number; grossCents: number; averageOrderCents: number | null; grossLastMinuteCents: number };
  alerts: { critical: number; warning: number; top: { code: string; severity: 'critical' | 'warning'; title: string } | null };
}

/** The board's tile of a snapshot. */
export function toTile(s: WarRoomSnapshot): WarRoomTile {
  const top = s.alerts[0];
  return {
    eventId: s.eventId,
    name: s.name,
    venueName: s.venueName,
    onsaleAt: s.onsaleAt,
    state: s.state,
    awaitingSignOff: s.fairness.awaitingSignOff,
    pausedReason: s.queue.pausedReason,
    pausedBy: s.queue.pausedBy,
    joined: s.queue.joined,
    waiting: s.queue.waiting,
    admittedLastMinute: s.admission.admittedLastMinute,
    planAdmitsPerMin: s.admission.plan?.admitsPerMinute ?? null,
    rateOverridePerMin: s.queue.rateOverridePerMin,
    capacity: s.inventory.capacity,
    available: s.inventory.available,
    held: s.inventory.held,
    sold: s.inventory.sold,
    drift: s.inventory.drift,
    paymentAttemptsPerSecond: s.payment.attemptsPerSecond,
    paymentCeilingTps: s.payment.ceilingTps,
    sales: {
      currency: s.sales.currency,
      orders: s.sales.orders,
      grossCents: s.sales.grossCents,
      averageOrderCents: s.sales.averageOrderCents,
      grossLastMinuteCents: s.sales.grossLastMinuteCents,
    },
    alerts: {
      critical: s.alerts.filter((a) => a.severity === 'critical').length,
      warning: s.alerts.filter((a) => a.severity === 'warning').length,
      top: top ? { code: top.code, severity: top.severity, title: top.title } : null,
    },
  };
}
