import type { Db } from '../db/connect.js';
import type { WatermarkState } from './edge.js';
import { copyTimesOf, queueCopy, queueCopyByLanguage } from './copy.js';
import type { QueueFacts } from './edge-state.js';
import { loadWatermarks, recordClaims, recordHoldOutcomes, type WatermarkRow } from './queue.repository.js';
import { reportStoreLoad, StoreLoadTracker } from './store-load.service.js';

/** A queue's facts (what a status answer needs, see QueueFacts) and the origin's own bookkeeping. */
export interface PublicQueueInfo extends QueueFacts {
  /** When the event sold out (available = 0 and held = 0), for the propagation metric. */
  soldOutAt: number | null;
  seedCommitment: string;
  fairnessMode: string;
  /** The event the queue sells: the queue's own id, or a presale tier's event. */
  ownerEventId: string;
  /** The event's fairness mode is not signed off: the queue stays closed (NOT_OPEN) whatever the time. */
  awaitingSignOff: boolean;
  /**
   * The admission controller's last count of the event's seats by section (its tick's inventory read) and when it
   * was taken (epoch ms): an event's own queue only, null for a presale tier's or before any tick.
   */
  sectionCounts: SectionCountsSnapshot | null;
}

/** The controller's count of an event's seats by section ([code, available, held, sold] each), taken at `at` (epoch ms). */
export interface SectionCountsSnapshot {
  at: number;
  rows: readonly (readonly [string, number, number, number])[];
}

/**
 * While an event is in LAST_CHANCE its watermark alone is reloaded this often (ms, when shorter than the refresh):
 * its sell-out reaches the status polls within a tenth of a second of the controller's tick, not half a second.
 */
export const NEAR_END_REFRESH_MS = 100;

/**
 * Every event's watermark and queue state, held in memory by each store-API instance and refreshed from
 * PostgreSQL every `refreshMs` (default 500 ms), so a status poll never reads the database. Admission tokens
 * issued are counted here and flushed in batches on the same beat.
 */
export class WatermarkStore {
  private readonly byEvent = new Map<string, PublicQueueInfo>();
  private claims: { eventId: string; accountId: string }[] = [];
  private holdOutcomes = new Map<string, { created: number; refused: number; gatewayFailures: number }>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private nearEndTimer: NodeJS.Timeout | undefined;
  private nearEndRunning: Promise<void> | undefined;
  loadedAt = 0;

  /**
   * This process's holds and checkouts in flight and its hold latency per event (the routes count them), reported
   * on the same beat as `store_load` rows: what the admission controller's window follows.
   */
  readonly load: StoreLoadTracker;

  /**
   * `clock` (epoch ms): the time admission claims and the store's load are recorded at, the one the admission
   * controller's signals are read against. Unset (production): the database's clock. `instance` names this process's
   * load reports (default host:pid).
   */
  constructor(
    private readonly db: Db,
    private readonly refreshMs = 500,
    private readonly clock?: () => number,
    private readonly instance = `store:${process.pid}`,
    private readonly nearEndRefreshMs = NEAR_END_REFRESH_MS,
  ) {
    this.load = new StoreLoadTracker(clock);
  }

  private claimedAt(): Date | undefined {
    return this.clock ? new Date(this.clock()) : undefined;
  }

  static toState(r: WatermarkRow, now = Date.now()): WatermarkState {
    const revealed = r.seed_revealed_at !== null;
    return {
      eventId: r.event_id,
      admittedThrough: Number(r.admitted_through),
      // A presale that has closed admits nobody again: it reads as sold out (its seats roll to the next sale).
      state: r.paused
        ? 'PAUSED'
        : r.inventory_state === 'SOLD_OUT' || (r.closes_at !== null && now >= r.closes_at.getTime())
          ? 'SOLD_OUT'
          : now < r.onsale_at.getTime() || r.awaiting_signoff
            ? 'NOT_OPEN'
            : r.inventory_state === 'LAST_CHANCE'
              ? 'LAST_CHANCE'
              : 'OPEN',
      ratePerMin: r.rate_per_min,
      updatedAt: r.updated_at.getTime(),
      heartbeatAt: r.heartbeat_at?.getTime() ?? 0,
      cohortSize: r.cohort_size,
      // The seed never leaves the origin before the open's reveal.
      seedHex: revealed ? r.seed_hex : null,
      history: r.watermark_history.map(([at, through]) => [Number(at), Number(through)] as const),
    };
  }

  static toInfo(r: WatermarkRow, now = Date.now()): PublicQueueInfo {
    return {
      watermark: WatermarkStore.toState(r, now),
      soldOutAt: r.sold_out_at?.getTime() ?? null,
      copy: queueCopy(r.queue_copy, copyTimesOf(r.hold_ttl_seconds)),
      copyByLanguage: queueCopyByLanguage(r.queue_copy, r.look_copy, copyTimesOf(r.hold_ttl_seconds)),
      seedCommitment: r.seed_commitment,
      fairnessMode: r.fairness_mode,
      listingId: r.listing_id,
      ownerEventId: r.owner_event_id,
      tier: r.tier,
      tierName: r.tier_name,
      closesAt: r.closes_at?.getTime() ?? null,
      awaitingSignOff: r.awaiting_signoff,
      moves: r.moves ?? [],
      sectionCounts:
        r.section_counts && r.counted_at && r.tier === null && r.owner_event_id === r.event_id
          ? { at: r.counted_at.getTime(), rows: r.section_counts }
          : null,
    };
  }

