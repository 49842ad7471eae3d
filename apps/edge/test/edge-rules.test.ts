import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountTokens } from '@onsale/shared/auth';
import {
  admissionClaimsFor,
  createTokenKey,
  DEFAULT_QUEUE_COPY,
  hashDevice,
  openClaimsReport,
  signToken,
  verifyToken,
  type QueueTokenClaims,
  type TokenKey,
} from '@onsale/shared/queue';
import { startLocalEdge, type LocalEdge } from '../src/local.js';
import { FakeOrigin, queueState } from './fake-origin.js';

// Every rule of the edge worker, run on workerd serve in front of a stand-in origin that counts what reaches
// it. The store API as the origin is in edge-product.test.ts.

const QUEUE_SECRET = 'edge rules test queue secret, 32+ characters';
const AUTH_SECRET = 'edge rules test account secret, 32+ characters';

const EVENT = randomUUID();
const OTHER_EVENT = randomUUID();
const PRESALE_QUEUE = randomUUID();

let origin: FakeOrigin;
let edge: LocalEdge;
let key: TokenKey;
const accounts = new AccountTokens(AUTH_SECRET);
const nowS = () => Math.floor(Date.now() / 1000);

/** What the stand-in origin publishes for EVENT; tests change it. */
let eventState = () => ({
  eventId: EVENT,
  tiers: [] as { code: string; queueId: string; general: boolean }[],
  queues: [queueState(EVENT)],
  generatedAt: Date.now(),
});

interface Fan {
  accountId: string;
  deviceId: string;
  headers: Record<string, string>;
  claims: QueueTokenClaims;
}

/** A fan with an account token, a device and a queue token for `eventId` at `joinIndex` (FIFO: position joinIndex + 1). */
async function fan(joinIndex: number, patch: Partial<QueueTokenClaims> = {}, eventId = EVENT): Promise<Fan> {
  const accountId = `fan-${randomUUID().slice(0, 8)}`;
  const deviceId = `device-${accountId}`;
  const claims: QueueTokenClaims = {
    kind: 'queue',
    eventId,
    accountId,
    deviceHash: await hashDevice(deviceId, accountId),
    joinIndex,
    cohort: 'FIFO',
    iat: nowS() - 60,
    exp: nowS() + 3600,
    ...patch,
  };
  const headers = {
    authorization: `Bearer ${(await accounts.issue(accountId)).token}`,
    'x-device-id': deviceId,
    'x-queue-token': await signToken(key, claims),
  };
  return { accountId, deviceId, headers, claims };
}

// A connection per request: a kept-alive one the runtime closes just as the client reuses it fails the request
// ("other side closed"), which says nothing about the worker.
const poll = (e: LocalEdge, f: Fan, headers: Record<string, string> = {}, eventId = f.claims.eventId) =>
  fetch(`${e.url}/events/${eventId}/queue/status`, { headers: { ...f.headers, connection: 'close', ...headers } });

beforeAll(async () => {
  key = await createTokenKey(QUEUE_SECRET);
  origin = await new FakeOrigin().start();
  origin.events.set(EVENT, () => eventState());
  origin.events.set(OTHER_EVENT, () => ({ eventId: OTHER_EVENT, tiers: [], queues: [queueState(OTHER_EVENT)], generatedAt: Date.now() }));
  edge = await startLocalEdge({
    storeApiUrl: origin.url,
    queueTokenSecret: QUEUE_SECRET,
    authSecret: AUTH_SECRET,
    watermarkTtlSeconds: 0.5,
    staleSeconds: 15,
  });
});

afterAll(async () => {
  await edge?.close();
  await origin?.stop();
});

