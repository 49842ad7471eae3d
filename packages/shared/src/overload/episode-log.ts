/**
 * One kind of trouble logged as episodes rather than per request: a warning when the first case of an episode is
 * noted, and one when none has been noted for `quietMs`, with how many there were and over how long.
 */
export class EpisodeLog {
  private episode: { since: number; count: number; lastAt: number } | null = null;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly opts: {
      log: { warn(obj: object, msg: string): void };
      /** The first line of an episode. */
      started: string;
      /** The last line of an episode, from its count and how long it lasted. */
      ended: (count: number, seconds: string) => string;
      quietMs?: number;
      now?: () => number;
    },
  ) {}

  private get quietMs(): number {
    return this.opts.quietMs ?? 5_000;
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  /** Notes one case: logs the start of an episode when none is running. */
  note(fields: object = {}): void {
    const at = this.now();
    if (!this.episode) {
      this.episode = { since: at, count: 0, lastAt: at };
      this.opts.log.warn(fields, this.opts.started);
      this.timer = setInterval(() => this.tick(), this.quietMs);
      this.timer.unref();
    }
    this.episode.count++;
    this.episode.lastAt = at;
  }

  /** Ends an episode quiet for quietMs (logged once with its count); the episode's own timer calls it. */
  tick(): void {
    const e = this.episode;
    if (!e || this.now() - e.lastAt <= this.quietMs) return;
    this.opts.log.warn({ count: e.count }, this.opts.ended(e.count, ((e.lastAt - e.since) / 1000).toFixed(1)));
    this.episode = null;
    this.stop();
  }

  /** Stops the timer (a process closing). */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
