import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { describe, expect, it, vi } from 'vitest';
import {
  connectionBounds,
  Crowd,
  defaultMaxConnections,
  partySize,
  pickTracers,
  PURCHASE_CONNECTIONS,
  send,
} from '../src/rehearse/driver.js';
import { LatencyHistogram } from '../src/rehearse/histogram.js';

describe('LatencyHistogram', () => {
  it('reads back percentiles within 2% of the samples, from 10 µs to an hour', () => {
    const h = new LatencyHistogram();
    expect(h.summary()).toEqual({ count: 0, p50: null, p99: null, max: null });
    // 1..10,000 ms, one each: p50 5,000, p99 9,900.
    for (let v = 1; v <= 10_000; v++) h.add(v);
    const s = h.summary();
    expect(s.count).toBe(10_000);
    expect(s.p50!).toBeGreaterThanOrEqual(5000);
    expect(s.p50!).toBeLessThanOrEqual(5000 * 1.02);
    expect(s.p99!).toBeGreaterThanOrEqual(9900);
    expect(s.p99!).toBeLessThanOrEqual(9900 * 1.02);
    expect(s.max).toBe(10_000);
    const fine = new LatencyHistogram();
    for (const v of [0.05, 0.05, 0.3, 0.31, -1]) fine.add(v);
    expect(fine.quantile(0.5)).toBeCloseTo(0.06, 5);
    expect(fine.quantile(1)).toBeCloseTo(0.31, 5);
    const long = new LatencyHistogram();
    long.add(5 * 3_600_000);
    expect(long.quantile(0.99)).toBe(5 * 3_600_000);
  });
});

describe('partySize', () => {
  it('spreads parties of one to four about the plan tickets an order (2.5 at the stadium), ones and fours included', () => {
    const counts = [0, 0, 0, 0, 0];
    const n = 12_000;
    for (let k = 0; k < n; k++) counts[partySize(2.5, 4, (k + 0.5) / n)]!++;
    // 1 and 4 a sixth each, 2 and 3 a third each: a party of one is there to take a single seat late in the sale.
    expect(counts[1]! / n).toBeCloseTo(1 / 6, 2);
    expect(counts[2]! / n).toBeCloseTo(1 / 3, 2);
    expect(counts[3]! / n).toBeCloseTo(1 / 3, 2);
    expect(counts[4]! / n).toBeCloseTo(1 / 6, 2);
    expect((counts[1]! + 2 * counts[2]! + 3 * counts[3]! + 4 * counts[4]!) / n).toBeCloseTo(2.5, 2);
    // The club's 2 of at most 4: one to three, as before; a limit of one seat: always one.
    expect(new Set(Array.from({ length: 100 }, (_, k) => partySize(2, 4, k / 99)))).toEqual(new Set([1, 2, 3]));
    expect(partySize(2.5, 1, 0.9)).toBe(1);
  });
});

describe('connectionBounds', () => {
  it('gives the purchase path what polls, joins and the waitlist leave of the bound, at least one a pool', () => {
    const b = connectionBounds(64, 512);
    expect(b).toMatchObject({ status: 32, join: 128, waitlist: 16 });
    expect(b.hold).toBeGreaterThan(b.status);
    expect(Object.values(b).reduce((a, x) => a + x, 0)).toBe(512);
    const tiny = connectionBounds(1, 4);
    for (const v of Object.values(tiny)) expect(v).toBeGreaterThanOrEqual(1);
  });

  it('by default gives the purchase path a connection per fan inside, up to PURCHASE_CONNECTIONS, beside the polls, joins and waitlist', () => {
    const b = connectionBounds(64, defaultMaxConnections(64));
    expect(b).toMatchObject({ status: 32, join: 128, waitlist: 16 });
    expect(b.hold + b['seat map'] + b.checkout).toBe(PURCHASE_CONNECTIONS);
    expect(b.hold).toBeGreaterThanOrEqual(1500);
  });
});

describe("the driver's two clocks", () => {
  it('times a request from when it goes on the wire, apart from its wait inside the driver for a connection', async () => {
    // One connection, two requests at once: the second can go on the wire only once the first is answered, so its
    // wait inside the driver covers the whole of the first's time at the server.
    const server = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: 1, pipelining: 1 });
    try {
      const t0 = performance.now();
      const [a, b] = await Promise.all([send(pool, 'GET', '/a', {}, undefined), send(pool, 'GET', '/b', {}, undefined)]);
      expect([a.status, b.status, a.text]).toEqual([200, 200, '{"ok":true}']);
      expect(a.wireAt).toBeGreaterThanOrEqual(t0);
      expect(a.endAt).toBeGreaterThan(a.wireAt);
      expect(b.wireAt).toBeGreaterThanOrEqual(a.endAt);
      expect(b.wireAt - t0).toBeGreaterThanOrEqual(a.endAt - a.wireAt);
      expect(b.endAt).toBeGreaterThan(b.wireAt);
    } finally {
      await pool.close();
      await new Promise((r) => server.close(r));
    }
  });
});