describe('status polls answered at the edge', () => {
  it('WAITING: position against the watermark, the wait, the words, Retry-After as the origin gives it; the origin never sees the poll', async () => {
    const f = await fan(999); // position 1000, admitted through 100, 600 a minute: 900 ahead, 90 s
    const r = await poll(edge, f);
    expect(r.status).toBe(200);
    expect(r.headers.get('x-onsale-edge')).toBe('hit');
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(15);
    expect(Number(r.headers.get('retry-after'))).toBeLessThanOrEqual(30);
    expect(await r.json()).toEqual({
      state: 'WAITING',
      message: DEFAULT_QUEUE_COPY.WAITING,
      position: 1000,
      admittedThrough: 100,
      estWaitSeconds: 90,
    });
    expect(origin.count(/\/queue\/status$/)).toBe(0);
  });

  it('ADMITTED: an admission token signed at the edge in the origin format, and the admission reported to the origin', async () => {
    const f = await fan(41);
    const before = origin.count(/^\/edge\/claims$/, 'POST');
    const r = await poll(edge, f);
    const body = (await r.json()) as { state: string; admissionToken: string; position: number };
    expect(body).toMatchObject({ state: 'ADMITTED', position: 42, estWaitSeconds: 0, message: DEFAULT_QUEUE_COPY.ADMITTED });
    expect(r.headers.get('retry-after')).toBe('5');
    const admission = await verifyToken(key, body.admissionToken, {
      kind: 'admission',
      eventId: EVENT,
      accountId: f.accountId,
      deviceHash: f.claims.deviceHash,
    });
    const expected = admissionClaimsFor(f.claims, 42, admission.iat * 1000);
    expect(admission).toEqual(expected);
    // Reported in a batch about a second later, signed with the queue key.
    await expect.poll(() => origin.count(/^\/edge\/claims$/, 'POST')).toBeGreaterThan(before);
    const reports = origin.received.filter((x) => x.url === '/edge/claims');
    const opened = await Promise.all(reports.map((x) => openClaimsReport(key, JSON.parse(x.body).report, Date.now())));
    expect(opened.flatMap((o) => o.claims)).toContainEqual({ queueId: EVENT, accountId: f.accountId });
  });

  it('PAUSED by an operator, a silent controller, LAST_CHANCE and SOLD_OUT (with the waitlist): nobody admitted', async () => {
    const f = await fan(9); // position 10, inside the watermark
    const cases = [
      { wm: { state: 'PAUSED' as const }, state: 'PAUSED', retry: '30' },
      { wm: { heartbeatAt: Date.now() - 60_000 }, state: 'PAUSED', retry: '30' },
      { wm: { state: 'SOLD_OUT' as const }, state: 'SOLD_OUT', retry: '30' },
    ];
    for (const c of cases) {
      const saved = eventState;
      eventState = () => ({
        ...saved(),
        queues: [queueState(EVENT, {}, { ...c.wm, ...(c.wm.heartbeatAt ? { heartbeatAt: Date.now() - 60_000 } : {}) })],
      });
      try {
        await expect.poll(async () => ((await (await poll(edge, f)).json()) as { state: string }).state).toBe(c.state);
        const r = await poll(edge, f);
        const body = (await r.json()) as Record<string, unknown>;
        expect(body.admissionToken).toBeUndefined();
        expect(body.position).toBe(10);
        expect(r.headers.get('retry-after')).toBe(c.retry);
        if (c.state === 'SOLD_OUT') expect(body.waitlist).toEqual({ listingId: 'listing-1', join: '/listings/listing-1/waitlist' });
      } finally {
        eventState = saved;
      }
    }
    const waiting = await fan(500);
    const saved = eventState;
    eventState = () => ({ ...saved(), queues: [queueState(EVENT, {}, { state: 'LAST_CHANCE' })] });
    try {
      await expect.poll(async () => ((await (await poll(edge, waiting)).json()) as { state: string }).state).toBe('LAST_CHANCE');
    } finally {
      eventState = saved;
    }
  });

  it("a presale tier's queue answers from that queue, and its admission carries the tier", async () => {
    const saved = eventState;
    eventState = () => ({
      ...saved(),
      tiers: [
        { code: 'FANCLUB', queueId: PRESALE_QUEUE, general: false },
        { code: 'GENERAL', queueId: EVENT, general: true },
      ],
      queues: [
        queueState(EVENT, {}, { admittedThrough: 0 }),
        queueState(PRESALE_QUEUE, { tier: 'FANCLUB', tierName: 'Fan club', closesAt: Date.now() + 3600_000 }, { admittedThrough: 20 }),
      ],
    });
    try {
      const f = await fan(4, { queueId: PRESALE_QUEUE });
      let body: { state?: string; admissionToken?: string } = {};
      await expect.poll(async () => (body = (await (await poll(edge, f)).json()) as typeof body).state).toBe('ADMITTED');
      const admission = await verifyToken(key, body.admissionToken!, { kind: 'admission', eventId: EVENT });
      expect(admission.tier).toBe('FANCLUB');
      const w = await fetch(`${edge.url}/events/${EVENT}/watermark?tier=FANCLUB`);
      expect(await w.json()).toMatchObject({ admittedThrough: 20, state: 'OPEN' });
      const unknown = await fetch(`${edge.url}/events/${EVENT}/watermark?tier=NOPE`);
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toMatchObject({ error: 'TIER_NOT_FOUND', field: 'tier', tiers: ['FANCLUB', 'GENERAL'] });
    } finally {
      eventState = saved;
    }
  });

  it('a position reached and left unused past the claim window: 410 POSITION_EXPIRED, as at the origin', async () => {
    const saved = eventState;
    eventState = () => ({ ...saved(), queues: [queueState(EVENT, {}, { history: [[Date.now() - 20 * 60_000, 50]] })] });
    try {
      const f = await fan(9, { iat: nowS() - 3600 });
      await expect.poll(async () => (await poll(edge, f)).status).toBe(410);
      expect(await (await poll(edge, f)).json()).toMatchObject({ error: 'POSITION_EXPIRED', field: 'x-queue-token' });
    } finally {
      eventState = saved;
    }
  });
});

