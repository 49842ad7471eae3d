import { describe, expect, it } from 'vitest';
import { manualClock } from '../testing/index.js';
import { StoreLoadTracker } from '../queue/store-load.js';
import {
  ADMISSION_WINDOW,
  BaseLag,
  initialWindow,
  lagTargetMs,
  leaverSeconds,
  nextWindow,
  queuedBeforeStoreMs,
  servedWindow,
  storeLagMs,
  tailGapMs,
  type StoreLoad,
} from './window.js';

const idle: StoreLoad = {
  reporting: 1,
  holdsInFlight: 0,
  checkoutsInFlight: 0,
  holdsAnswered: 50,
  holdLatencyP90Ms: 120,
  oldestInFlightMs: 0,
};
const step = (over: Partial<Parameters<typeof nextWindow>[0]>) =>
  nextWindow({
    window: 100,
    cutAtMs: null,
    nowMs: 1_000_000,
    elapsedMs: 1000,
    plannedInside: 50,
    inside: 90,
    plausibleFans: 300,
    load: idle,
    ...over,
  });

describe('how late the store answers', () => {
  it('the 90th percentile, the oldest request waiting, or what a request would wait behind those in flight', () => {
    expect(storeLagMs(idle)).toBe(120);
    expect(storeLagMs({ ...idle, oldestInFlightMs: 2500 })).toBe(2500);
    // 40 in flight, 50 answered in 5 s (10 a second): a new request waits about 4 s.
    expect(storeLagMs({ ...idle, holdsInFlight: 30, checkoutsInFlight: 10 })).toBe(4000);
    // Nothing reported: nothing known (no lag invented).
    expect(storeLagMs({ ...idle, reporting: 0, holdLatencyP90Ms: 9000 })).toBe(0);
  });
});