describe("the crowd's purchase path", () => {
  it("sends every admitted fan's hold at once, so the fans waiting on a slow product wait at the product, where it can count them", async () => {
    // 300 fans, every one admitted on its first poll. The server answers no hold until it has 300 holds open at once
    // (then all of them, 409 ACCOUNT_LIMIT_EXCEEDED: each fan is done). With the purchase path's connections a fixed
    // few hundred over all its kinds (before: 8x --connections less polls and joins, 2 at --connections 1), the holds
    // queued inside the driver and the server never saw more than those few at once: the run would never end.
    const fans = 300;
    const heldOpen: import('node:http').ServerResponse[] = [];
    let mostHoldsAtOnce = 0;
    const server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.method === 'POST' && req.url?.endsWith('/queue'))
        return res.end(JSON.stringify({ queueToken: 'q', cohort: 'PREOPEN', position: null, state: 'WAITING' }));
      if (req.method === 'GET' && req.url?.endsWith('/queue/status'))
        return res.end(JSON.stringify({ state: 'ADMITTED', position: 1, admissionToken: 'adm' }));
      if (req.method === 'GET' && req.url?.endsWith('/seatmap'))
        return res.end(JSON.stringify({ sections: [{ code: 'A', available: 1000 }] }));
      if (req.method === 'POST' && req.url?.endsWith('/holds')) {
        heldOpen.push(res);
        mostHoldsAtOnce = Math.max(mostHoldsAtOnce, heldOpen.length);
        if (heldOpen.length >= fans)
          for (const r of heldOpen.splice(0)) {
            r.statusCode = 409;
            r.end(JSON.stringify({ error: 'ACCOUNT_LIMIT_EXCEEDED' }));
          }
        return;
      }
      res.statusCode = 404;
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const now = Date.now();
    const crowd = new Crowd({
      fansUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      eventId: 'e',
      listingId: 'l',
      onsaleAtMs: now,
      startAtMs: now,
      fans,
      timeScale: 30,
      botsShare: 0,
      abandon: 0,
      slowPayers: 0,
      failingPayers: 0,
      authSecret: 'a-test-secret-that-is-long-enough-0123456789',
      sections: [{ code: 'A', qualityRank: 1, capacity: 1000 }],
      perAccountSeats: 4,
      ticketsPerOrder: 2,
      holdTtlSeconds: 360,
      checkoutMinutes: 6,
      preOpenMs: 300,
      preOpenShare: 1,
      tailMeanMs: 1000,
      pollBudgetPerSecond: 5000,
      connections: 1,
      seed: 1,
      seatPickingOpensAtMs: now + 3_600_000,
      pickers: 0,
      accountPrefix: 't',
      deadlineMs: 600_000,
    });
    const done = crowd.run();
    try {
      await vi.waitFor(() => expect(crowd.progress().done).toBe(fans), { timeout: 60_000, interval: 20 });
      expect(mostHoldsAtOnce).toBe(fans);
      // Nothing waited inside the driver once the server had every hold: the lines are empty.
      expect(crowd.progress().lines.hold.queued).toBe(0);
    } finally {
      crowd.stop();
      await done;
      for (const r of heldOpen.splice(0)) r.destroy();
      await new Promise((r) => server.close(r));
    }
  }, 90_000);
});