describe('refusals at the edge, the origin not called', () => {
  it("a place that moved to another device: the earlier device's token answers 409 POSITION_MOVED, the later one's keeps the place", async () => {
    const before = await fan(170); // position 171, behind the watermark (100)
    const later = { 'x-queue-token': await signToken(key, { ...before.claims, moves: 1 }) };
    const published = eventState;
    eventState = () => ({ ...published(), queues: [queueState(EVENT, { moves: [[170, 1]] })] });
    try {
      let r = await poll(edge, before);
      for (const end = Date.now() + 30_000; r.status !== 409 && Date.now() < end; r = await poll(edge, before))
        await new Promise((done) => setTimeout(done, 100));
      expect(r.status).toBe(409);
      expect(((await r.json()) as { error: string }).error).toBe('POSITION_MOVED');
      const kept = await poll(edge, before, later);
      expect(kept.status).toBe(200);
      expect(await kept.json()).toMatchObject({ state: 'WAITING', position: 171 });
    } finally {
      eventState = published;
    }
  });

  it('forged, expired, foreign-event, wrong-device and wrong-account queue tokens, bad account tokens and bad input get the origin codes', async () => {
    const good = await fan(10);
    const other = await fan(11);
    const foreign = await fan(12, {}, OTHER_EVENT);
    const forged = await signToken(await createTokenKey('another install queue secret, 32+ chars'), good.claims);
    const expired = await signToken(key, { ...good.claims, exp: nowS() - 1 });
    const expiredAccount = new AccountTokens(AUTH_SECRET, -10);
    const cases: [string, Record<string, string>, number, string, string][] = [
      ['forged queue token', { 'x-queue-token': forged }, 401, 'TOKEN_FORGED', 'token'],
      ['expired queue token', { 'x-queue-token': expired }, 401, 'TOKEN_EXPIRED', 'token'],
      ['malformed queue token', { 'x-queue-token': 'not.a-token!' }, 401, 'TOKEN_MALFORMED', 'token'],
      ["another event's token", { 'x-queue-token': foreign.headers['x-queue-token']! }, 403, 'TOKEN_WRONG_EVENT', 'token'],
      ["another fan's token", { 'x-queue-token': other.headers['x-queue-token']! }, 403, 'TOKEN_WRONG_ACCOUNT', 'token'],
      ['another device', { 'x-device-id': 'somebody-elses-phone' }, 403, 'TOKEN_WRONG_DEVICE', 'token'],
      ['no account token', { authorization: '' }, 401, 'MISSING_TOKEN', 'authorization'],
      ['not a bearer', { authorization: 'Basic abc' }, 401, 'INVALID_TOKEN', 'authorization'],
      [
        'forged account token',
        { authorization: `Bearer ${(await new AccountTokens('another install account secret, 32+ chars').issue(good.accountId)).token}` },
        401,
        'INVALID_TOKEN',
        'authorization',
      ],
      [
        'expired account token',
        { authorization: `Bearer ${(await expiredAccount.issue(good.accountId)).token}` },
        401,
        'TOKEN_EXPIRED',
        'authorization',
      ],
      ['short device id', { 'x-device-id': 'short' }, 400, 'VALIDATION_FAILED', 'headers.x-device-id'],
    ];
    const received = origin.received.length;
    for (const [name, headers, status, code, field] of cases) {
      const r = await poll(edge, good, headers);
      const body = (await r.json()) as { error: string; field: string; message: string };
      expect({ name, status: r.status, error: body.error, field: body.field }).toEqual({ name, status, error: code, field });
      expect(r.headers.get('x-onsale-edge')).toBe('hit');
      expect(body.message.length).toBeGreaterThan(0);
    }
    const noToken = await fetch(`${edge.url}/events/${EVENT}/queue/status`, {
      headers: { authorization: good.headers.authorization!, 'x-device-id': good.deviceId },
    });
    expect(noToken.status).toBe(400);
    expect(await noToken.json()).toMatchObject({ error: 'VALIDATION_FAILED', field: 'headers.x-queue-token' });
    // Refused before any origin request: no poll reached it, nor a look-up of the foreign token's event (other
    // traffic, a claims report of an earlier test or a refresh, may arrive meanwhile).
    expect(origin.received.slice(received).filter((x) => x.url.includes('/queue/status') || x.url.includes(OTHER_EVENT))).toEqual([]);
  });

  it('a fan whose tokens the edge already holds (the state fresh) gets the same answer and the same refusals on every poll', async () => {
    // Polls after the first are answered from what the isolate holds, without a promise (queueStatusNow): they must
    // answer exactly what the first poll, which verified everything, answered, and refuse what it refuses.
    const a = await fan(998);
    const b = await fan(997);
    const first = await poll(edge, a);
    expect(first.status).toBe(200);
    const firstBody = await first.json();
    expect((await poll(edge, b)).status).toBe(200);
    const received = origin.received.length;
    for (let round = 0; round < 3; round++) {
      const [again, swapped, shortDevice, otherEvent, noQueueToken] = await Promise.all([
        poll(edge, a),
        poll(edge, a, { 'x-queue-token': b.headers['x-queue-token']! }),
        poll(edge, a, { 'x-device-id': 'short' }),
        poll(edge, a, {}, OTHER_EVENT),
        fetch(`${edge.url}/events/${EVENT}/queue/status`, {
          headers: { authorization: a.headers.authorization!, 'x-device-id': a.deviceId, connection: 'close' },
        }),
      ]);
      expect(again.status).toBe(200);
      expect(await again.json()).toEqual(firstBody);
      for (const h of ['content-type', 'x-onsale-edge', 'cache-control', 'content-language', 'vary'])
        expect({ h, v: again.headers.get(h) }).toEqual({ h, v: first.headers.get(h) });
      // Retry-After carries the origin's jitter: within the same bounds as the first poll's.
      expect(Number(again.headers.get('retry-after'))).toBeGreaterThanOrEqual(15);
      expect(Number(again.headers.get('retry-after'))).toBeLessThanOrEqual(30);
      expect(again.headers.get('x-onsale-watermark-age')).toMatch(/^\d+$/);
      const refused = async (r: Response) => ({ status: r.status, ...((await r.json()) as { error: string; field: string }) });
      expect(await refused(swapped)).toMatchObject({ status: 403, error: 'TOKEN_WRONG_ACCOUNT', field: 'token' });
      expect(await refused(shortDevice)).toMatchObject({ status: 400, error: 'VALIDATION_FAILED', field: 'headers.x-device-id' });
      expect(await refused(otherEvent)).toMatchObject({ status: 403, error: 'TOKEN_WRONG_EVENT', field: 'token' });
      expect(await refused(noQueueToken)).toMatchObject({ status: 400, error: 'VALIDATION_FAILED', field: 'headers.x-queue-token' });
    }
    expect(origin.received.slice(received).filter((x) => x.url.includes('/queue/status'))).toEqual([]);
  });

  it("a fan is kept by the exact URL it polled: the same tokens at another spelling of the path get the same answer, and another fan's account or device with them the same refusals", async () => {
    // The kept fan (edge.fans) is found by its queue token and used only for the same URL, Authorization and
    // X-Device-Id strings; any other spelling is read again (and kept in its place), never answered from the kept one.
    const a = await fan(994);
    const b = await fan(993);
    const first = await poll(edge, a);
    expect(first.status).toBe(200);
    const firstBody = await first.json();
    // Three spellings of a status poll's path: with a query, with the id's first character percent-encoded, plain.
    const spellings = [
      (id: string, round: number) => `/events/${id}/queue/status?round=${round}`,
      (id: string) => `/events/%${id.charCodeAt(0).toString(16)}${id.slice(1)}/queue/status`,
      (id: string) => `/events/${id}/queue/status`,
    ];
    const at = (path: string, headers: Record<string, string>) =>
      fetch(`${edge.url}${path}`, { headers: { ...headers, connection: 'close' } });
    const refused = async (r: Response) => ({ status: r.status, ...((await r.json()) as { error: string; field: string }) });
    for (let round = 0; round < 2; round++)
      for (const spell of spellings) {
        const path = spell(EVENT, round);
        const again = await at(path, a.headers);
        expect({ path, status: again.status }).toEqual({ path, status: 200 });
        expect(await again.json()).toEqual(firstBody);
        expect(await refused(await at(path, { ...b.headers, 'x-queue-token': a.headers['x-queue-token']! }))).toMatchObject({
          status: 403,
          error: 'TOKEN_WRONG_ACCOUNT',
        });
        expect(await refused(await at(path, { ...a.headers, 'x-device-id': 'somebody-elses-phone' }))).toMatchObject({
          status: 403,
          error: 'TOKEN_WRONG_DEVICE',
        });
        expect(await refused(await at(spell(OTHER_EVENT, round), a.headers))).toMatchObject({ status: 403, error: 'TOKEN_WRONG_EVENT' });
      }
  });

  it('a fan polling on as the account token and then the queue token expire is refused from that moment, as on the first poll', async () => {
    // Polls after the first two are answered from what the isolate learnt of the same strings (edge.fans): what time
    // changes (the tokens' expiry) is checked on every poll. No 200 may start at or after a token's expiry.
    const shortLived = new AccountTokens(AUTH_SECRET, 2);
    const accountExpiring = async () => {
      const f = await fan(996);
      const issued = await shortLived.issue(f.accountId);
      f.headers.authorization = `Bearer ${issued.token}`;
      return [f, issued.expiresAt.getTime(), { status: 401, error: 'TOKEN_EXPIRED', field: 'authorization' }] as const;
    };
    const queueTokenExpiring = async () => {
      const f = await fan(995, { exp: nowS() + 2 });
      return [f, f.claims.exp * 1000, { status: 401, error: 'TOKEN_EXPIRED', field: 'token' }] as const;
    };
    for (const make of [accountExpiring, queueTokenExpiring]) {
      const [f, expMs, refusal] = await make();
      let polls = 0;
      for (;;) {
        const started = Date.now();
        const r = await poll(edge, f);
        polls++;
        if (r.status === 200) {
          expect(started).toBeLessThan(expMs);
          await r.arrayBuffer();
          continue;
        }
        expect({ status: r.status, ...((await r.json()) as object) }).toMatchObject(refusal);
        break;
      }
      expect(polls).toBeGreaterThan(2);
    }
  });
});

