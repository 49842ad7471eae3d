/**
 * An application-level group commit: calls arriving within a few milliseconds share one statement (and one
 * commit), so a burst of small writes costs a fraction of a transaction each. `write` receives the batch in
 * arrival order and returns one result per item, in the same order.
 */
export class GroupCommit<I, O> {
  private pending: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;

  constructor(
    private readonly write: (items: I[]) => Promise<O[]>,
    private readonly opts: { maxBatch?: number; maxWaitMs?: number; maxConcurrentBatches?: number } = {},
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
    const batch = this.pending.splice(0, this.opts.maxBatch ?? 200);
    this.inFlight++;
    this.write(batch.map((p) => p.item))
      .then((out) => batch.forEach((p, i) => p.resolve(out[i]!)))
      .catch((e) => batch.forEach((p) => p.reject(e)))
      .finally(() => {
        this.inFlight--;
        if (this.pending.length > 0) this.flush();
      });
  }
}
