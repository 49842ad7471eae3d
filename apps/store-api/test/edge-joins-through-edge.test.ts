import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { DefaultBotScorer } from '@onsale/shared/abuse';
import { testSecrets } from '@onsale/shared/testing';
import { startLocalEdge, type LocalEdge } from '../../edge/src/local.js';
import { login, makeEvent, setupApp, type TestApp } from './helper.js';

// Joins through the edge on workerd serve, which sends the joins arriving together to the store API many to a request
// (POST /edge/joins), in front of the store API on a real PostgreSQL with its request limits and bot gate on: each
// fan still gets its own answer, token and place, one place per account, and the edge falls back to one request a
// join when the origin refuses its batches, answering 503 ORIGIN_UNAVAILABLE when there is no origin at all.

let h: TestApp;
let edge: LocalEdge;
let storeUrl: string;
let eventId: string;

const BROWSER = {
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  accept: 'application/json',
  'accept-language': 'en-GB,en;q=0.9',
};
let seq = 0;
async function fan(account: string, over: Record<string, string> = {}): Promise<Record<string, string>> {
  const k = ++seq;
  return {
    ...BROWSER,
    authorization: `Bearer ${await login(h.app, account)}`,
    'x-device-id': `device-${account}`,
    'cf-connecting-ip': `10.88.${(k >> 8) & 255}.${k & 255}`,
    connection: 'close',
    ...over,
  };
}
const join = (base: string, headers: Record<string, string>) => fetch(`${base}/events/${eventId}/queue`, { method: 'POST', headers });

/** Requests the store API has answered on a route, from its own /metrics (a batch's joins count as joins too). */
async function originCount(route: string): Promise<number> {
  const text = await (await fetch(`${storeUrl}/metrics`)).text();
  let n = 0;
  for (const line of text.split('\n'))
    if (line.startsWith('http_request_duration_seconds_count{') && line.includes(`route="${route}"`)) n += Number(line.split(' ').at(-1));
  return n;
}

beforeAll(async () => {
  h = await setupApp({
    env: { BOT_GATE_ENABLED: 'true', RATE_LIMIT_ENABLED: 'true', STORE_API_TRUST_PROXY: 'loopback' },
    botScorer: new DefaultBotScorer(),
  });
  storeUrl = await h.app.listen({ host: '127.0.0.1', port: 0 });
  ({ eventId } = await makeEvent(h.t, { fairnessMode: 'FIFO' }));
  const secrets = testSecrets();
  edge = await startLocalEdge({
    storeApiUrl: storeUrl,
    queueTokenSecret: secrets.queueTokenSecret,
    authSecret: secrets.authSecret,
    joinBatch: 100,
  });
}, 120_000);
afterAll(async () => {
  await edge?.close();
  await h?.close();
});

describe('joins through the edge, batched to the origin', () => {
  it('many fans at once: each its own 200, token and place, one row per account, fewer origin requests than joins at most', async () => {
    const accounts = Array.from({ length: 60 }, (_, i) => `ete-${i}`);
    const headers = await Promise.all(accounts.map((a) => fan(a)));
    const [batchesBefore, joinsBefore] = [await originCount('/edge/joins'), await originCount('/events/:id/queue')];
    const answers = await Promise.all(
      headers.map(async (hd) => {
        const r = await join(edge.url, hd);
        return {
          status: r.status,
          edge: r.headers.get('x-onsale-edge'),
          lang: r.headers.get('content-language'),
          body: (await r.json()) as { position: number; queueToken: string },
        };
      }),
    );
    for (const a of answers) expect(a).toMatchObject({ status: 200, edge: 'miss', lang: 'en' });
    const positions = answers.map((a) => a.body.position);
    expect(new Set(positions).size).toBe(accounts.length);
    const rows = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM queue_entries WHERE event_id = ${eventId} AND account_id LIKE 'ete-%'`.execute(h.t.db);
    expect(rows.rows[0]!.n).toBe(accounts.length);
    // Every join ran through the store's join route once; they reached it in batches (at least one).
    const batches = (await originCount('/edge/joins')) - batchesBefore;
    expect((await originCount('/events/:id/queue')) - joinsBefore).toBe(accounts.length);
    expect(batches).toBeGreaterThanOrEqual(1);
    expect(batches).toBeLessThanOrEqual(accounts.length);
    // A fan's token is its own: its status poll through the edge gives its own place.
    const i = 17;
    const poll = await fetch(`${edge.url}/events/${eventId}/queue/status`, {
      headers: { ...headers[i]!, 'x-queue-token': answers[i]!.body.queueToken },
    });
    expect(poll.status).toBe(200);
    expect(((await poll.json()) as { position: number }).position).toBe(positions[i]);
  });

  it('refuses in a batch what the store refuses alone; the same account twice at once gets one place', async () => {
    const twice = await fan('ete-twice');
    const [a, b, bad, script] = await Promise.all([
      join(edge.url, twice),
      join(edge.url, { ...twice }),
      join(edge.url, { ...(await fan('ete-bad')), authorization: 'Bearer not-a-token' }),
      join(edge.url, { ...(await fan('ete-script')), 'user-agent': 'curl/8.5.0', accept: '*/*', 'accept-language': '' }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(((await a.json()) as { position: number }).position).toBe(((await b.json()) as { position: number }).position);
    expect([bad.status, ((await bad.json()) as { error: string }).error]).toEqual([401, 'INVALID_TOKEN']);
    expect([script.status, ((await script.json()) as { error: string }).error]).toEqual([403, 'CHALLENGE_REQUIRED']);
  });

  it('an origin that refuses the batches (another queue secret): each join goes alone and is answered; no origin: 503 ORIGIN_UNAVAILABLE', async () => {
    const secrets = testSecrets();
    const other = await startLocalEdge({
      storeApiUrl: storeUrl,
      queueTokenSecret: 'not this install queue token secret, 32+ chars',
      authSecret: secrets.authSecret,
      framingGuard: false,
      joinBatch: 100,
      // Every join batched (none alone while the origin has few in hand): the batch's refusal is what is tested.
      joinAloneBelow: 0,
    });
    try {
      const r = await join(other.url, await fan('ete-alone'));
      expect(r.status).toBe(200);
      expect(((await r.json()) as { queueToken: string }).queueToken).toBeTruthy();
    } finally {
      await other.close();
    }
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const none = await startLocalEdge({
      storeApiUrl: `http://127.0.0.1:${port}`,
      queueTokenSecret: secrets.queueTokenSecret,
      authSecret: secrets.authSecret,
      framingGuard: false,
      joinBatch: 100,
    });
    try {
      const r = await join(none.url, await fan('ete-none'));
      expect(r.status).toBe(503);
      expect(((await r.json()) as { error: string }).error).toBe('ORIGIN_UNAVAILABLE');
      expect(r.headers.get('retry-after')).toBe('5');
    } finally {
      await none.close();
    }
  });
});