describe('the watermark from cache', () => {
  it('GET /events/:id/watermark is answered at the edge, and the origin is asked at most once per event per TTL whatever the poll rate', async () => {
    const fans = await Promise.all(Array.from({ length: 12 }, (_, i) => fan(1000 + i)));
    const fetchesBefore = origin.count(new RegExp(`^/events/${EVENT}/edge-state$`));
    const started = performance.now();
    let requests = 0;
    for (let round = 0; round < 12; round++) {
      const batch = await Promise.all([
        ...fans.map((f) => poll(edge, f)),
        ...Array.from({ length: 8 }, () => fetch(`${edge.url}/events/${EVENT}/watermark`, { headers: { connection: 'close' } })),
      ]);
      for (const r of batch) {
        expect(r.status).toBe(200);
        expect(r.headers.get('x-onsale-edge')).toBe('hit');
        await r.arrayBuffer();
      }
      requests += batch.length;
    }
    const elapsed = performance.now() - started;
    const fetches = origin.count(new RegExp(`^/events/${EVENT}/edge-state$`)) - fetchesBefore;
    // TTL 0.5 s: at most one fetch per started half-second (and one more for the window in flight), however many polls.
    expect(requests).toBe(240);
    expect(fetches).toBeLessThanOrEqual(Math.ceil(elapsed / 500) + 1);
    // The polls above may all fall within one TTL of an earlier test's fetch (workerd serves 240 in well under 0.5 s):
    // polled on, the edge asks the origin again once its copy is older than the TTL.
    await expect
      .poll(async () => {
        await (await fetch(`${edge.url}/events/${EVENT}/watermark`)).arrayBuffer();
        return origin.count(new RegExp(`^/events/${EVENT}/edge-state$`)) - fetchesBefore;
      })
      .toBeGreaterThanOrEqual(1);
    const w = await fetch(`${edge.url}/events/${EVENT}/watermark`);
    expect(w.headers.get('cache-control')).toBe('public, max-age=2');
    expect(await w.json()).toEqual({ admittedThrough: 100, state: 'OPEN', ratePerMin: 600, updatedAt: expect.any(String) });
  });

  it('an unknown event is 404 EVENT_NOT_FOUND, and a malformed id is refused without asking the origin', async () => {
    const r = await fetch(`${edge.url}/events/${randomUUID()}/watermark`);
    expect(r.status).toBe(404);
    expect(await r.json()).toMatchObject({ error: 'EVENT_NOT_FOUND', field: 'id' });
    const bad = await fetch(`${edge.url}/events/not-an-event/watermark`);
    expect(bad.status).toBe(404);
    expect(origin.received.filter((x) => x.url.includes('not-an-event'))).toEqual([]);
  });
});

