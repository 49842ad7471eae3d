/** A clock a test moves itself, so nothing waits for the wall clock to pass. */
export interface ManualClock {
  /** Epoch milliseconds: pass `clock.now` where a component takes `() => number`. */
  readonly now: () => number;
  /** The same time as a Date. */
  readonly date: () => Date;
  /** Moves the clock forward. */
  advance(ms: number): void;
  /** Sets the clock. */
  set(ms: number): void;
}

/** A clock starting at `startMs` (default: the wall clock's now, so database rows written with now() line up). */
export function manualClock(startMs: number = Date.now()): ManualClock {
  let ms = startMs;
  return {
    now: () => ms,
    date: () => new Date(ms),
    advance: (by) => {
      if (!(by >= 0)) throw new RangeError('a clock only moves forward');
      ms += by;
    },
    set: (to) => {
      ms = to;
    },
  };
}
