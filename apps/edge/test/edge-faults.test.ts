import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AccountTokens } from '@onsale/shared/auth';
import { createTokenKey, hashDevice, signToken, type TokenKey } from '@onsale/shared/queue';
import { startLocalEdge, type LocalEdge } from '../src/local.js';
import { FakeOrigin, queueState } from './fake-origin.js';

// An origin that misbehaves (resets a connection mid-body, answers garbage where JSON is expected, stalls past a
// timeout, answers a bare 500), with the worker in workerd in front of it: the fan always gets a JSON answer with a
// code, and for a fault a 503 with Retry-After; never workerd's own 500 (a text/plain body) and never a
// socket closed on them.

const QUEUE_SECRET = 'edge faults test queue secret, 32+ characters';
const AUTH_SECRET = 'edge faults test account secret, 32+ characters';
const ORIGIN_TIMEOUT_MS = 600;
const PROXY_TIMEOUT_MS = 1500;

let origin: FakeOrigin;
let edge: LocalEdge;
let key: TokenKey;
const accounts = new AccountTokens(AUTH_SECRET);

/** A fan's status-poll headers for `eventId` at position joinIndex + 1. */
async function pollHeaders(eventId: string, joinIndex = 0): Promise<Record<string, string>> {
  const accountId = `fan-${randomUUID().slice(0, 8)}`;
  const deviceId = `device-${accountId}`;
  const now = Math.floor(Date.now() / 1000);
  const token = await signToken(key, {
    kind: 'queue',
    eventId,
    accountId,
    deviceHash: await hashDevice(deviceId, accountId),
    joinIndex,
    cohort: 'FIFO',
    iat: now - 60,
    exp: now + 3600,
  });
  return {
    authorization: `Bearer ${(await accounts.issue(accountId)).token}`,
    'x-device-id': deviceId,
    'x-queue-token': token,
    accept: 'application/json',
    connection: 'close',
  };
}

const get = (path: string, headers: Record<string, string> = {}, init: RequestInit = {}) =>
  fetch(`${edge.url}${path}`, { ...init, headers: { accept: 'application/json', connection: 'close', ...headers } });

/** A JSON 503 with the code and a Retry-After in seconds: what a fan's page knows to wait on. */
async function expect503(r: Response, code: string): Promise<void> {
  const text = await r.text();
  expect({ status: r.status, text }).toMatchObject({ status: 503 });
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
  expect(JSON.parse(text)).toMatchObject({ error: code, message: expect.any(String) });
}

/** Headers and part of a body, then the connection reset. */
const resetMidBody = (_req: unknown, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': '5000' });
  res.write(`{"eventId":"${'x'.repeat(500)}`);
  setTimeout(() => res.socket?.resetAndDestroy(), 50);
};
/** Headers and part of a body, then nothing more. */
const stallMidBody = (_req: unknown, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"partial":');
};
/** The same with its length declared (the edge reads such a body whole in one call rather than chunk by chunk). */
const stallDeclaredBody = (_req: unknown, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
  res.write('{"partial":');
};
/** Never a byte. */
const neverAnswer = () => {};

beforeAll(async () => {
  key = await createTokenKey(QUEUE_SECRET);
  origin = await new FakeOrigin().start();
  edge = await startLocalEdge({
    storeApiUrl: origin.url,
    queueTokenSecret: QUEUE_SECRET,
    authSecret: AUTH_SECRET,
    watermarkTtlSeconds: 0.2,
    staleSeconds: 15,
    originTimeoutMs: ORIGIN_TIMEOUT_MS,
    proxyTimeoutMs: PROXY_TIMEOUT_MS,
    fanTimeoutMs: PROXY_TIMEOUT_MS,
    // These cases fail the origin on purpose, one after another: the circuit breaker has its own cases below.
    breakerFailures: 1000,
    // Joins in batches (EDGE_JOIN_BATCH, off by default): a batch's reset is one of the cases.
    joinBatch: 100,
    // Every join in a batch (none alone while the origin has few in hand): the batch path is what is tested here.
    joinAloneBelow: 0,
  });
});

afterAll(async () => {
  await edge?.close();
  await origin?.stop();
});

