import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { OriginBreaker } from '../src/breaker.js';
import { MemoryCache } from '../src/memory-cache.js';
import { EventStateCache, NEAR_END_TTL_MS } from '../src/state-cache.js';
import type { EdgeEventState } from '@onsale/shared/queue/edge-state';
import type { WatermarkState } from '@onsale/shared/queue/edge';
import { FakeOrigin, queueState } from './fake-origin.js';

// The isolate's own state, each on an injected clock: the circuit breaker in front of the origin and the cache of
// origin answers on `workerd serve`.

// The circuit's rule on an injected clock: closed, open after N failures in a row, half-open after the open time
// with one trial at a time, closed by the trial's success or open again by its failure.

function breaker(failures = 3) {
  let now = 1_000_000;
  const b = new OriginBreaker({ failures, openMs: 5000, trialMs: 7000, now: () => now });
  return { b, advance: (ms: number) => void (now += ms) };
}

describe('OriginBreaker', () => {
  // The breaker logs its changes of state; quiet here, and given back after, since the project's files share a
  // worker's modules and globals (isolate: false).
  let quiet: { mockRestore(): void } | undefined;
  beforeAll(() => void (quiet = vi.spyOn(console, 'error').mockImplementation(() => {})));
  afterAll(() => quiet?.mockRestore());

  it('stays closed below N failures in a row; a success starts the count again', () => {
    const { b } = breaker(3);
    b.failed(false);
    b.failed(false);
    b.succeeded(false);
    b.failed(false);
    b.failed(false);
    expect(b.state).toBe('closed');
    expect(b.admit()).toEqual({ send: true, trial: false });
  });

  it('opens at N failures in a row and answers with the seconds left until the trial', () => {
    const { b, advance } = breaker(3);
    for (let i = 0; i < 3; i++) b.failed(false);
    expect(b.state).toBe('open');
    expect(b.admit()).toEqual({ send: false, retryAfterSeconds: 5 });
    advance(3500);
    expect(b.admit()).toEqual({ send: false, retryAfterSeconds: 2 });
    advance(1400);
    expect(b.admit()).toEqual({ send: false, retryAfterSeconds: 1 });
  });

  it('half-open: one trial at a time; its failure opens the circuit again for the whole open time', () => {
    const { b, advance } = breaker(1);
    b.failed(false);
    advance(5000);
    expect(b.state).toBe('half-open');
    expect(b.admit()).toEqual({ send: true, trial: true });
    expect(b.admit()).toEqual({ send: false, retryAfterSeconds: 1 });
    // Requests that were already in flight when the circuit opened end meanwhile: they do not close it.
    b.failed(false);
    b.failed(true);
    expect(b.state).toBe('open');
    expect(b.admit()).toEqual({ send: false, retryAfterSeconds: 5 });
  });

  it("half-open: the trial's success closes the circuit", () => {
    const { b, advance } = breaker(1);
    b.failed(false);
    advance(5000);
    expect(b.admit()).toMatchObject({ trial: true });
    b.succeeded(true);
    expect(b.state).toBe('closed');
    expect(b.admit()).toEqual({ send: true, trial: false });
  });

  it('a trial that never reports (its request cancelled) lets another try once the trial time has passed', () => {
    const { b, advance } = breaker(1);
    b.failed(false);
    advance(5000);
    expect(b.admit()).toMatchObject({ send: true, trial: true });
    advance(6999);
    expect(b.admit()).toMatchObject({ send: false });
    advance(2);
    expect(b.admit()).toEqual({ send: true, trial: true });
  });
});

// The isolate's own cache on `workerd serve`, on an injected clock: kept for the copy's max-age, GET only, bounded
// in bytes with the least recently used dropped first, an entry larger than its bound never kept.

const get = (url: string) => new Request(url);
const kept = (body: string, maxAge = 60) => new Response(body, { headers: { 'cache-control': `public, max-age=${maxAge}`, etag: '"x"' } });

