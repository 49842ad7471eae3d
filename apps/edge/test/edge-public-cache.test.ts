import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalEdge, type LocalEdge } from '../src/local.js';
import { FakeOrigin } from './fake-origin.js';

// The edge answering the store API's public reads (the seat map, the event page) from the isolate's own cache, on
// workerd serve in front of a stand-in origin that counts what reaches it: for as long as the origin's Cache-Control
// allows, one origin request for concurrent misses, a fan's If-None-Match answered from the kept ETag, and nothing
// kept that is private, not a 200, or the origin's failure. The store API itself as the origin: edge-product.test.ts.

let origin: FakeOrigin;
let edge: LocalEdge;

// A fan's request carries its account token: the public reads are answered from the cache all the same.
const fan = { authorization: 'Bearer some.fan.token', 'x-device-id': 'device-0001' };
const read = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${edge.url}${path}`, { headers: { ...fan, connection: 'close', ...headers } });

/** A seat map route on the stand-in origin: counts its requests by query, answers the tier it was asked for. */
function seatmap(eventId: string, cacheControl = 'public, max-age=1') {
  const served = new Map<string, number>();
  origin.raw.set(`GET /events/${eventId}/seatmap`, (req, res) => {
    const query = new URL(req.url ?? '', 'http://x').search;
    served.set(query, (served.get(query) ?? 0) + 1);
    const tier = new URL(req.url ?? '', 'http://x').searchParams.get('tier');
    res
      .writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': cacheControl })
      .end(JSON.stringify({ eventId, ...(tier ? { tier } : {}), n: served.get(query), sections: [{ code: 'A', available: 5 }] }));
  });
  return (query = '') => served.get(query) ?? 0;
}

beforeAll(async () => {
  origin = await new FakeOrigin().start();
  edge = await startLocalEdge({ storeApiUrl: origin.url, queueTokenSecret: 'q'.repeat(40), authSecret: 'a'.repeat(40) });
});

afterAll(async () => {
  await edge?.close();
  await origin?.stop();
});

describe("the public reads from the edge's cache", () => {
  it('the seat map: a second read within max-age never reaches the origin (with its Age), after max-age it does; tier variants are kept apart', async () => {
    const ev = randomUUID();
    const served = seatmap(ev, 'public, max-age=5');
    const first = await read(`/events/${ev}/seatmap`);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-onsale-edge')).toBe('miss');
    expect(first.headers.get('cache-control')).toBe('public, max-age=5');
    expect(first.headers.get('age')).toBe('0');
    expect(((await first.json()) as { n: number }).n).toBe(1);
    const second = await read(`/events/${ev}/seatmap`, { authorization: 'Bearer another.fan' });
    expect(second.headers.get('x-onsale-edge')).toBe('hit');
    expect(Number(second.headers.get('age'))).toBeLessThanOrEqual(5);
    expect(second.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(((await second.json()) as { n: number }).n).toBe(1);
    expect(served()).toBe(1);

    // Each tier is its own answer, kept apart from the whole event's and from each other.
    const a = (await (await read(`/events/${ev}/seatmap?tier=A`)).json()) as { tier: string };
    expect(a.tier).toBe('A');
    const b = await read(`/events/${ev}/seatmap?tier=B`);
    expect(((await b.json()) as { tier: string }).tier).toBe('B');
    const aAgain = await read(`/events/${ev}/seatmap?tier=A`);
    expect(aAgain.headers.get('x-onsale-edge')).toBe('hit');
    expect(((await aAgain.json()) as { tier: string }).tier).toBe('A');
    expect([served(), served('?tier=A'), served('?tier=B')]).toEqual([1, 1, 1]);

    // Past its max-age the origin is asked again (polled: the copy is good for 5 s on the edge's clock).
    await expect
      .poll(async () => (await read(`/events/${ev}/seatmap`)).headers.get('x-onsale-edge'), { timeout: 20_000, interval: 200 })
      .toBe('miss');
    expect(served()).toBe(2);
  });

  it('private, 404, 503 and cookie-setting answers are not kept; past max-age without stale-while-revalidate a failing origin is not covered by the old copy', async () => {
    const ev = randomUUID();
    let privateServed = 0;
    origin.routes.set(
      `GET /events/${ev}/seatmap`,
      () => (privateServed++, { status: 200, headers: { 'cache-control': 'private, max-age=60' }, body: '{}' }),
    );
    let missing = 0;
    const gone = randomUUID();
    origin.routes.set(
      `GET /events/${gone}/seatmap`,
      () => (
        missing++,
        { status: 404, headers: { 'cache-control': 'public, max-age=60' }, body: '{"error":"EVENT_NOT_FOUND","message":"no event"}' }
      ),
    );
    let cookies = 0;
    origin.routes.set(
      `GET /events/${ev}`,
      () => (cookies++, { status: 200, headers: { 'cache-control': 'public, max-age=60', 'set-cookie': 'a=1' }, body: '{}' }),
    );
    for (let i = 0; i < 2; i++) {
      expect((await read(`/events/${ev}/seatmap`)).headers.get('x-onsale-edge')).toBe('miss');
      const r = await read(`/events/${gone}/seatmap`);
      expect([r.status, r.headers.get('x-onsale-edge')]).toEqual([404, 'miss']);
      expect((await read(`/events/${ev}`)).headers.get('x-onsale-edge')).toBe('miss');
    }
    expect([privateServed, missing, cookies]).toEqual([2, 2, 2]);

    // The store API's own 503 passes through as it is, every time; nothing is kept of it.
    const busy = randomUUID();
    let busyServed = 0;
    origin.routes.set(
      `GET /events/${busy}/seatmap`,
      () => (
        busyServed++,
        {
          status: 503,
          headers: { 'retry-after': '3', 'cache-control': 'public, max-age=60' },
          body: '{"error":"SERVICE_UNAVAILABLE","message":"busy"}',
        }
      ),
    );
    for (let i = 0; i < 2; i++) {
      const r = await read(`/events/${busy}/seatmap`);
      expect([r.status, r.headers.get('retry-after'), r.headers.get('x-onsale-edge')]).toEqual([503, '3', 'miss']);
      expect(((await r.json()) as { error: string }).error).toBe('SERVICE_UNAVAILABLE');
    }
    expect(busyServed).toBe(2);

    // A kept seat map (max-age=1, no stale-while-revalidate), then the origin fails: once the second has passed the
    // fan gets the origin's 503, never the old copy.
    const ev2 = randomUUID();
    seatmap(ev2, 'public, max-age=1');
    expect((await read(`/events/${ev2}/seatmap`)).status).toBe(200);
    origin.healthy = false;
    origin.raw.delete(`GET /events/${ev2}/seatmap`);
    try {
      await expect.poll(async () => (await read(`/events/${ev2}/seatmap`)).status, { timeout: 20_000, interval: 200 }).toBe(503);
    } finally {
      origin.healthy = true;
    }
  });

  it('concurrent misses for one URL make one origin request, and every fan gets its answer', async () => {
    const ev = randomUUID();
    const held: ServerResponse[] = [];
    origin.raw.set(`GET /events/${ev}/seatmap`, (_req, res) => void held.push(res));
    const fans = Array.from({ length: 20 }, () => read(`/events/${ev}/seatmap`));
    await expect.poll(() => held.length, { timeout: 20_000, interval: 20 }).toBe(1);
    held[0]!
      .writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=60' })
      .end('{"sections":[{"code":"A","available":1}]}');
    const answers = await Promise.all(fans);
    for (const r of answers) {
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual({ sections: [{ code: 'A', available: 1 }] });
    }
    expect(answers.filter((r) => r.headers.get('x-onsale-edge') === 'miss')).toHaveLength(1);
    expect(held).toHaveLength(1);
    expect(origin.count(new RegExp(`^/events/${ev}/seatmap$`))).toBe(1);
  });

  it('the fan whose miss went to the origin hangs up: the fans waiting on it are answered within the origin timeout, never left to the deadline, and the next miss asks again', async () => {
    // workerd may drop a request's fetch when its client goes away: a fill that does not settle is given up after the
    // origin timeout (EDGE_FAN_TIMEOUT_MS, 1 s here) and a waiter sends its own; one that runs on answers them 503.
    const quick = await startLocalEdge({
      storeApiUrl: origin.url,
      queueTokenSecret: 'q'.repeat(40),
      authSecret: 'a'.repeat(40),
      fanTimeoutMs: 1000,
    });
    try {
      const ev = randomUUID();
      const held: ServerResponse[] = [];
      origin.raw.set(`GET /events/${ev}/seatmap`, (_req, res) => void held.push(res));
      const gone = new AbortController();
      const first = fetch(`${quick.url}/events/${ev}/seatmap`, { headers: fan, signal: gone.signal }).catch(() => null);
      await expect.poll(() => held.length, { timeout: 20_000, interval: 20 }).toBe(1);
      gone.abort();
      await first;
      const started = Date.now();
      let answered: Response | undefined;
      const waiting = fetch(`${quick.url}/events/${ev}/seatmap`, { headers: { ...fan, connection: 'close' } }).then((r) => (answered = r));
      // Either the first fill's 503 (it ran on to its timeout), or the waiter's own request once it was given up.
      await expect.poll(() => answered !== undefined || held.length === 2, { timeout: 20_000, interval: 20 }).toBe(true);
      if (held.length === 2)
        held[1]!.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=60' }).end('{"sections":[]}');
      const r = await waiting;
      expect([200, 503]).toContain(r.status);
      if (r.status === 503) expect(((await r.json()) as { error: string }).error).toBe('ORIGIN_UNAVAILABLE');
      // Well within the edge's deadline (the longest origin timeout, 20 s here, and 2 s more).
      expect(Date.now() - started).toBeLessThan(15_000);
      // The origin answering again: the next miss asks it, and its answer is kept.
      origin.raw.delete(`GET /events/${ev}/seatmap`);
      seatmap(ev, 'public, max-age=60');
      await expect
        .poll(async () => (await fetch(`${quick.url}/events/${ev}/seatmap`, { headers: fan })).headers.get('x-onsale-edge'), {
          timeout: 20_000,
          interval: 100,
        })
        .toBe('hit');
      for (const h of held) h.destroy();
    } finally {
      await quick.close();
    }
  });

  it("the event page: a fan's If-None-Match is answered 304 from the kept ETag; within stale-while-revalidate the old copy answers while one request refreshes it", async () => {
    const ev = randomUUID();
    let version = 1;
    let served = 0;
    const seen: (string | undefined)[] = [];
    origin.raw.set(`GET /events/${ev}`, (req, res) => {
      served++;
      seen.push(req.headers['if-none-match']);
      const etag = `"v${version}"`;
      const headers = { 'cache-control': 'public, max-age=1, stale-while-revalidate=30', etag, 'content-type': 'application/json' };
      if (req.headers['if-none-match'] === etag) return void res.writeHead(304, headers).end();
      res.writeHead(200, headers).end(JSON.stringify({ id: ev, version }));
    });
    // The first fan already holds v1: the edge asks for the whole page (no condition), keeps it, and answers the fan 304.
    const first = await read(`/events/${ev}`, { 'if-none-match': '"v1"' });
    expect([first.status, first.headers.get('etag'), first.headers.get('x-onsale-edge')]).toEqual([304, '"v1"', 'miss']);
    expect(await first.text()).toBe('');
    expect(seen).toEqual([undefined]);
    const whole = await read(`/events/${ev}`);
    expect([whole.status, whole.headers.get('x-onsale-edge')]).toEqual([200, 'hit']);
    expect(await whole.json()).toEqual({ id: ev, version: 1 });
    const other = await read(`/events/${ev}`, { 'if-none-match': '"v0", W/"v1"' });
    expect(other.status).toBe(304);
    const stale = await read(`/events/${ev}`, { 'if-none-match': '"v0"' });
    expect(stale.status).toBe(200);
    expect(served).toBe(1);

    // The page changes; past max-age (1 s) the kept copy still answers at once (stale-while-revalidate=30), with an
    // Age past its max-age, while one request to the origin brings v2.
    version = 2;
    await expect
      .poll(async () => Number((await read(`/events/${ev}`)).headers.get('age')), { timeout: 20_000, interval: 200 })
      .toBeGreaterThanOrEqual(1);
    await expect
      .poll(async () => ((await (await read(`/events/${ev}`)).json()) as { version: number }).version, { timeout: 20_000, interval: 100 })
      .toBe(2);
    const v2 = await read(`/events/${ev}`, { 'if-none-match': '"v2"' });
    expect([v2.status, v2.headers.get('x-onsale-edge')]).toEqual([304, 'hit']);
  });

  it('a HEAD reads a kept answer without its body; requests without a token still read the same copy', async () => {
    const ev = randomUUID();
    const served = seatmap(ev, 'public, max-age=60');
    expect((await fetch(`${edge.url}/events/${ev}/seatmap`)).headers.get('x-onsale-edge')).toBe('miss');
    const head = await fetch(`${edge.url}/events/${ev}/seatmap`, { method: 'HEAD' });
    expect([head.status, head.headers.get('x-onsale-edge'), await head.text()]).toEqual([200, 'hit', '']);
    expect((await read(`/events/${ev}/seatmap`, { cookie: 'session=1' })).headers.get('x-onsale-edge')).toBe('hit');
    expect(served()).toBe(1);
  });
});