describe('a proxied request the origin fails', () => {
  it('reset mid-body: 503 ORIGIN_UNAVAILABLE, not a 200 cut short', async () => {
    origin.raw.set('POST /holds/reset/checkout', resetMidBody);
    await expect503(
      await get('/holds/reset/checkout', { 'content-type': 'application/json' }, { method: 'POST', body: '{}' }),
      'ORIGIN_UNAVAILABLE',
    );
    origin.raw.set('GET /events/reset', resetMidBody);
    await expect503(await get('/events/reset'), 'ORIGIN_UNAVAILABLE');
  });

  it('reset before its headers: 503 ORIGIN_UNAVAILABLE', async () => {
    origin.raw.set('POST /events/x/queue', (req) => req.socket.resetAndDestroy());
    // A join the edge sends in a batch (POST /edge/joins) and one it proxies alone (with a body): both reset.
    origin.raw.set('POST /edge/joins', (req) => req.socket.resetAndDestroy());
    await expect503(await get('/events/x/queue', { 'user-agent': 'a browser' }, { method: 'POST' }), 'ORIGIN_UNAVAILABLE');
    await expect503(await get('/events/x/queue', {}, { method: 'POST', body: '{}' }), 'ORIGIN_UNAVAILABLE');
    expect(origin.count(/^\/edge\/joins$/, 'POST')).toBeGreaterThanOrEqual(1);
  });

  it('stalled after its headers, or silent: 503 ORIGIN_UNAVAILABLE once EDGE_FAN_TIMEOUT_MS has passed', async () => {
    origin.raw.set('GET /events/stall', stallMidBody);
    origin.raw.set('GET /events/stall-declared', stallDeclaredBody);
    origin.raw.set('GET /events/silent', neverAnswer);
    for (const path of ['/events/stall', '/events/stall-declared', '/events/silent']) {
      const started = performance.now();
      await expect503(await get(path), 'ORIGIN_UNAVAILABLE');
      const ms = performance.now() - started;
      // Never answered otherwise: the answer came from the proxy timeout, not before it.
      expect(ms).toBeGreaterThanOrEqual(PROXY_TIMEOUT_MS - 50);
    }
  });

  it("a 5xx that is not the store API's (an empty 500, an HTML 502) is 503 ORIGIN_UNAVAILABLE; the store API's own error passes unchanged", async () => {
    origin.routes.set('GET /bare500', () => ({ status: 500, headers: { 'content-type': 'text/plain' }, body: '' }));
    origin.routes.set('GET /html502', () => ({ status: 502, headers: { 'content-type': 'text/html' }, body: '<h1>Bad Gateway</h1>' }));
    origin.routes.set('GET /garbled500', () => ({ status: 500, body: '{"error":' }));
    for (const path of ['/bare500', '/html502', '/garbled500']) await expect503(await get(path), 'ORIGIN_UNAVAILABLE');
    origin.routes.set('GET /shed', () => ({
      status: 503,
      headers: { 'retry-after': '7' },
      body: '{"error":"SERVICE_UNAVAILABLE","message":"shed","retryAfterSeconds":7}',
    }));
    const shed = await get('/shed');
    expect(shed.status).toBe(503);
    expect(shed.headers.get('retry-after')).toBe('7');
    expect(shed.headers.get('x-onsale-edge')).toBe('miss');
    expect(await shed.json()).toEqual({ error: 'SERVICE_UNAVAILABLE', message: 'shed', retryAfterSeconds: 7 });
  });

  it('answers without a body (304, HEAD) and one larger than the edge reads whole still pass through', async () => {
    origin.routes.set('GET /events/etag', () => ({ status: 304, headers: { etag: '"v1"' }, body: '' }));
    const notModified = await get('/events/etag', { 'if-none-match': '"v1"' });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get('etag')).toBe('"v1"');
    origin.raw.set('GET /events/chunked', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"in":');
      setTimeout(() => res.end('"pieces"}'), 50);
    });
    expect(await (await get('/events/chunked')).json()).toEqual({ in: 'pieces' });
    const head = await get('/events/anything', {}, { method: 'HEAD' });
    expect(head.status).toBe(200);
    const big = 'y'.repeat(3 * 1024 * 1024);
    origin.routes.set('GET /e/assets/big.js', () => ({ status: 200, headers: { 'content-type': 'text/javascript' }, body: big }));
    const r = await get('/e/assets/big.js');
    expect(r.status).toBe(200);
    expect((await r.text()).length).toBe(big.length);
  });
});