describe("the crowd's polls", () => {
  it('do not line up inside the driver behind a slow edge: a fan far back puts its poll off while the line is full', async () => {
    // Every fan is far back (told to come back in 30 s), the budget lets them poll every 1.5 s (about 200 a second for
    // 300 fans), and the one status connection is answered in 30 ms (about 33 a second): sent first come first sent,
    // the line inside the driver would grow by over 100 polls a second.
    let statusAnswered = 0;
    const server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.setHeader('retry-after', '30');
      if (req.method === 'POST') return res.end(JSON.stringify({ queueToken: 'q', cohort: 'PREOPEN', position: null, state: 'WAITING' }));
      setTimeout(() => {
        statusAnswered++;
        res.end(JSON.stringify({ state: 'WAITING', position: 5000 }));
      }, 30);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const now = Date.now();
    const crowd = new Crowd({
      fansUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      eventId: 'e',
      listingId: 'l',
      onsaleAtMs: now + 600_000,
      startAtMs: now,
      fans: 300,
      timeScale: 30,
      botsShare: 0,
      abandon: 0,
      slowPayers: 0,
      failingPayers: 0,
      authSecret: 'a-test-secret-that-is-long-enough-0123456789',
      sections: [{ code: 'A', qualityRank: 1, capacity: 100 }],
      perAccountSeats: 4,
      ticketsPerOrder: 2,
      holdTtlSeconds: 360,
      checkoutMinutes: 6,
      preOpenMs: 300,
      preOpenShare: 1,
      tailMeanMs: 1000,
      pollBudgetPerSecond: 500,
      connections: 2,
      maxConnections: 16,
      seed: 1,
      seatPickingOpensAtMs: now + 3_600_000,
      pickers: 0,
      accountPrefix: 't',
      deadlineMs: 600_000,
    });
    const status = (crowd as unknown as { pools: Record<string, Pool> }).pools.status!;
    let mostQueued = 0;
    const sampler = setInterval(() => (mostQueued = Math.max(mostQueued, status.stats.queued)), 5);
    const done = crowd.run();
    try {
      // Until 80 polls were answered (over two seconds of the line growing, had the polls been sent as scheduled).
      await vi.waitFor(() => expect(statusAnswered).toBeGreaterThanOrEqual(80), { timeout: 60_000, interval: 20 });
      expect(crowd.progress().waiting).toBe(300);
      // At most the status connections' worth waits inside the driver (1 here); the others put their polls off.
      expect(mostQueued).toBeLessThanOrEqual(1);
    } finally {
      clearInterval(sampler);
      crowd.stop();
      await done;
      await new Promise((r) => server.close(r));
    }
  }, 90_000);
});