describe('the window on the fans inside (AIMD)', () => {
  it('starts small: 10% of the planned fans inside (at least 10 fans, never past its maximum), not open at 4x the plan', () => {
    expect(step({ window: null, inside: 0, plannedInside: 500, plausibleFans: 3000 }).window).toBe(50);
    expect(step({ window: null, inside: 0 }).window).toBe(10);
    expect(initialWindow(50, 4)).toBe(4);
    // Then it grows by 10% of the plan a second while in use and the store keeps up: the plan in about 10 s.
    let w: number | null = null;
    for (let s = 0; s < 10; s++)
      w = step({ window: w, plannedInside: 500, plausibleFans: 3000, inside: w ?? 0, load: { ...idle, holdsAnswered: 5000 } }).window;
    expect(w).toBe(500);
  });

  it('never grows past what the store serves: twice the holds it answers a second x (a seat choice at the event clock + the target)', () => {
    // 50 holds answered in 5 s (10 a second), real time: 2 x 10 x (60 + 1) s = 1,220 fans; at time scale 30: 2 x 10 x (2 + 1) s = 60.
    expect(servedWindow(idle, null, 10)).toBe(1220);
    expect(servedWindow(idle, 30, 10)).toBe(60);
    // Nothing answered: the initial window; nothing reported: no bound.
    expect(servedWindow({ ...idle, holdsAnswered: 0 }, 30, 25)).toBe(25);
    expect(servedWindow({ ...idle, reporting: 0 }, 30, 25)).toBe(Infinity);
    // Fans queued before the store (its latency fine, its answers few): the window stops at 60 and is not cut for it.
    expect(step({ window: 55, inside: 55, plannedInside: 500, plausibleFans: 3000, clockScale: 30 })).toMatchObject({
      window: 60,
      lagging: false,
    });
    expect(step({ window: 80, inside: 80, plannedInside: 500, plausibleFans: 3000, clockScale: 30 })).toMatchObject({
      window: 80,
      cut: false,
    });
    // The fans holding have had their answer: the bound is on the others (60 more than the 40 holding).
    expect(step({ window: 90, inside: 90, holding: 40, plannedInside: 500, plausibleFans: 3000, clockScale: 30 }).window).toBe(100);
  });

  it("lagging is against twice the store's base lag when that is over the target: a store slow whatever the fans inside do is not cut to nothing", () => {
    const lag = { ...idle, holdLatencyP90Ms: 3000 };
    expect(lagTargetMs(null)).toBe(1000);
    expect(lagTargetMs(300)).toBe(1000);
    expect(lagTargetMs(2000)).toBe(4000);
    // Not cut, and not grown into either: the window grows only while the store answers within the target itself.
    expect(step({ load: lag, baseLagMs: 2000 })).toMatchObject({ lagging: false, cut: false, targetMs: 4000, window: 100 });
    expect(step({ load: { ...idle, holdLatencyP90Ms: 900 }, baseLagMs: 2000 })).toMatchObject({ lagging: false, window: 105 });
    expect(step({ load: lag, baseLagMs: 200 })).toMatchObject({ lagging: true, cut: true });
    // The base: the smallest lag over the last 30 s as the ticks saw it.
    const base = new BaseLag();
    expect(base.note('ev', 0, 200)).toBe(200);
    expect(base.note('ev', 10_000, 3000)).toBe(200);
    expect(base.note('ev', 29_000, 3500)).toBe(200);
    expect(base.note('ev', 31_000, 3200)).toBe(3000);
    expect(base.note('ev', 40_000, 3300)).toBe(3200);
    expect(base.note('other', 40_000, 50)).toBe(50);
  });

  it('grows by at most the holds the store answers a second, not 10% of a large plan: one good tick does not undo the cuts', () => {
    // The stadium's plan: 15,560 fans inside (10% of it 1,556 a second); the window cut to 1; the store answered 100
    // holds over the last 5 s (20 a second) and its lag dipped under the target for this tick.
    const big = { plannedInside: 15_560, plausibleFans: 60_000, clockScale: 30, inside: 125, window: 1 };
    const answered = { ...idle, holdsAnswered: 100 };
    expect(step({ ...big, load: answered }).window).toBe(21);
    expect(step({ ...big, load: answered, elapsedMs: 4000 }).window).toBe(81);
    // Nothing reported (no store figures): the plan's step, as before.
    expect(step({ ...big, window: 100, load: { ...idle, reporting: 0 } }).window).toBe(1656);
  });

  it('a lagging store halves it from the fans inside, at most once per interval (or per lag, when longer)', () => {
    const lag = { ...idle, holdLatencyP90Ms: 3000 };
    const cut = step({ load: lag, inside: 80 });
    expect(cut).toMatchObject({ window: 40, lagging: true, cut: true, cutAtMs: 1_000_000 });
    // 2 s later: the lag (3 s) has not passed since the cut, so no second cut.
    expect(step({ load: lag, window: 40, cutAtMs: 1_000_000, nowMs: 1_002_000 })).toMatchObject({ window: 40, cut: false });
    expect(step({ load: lag, window: 40, inside: 40, cutAtMs: 1_000_000, nowMs: 1_003_000 })).toMatchObject({ window: 20, cut: true });
    // Never below one fan.
    expect(step({ load: lag, window: 1, inside: 0 }).window).toBe(ADMISSION_WINDOW.min);
  });

  it('a store that sheds holds of fans let in halves it however fast it answers the rest (a loss), at most once a second', () => {
    const shedding = { ...idle, holdsShed: 3 };
    const cut = step({ load: shedding, inside: 80 });
    expect(cut).toMatchObject({ window: 40, lagging: false, shedding: true, cut: true, cutAtMs: 1_000_000 });
    // Within the second: no second cut; a second later, still shedding: halved again.
    expect(step({ load: shedding, window: 40, cutAtMs: 1_000_000, nowMs: 1_000_500 })).toMatchObject({ window: 40, cut: false });
    expect(step({ load: shedding, window: 40, inside: 40, cutAtMs: 1_000_000, nowMs: 1_001_000 })).toMatchObject({ window: 20, cut: true });
    // It never grows while the store sheds, even with the window in use and no lag.
    expect(step({ load: shedding, window: 100, inside: 90, cutAtMs: 1_000_000, nowMs: 1_000_500 }).window).toBe(100);
    // No shed hold (or nothing reported): the window grows as before.
    expect(step({ load: { ...idle, holdsShed: 0 } })).toMatchObject({ window: 105, shedding: false });
    expect(step({ load: { ...idle, reporting: 0, holdsShed: 3 } })).toMatchObject({ shedding: false, cut: false });
  });

  it('a store that keeps up grows it by 10% of the planned fans a second (at least one) while it is in use, never past its maximum', () => {
    expect(step({ window: 100, inside: 90 }).window).toBe(105);
    expect(step({ window: 100, inside: 90, plannedInside: 5 }).window).toBe(101);
    expect(step({ window: 100, inside: 10 }).window).toBe(100); // not in use: an idle window does not grow
    expect(step({ window: 299, inside: 299 }).window).toBe(300);
    expect(step({ window: 1.6, inside: 1, plannedInside: 5 }).window).toBeCloseTo(2.6); // one fan in a window of 1.6 is in use
  });
});