function cache(o: { maxBytes?: number; maxEntryBytes?: number } = {}) {
  let now = 1_000_000;
  const c = new MemoryCache({ maxBytes: o.maxBytes ?? 1000, maxEntryBytes: o.maxEntryBytes ?? 500, now: () => now });
  return { c, advance: (ms: number) => void (now += ms) };
}

describe('MemoryCache', () => {
  it('answers a GET with the status, headers and body kept, until its max-age has passed', async () => {
    const { c, advance } = cache();
    await c.put(get('http://edge/e/a.js'), kept('hello', 30));
    const hit = await c.match(get('http://edge/e/a.js'));
    expect(hit?.status).toBe(200);
    expect(hit?.headers.get('etag')).toBe('"x"');
    expect(await hit?.text()).toBe('hello');
    expect(await (await c.match(get('http://edge/e/a.js')))?.text()).toBe('hello'); // the body again, not consumed
    advance(29_999);
    expect(await c.match(get('http://edge/e/a.js'))).toBeDefined();
    advance(1);
    expect(await c.match(get('http://edge/e/a.js'))).toBeUndefined();
  });

  it('keeps nothing without a max-age, and answers no other method than GET and HEAD', async () => {
    const { c } = cache();
    await c.put(get('http://edge/x'), new Response('no', { headers: { 'cache-control': 'no-store' } }));
    expect(await c.match(get('http://edge/x'))).toBeUndefined();
    await c.put(get('http://edge/y'), kept('yes'));
    expect(await c.match(new Request('http://edge/y', { method: 'POST', body: '{}' }))).toBeUndefined();
    const head = await c.match(new Request('http://edge/y', { method: 'HEAD' }));
    expect(head?.status).toBe(200);
    expect(await head?.text()).toBe('');
  });

  it('drops the least recently used past its bound in bytes; never keeps an entry larger than its own bound', async () => {
    const { c } = cache({ maxBytes: 1000, maxEntryBytes: 500 });
    await c.put(get('http://edge/1'), kept('a'.repeat(400)));
    await c.put(get('http://edge/2'), kept('b'.repeat(400)));
    await c.match(get('http://edge/1')); // 1 used last: 2 goes first
    await c.put(get('http://edge/3'), kept('c'.repeat(400)));
    expect(await c.match(get('http://edge/2'))).toBeUndefined();
    expect(await c.match(get('http://edge/1'))).toBeDefined();
    expect(await c.match(get('http://edge/3'))).toBeDefined();
    await c.put(get('http://edge/big'), kept('d'.repeat(501)));
    expect(await c.match(get('http://edge/big'))).toBeUndefined();
  });
});

// The isolate's copy of an event's state near the end of a sale: a state with a queue in LAST_CHANCE is kept
// NEAR_END_TTL_MS, not the configured TTL, so a sell-out reaches the polls within about a second (issue 28).

describe('EventStateCache near the end of a sale', () => {
  const noWait = () => {};
  const doc = (eventId: string, state: WatermarkState['state']): EdgeEventState => ({
    eventId,
    tiers: [],
    queues: [queueState(eventId, {}, { state })],
    generatedAt: Date.now(),
  });

  it("fetches a LAST_CHANCE event's state again after NEAR_END_TTL_MS, an open event's only after the TTL", async () => {
    const origin = await new FakeOrigin().start();
    try {
      const states = new Map<string, WatermarkState['state']>([
        ['near', 'LAST_CHANCE'],
        ['open', 'OPEN'],
      ]);
      for (const id of states.keys()) origin.events.set(id, () => doc(id, states.get(id)!));
      // A TTL of an hour: only the near-end rule can bring a fresh state within the test.
      const cache = new EventStateCache({ originUrl: origin.url, ttlMs: 3_600_000, originTimeoutMs: 5000 });
      const stateOf = async (id: string) => (await cache.get(id, noWait))?.state?.queues[0]!.watermark.state;
      expect(await stateOf('near')).toBe('LAST_CHANCE');
      expect(await stateOf('open')).toBe('OPEN');
      expect(NEAR_END_TTL_MS).toBeLessThanOrEqual(500);

      // Both sell out at the origin: the near-end event's polls read it within NEAR_END_TTL_MS (and the wait for the
      // one refresh), the open one's still read its copy.
      states.set('near', 'SOLD_OUT');
      states.set('open', 'SOLD_OUT');
      await expect.poll(() => stateOf('near'), { timeout: 30_000, interval: 50 }).toBe('SOLD_OUT');
      expect(await stateOf('open')).toBe('OPEN');
      expect(cache.fresh('open')).toBeDefined();
      expect(origin.count(/\/events\/open\/edge-state$/)).toBe(1);
      // A SOLD_OUT state is kept the whole TTL again: no more origin requests for it.
      const fetched = origin.count(/\/events\/near\/edge-state$/);
      expect(await stateOf('near')).toBe('SOLD_OUT');
      expect(origin.count(/\/events\/near\/edge-state$/)).toBe(fetched);
    } finally {
      await origin.stop();
    }
  });
});

