import type { Db } from '../db/connect.js';
import type { StoreMetrics, StoreMetricsScraper } from './store-metrics.js';
import { appendPoint, toPoint, type WarRoomPoint } from './series.js';
import { findBoardEvents, readWarRoomSnapshots, toTile, type WarRoomSnapshot, type WarRoomTile } from './warroom.service.js';

/** What a war-room stream carries for one event. */
export type WarRoomMessage =
  | {
      type: 'snapshot';
      snapshot: WarRoomSnapshot;
      /** On the first message only: the points this process kept (up to `historyMinutes`), oldest first. */
      history?: WarRoomPoint[];
    }
  /** The figures could not be read this tick (the database is unreachable, or the event is gone). Never stale numbers. */
  | { type: 'unavailable'; at: string; reason: string };

/** What the board stream carries: every event on sale today or now, one tile each. */
export type WarRoomBoardMessage = { type: 'board'; at: string; tiles: WarRoomTile[] } | { type: 'unavailable'; at: string; reason: string };

export interface WarRoomHubOptions {
  db: Db;
  /** Scrapes the store API's /metrics for hold latency and sold-out propagation; absent: those figures are null. */
  storeMetrics?: StoreMetricsScraper;
  /** How often watched events are read (default 1000 ms). */
  tickMs?: number;
  /** The board is read every this many ticks (default 2: every 2 s). */
  boardEveryTicks?: number;
  /** How much of the rolling series is kept per event (default 15 minutes). */
  historyMinutes?: number;
  /** Most events on one board (default 200). */
  boardLimit?: number;
  /**
   * The time each event's state is judged at (its controller's heartbeat against it), in epoch ms. Unset
   * (production): the database's clock. Tests that drive the admission controller's clock pass the same one.
   */
  clock?: () => number;
  onError?: (err: unknown) => void;
}

interface Mailbox<T> {
  value: T | undefined;
  wake: (() => void) | undefined;
}

interface EventWatcher {
  eventId: string;
  box: Mailbox<WarRoomMessage>;
  sentHistory: boolean;
}

interface BoardWatcher {
  key: string;
  timeZone: string;
  organisationId: string | null;
  box: Mailbox<WarRoomBoardMessage>;
  served: boolean;
}

function put<T>(box: Mailbox<T>, value: T): void {
  // Latest value only: a slow reader skips to the newest figures instead of queueing old ones.
  box.value = value;
  const wake = box.wake;
  box.wake = undefined;
  wake?.();
}