describe('leavers and the tail', () => {
  it('a leaver: no hold within a minute of the event clock (at least 5 s) plus 3x the lag, never past the checkout time', () => {
    expect(leaverSeconds(300, null, 0)).toBe(60);
    expect(leaverSeconds(300, null, 2000)).toBe(66);
    expect(leaverSeconds(12, 30, 0)).toBe(5);
    expect(leaverSeconds(30, null, 0)).toBe(30);
    // Fans waiting 4 s in line before the store are not leavers either.
    expect(leaverSeconds(12, 30, 0, 4000)).toBe(9);
    // A line longer than the checkout time: the fans in it have not started theirs (at most 3x the checkout time).
    expect(leaverSeconds(12, 30, 0, 20_000)).toBe(25);
    expect(leaverSeconds(12, 30, 5000, 60_000)).toBe(36);
  });

  it('a fan who collected stays inside twice the round trip fans were measured to take (their wait since admission + the lag), never past the admission token', () => {
    // Fans whose holds reached the store 30 s after their admission (a line in front of it the store's own latency
    // does not show): a fan who collected is not a leaver for 60 s, where the estimate alone said 5 s.
    expect(leaverSeconds(12, 30, 0, 0, 30_000)).toBe(60);
    expect(leaverSeconds(12, 30, 1000, 0, 30_000)).toBe(62);
    // A short measured trip changes nothing: the estimate is the floor.
    expect(leaverSeconds(300, null, 0, 0, 1000)).toBe(60);
    // A line longer than the admission token lives: the fan's admission lapses with it (10 minutes).
    expect(leaverSeconds(12, 30, 0, 0, 400_000)).toBe(600);
    expect(leaverSeconds(600, null, 0, 1_000_000)).toBe(600);
    expect(leaverSeconds(12, 30, 0, 0, Number.NaN)).toBe(5);
  });

  it('the wait before the store: the fans who collected and hold nothing, at the pace the store answers holds, beyond their seat choice', () => {
    // 60 not holding, 10 holds answered a second: 6 s, less a seat choice of 2 s at time scale 30.
    expect(queuedBeforeStoreMs(60, idle, 30)).toBe(4000);
    // In real time a minute's choice covers it; nothing answered or nothing reported: nothing known.
    expect(queuedBeforeStoreMs(60, idle, null)).toBe(0);
    expect(queuedBeforeStoreMs(60, { ...idle, holdsAnswered: 0 }, 30)).toBe(0);
    expect(queuedBeforeStoreMs(60, { ...idle, reporting: 0 }, 30)).toBe(0);
  });

  it('the next fan 2 s after the last advance plus 1 s per fan not holding, at most 8 s; a compressed clock divides it (at least 1 s)', () => {
    expect([0, 1, 3, 6, 20].map((n) => tailGapMs(n, null))).toEqual([2000, 3000, 5000, 8000, 8000]);
    expect(tailGapMs(0, 30)).toBe(1000);
    expect(tailGapMs(6, 4)).toBe(2000);
  });
});

describe("a store process's load", () => {
  it('counts holds and checkouts in flight, the holds answered over 5 s and their 90th percentile, and says once when it is back to zero', () => {
    const clock = manualClock(1_000_000);
    const load = new StoreLoadTracker(clock.now);
    const done = Array.from({ length: 10 }, () => load.begin('ev', 'hold'));
    const pay = load.begin('ev', 'checkout');
    clock.advance(100);
    done.forEach((d, i) => {
      clock.advance(i === 9 ? 900 : 0);
      d();
    });
    done[0]!(); // answered once only
    expect(load.snapshot()).toEqual([
      {
        eventId: 'ev',
        holdsInFlight: 0,
        checkoutsInFlight: 1,
        holdsAnswered: 10,
        holdLatencyP90Ms: 100,
        oldestInFlightMs: 1000,
        admittedWaitP90Ms: 0,
        holdsShed: 0,
      },
    ]);
    pay();
    clock.advance(5000);
    expect(load.snapshot()).toEqual([
      {
        eventId: 'ev',
        holdsInFlight: 0,
        checkoutsInFlight: 0,
        holdsAnswered: 0,
        holdLatencyP90Ms: 0,
        oldestInFlightMs: 0,
        admittedWaitP90Ms: 0,
        holdsShed: 0,
      },
    ]);
    expect(load.snapshot()).toEqual([]);
  });

  it('counts the holds it shed (503 unserved) over the last 5 s, and says once when it is back to zero', () => {
    const clock = manualClock(1_000_000);
    const load = new StoreLoadTracker(clock.now);
    load.shed('ev');
    clock.advance(2000);
    load.shed('ev');
    load.shed('ev');
    expect(load.snapshot()).toEqual([expect.objectContaining({ eventId: 'ev', holdsInFlight: 0, holdsAnswered: 0, holdsShed: 3 })]);
    clock.advance(3000); // the first is 5 s old
    expect(load.snapshot()[0]).toMatchObject({ holdsShed: 2 });
    clock.advance(2000);
    expect(load.snapshot()).toEqual([expect.objectContaining({ eventId: 'ev', holdsShed: 0 })]);
    expect(load.snapshot()).toEqual([]);
  });

  it('keeps how long the fans whose holds arrived had waited since their admission, 90th percentile over 30 s', () => {
    const clock = manualClock(1_000_000);
    const load = new StoreLoadTracker(clock.now);
    // Ten holds arrive, their fans admitted 1..10 s before; a checkout carries no admission wait.
    for (let k = 1; k <= 10; k++) load.begin('ev', 'hold', k * 1000)();
    load.begin('ev', 'checkout', 60_000)();
    expect(load.snapshot()[0]).toMatchObject({ holdsAnswered: 10, admittedWaitP90Ms: 9000 });
    // Past the answered holds' 5 s the waits are still known (a line that lets few holds through still shows)...
    clock.advance(10_000);
    expect(load.snapshot()[0]).toMatchObject({ holdsAnswered: 0, admittedWaitP90Ms: 9000 });
    // ...until 30 s after they arrived.
    clock.advance(20_000);
    expect(load.snapshot()[0]).toMatchObject({ admittedWaitP90Ms: 0 });
  });
});