// A poll never waits for the event state's refresh while the origin answers within the grace: the refresh starts a
// TTL after the last one began (still one origin request per TTL), and a state a little past its TTL answers at once
// while it runs. On an injected clock (Date.now); the origin holds its answer until the test releases it.
describe('EventStateCache refresh without a waiting poll', () => {
  const doc = (eventId: string, state: WatermarkState['state']): EdgeEventState => ({
    eventId,
    tiers: [],
    queues: [queueState(eventId, {}, { state })],
    generatedAt: Date.now(),
  });

  it('answers from the known state while the due refresh runs, within the grace past the TTL; past it, waits for the refresh', async () => {
    const origin = await new FakeOrigin().start();
    let now = Date.now();
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => now);
    try {
      origin.events.set('e', () => doc('e', 'OPEN'));
      // TTL 2 s, so the grace is a quarter of it (500 ms); a waiting poll would wait up to a minute.
      const cache = new EventStateCache({ originUrl: origin.url, ttlMs: 2000, originTimeoutMs: 60_000, maxWaitMs: 60_000 });
      const registered: Promise<unknown>[] = [];
      const ctx = { waitUntil: (p: Promise<unknown>) => void registered.push(p) };
      const stateOf = (k: { state: EdgeEventState | null } | undefined) => k?.state?.queues[0]!.watermark.state;
      expect(stateOf(await cache.get('e', ctx.waitUntil))).toBe('OPEN');
      const edgeState = /\/events\/e\/edge-state$/;
      expect(origin.count(edgeState)).toBe(1);

      // Within the TTL: answered, nothing asked of the origin (not before a TTL after the last refresh began).
      now += 1999;
      expect(stateOf(cache.fresh('e', ctx))).toBe('OPEN');
      expect(origin.count(edgeState)).toBe(1);

      // From then on the origin holds its answers until released.
      const held: ServerResponse[] = [];
      origin.raw.set('GET /events/e/edge-state', (_req, res) => void held.push(res));
      now += 1;
      // Due: the refresh starts in the background (registered with waitUntil); the poll is answered at once.
      expect(stateOf(cache.fresh('e', ctx))).toBe('OPEN');
      expect(registered).toHaveLength(2); // the first fetch, and this refresh
      await expect.poll(() => held.length, { timeout: 30_000, interval: 20 }).toBe(1);
      // Past the TTL, within the grace, while the refresh runs: at once too, and one origin request for all of them.
      now += 499;
      expect(stateOf(cache.fresh('e', ctx))).toBe('OPEN');
      expect(stateOf(await cache.get('e', ctx.waitUntil))).toBe('OPEN');
      expect(held).toHaveLength(1);
      expect(cache.fresh('e')).toBeUndefined(); // without a context: only within the TTL, as before

      // Past the grace: the fast path has nothing to answer; a poll waits for the refresh and reads what it brought.
      now += 1;
      expect(cache.fresh('e', ctx)).toBeUndefined();
      const waiting = cache.get('e', ctx.waitUntil);
      held[0]!.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc('e', 'SOLD_OUT')));
      expect(stateOf(await waiting)).toBe('SOLD_OUT');
      expect(origin.count(edgeState)).toBe(2);
    } finally {
      clock.mockRestore();
      await origin.stop();
    }
  });
});