describe("an event's state the origin fails to give", () => {
  // A fresh event per case: the edge has never had its state, so it has nothing to answer from.
  const cases: [string, (_req: unknown, res: ServerResponse) => void][] = [
    ['not JSON', (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('<html>oops</html>')],
    ['JSON but not an edge state', (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"queues":[{}]}')],
    ['reset mid-body', resetMidBody],
    ['stalled after its headers', stallMidBody],
    ['silent', neverAnswer],
    ['an empty 500', (_req, res) => void res.writeHead(500).end()],
  ];
  for (const [name, misbehave] of cases)
    it(`${name}: a poll and a watermark read are 503 WAITING_ROOM_UNAVAILABLE within the origin timeout`, async () => {
      const ev = randomUUID();
      origin.raw.set(`GET /events/${ev}/edge-state`, misbehave);
      await expect503(await get(`/events/${ev}/queue/status`, await pollHeaders(ev)), 'WAITING_ROOM_UNAVAILABLE');
      await expect503(await get(`/events/${ev}/watermark`), 'WAITING_ROOM_UNAVAILABLE');
      // The stalled origins never finish: an answer at all is the origin timeout's (a hang fails the test's timeout).
    });

  it('a state known, then garbage or a reset: fans are answered from the last state, never a 500', async () => {
    const ev = randomUUID();
    origin.events.set(ev, () => ({ eventId: ev, tiers: [], queues: [queueState(ev)], generatedAt: Date.now() }));
    const headers = await pollHeaders(ev, 499);
    const first = await get(`/events/${ev}/queue/status`, headers);
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ state: 'WAITING', position: 500 });
    for (const misbehave of [cases[0]![1], cases[1]![1], resetMidBody]) {
      origin.raw.set(`GET /events/${ev}/edge-state`, misbehave);
      // Polled until the 0.2 s TTL has passed and a poll has asked the misbehaving origin again, three times over:
      // every answer meanwhile, and the one that met the fault, is the last state.
      for (let i = 0; i < 3; i++) {
        const asked = origin.count(new RegExp(`^/events/${ev}/edge-state$`));
        await vi.waitFor(
          async () => {
            const r = await get(`/events/${ev}/queue/status`, headers);
            expect(r.status).toBe(200);
            expect(await r.json()).toMatchObject({ state: 'WAITING', position: 500 });
            expect(origin.count(new RegExp(`^/events/${ev}/edge-state$`))).toBeGreaterThan(asked);
          },
          { timeout: 30_000, interval: 50 },
        );
      }
    }
    origin.raw.delete(`GET /events/${ev}/edge-state`);
  });

  it('the poll that started a refresh goes away while the origin is silent: the polls waiting on that refresh are answered 503, and the event is refreshed again', async () => {
    const ev = randomUUID();
    let asked = 0;
    origin.raw.set(`GET /events/${ev}/edge-state`, () => void asked++); // the first refresh never answers
    const gone = new AbortController();
    const first = get(`/events/${ev}/queue/status`, await pollHeaders(ev), { signal: gone.signal }).catch(() => null);
    await expect.poll(() => asked).toBe(1);
    gone.abort();
    await first;
    const waiting = await Promise.all([1, 2, 3].map(async (i) => get(`/events/${ev}/queue/status`, await pollHeaders(ev, i))));
    for (const r of waiting) await expect503(r, 'WAITING_ROOM_UNAVAILABLE');
    // The origin back: the next refresh is made (the stuck one is not waited on forever) and fans are answered.
    origin.raw.delete(`GET /events/${ev}/edge-state`);
    origin.events.set(ev, () => ({ eventId: ev, tiers: [], queues: [queueState(ev)], generatedAt: Date.now() }));
    const headers = await pollHeaders(ev, 9);
    await expect.poll(async () => (await get(`/events/${ev}/queue/status`, headers)).status).toBe(200);
  });
});

describe('input the edge cannot decode', () => {
  it('a malformed percent-encoding in an event id is 400 VALIDATION_FAILED, not an exception', async () => {
    for (const path of ['/events/%E0%A4%A/queue/status', '/events/%/watermark']) {
      const r = await get(path, await pollHeaders(randomUUID()));
      expect(r.status).toBe(400);
      expect(await r.json()).toMatchObject({ error: 'VALIDATION_FAILED', field: 'params.id' });
    }
  });
});