  async refresh(): Promise<void> {
    const read = ++this.reads;
    const rows = await loadWatermarks(this.db);
    const now = Date.now();
    for (const r of rows) this.put(r.event_id, WatermarkStore.toInfo(r, now), read);
    this.loadedAt = now;
    const claims = this.claims;
    this.claims = [];
    await recordClaims(this.db, claims, this.claimedAt()).catch(() => {
      this.claims.push(...claims); // keep them for the next beat
    });
    const outcomes = this.holdOutcomes;
    this.holdOutcomes = new Map();
    await recordHoldOutcomes(this.db, outcomes).catch(() => {
      // Kept for the next beat, added to what it counts meanwhile (the controller's signal loses nothing).
      for (const [eventId, o] of outcomes) {
        const now = this.holdOutcomes.get(eventId);
        if (!now) this.holdOutcomes.set(eventId, o);
        else for (const k of ['created', 'refused', 'gatewayFailures'] as const) now[k] += o[k];
      }
    });
    // A snapshot: the next beat's report replaces a failed one whole; the controller treats a report older than
    // STORE_LOAD_FRESH_MS as no report, so a process that cannot write is not counted on stale figures.
    await reportStoreLoad(this.db, this.instance, this.load.snapshot(), this.claimedAt()).catch(() => {});
  }

  /**
   * Reloads the watermark of each event in LAST_CHANCE (one row each; nothing when none is): a sell-out is read
   * within nearEndRefreshMs of the controller writing it. Claims and loads are still flushed on the refresh's beat.
   */
  async refreshNearEnd(): Promise<void> {
    const near = [...this.byEvent].filter(([, info]) => info.watermark.state === 'LAST_CHANCE').map(([id]) => id);
    for (const id of near) {
      const read = ++this.reads;
      const [row] = await loadWatermarks(this.db, id);
      if (row) this.put(id, WatermarkStore.toInfo(row, Date.now()), read);
    }
  }

  /** When each queue's info in memory was read (a counter, taken as the read started). */
  private readonly readAt = new Map<string, number>();
  private reads = 0;

  /** Keeps the later of two reads of a queue (the full refresh's read may have started before a near-end reload's). */
  private put(id: string, info: PublicQueueInfo, read: number): void {
    if ((this.readAt.get(id) ?? -1) > read) return;
    this.readAt.set(id, read);
    this.byEvent.set(id, info);
  }

  async start(): Promise<void> {
    await this.refresh();
    if (this.nearEndRefreshMs < this.refreshMs) {
      this.nearEndTimer = setInterval(() => {
        if (this.nearEndRunning) return;
        // A failed reload keeps the last state; the full refresh's beat (and its outage logging) follows anyway.
        this.nearEndRunning = this.refreshNearEnd()
          .catch(() => {})
          .finally(() => (this.nearEndRunning = undefined));
      }, this.nearEndRefreshMs);
      this.nearEndTimer.unref();
    }
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.refresh()
        // The next beat (refreshMs later) tries again with what this one kept; a database outage is logged once, by
        // the pool's health listener (logOutages), not every 500 ms here.
        .catch(() => {})
        .finally(() => (this.running = undefined));
    }, this.refreshMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.nearEndTimer) clearInterval(this.nearEndTimer);
    await this.running;
    await this.nearEndRunning;
    // The last flush of a stopping process: if the database does not answer, at most one beat's counts are lost (the
    // controller reads them as a rate over a window), and a stop must not hang or throw on it.
    await recordClaims(this.db, this.claims, this.claimedAt()).catch(() => {});
    await recordHoldOutcomes(this.db, this.holdOutcomes).catch(() => {});
  }

  /**
   * The event's queue info as of the last refresh. An event created since the last refresh is loaded alone on
   * first use (callers check the event exists, or hold a token signed for it, before asking).
   */
  async get(eventId: string): Promise<PublicQueueInfo | undefined> {
    const hit = this.byEvent.get(eventId);
    if (hit) return hit;
    const [row] = await loadWatermarks(this.db, eventId);
    if (!row) return undefined;
    const info = WatermarkStore.toInfo(row);
    this.byEvent.set(eventId, info);
    return info;
  }

  /** The event's info as of the last refresh, without loading. */
  peek(eventId: string): PublicQueueInfo | undefined {
    return this.byEvent.get(eventId);
  }

  /** Every event's info as of the last refresh (for metrics). */
  all(): PublicQueueInfo[] {
    return [...this.byEvent.values()];
  }

  /** A hold made (true) or refused for want of seats (false), flushed with the claims on the next beat. */
  countHold(eventId: string, created: boolean): void {
    let o = this.holdOutcomes.get(eventId);
    if (!o) this.holdOutcomes.set(eventId, (o = { created: 0, refused: 0, gatewayFailures: 0 }));
    if (created) o.created++;
    else o.refused++;
  }

  /**
   * A checkout the payment gateway failed (refused for load, errored, timed out: nothing charged), flushed on the
   * next beat: what the war room and the controller count as the platform's checkout failures.
   */
  countGatewayFailure(eventId: string): void {
    let o = this.holdOutcomes.get(eventId);
    if (!o) this.holdOutcomes.set(eventId, (o = { created: 0, refused: 0, gatewayFailures: 0 }));
    o.gatewayFailures++;
  }

  /**
   * A place that moved to another device, known to this process at once (other processes and the edges read it on
   * their next refresh): the earlier device's polls answer POSITION_MOVED from now on.
   */
  noteMove(queueId: string, joinIndex: number, moves: number): void {
    const info = this.byEvent.get(queueId);
    if (!info) return;
    // A new list, not an edit: the status rule caches its lookup per list.
    info.moves = [...(info.moves ?? []).filter(([i]) => i !== joinIndex), [joinIndex, moves]];
  }

  countClaim(eventId: string, accountId: string): void {
    this.claims.push({ eventId, accountId });
  }
}
