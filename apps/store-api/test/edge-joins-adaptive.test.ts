import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { DefaultBotScorer } from '@onsale/shared/abuse';
import { testSecrets } from '@onsale/shared/testing';
import { startLocalEdge, type LocalEdge } from '../../edge/src/local.js';
import { login, makeEvent, setupApp, type TestApp } from './helper.js';

// Adaptive join batching at the edge (EDGE_JOIN_BATCH on, EDGE_JOIN_ALONE_BELOW, EDGE_JOIN_BATCH_WAIT_MS), on workerd
// serve in front of the store API on a real PostgreSQL with its request limits and bot gate on: a join goes to the
// store's own join route alone while the edge has few joins at the origin; only the backlog of a burst goes in
// batches (POST /edge/joins); and a fan's answer is the same whichever way its join went.

let h: TestApp;
let storeUrl: string;
let eventId: string;
/** The default bounds (32 joins at the origin before a backlog forms). */
let adaptive: LocalEdge;
/** A small bound, so that a burst of a test's size has a backlog. */
let small: LocalEdge;
/** Every join alone (EDGE_JOIN_BATCH=off). */
let off: LocalEdge;

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
    'cf-connecting-ip': `10.89.${(k >> 8) & 255}.${k & 255}`,
    connection: 'close',
    ...over,
  };
}
const join = (edge: LocalEdge, headers: Record<string, string>) =>
  fetch(`${edge.url}/events/${eventId}/queue`, { method: 'POST', headers });

/** Requests the store API has answered on a route, from its own /metrics (a batch's joins count as joins too). */
async function originCount(route: string): Promise<number> {
  const text = await (await fetch(`${storeUrl}/metrics`)).text();
  let n = 0;
  for (const line of text.split('\n'))
    if (line.startsWith('http_request_duration_seconds_count{') && line.includes(`route="${route}"`)) n += Number(line.split(' ').at(-1));
  return n;
}
const counts = async () => ({ batches: await originCount('/edge/joins'), joins: await originCount('/events/:id/queue') });

beforeAll(async () => {
  h = await setupApp({
    env: { BOT_GATE_ENABLED: 'true', RATE_LIMIT_ENABLED: 'true', STORE_API_TRUST_PROXY: 'loopback' },
    botScorer: new DefaultBotScorer(),
  });
  storeUrl = await h.app.listen({ host: '127.0.0.1', port: 0 });
  ({ eventId } = await makeEvent(h.t, { fairnessMode: 'FIFO' }));
  const secrets = testSecrets();
  const base = { storeApiUrl: storeUrl, queueTokenSecret: secrets.queueTokenSecret, authSecret: secrets.authSecret };
  [adaptive, small, off] = await Promise.all([
    startLocalEdge({ ...base, joinBatch: 100 }),
    startLocalEdge({ ...base, joinBatch: 100, joinAloneBelow: 2, joinBatchWaitMs: 20 }),
    startLocalEdge({ ...base, joinBatch: 'off' }),
  ]);
}, 120_000);
afterAll(async () => {
  await Promise.all([adaptive?.close(), small?.close(), off?.close()]);
  await h?.close();
});

describe('adaptive join batching at the edge', () => {
  it('joins at a low rate go alone: the store answers each on its own join route, no batch', async () => {
    const headers = await Promise.all(Array.from({ length: 12 }, (_, i) => fan(`ada-low-${i}`)));
    const before = await counts();
    for (const hd of headers) {
      // One after the other: never more than one join at the origin.
      const r = await join(adaptive, hd);
      expect([r.status, r.headers.get('x-onsale-edge')]).toEqual([200, 'miss']);
      expect(((await r.json()) as { queueToken: string }).queueToken).toBeTruthy();
    }
    const after = await counts();
    expect(after.batches - before.batches).toBe(0);
    expect(after.joins - before.joins).toBe(headers.length);
  });

  it('a burst goes in batches past the first joins: each fan its own 200, token and place, one row per account', async () => {
    const accounts = Array.from({ length: 80 }, (_, i) => `ada-burst-${i}`);
    const headers = await Promise.all(accounts.map((a) => fan(a)));
    const before = await counts();
    const answers = await Promise.all(
      headers.map(async (hd) => {
        const r = await join(small, hd);
        return {
          status: r.status,
          edge: r.headers.get('x-onsale-edge'),
          body: (await r.json()) as { position: number; queueToken: string },
        };
      }),
    );
    for (const a of answers) expect(a).toMatchObject({ status: 200, edge: 'miss' });
    expect(new Set(answers.map((a) => a.body.position)).size).toBe(accounts.length);
    const rows = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM queue_entries WHERE event_id = ${eventId} AND account_id LIKE 'ada-burst-%'`.execute(h.t.db);
    expect(rows.rows[0]!.n).toBe(accounts.length);
    const after = await counts();
    // Every join ran through the store's join route once; the backlog reached it in batches, far fewer than its joins.
    expect(after.joins - before.joins).toBe(accounts.length);
    const batches = after.batches - before.batches;
    expect(batches).toBeGreaterThanOrEqual(1);
    expect(batches).toBeLessThan(accounts.length / 2);
  });

  it('answers equal those alone: the same refusals and acceptances in a burst as with batching off', async () => {
    // Each case's headers, for a fan of its own on each edge; a burst of plain fans around them fills the origin's
    // places on the small edge, so the cases land in its backlog.
    const cases = async (tag: string): Promise<Record<string, string>[]> => {
      const twice = await fan(`ada-${tag}-twice`);
      return [
        await fan(`ada-${tag}-ok`),
        twice,
        { ...twice },
        { ...(await fan(`ada-${tag}-bad`)), authorization: 'Bearer not-a-token' },
        { ...(await fan(`ada-${tag}-script`)), 'user-agent': 'curl/8.5.0', accept: '*/*', 'accept-language': '' },
        { ...(await fan(`ada-${tag}-noauth`)), authorization: '' },
        { ...(await fan(`ada-${tag}-device`)), 'x-device-id': '' },
      ];
    };
    const run = async (edge: LocalEdge, tag: string) => {
      const pad = await Promise.all(Array.from({ length: 20 }, (_, i) => fan(`ada-${tag}-pad-${i}`)));
      const odd = await cases(tag);
      const all = await Promise.all([...pad, ...odd].map((hd) => join(edge, hd)));
      return Promise.all(
        all.slice(pad.length).map(async (r) => {
          const body = (await r.json()) as { error?: string; position?: number };
          return { status: r.status, error: body.error ?? null, retryAfter: r.headers.get('retry-after') };
        }),
      );
    };
    const before = await counts();
    const batched = await run(small, 'b');
    const mid = await counts();
    const alone = await run(off, 'a');
    expect(mid.batches - before.batches).toBeGreaterThanOrEqual(1);
    expect(batched).toEqual(alone);
    // The cases are what the store answers alone: a place, the same place twice, and each refusal's own code.
    expect(alone.map((a) => a.status).slice(0, 3)).toEqual([200, 200, 200]);
    expect(alone[3]).toMatchObject({ status: 401, error: 'INVALID_TOKEN' });
    expect(alone[4]).toMatchObject({ status: 403, error: 'CHALLENGE_REQUIRED' });
  });
});