describe('everything else goes to the origin unchanged', () => {
  it('a join: method, path, query, headers and body as sent, the answer as the origin gave it, marked miss', async () => {
    const f = await fan(1);
    const r = await fetch(`${edge.url}/events/${EVENT}/queue?tier=GENERAL`, {
      method: 'POST',
      headers: {
        authorization: f.headers.authorization!,
        'x-device-id': f.deviceId,
        'content-type': 'application/json',
        'x-proof-of-work': 'abc:123',
      },
      body: '{"hello":"origin"}',
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-onsale-edge')).toBe('miss');
    expect(r.headers.get('x-origin')).toBe('yes');
    expect(await r.json()).toEqual({ echo: { method: 'POST', url: `/events/${EVENT}/queue?tier=GENERAL`, body: '{"hello":"origin"}' } });
    const seen = origin.received.findLast((x) => x.method === 'POST' && x.url === `/events/${EVENT}/queue?tier=GENERAL`)!;
    expect(seen.headers.authorization).toBe(f.headers.authorization);
    expect(seen.headers['x-device-id']).toBe(f.deviceId);
    expect(seen.headers['x-proof-of-work']).toBe('abc:123');
    expect(seen.headers['x-forwarded-host']).toBe(new URL(edge.url).host);
  });

  it('public answers the origin marks cacheable are kept at the edge; private or signed-in ones are not', async () => {
    let served = 0;
    origin.routes.set(
      'GET /e/assets/app-1234.js',
      () => (
        served++,
        {
          status: 200,
          headers: { 'cache-control': 'public, max-age=31536000, immutable', 'content-type': 'text/javascript' },
          body: 'console.log(1)',
        }
      ),
    );
    origin.routes.set('GET /me/notifications', () => ({ status: 200, headers: { 'cache-control': 'no-store' }, body: '[]' }));
    const first = await fetch(`${edge.url}/e/assets/app-1234.js`);
    expect(first.headers.get('x-onsale-edge')).toBe('miss');
    expect(await first.text()).toBe('console.log(1)');
    await expect.poll(async () => (await fetch(`${edge.url}/e/assets/app-1234.js`)).headers.get('x-onsale-edge')).toBe('hit');
    expect(served).toBe(1);
    for (let i = 0; i < 2; i++) expect((await fetch(`${edge.url}/me/notifications`)).headers.get('x-onsale-edge')).toBe('miss');
    const signedIn = await fetch(`${edge.url}/e/assets/app-1234.js`, { headers: { authorization: 'Bearer x' } });
    expect(signedIn.headers.get('x-onsale-edge')).toBe('miss');
  });

  it("the fans' page: kept for the origin's CDN-Cache-Control while browsers are still told to revalidate; a cookie does not bypass it", async () => {
    const page = `/e/${EVENT}`;
    let served = 0;
    origin.routes.set(
      `GET ${page}`,
      () => (
        served++,
        {
          status: 200,
          headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', 'cdn-cache-control': 'public, max-age=30' },
          body: '<!doctype html><title>fans</title>',
        }
      ),
    );
    const first = await fetch(`${edge.url}${page}`);
    expect(first.headers.get('x-onsale-edge')).toBe('miss');
    expect(first.headers.get('cache-control')).toBe('no-cache');
    expect(await first.text()).toContain('<title>fans</title>');
    await expect
      .poll(async () => (await fetch(`${edge.url}${page}`, { headers: { cookie: 'analytics=1' } })).headers.get('x-onsale-edge'))
      .toBe('hit');
    const hit = await fetch(`${edge.url}${page}`);
    expect(hit.headers.get('x-onsale-edge')).toBe('hit');
    // What the browser reads is the origin's word for browsers, not the edge's lifetime.
    expect(hit.headers.get('cache-control')).toBe('no-cache');
    expect(hit.headers.get('x-onsale-browser-cache-control')).toBeNull();
    expect(hit.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await hit.text()).toContain('<title>fans</title>');
    expect(served).toBe(1);
    // An origin that says no-store to shared caches (FAN_PAGE_EDGE_CACHE_SECONDS=0) is asked every time.
    const fresh = `/e/${OTHER_EVENT}`;
    let freshServed = 0;
    origin.routes.set(
      `GET ${fresh}`,
      () => (
        freshServed++,
        {
          status: 200,
          headers: { 'content-type': 'text/html', 'cache-control': 'no-cache', 'cdn-cache-control': 'no-store' },
          body: 'page',
        }
      ),
    );
    for (let i = 0; i < 3; i++) expect((await fetch(`${edge.url}${fresh}`)).headers.get('x-onsale-edge')).toBe('miss');
    expect(freshServed).toBe(3);
    // The page's assets with a cookie: from the cache too; elsewhere a cookie keeps a request away from it.
    expect((await fetch(`${edge.url}/e/assets/app-1234.js`, { headers: { cookie: 'session=1' } })).headers.get('x-onsale-edge')).toBe(
      'hit',
    );
    let facts = 0;
    origin.routes.set(
      `GET /events/${EVENT}/fairness`,
      () => (facts++, { status: 200, headers: { 'cache-control': 'public, max-age=60' }, body: '{}' }),
    );
    for (let i = 0; i < 3; i++)
      expect((await fetch(`${edge.url}/events/${EVENT}/fairness`, { headers: { cookie: 'session=1' } })).headers.get('x-onsale-edge')).toBe(
        'miss',
      );
    expect(facts).toBe(3);
  });
});

describe('failing closed when the origin cannot be reached', () => {
  it('within EDGE_STALE_SECONDS the last watermark answers; past it fans read PAUSED with their place and no admission token', async () => {
    const down = await new FakeOrigin().start();
    const ev = randomUUID();
    down.events.set(ev, () => ({ eventId: ev, tiers: [], queues: [queueState(ev)], generatedAt: Date.now() }));
    const e = await startLocalEdge({
      storeApiUrl: down.url,
      queueTokenSecret: QUEUE_SECRET,
      authSecret: AUTH_SECRET,
      watermarkTtlSeconds: 0.2,
      staleSeconds: 2,
    });
    try {
      const admittedFan = await fan(4, {}, ev);
      const waitingFan = await fan(400, {}, ev);
      const first = (await (await poll(e, admittedFan)).json()) as { state: string; admissionToken?: string };
      expect(first.state).toBe('ADMITTED');
      down.healthy = false; // the origin answers 503 from now on
      const stillFresh = (await (await poll(e, waitingFan)).json()) as { state: string };
      expect(stillFresh.state).toBe('WAITING');
      await expect
        .poll(async () => ((await (await poll(e, admittedFan)).json()) as { state: string }).state, { timeout: 10_000 })
        .toBe('PAUSED');
      const r = await poll(e, admittedFan);
      const paused = (await r.json()) as Record<string, unknown>;
      expect(paused).toEqual({
        state: 'PAUSED',
        message: DEFAULT_QUEUE_COPY.PAUSED,
        position: 5,
        admittedThrough: 100,
        estWaitSeconds: null,
      });
      expect(r.headers.get('retry-after')).toBe('30');
      expect(((await (await poll(e, waitingFan)).json()) as { position: number }).position).toBe(401);
      expect(((await (await fetch(`${e.url}/events/${ev}/watermark`)).json()) as { state: string }).state).toBe('PAUSED');
      // And the origin was asked at most once per TTL meanwhile (0.2 s), not once per poll.
      const asked = down.count(new RegExp(`^/events/${ev}/edge-state$`));
      expect(asked).toBeLessThan(40);
      // Back: answers resume without a restart.
      down.healthy = true;
      await expect
        .poll(async () => ((await (await poll(e, admittedFan)).json()) as { state: string }).state, { timeout: 10_000 })
        .toBe('ADMITTED');
      // The origin gone altogether (connections refused): the same, once the last state is older than the stale bound.
      await down.stop();
      await expect
        .poll(async () => ((await (await poll(e, admittedFan)).json()) as { state: string }).state, { timeout: 10_000 })
        .toBe('PAUSED');
      const gone = (await (await poll(e, admittedFan)).json()) as Record<string, unknown>;
      expect(gone).toMatchObject({ state: 'PAUSED', position: 5 });
      expect(gone.admissionToken).toBeUndefined();
      // An event the isolate never knew while the origin is down: 503 with Retry-After, never an admission.
      const unknownEv = randomUUID();
      const stranger = await fan(0, {}, unknownEv);
      const r503 = await poll(e, stranger);
      expect(r503.status).toBe(503);
      expect(r503.headers.get('retry-after')).toBe('5');
      expect(await r503.json()).toMatchObject({ error: 'WAITING_ROOM_UNAVAILABLE' });
      const proxied = await fetch(`${e.url}/events/${ev}/queue`, { method: 'POST' });
      expect(proxied.status).toBe(503);
      expect(await proxied.json()).toMatchObject({ error: 'ORIGIN_UNAVAILABLE' });
    } finally {
      await e.close();
      await down.stop();
    }
  });
});

describe('an edge without its secrets', () => {
  it('passes status polls to the origin (which answers them itself), never answers them unverified', async () => {
    const e = await startLocalEdge({ storeApiUrl: origin.url, queueTokenSecret: '', authSecret: '' });
    try {
      const f = await fan(1);
      const r = await poll(e, f);
      expect(r.headers.get('x-onsale-edge')).toBe('miss');
      expect(((await r.json()) as { echo: { url: string } }).echo.url).toBe(`/events/${EVENT}/queue/status`);
    } finally {
      await e.close();
    }
  });
});
