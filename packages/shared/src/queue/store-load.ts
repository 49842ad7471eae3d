// What a store-API process is doing now, per event: holds and checkouts in flight, and how long the holds it answered
// over the last seconds took. The process reports it every half second (WatermarkStore's beat, store_load rows); the
// admission controller reads the fresh reports of every process to keep its window on the fans inside.

/** How far back the answered holds are kept for the percentile. */
export const STORE_LOAD_WINDOW_MS = 5_000;
/**
 * How far back the waits since admission are kept: longer than the answered holds' window, so a line in front of the
 * store that lets few holds through still shows (a fan's wait is known only once its hold arrives).
 */
export const ADMITTED_WAIT_WINDOW_MS = 30_000;
/** A report older than this is from a process that stopped reporting (killed, or its database link lost): ignored. */
export const STORE_LOAD_FRESH_MS = 5_000;

/** One event's load in one process at one moment. */
export interface StoreLoadSnapshot {
  eventId: string;
  holdsInFlight: number;
  checkoutsInFlight: number;
  /** Holds answered (made or refused) in the last STORE_LOAD_WINDOW_MS. */
  holdsAnswered: number;
  /** Their latency at the 90th percentile, ms (0 when none were answered). */
  holdLatencyP90Ms: number;
  /** How long the oldest hold or checkout still in flight has waited, ms (0 when none is). */
  oldestInFlightMs: number;
  /**
   * How long the fans whose holds reached the store had waited since they collected their admission (the admission
   * token's issue time), 90th percentile over the last ADMITTED_WAIT_WINDOW_MS, ms (0 when none is known).
   */
  admittedWaitP90Ms: number;
  /**
   * Holds of admitted fans this process answered 503 without serving them (load shedding) in the last
   * STORE_LOAD_WINDOW_MS: the fans the window let in that the store could not take (the controller's loss signal).
   */
  holdsShed: number;
}

interface EventLoad {
  holds: number;
  checkouts: number;
  /** Start times of the requests in flight, by a counter id. */
  started: Map<number, number>;
  /** [answered at, latency ms], oldest first. */
  answered: [number, number][];
  /** [arrived at, ms since the fan collected its admission], oldest first. */
  admitted: [number, number][];
  /** When each hold was shed (answered 503 unserved), oldest first. */
  shed: number[];
  /** Reported non-zero last time: the next report says it went back to zero. */
  reported: boolean;
}

/** The 90th percentile of a list (nearest rank); 0 for an empty list. */
export function p90(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.9 * sorted.length) - 1)]!;
}

/**
 * Counts one process's holds and checkouts in flight per event and the latency of the holds it answered. `begin`
 * at a request's start returns the function to call once it is answered (whatever the answer). `clock`: epoch ms.
 */
export class StoreLoadTracker {
  private readonly byEvent = new Map<string, EventLoad>();
  private next = 0;
  constructor(private readonly clock: () => number = Date.now) {}

  private load(eventId: string): EventLoad {
    let l = this.byEvent.get(eventId);
    if (!l)
      this.byEvent.set(
        eventId,
        (l = { holds: 0, checkouts: 0, started: new Map(), answered: [], admitted: [], shed: [], reported: false }),
      );
    return l;
  }

  /**
   * A hold or a checkout of `eventId` starts; call the returned function once when it is answered. `admittedWaitMs`:
   * how long the hold's fan had waited since it collected its admission (now less its token's issue time, both on the
   * wall clock the token was issued on).
   */
  begin(eventId: string, kind: 'hold' | 'checkout', admittedWaitMs?: number): () => void {
    const l = this.load(eventId);
    const id = this.next++;
    const at = this.clock();
    l.started.set(id, at);
    if (kind === 'hold' && admittedWaitMs !== undefined && Number.isFinite(admittedWaitMs))
      l.admitted.push([at, Math.max(0, admittedWaitMs)]);
    if (kind === 'hold') l.holds++;
    else l.checkouts++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      l.started.delete(id);
      const now = this.clock();
      if (kind === 'hold') {
        l.holds--;
        l.answered.push([now, Math.max(0, now - at)]);
      } else l.checkouts--;
    };
  }

  /** A hold of `eventId` was answered 503 before any work (shed under load): counted for STORE_LOAD_WINDOW_MS. */
  shed(eventId: string): void {
    this.load(eventId).shed.push(this.clock());
  }

  /**
   * Every event with something to report: load now, or load at the last report (so its row says it is back to
   * zero). Answered holds older than STORE_LOAD_WINDOW_MS are dropped; an event with nothing left is forgotten.
   */
  snapshot(): StoreLoadSnapshot[] {
    const now = this.clock();
    const out: StoreLoadSnapshot[] = [];
    for (const [eventId, l] of this.byEvent) {
      while (l.answered.length > 0 && l.answered[0]![0] <= now - STORE_LOAD_WINDOW_MS) l.answered.shift();
      while (l.admitted.length > 0 && l.admitted[0]![0] <= now - ADMITTED_WAIT_WINDOW_MS) l.admitted.shift();
      while (l.shed.length > 0 && l.shed[0]! <= now - STORE_LOAD_WINDOW_MS) l.shed.shift();
      const busy = l.holds > 0 || l.checkouts > 0 || l.answered.length > 0 || l.admitted.length > 0 || l.shed.length > 0;
      if (!busy && !l.reported) {
        this.byEvent.delete(eventId);
        continue;
      }
      let oldest = now;
      for (const at of l.started.values()) oldest = Math.min(oldest, at);
      out.push({
        eventId,
        holdsInFlight: l.holds,
        checkoutsInFlight: l.checkouts,
        holdsAnswered: l.answered.length,
        holdLatencyP90Ms: p90(l.answered.map(([, ms]) => ms)),
        oldestInFlightMs: now - oldest,
        admittedWaitP90Ms: p90(l.admitted.map(([, ms]) => ms)),
        holdsShed: l.shed.length,
      });
      l.reported = busy;
    }
    return out;
  }
}