/** Yields the mailbox's values until the signal aborts; `detach` runs once when the reader goes. */
async function* drain<T>(box: Mailbox<T>, signal: AbortSignal | undefined, detach: () => void): AsyncGenerator<T> {
  const onAbort = () => {
    const wake = box.wake;
    box.wake = undefined;
    wake?.();
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    while (!signal?.aborted) {
      if (box.value === undefined) await new Promise<void>((resolve) => (box.wake = resolve));
      if (signal?.aborted) break;
      const value = box.value;
      box.value = undefined;
      if (value !== undefined) yield value;
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    detach();
  }
}

/**
 * One reader of the war room's figures per BFF process, however many operators watch: every tick it reads the
 * watched events once (one consistent read for all of them, see readWarRoomSnapshots) and hands the result to
 * every stream. It ticks only while someone watches, never overlaps its own ticks, and keeps a short rolling
 * series per event so a reloaded page gets its charts back at once.
 */
export class WarRoomHub {
  private readonly db: Db;
  private readonly store: StoreMetricsScraper | undefined;
  readonly tickMs: number;
  private readonly boardEveryTicks: number;
  private readonly historyMs: number;
  private readonly boardLimit: number;
  private readonly onError: (err: unknown) => void;
  private readonly clock: (() => number) | undefined;
  private readonly eventWatchers = new Set<EventWatcher>();
  private readonly boardWatchers = new Set<BoardWatcher>();
  private readonly history = new Map<string, WarRoomPoint[]>();
  private readonly latest = new Map<string, WarRoomSnapshot>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** A refresh was asked for while a tick was reading: the next tick runs as soon as that one ends. */
  private again = false;
  private ticks = 0;
  private closed = false;

  constructor(opts: WarRoomHubOptions) {
    this.db = opts.db;
    this.store = opts.storeMetrics;
    this.tickMs = opts.tickMs ?? 1000;
    if (!(this.tickMs >= 50)) throw new RangeError('tickMs must be at least 50');
    this.boardEveryTicks = Math.max(1, Math.round(opts.boardEveryTicks ?? 2));
    this.historyMs = (opts.historyMinutes ?? 15) * 60_000;
    this.boardLimit = opts.boardLimit ?? 200;
    this.onError = opts.onError ?? (() => {});
    this.clock = opts.clock;
  }

  /** The store API's figures as of the last scrape (undefined when no store API is configured). */
  get storeMetrics(): StoreMetrics | undefined {
    return this.store?.current;
  }

  /** How many streams are open (for tests and health). */
  get watchers(): { events: number; boards: number } {
    return { events: this.eventWatchers.size, boards: this.boardWatchers.size };
  }

  /** Whether a read is running or the next one is scheduled (false once the last stream has gone and the hub is idle). */
  get reading(): boolean {
    return this.running !== undefined || this.timer !== undefined;
  }

  /**
   * A stream of one event's figures: a first message at once (with the kept series), then one per tick until
   * `signal` aborts. The caller checks that the user may see the event before calling.
   */
  watchEvent(eventId: string, signal?: AbortSignal): AsyncGenerator<WarRoomMessage> {
    const w: EventWatcher = { eventId, box: { value: undefined, wake: undefined }, sentHistory: false };
    this.eventWatchers.add(w);
    const cached = this.latest.get(eventId);
    if (cached && Date.now() - Date.parse(cached.at) < this.tickMs) this.deliver(w, cached);
    this.kick();
    return drain(w.box, signal, () => this.detach(() => this.eventWatchers.delete(w)));
  }

  /** A stream of the board (events on sale today in `timeZone`, or on sale now; one organisation's when given). */
  watchBoard(opts: { timeZone: string; organisationId: string | null }, signal?: AbortSignal): AsyncGenerator<WarRoomBoardMessage> {
    const w: BoardWatcher = {
      key: `${opts.timeZone}|${opts.organisationId ?? '*'}`,
      timeZone: opts.timeZone,
      organisationId: opts.organisationId,
      box: { value: undefined, wake: undefined },
      served: false,
    };
    this.boardWatchers.add(w);
    this.kick();
    return drain(w.box, signal, () => this.detach(() => this.boardWatchers.delete(w)));
  }

  /** Stops ticking and ends every stream. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    const at = new Date().toISOString();
    for (const w of this.eventWatchers) put(w.box, { type: 'unavailable', at, reason: 'the server is shutting down' });
    for (const w of this.boardWatchers) put(w.box, { type: 'unavailable', at, reason: 'the server is shutting down' });
  }

  /** The rolling series kept for an event, oldest first. */
  seriesOf(eventId: string): WarRoomPoint[] {
    return [...(this.history.get(eventId) ?? [])];
  }

  private detach(remove: () => void): void {
    remove();
    if (this.eventWatchers.size === 0 && this.boardWatchers.size === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private deliver(w: EventWatcher, s: WarRoomSnapshot): void {
    if (w.sentHistory) return put(w.box, { type: 'snapshot', snapshot: s });
    w.sentHistory = true;
    put(w.box, { type: 'snapshot', snapshot: s, history: this.seriesOf(w.eventId) });
  }

  /**
   * Reads the watched events again now instead of at the next tick: called after an operator's control (pause,
   * resume, rate, roll) so the war room shows its effect at once. A tick already reading may have read before the
   * change, so another follows it straight away.
   */
  refresh(): void {
    if (this.running) this.again = true;
    else this.kick();
  }

  /** Runs a tick now unless one is running (a new stream should not wait a whole interval for its first figures). */
  private kick(): void {
    // A tick in flight schedules the next one when it ends.
    if (this.closed || this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.loop();
  }

  private loop(): void {
    if (this.closed || this.running) return;
    const started = Date.now();
    this.running = this.tick()
      .catch((err) => this.onError(err))
      .finally(() => {
        this.running = undefined;
        const again = this.again;
        this.again = false;
        if (this.closed || (this.eventWatchers.size === 0 && this.boardWatchers.size === 0)) return;
        this.timer = setTimeout(
          () => {
            this.timer = undefined;
            this.loop();
          },
          again ? 0 : Math.max(0, this.tickMs - (Date.now() - started)),
        );
        this.timer.unref?.();
      });
  }

  private async tick(): Promise<void> {
    const boardDue = this.ticks % this.boardEveryTicks === 0 || [...this.boardWatchers].some((w) => !w.served);
    this.ticks++;
    const eventWatchers = [...this.eventWatchers];
    const boardWatchers = boardDue ? [...this.boardWatchers] : [];
    if (eventWatchers.length === 0 && boardWatchers.length === 0) return;
    const at = new Date().toISOString();
    try {
      const boards = new Map<string, string[]>();
      for (const w of boardWatchers)
        if (!boards.has(w.key))
          boards.set(
            w.key,
            await findBoardEvents(this.db, { timeZone: w.timeZone, organisationId: w.organisationId, limit: this.boardLimit }),
          );
      const ids = new Set(eventWatchers.map((w) => w.eventId));
      for (const list of boards.values()) for (const id of list) ids.add(id);
      const store = this.store ? await this.store.scrape() : undefined;
      const snapshots = await readWarRoomSnapshots(this.db, [...ids], store, this.clock ? new Date(this.clock()) : undefined);
      const byId = new Map(snapshots.map((s) => [s.eventId, s]));
      for (const s of snapshots) this.remember(s);
      for (const w of eventWatchers) {
        const s = byId.get(w.eventId);
        if (s) this.deliver(w, s);
        else put(w.box, { type: 'unavailable', at, reason: 'no such event' });
      }
      for (const w of boardWatchers) {
        const tiles = (boards.get(w.key) ?? []).flatMap((id) => {
          const s = byId.get(id);
          return s ? [toTile(s)] : [];
        });
        w.served = true;
        put(w.box, { type: 'board', at: snapshots[0]?.at ?? at, tiles });
      }
      this.forget(Date.now() - this.historyMs);
    } catch (err) {
      this.onError(err);
      for (const w of eventWatchers) put(w.box, { type: 'unavailable', at, reason: 'the war room cannot read the database' });
      for (const w of boardWatchers) put(w.box, { type: 'unavailable', at, reason: 'the war room cannot read the database' });
    }
  }

  private remember(s: WarRoomSnapshot): void {
    this.latest.set(s.eventId, s);
    this.history.set(s.eventId, appendPoint(this.history.get(s.eventId) ?? [], toPoint(s), this.historyMs));
  }

  /** Events nobody has watched for a whole history window are forgotten. */
  private forget(horizon: number): void {
    for (const [id, pts] of this.history)
      if (pts.length === 0 || pts[pts.length - 1]!.t < horizon) {
        this.history.delete(id);
        this.latest.delete(id);
      }
  }
}
