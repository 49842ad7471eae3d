import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { StoreMetricsScraper } from '@onsale/shared/warroom';
import { bearer, login, makeEvent, setupApp, type TestApp } from './helper.js';

// Request limits shared in Redis, with Redis unreachable (a port nothing listens on): each of the install's four
// store processes (STORE_API_PROCESSES) counts in its own memory at a quarter of every limit, so the four together
// allow no more than the limit; /metrics says so, and the war room's scrape reads it. With Redis answering, the
// same settings count the whole limit in Redis.

const LIMITS = {
  RATE_LIMIT_ENABLED: 'true',
  RATE_LIMIT_WINDOW_SECONDS: '60',
  RATE_LIMIT_JOIN_PER_ACCOUNT: '12',
  RATE_LIMIT_JOIN_PER_IP: '1000',
  RATE_LIMIT_STATUS_PER_ACCOUNT: '1000',
  RATE_LIMIT_STATUS_PER_IP: '1000',
  STORE_API_PROCESSES: '4',
};

/** A port nothing listens on: bound, read, and closed again. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

async function joinsUntilRefused(
  h: TestApp,
  eventId: string,
  account: string,
): Promise<{ allowed: number; refusal: Record<string, unknown> }> {
  const fan = await login(h.app, account);
  for (let i = 1; i <= 20; i++) {
    const r = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/queue`,
      remoteAddress: '198.51.100.77',
      headers: { ...bearer(fan), 'x-device-id': `${account}-device` },
    });
    if (r.statusCode === 429) return { allowed: i - 1, refusal: { ...r.json(), retryAfter: r.headers['retry-after'] } };
    expect(r.statusCode).toBe(200);
  }
  throw new Error('never refused');
}

const limitsLocal = async (h: TestApp) =>
  Number(/^request_limits_local (\S+)$/m.exec((await h.app.inject({ url: '/metrics' })).body)?.[1] ?? 'NaN');

describe('Redis unreachable', () => {
  let h: TestApp;
  let eventId: string;
  beforeAll(async () => {
    h = await setupApp({ env: { ...LIMITS, REDIS_URL: `redis://127.0.0.1:${await closedPort()}`, REDIS_KEY_PREFIX: 'h30-ssrf-down:' } });
    ({ eventId } = await makeEvent(h.t, { fairnessMode: 'FIFO' }));
  });
  afterAll(() => h?.close());

  it('each process counts a quarter of the limit (12 / 4 processes = 3 joins), not the whole of it', async () => {
    expect(await limitsLocal(h)).toBe(0); // nothing counted yet
    const { allowed, refusal } = await joinsUntilRefused(h, eventId, 'redis-down-fan');
    expect(allowed).toBe(3);
    expect(refusal).toMatchObject({ error: 'RATE_LIMITED', scope: 'account', limit: 3 });
    expect(Number(refusal.retryAfter)).toBeGreaterThanOrEqual(1);
  });

  it('says so on /metrics (request_limits_local 4), and the war room reads it: one instance counting at 1/4', async () => {
    expect(await limitsLocal(h)).toBe(4);
    const scraper = new StoreMetricsScraper({
      urls: ['http://store.test'],
      fetch: async () => new Response((await h.app.inject({ url: '/metrics' })).body),
    });
    expect(await scraper.scrape()).toMatchObject({ reachable: 1, limitsLocalInstances: 1, limitsLocalDivisor: 4 });
  });
});

describe('Redis answering', () => {
  let h: TestApp;
  let eventId: string;
  const prefix = `h30-ssrf-up-${process.pid}:`;
  beforeAll(async () => {
    h = await setupApp({ env: { ...LIMITS, REDIS_URL: 'redis://127.0.0.1:6379', REDIS_KEY_PREFIX: prefix } });
    ({ eventId } = await makeEvent(h.t, { fairnessMode: 'FIFO' }));
  });
  afterAll(async () => {
    const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true });
    await redis.connect();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await h?.close();
  });

  it('the whole limit is counted in Redis (12 joins), and /metrics says limits are shared (0)', async () => {
    const { allowed, refusal } = await joinsUntilRefused(h, eventId, 'redis-up-fan');
    expect(allowed).toBe(12);
    expect(refusal).toMatchObject({ error: 'RATE_LIMITED', scope: 'account', limit: 12 });
    expect(await limitsLocal(h)).toBe(0);
  });
});
