// The pool's queue with two lanes (issue 28: hold p99 as fans time it <= 2 s). A hold's statement takes a few ms; under
// an on-sale its time is the wait for one of the store's pooled connections, shared with seat maps, joins and
// background reads, in pg-pool's one first-come queue. Here a query of a request on the purchase path (a hold, a
// checkout, a hold's other routes) that finds every connection busy takes the next connection handed back before any
// other waiting query, whatever came first; the others keep their order among themselves. The pool's size, the
// pool wait (DB_POOL_WAIT_MS: a query that waited that long fails as pg-pool's own wait does, a 503 at the store API)
// and the number of waiting queries the shedder reads (`waitingCount`) are unchanged.
//
// A query's lane is carried explicitly, by the Db it runs on (inPoolLane in connect.ts: a Kysely over the same pool
// whose checkouts carry a tag), not through async context: on Node 20 an AsyncLocalStorage in use turns on promise
// hooks for every promise of the process, ~12% of the store's busy time on the join path (issue 27).
import type pg from 'pg';
import { POOL_WAIT_EXCEEDED } from './faults.js';

/** Which queue a query waits in: `purchase` first, then `standard`. */
export type PoolLane = 'purchase' | 'standard';

/** What a request tells the pool about its queries: its lane and a label for the wait's timing (a route kind). */
export interface PoolTag {
  lane: PoolLane;
  kind: string;
  /**
   * One request's own tag: `false` at first, set by the pool once a query of this tag has had a connection. A purchase
   * request's later queries (a checkout's second transaction, after the payment) then wait ahead of purchase requests
   * not yet begun, so work under way finishes before new work starts. Left out (undefined), the tag is shared by many
   * requests (a route kind's) and never marked.
   */
  begun?: boolean;
}

/** Work outside any request (timed as a query with no tag is): the standard lane. */
export const BACKGROUND: PoolTag = { lane: 'standard', kind: 'background' };

/** Told of every connection obtained: the tag it waited under (undefined: none) and how long it waited, ms. */
export type PoolWaitObserver = (tag: PoolTag | undefined, waitedMs: number) => void;

interface Waiter {
  grant: () => void;
  timer: ReturnType<typeof setTimeout> | undefined;
  done: boolean;
}

/**
 * Puts the two-lane queue in front of `pool.connect`: at most `pool.options.max` checkouts at once (so pg-pool's own
 * queue stays empty), the rest waiting here, purchase first. `timeoutMs` (0: none) bounds the wait here; past it the
 * query fails with pg-pool's POOL_WAIT_EXCEEDED message. Returns a setter for the wait's observer.
 */
export function laneConnect(
  pool: pg.Pool,
  connect: (cb?: unknown) => unknown,
  timeoutMs: number,
  priority = true,
  clock: () => number = () => performance.now(),
): {
  connect: (cb?: unknown, tag?: PoolTag) => unknown;
  observe: (o: PoolWaitObserver | undefined) => void;
  waiting: () => number;
} {
  const max = (pool.options as { max?: number }).max ?? 10;
  let inUse = 0;
  // `begun`: purchase requests that have had a connection already (PoolTag.begun), served first.
  const lanes: Record<PoolLane | 'begun', Waiter[]> = { begun: [], purchase: [], standard: [] };
  let observer: PoolWaitObserver | undefined;
  const waiting = () => lanes.begun.length + lanes.purchase.length + lanes.standard.length;

  const next = (): Waiter | undefined => {
    for (const lane of ['begun', 'purchase', 'standard'] as const) {
      const q = lanes[lane];
      while (q.length) {
        const w = q.shift()!;
        if (!w.done) return w;
      }
    }
    return undefined;
  };
  // A permit handed back goes to the next waiter (who keeps it), else back to the count.
  const giveBack = () => {
    const w = next();
    if (w) {
      w.done = true;
      if (w.timer) clearTimeout(w.timer);
      w.grant();
    } else inUse--;
  };
  const permit = (tag: PoolTag | undefined): Promise<void> => {
    if (inUse < max && waiting() === 0) {
      inUse++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const w: Waiter = { grant: resolve, timer: undefined, done: false };
      const q = lanes[!priority || !tag ? 'standard' : tag.lane === 'purchase' && tag.begun ? 'begun' : tag.lane];
      if (timeoutMs > 0)
        w.timer = setTimeout(() => {
          if (w.done) return;
          w.done = true;
          // Out of the queue, so the count the shedder reads is of queries still waiting.
          const i = q.indexOf(w);
          if (i >= 0) q.splice(i, 1);
          reject(new Error(POOL_WAIT_EXCEEDED));
        }, timeoutMs);
      q.push(w);
    });
  };
  // The client's release hands the permit on, once, after pg-pool has the client back.
  const wrapRelease = (client: pg.PoolClient) => {
    const release = client.release.bind(client);
    let given = false;
    client.release = (err?: Error | boolean) => {
      try {
        return release(err);
      } finally {
        if (!given) {
          given = true;
          giveBack();
        }
      }
    };
    return client;
  };
  const checkout = async (tag: PoolTag | undefined): Promise<pg.PoolClient> => {
    const started = clock();
    await permit(tag);
    let client: pg.PoolClient;
    try {
      client = (await connect()) as pg.PoolClient;
    } catch (err) {
      giveBack();
      throw err;
    }
    observer?.(tag, clock() - started);
    if (tag?.begun === false) tag.begun = true;
    return wrapRelease(client);
  };
  return {
    connect: (cb?: unknown, tag?: PoolTag) => {
      const p = checkout(tag);
      if (typeof cb !== 'function') return p;
      p.then(
        (client) => (cb as (...a: unknown[]) => void)(undefined, client, (err?: Error | boolean) => client.release(err)),
        (err: unknown) => (cb as (...a: unknown[]) => void)(err, undefined, () => {}),
      );
      return undefined;
    },
    observe: (o) => {
      observer = o;
    },
    waiting,
  };
}
