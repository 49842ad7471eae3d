import { databaseFaultOf, type DatabaseFault } from './faults.js';

/**
 * Failures after which a batch is not written again item by item: a lost connection (the batch may have committed),
 * and a pool with no free connection (each item would wait the pool's whole wait again).
 */
const NOT_AGAIN = new Set<DatabaseFault | null>(['unavailable', 'saturated']);

export interface GroupCommitOptions<I> {
  maxBatch?: number;
  maxWaitMs?: number;
  maxConcurrentBatches?: number;
  /**
   * Keys an item holds exclusively while its batch is being written: an item that shares a key with the batch
   * being built, or with one in flight, waits for a later batch (say, one account's two requests: the second must
   * see the first's writes, and a statement cannot see its own).
   */
  keys?: (item: I) => readonly string[];
  /**
   * A batch whose write fails as a whole and was rolled back (a deadlock with another process, a lock or statement
   * timeout) is written again item by item. Never after a lost connection: the batch may have committed before its
   * answer was lost, and writing it again would repeat it (a hold's id twice); its callers are told of the outage.
   */
  retryAlone?: boolean;
}

interface Pending<I, O> {
  item: I;
  resolve: (o: O) => void;
  reject: (e: unknown) => void;
}

/**
 * An application-level group commit: calls arriving within a few milliseconds share one statement (and one
 * commit), so a burst of small writes costs a fraction of a transaction each. `write` receives the batch in
 * arrival order and returns one result per item, in the same order; a result that is an Error is that item's
 * refusal alone (its caller's promise rejects with it).
 */
export class GroupCommit<I, O> {
  private pending: Pending<I, O>[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;
  private readonly busy = new Set<string>();

  constructor(
    private readonly write: (items: I[]) => Promise<(O | Error)[]>,
    private readonly opts: GroupCommitOptions<I> = {},
  ) {}

  submit(item: I): Promise<O> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= (this.opts.maxBatch ?? 200)) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.opts.maxWaitMs ?? 2);
    });
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length === 0) return;
    if (this.inFlight >= (this.opts.maxConcurrentBatches ?? 2)) {
      this.timer = setTimeout(() => this.flush(), 1);
      return;
    }
    const max = this.opts.maxBatch ?? 200;
    const batch: Pending<I, O>[] = [];
    const rest: Pending<I, O>[] = [];
    const taken = new Set<string>();
    for (const p of this.pending) {
      const keys = this.opts.keys?.(p.item) ?? [];
      if (batch.length >= max || keys.some((k) => this.busy.has(k) || taken.has(k))) rest.push(p);
      else {
        batch.push(p);
        for (const k of keys) taken.add(k);
      }
    }
    this.pending = rest;
    if (batch.length === 0) {
      this.timer = setTimeout(() => this.flush(), 1);
      return;
    }
    for (const k of taken) this.busy.add(k);
    this.inFlight++;
    const settle = (p: Pending<I, O>, o: O | Error) => (o instanceof Error ? p.reject(o) : p.resolve(o));
    this.write(batch.map((p) => p.item))
      .then(
        (out): unknown => batch.forEach((p, i) => settle(p, out[i]!)),
        (e: unknown): unknown =>
          this.opts.retryAlone && !NOT_AGAIN.has(databaseFaultOf(e))
            ? Promise.all(batch.map((p) => this.write([p.item]).then(([o]) => settle(p, o!), p.reject)))
            : batch.forEach((p) => p.reject(e)),
      )
      .finally(() => {
        for (const k of taken) this.busy.delete(k);
        this.inFlight--;
        if (this.pending.length > 0) this.flush();
      });
  }
}
