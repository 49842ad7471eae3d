import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { admitted, bearer, login, makeEvent, setupApp, type TestApp } from './helper.js';
import { ipKey } from '../src/plugins/rate-limit.js';

// Request limits per account and per IP, in a store API configured with small ones.
let h: TestApp;
let eventId: string;

beforeAll(async () => {
  h = await setupApp({
    env: {
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_WINDOW_SECONDS: '30',
      RATE_LIMIT_JOIN_PER_ACCOUNT: '3',
      RATE_LIMIT_JOIN_PER_IP: '6',
      RATE_LIMIT_STATUS_PER_ACCOUNT: '4',
      RATE_LIMIT_STATUS_PER_IP: '100',
      RATE_LIMIT_HOLD_PER_ACCOUNT: '2',
      RATE_LIMIT_HOLD_PER_IP: '100',
    },
  });
  ({ eventId } = await makeEvent(h.t, { fairnessMode: 'FIFO' }));
});
afterAll(() => h.close());

const join = (token: string, ip: string, device = `device-of-${ip}`) =>
  h.app.inject({
    method: 'POST',
    url: `/events/${eventId}/queue`,
    remoteAddress: ip,
    headers: { ...bearer(token), 'x-device-id': device },
  });

function expectRateLimited(r: Awaited<ReturnType<typeof join>>, scope: 'account' | 'ip') {
  expect(r.statusCode).toBe(429);
  const retryAfter = Number(r.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(30);
  expect(r.json()).toMatchObject({ error: 'RATE_LIMITED', retryAfterSeconds: retryAfter, scope });
  expect(r.json().message).toMatch(/too many requests/);
}

describe('request rate limits', () => {
  it('limit joins per account: the fourth in the window is 429 with Retry-After, and writes nothing new', async () => {
    const fan = await login(h.app, 'rl-joiner');
    for (let i = 0; i < 3; i++) expect((await join(fan, '198.51.100.1')).statusCode).toBe(200);
    const refused = await join(fan, '198.51.100.2'); // another address does not reset the account's count
    expectRateLimited(refused, 'account');
    const rows = await sql<{ n: number }>`SELECT count(*)::int AS n FROM queue_entries WHERE account_id = 'rl-joiner'`.execute(h.t.db);
    expect(rows.rows[0]!.n).toBe(1);
  });

  it('limit joins per IP across accounts, before the account token is even read', async () => {
    const ip = '203.0.113.9';
    const fans = await Promise.all(Array.from({ length: 7 }, (_, i) => login(h.app, `rl-farm-${i}`)));
    const results = [];
    for (const fan of fans) results.push(await join(fan, ip, `farm-device-${fans.indexOf(fan)}`));
    expect(results.slice(0, 6).map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
    expectRateLimited(results[6]!, 'ip');
    // A forged account token from the same address is refused by the limit, not by the token check.
    const forged = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/queue`,
      remoteAddress: ip,
      headers: { authorization: 'Bearer forged', 'x-device-id': 'forged-device' },
    });
    expect(forged.statusCode).toBe(429);
  });

  it('limit status polls per account and holds per account', async () => {
    const fan = await login(h.app, 'rl-poller');
    const joined = await join(fan, '192.0.2.20', 'poller-device');
    const token = joined.json().queueToken;
    const poll = () =>
      h.app.inject({
        url: `/events/${eventId}/queue/status`,
        remoteAddress: '192.0.2.20',
        headers: { ...bearer(fan), 'x-device-id': 'poller-device', 'x-queue-token': token },
      });
    for (let i = 0; i < 4; i++) expect((await poll()).statusCode).toBe(200);
    expectRateLimited(await poll(), 'account');

    const buyer = await login(h.app, 'rl-buyer');
    // Each hold a request of its own (its own Idempotency-Key): the same request again would get the first hold back.
    let n = 0;
    const hold = async () =>
      h.app.inject({
        method: 'POST',
        url: `/events/${eventId}/holds`,
        remoteAddress: '192.0.2.30',
        headers: { ...(await admitted(buyer, eventId)), 'idempotency-key': `rl-buyer-hold-${++n}` },
        payload: { section: 'C', quantity: 1 },
      });
    expect((await hold()).statusCode).toBe(201);
    expect((await hold()).statusCode).toBe(201);
    expectRateLimited(await hold(), 'account');
    const rows = await sql<{ n: number }>`SELECT count(*)::int AS n FROM holds WHERE account_id = 'rl-buyer'`.execute(h.t.db);
    expect(rows.rows[0]!.n).toBe(2);
  });

  it('never limit metrics, health, docs or event pages, and count refusals', async () => {
    const ip = '203.0.113.9'; // already over its join limit
    for (let i = 0; i < 30; i++) {
      for (const url of ['/metrics', '/healthz', '/docs/json', `/events/${eventId}`]) {
        const r = await h.app.inject({ url, remoteAddress: ip });
        expect(r.statusCode, url).toBe(200);
      }
    }
    const m = await h.app.inject({ url: '/metrics' });
    expect(m.body).toMatch(/rate_limited_total\{route="join",scope="ip"\} [1-9]/);
    expect(m.body).toMatch(/rate_limited_total\{route="status",scope="account"\} 1/);
  });

  it("limit a lottery event's registrations like joins: per account, 429 with Retry-After", async () => {
    const at = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();
    const { eventId: lottery } = await makeEvent(h.t, {
      fairnessMode: 'REGISTRATION_LOTTERY',
      onsaleAt: at(120),
      lottery: { registrationOpensAt: at(-10), registrationClosesAt: at(60) },
    });
    const fan = await login(h.app, 'rl-registrant');
    const register = () =>
      h.app.inject({
        method: 'POST',
        url: `/events/${lottery}/lottery/registrations`,
        remoteAddress: '192.0.2.40',
        headers: bearer(fan),
        payload: { quantity: 2 },
      });
    expect((await register()).statusCode).toBe(201);
    expect((await register()).statusCode).toBe(200);
    expect((await register()).statusCode).toBe(200);
    expectRateLimited(await register(), 'account');
  });

  it("count a request whose client hung up (Node's socket address, so req.ip, undefined) under a key, not a TypeError", () => {
    expect(ipKey(undefined)).toBe('disconnected');
    expect(ipKey('10.0.0.7')).toBe('10.0.0.7');
    expect(ipKey('::FFFF:10.0.0.7')).toBe(ipKey('::ffff:10.0.0.7'));
  });

  it('publish the 429 in the OpenAPI document of the limited routes only', async () => {
    const doc = (await h.app.inject({ url: '/docs/json' })).json();
    expect(doc.paths['/events/{id}/queue'].post.responses['429']).toBeDefined();
    expect(doc.paths['/events/{id}/queue/status'].get.responses['429']).toBeDefined();
    expect(doc.paths['/events/{id}/holds'].post.responses['429']).toBeDefined();
    expect(doc.paths['/events/{id}/lottery/registrations'].post.responses['429']).toBeDefined();
    expect(doc.paths['/events/{id}'].get.responses['429']).toBeUndefined();
    const join = doc.paths['/events/{id}/queue'].post.parameters.map((p: { name: string }) => p.name);
    expect(join).toEqual(expect.arrayContaining(['x-device-id', 'x-proof-of-work', 'x-join-deferral']));
  });
});