describe('tracer fans', () => {
  it('are picked among the fans, not the bots, spread over the crowd, as many as asked (or as there are fans)', () => {
    const flags = new Uint8Array(1000);
    const isBot = (i: number) => i % 3 === 0;
    expect(pickTracers(flags, 50, isBot)).toBe(50);
    const picked = [...flags.keys()].filter((i) => flags[i] === 1);
    expect(picked.some(isBot)).toBe(false);
    expect(Math.min(...picked)).toBeLessThan(100);
    expect(Math.max(...picked)).toBeGreaterThan(900);
    expect(pickTracers(new Uint8Array(10), 50, isBot)).toBe(6);
    expect(pickTracers(new Uint8Array(10), 0, isBot)).toBe(0);
  });

  it('poll at their Retry-After whatever the poll budget, so they read SOLD_OUT on a poll sent as told and are counted apart', async () => {
    // 300 fans far back (told 30 s, 1 s at the time scale of 30) on a budget of 10 polls a second: a fan of the crowd
    // polls about every 30 s, a tracer every 1.1 s. The sale sells out once every tracer has polled twice.
    const tracers = 12;
    let soldOut = false;
    const server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.setHeader('retry-after', '30');
      if (req.method === 'PUT') return res.end('{}');
      if (req.method === 'POST') return res.end(JSON.stringify({ queueToken: 'q', cohort: 'PREOPEN', position: null, state: 'WAITING' }));
      res.end(JSON.stringify({ state: soldOut ? 'SOLD_OUT' : 'WAITING', position: 5000 }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const now = Date.now();
    const crowd = new Crowd({
      fansUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      eventId: 'e',
      listingId: 'l',
      onsaleAtMs: now + 200,
      startAtMs: now,
      fans: 300,
      timeScale: 30,
      botsShare: 0,
      abandon: 0,
      slowPayers: 0,
      failingPayers: 0,
      authSecret: 'a-test-secret-that-is-long-enough-0123456789',
      sections: [{ code: 'A', qualityRank: 1, capacity: 100 }],
      perAccountSeats: 4,
      ticketsPerOrder: 2,
      holdTtlSeconds: 360,
      checkoutMinutes: 6,
      preOpenMs: 100,
      preOpenShare: 1,
      tailMeanMs: 1000,
      pollBudgetPerSecond: 10,
      tracers,
      connections: 8,
      maxConnections: 64,
      seed: 1,
      seatPickingOpensAtMs: now + 3_600_000,
      pickers: 0,
      accountPrefix: 't',
      deadlineMs: 600_000,
    });
    const inner = crowd as unknown as { tracer: Uint8Array; soldOutAt: Float64Array };
    const tracerIds = [...inner.tracer.keys()].filter((i) => inner.tracer[i] === 1);
    expect(tracerIds).toHaveLength(tracers);
    const done = crowd.run();
    let result: Awaited<typeof done> | undefined;
    try {
      await vi.waitFor(() => expect(crowd.progress().waiting).toBe(300), { timeout: 60_000, interval: 20 });
      soldOut = true;
      // Every tracer reads it at its next poll; the crowd far back, spaced by the budget, mostly has not yet.
      await vi.waitFor(() => expect(tracerIds.every((i) => !Number.isNaN(inner.soldOutAt[i]!))).toBe(true), {
        timeout: 60_000,
        interval: 20,
      });
    } finally {
      crowd.stop();
      result = await done;
      await new Promise((r) => server.close(r));
    }
    expect(result.tracers).toBe(tracers);
    expect(result.soldOutReadsTracerAtMs).toHaveLength(tracers);
    // The tracers polled as told, so they are among the fans the goal weighs.
    expect(result.soldOutReadsAsToldAtMs.length).toBeGreaterThanOrEqual(tracers);
  }, 120_000);
});

describe("the crowd's joins", () => {
  it('a join shed with Retry-After is sent again no sooner than told, in line with the arrivals: no fan is lost, none sent ahead of fans who came due first', async () => {
    // 300 fans arrive within 0.3 s. Each fan's first join is shed (503, Retry-After: 1), the next is answered; the one
    // join connection answers in 5 ms, so the arrivals alone keep the driver's join line (64 at once) full for over a
    // second, and the retries come due while it is. First come first sent: the first joins reach the server before the
    // second ones (before, a retry went out past the line, ahead of fans who had arrived before it came due).
    const sent: { fan: string; at: number; again: boolean }[] = [];
    const shedAt = new Map<string, number>();
    const server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.method !== 'POST') {
        res.setHeader('retry-after', '30');
        return res.end(JSON.stringify({ state: 'WAITING', position: 5000 }));
      }
      const fan = String(req.headers.authorization);
      const again = shedAt.has(fan);
      sent.push({ fan, at: performance.now(), again });
      setTimeout(() => {
        if (again) return res.end(JSON.stringify({ queueToken: 'q', cohort: 'PREOPEN', position: null, state: 'WAITING' }));
        shedAt.set(fan, performance.now());
        res.statusCode = 503;
        res.setHeader('retry-after', '1');
        res.end(JSON.stringify({ error: 'SERVICE_UNAVAILABLE', reason: 'overload_pool', retryAfterSeconds: 1 }));
      }, 5);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const now = Date.now();
    const crowd = new Crowd({
      fansUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      eventId: 'e',
      listingId: 'l',
      onsaleAtMs: now + 600_000,
      startAtMs: now,
      fans: 300,
      timeScale: 30,
      botsShare: 0,
      abandon: 0,
      slowPayers: 0,
      failingPayers: 0,
      authSecret: 'a-test-secret-that-is-long-enough-0123456789',
      sections: [{ code: 'A', qualityRank: 1, capacity: 100 }],
      perAccountSeats: 4,
      ticketsPerOrder: 2,
      holdTtlSeconds: 360,
      checkoutMinutes: 6,
      preOpenMs: 300,
      preOpenShare: 1,
      tailMeanMs: 1000,
      pollBudgetPerSecond: 50,
      connections: 1,
      maxConnections: 16,
      seed: 1,
      seatPickingOpensAtMs: now + 3_600_000,
      pickers: 0,
      accountPrefix: 't',
      deadlineMs: 600_000,
    });
    const done = crowd.run();
    try {
      await vi.waitFor(() => expect(crowd.progress().joined).toBe(300), { timeout: 60_000, interval: 20 });
      const firsts = sent.filter((s) => !s.again);
      const seconds = sent.filter((s) => s.again);
      expect([firsts.length, seconds.length]).toEqual([300, 300]);
      // The line held the retries behind the arrivals: the last first join reached the server before the first retry.
      // The line held the retries behind the arrivals: almost every first join reached the server before any second one.
      // Not all: a first join waits for its fan's token to be signed (asynchronous) after it leaves the line, a retry
      // does not (3 of 300 retries passed a first join so; past the line, 181 did).
      const lastFirst = Math.max(...firsts.map((s) => s.at));
      expect(seconds.filter((s) => s.at < lastFirst).length).toBeLessThan(30);
      // Each fan came back no sooner than its Retry-After (less the timer's few ms).
      for (const s of seconds) expect(s.at - shedAt.get(s.fan)!).toBeGreaterThanOrEqual(990);
    } finally {
      crowd.stop();
      await done;
      await new Promise((r) => server.close(r));
    }
  }, 90_000);
});
