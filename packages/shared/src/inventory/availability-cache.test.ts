import { describe, expect, it } from 'vitest';
import { waitUntil } from '../testing/poll.js';
import { SectionAvailabilityCache } from './availability-cache.js';
import type { AvailableSeat } from './holds.repository.js';

const seat = (id: number): AvailableSeat => ({ id, rowIndex: 0, rowLabel: 'A', seatNumber: id, quality: id });

/** A loader that counts its calls and resolves when told. */
function gate<T>(value: () => T) {
  let calls = 0;
  const waiting: (() => void)[] = [];
  return {
    load: () => {
      calls++;
      return new Promise<T>((resolve) => waiting.push(() => resolve(value())));
    },
    release: () => waiting.splice(0).forEach((f) => f()),
    get calls() {
      return calls;
    },
  };
}

describe('SectionAvailabilityCache', () => {
  it('shares one read among the requests that need a section at once', async () => {
    const cache = new SectionAvailabilityCache(1000, () => 0.5);
    const read = gate(() => [seat(1), seat(2)]);
    const views = Array.from({ length: 50 }, () => cache.view('e', 'A', read.load));
    await Promise.resolve();
    read.release();
    const got = await Promise.all(views);
    expect(read.calls).toBe(1);
    expect(got.every((v) => v.fresh && v.seats.length === 2)).toBe(true);
  });

  it('fills every view of an event with one read on its first request', async () => {
    const cache = new SectionAvailabilityCache(1000, () => 0.5);
    const event = gate(
      () =>
        new Map([
          ['A', [seat(1)]],
          ['B', [seat(2), seat(3)]],
        ]),
    );
    const section = gate(() => [] as AvailableSeat[]);
    const first = Promise.all([cache.view('e', 'A', section.load, event.load), cache.view('e', 'B', section.load, event.load)]);
    await Promise.resolve();
    event.release();
    const [a, b] = await first;
    expect(event.calls).toBe(1);
    expect(section.calls).toBe(0);
    expect(a.seats.map((s) => s.id)).toEqual([1]);
    expect(b.seats.map((s) => s.id)).toEqual([2, 3]);
    // A view the event read did not hold (no seats available then) is read on its own.
    const c = cache.view('e', 'C', section.load, event.load);
    await waitUntil('the section read', async () => section.calls === 1, { intervalMs: 1 });
    section.release();
    expect((await c).seats).toEqual([]);
    expect(event.calls).toBe(1);
    expect(section.calls).toBe(1);
  });

  it('keeps serving a lapsed view while one background read refreshes it', async () => {
    const cache = new SectionAvailabilityCache(1000, () => 0.5);
    cache.set('e', 'A', [seat(1)]);
    let next = [seat(7)];
    const read = gate(() => next);
    const later = Date.now() + 5000;
    const stale = await Promise.all(Array.from({ length: 10 }, () => cache.view('e', 'A', read.load, undefined, later)));
    expect(stale.every((v) => !v.fresh && v.seats[0]!.id === 1)).toBe(true);
    expect(read.calls).toBe(1);
    read.release();
    await waitUntil('the refreshed view', async () => cache.current('e', 'A')[0]?.id === 7, { intervalMs: 1 });
    next = [seat(9)];
    const after = await cache.view('e', 'A', read.load);
    expect(after.seats.map((s) => s.id)).toEqual([7]);
    expect(read.calls).toBe(1);
  });

  it('refreshes lapsed views one background read at a time, each once, while serving them', async () => {
    const cache = new SectionAvailabilityCache(1000, () => 0.5);
    const sections = Array.from({ length: 20 }, (_, i) => `S${i}`);
    for (const s of sections) cache.set('e', s, [seat(1)]);
    let inFlight = 0;
    let most = 0;
    const reads: string[] = [];
    const loader = (s: string) => async () => {
      reads.push(s);
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, 2));
      inFlight--;
      return [seat(2)];
    };
    const later = Date.now() + 5000;
    // Every view lapses at once; each is asked for three times.
    for (let round = 0; round < 3; round++)
      for (const s of sections) expect((await cache.view('e', s, loader(s), undefined, later)).seats.map((x) => x.id)).toEqual([1]);
    // Done when every view holds what its read returned (the last read has ended).
    await waitUntil('every view refreshed', async () => inFlight === 0 && sections.every((s) => cache.current('e', s)[0]?.id === 2), {
      timeoutMs: 5_000,
      intervalMs: 5,
    });
    expect(most).toBe(1);
    expect([...reads].sort()).toEqual([...sections].sort());
    for (const s of sections) expect(cache.current('e', s).map((x) => x.id)).toEqual([2]);
  });

  it('joins a read in flight only if it started no earlier than asked', async () => {
    const cache = new SectionAvailabilityCache(1000, () => 0.5);
    const read = gate(() => [seat(1)]);
    const since = performance.now();
    const a = cache.refresh('e', 'A', read.load, since);
    const b = cache.refresh('e', 'A', read.load, since);
    expect(read.calls).toBe(1);
    const c = cache.refresh('e', 'A', read.load, performance.now() + 60_000);
    expect(read.calls).toBe(2);
    read.release();
    await Promise.all([a, b, c]);
  });

  it('hides seats another request of this process is attempting', async () => {
    const cache = new SectionAvailabilityCache(1000, () => 0.5);
    cache.set('e', 'A', [seat(1), seat(2), seat(3)]);
    cache.claim('e', 'A', [2]);
    const v = await cache.view('e', 'A', async () => []);
    expect(v.seats.map((s) => s.id)).toEqual([1, 3]);
    cache.unclaim('e', 'A', [2]);
    expect((await cache.view('e', 'A', async () => [])).seats).toHaveLength(3);
  });
});
