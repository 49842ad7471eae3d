import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sql } from '@onsale/shared/db';
import { DefaultBotScorer } from '@onsale/shared/abuse';
import {
  createTokenKey,
  EDGE_JOINS_HEADER,
  EDGE_JOINS_STREAM,
  signEdgeJoins,
  type EdgeJoinAnswer,
  type EdgeJoinAnswerLine,
  type TokenKey,
} from '@onsale/shared/queue';
import { testSecrets } from '@onsale/shared/testing';
import { bearer, login, makeEvent, setupApp, type TestApp } from './helper.js';
import { holdInTransaction } from './store-processes.js';

// POST /edge/joins: the joins an edge sends many to a request. Each is the fan's own request and gets what it would
// have got alone: the account check, the request limits by the fan's forwarded address, the bot gate on its own
// headers, one position per account; only a batch the edge signed is run at all.

let h: TestApp;
let key: TokenKey;
let eventId: string;

beforeAll(async () => {
  h = await setupApp({
    env: {
      BOT_GATE_ENABLED: 'true',
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_JOIN_PER_IP: '3',
      STORE_API_TRUST_PROXY: 'loopback',
    },
    botScorer: new DefaultBotScorer(),
  });
  key = await createTokenKey(testSecrets().queueTokenSecret);
  ({ eventId } = await makeEvent(h.t, { fairnessMode: 'FIFO' }));
});
afterAll(() => h.close());

const BROWSER = {
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  accept: 'application/json',
  'accept-language': 'en-GB,en;q=0.9',
};

let addressSeq = 0;
const newAddress = () => `10.77.${(++addressSeq >> 8) & 255}.${addressSeq & 255}`;

/** A fan's join headers as the edge forwards them (a browser, its own device and address unless given). */
async function fanHeaders(account: string, over: Record<string, string> = {}): Promise<Record<string, string>> {
  return {
    ...BROWSER,
    ...bearer(await login(h.app, account)),
    'x-device-id': `device-${account}`,
    'x-forwarded-for': newAddress(),
    ...over,
  };
}

async function sendBatch(
  joins: { path: string; headers: Record<string, string> }[],
  sign: (body: string) => Promise<string> = (b) => signEdgeJoins(key, b, Date.now()),
  app = h.app,
  accept?: string,
) {
  const body = JSON.stringify({ joins });
  return app.inject({
    method: 'POST',
    url: '/edge/joins',
    headers: { 'content-type': 'application/json', [EDGE_JOINS_HEADER]: await sign(body), ...(accept ? { accept } : {}) },
    payload: body,
  });
}

/** A streamed batch answer's lines (EDGE_JOINS_STREAM), in the order they came. */
const linesOf = (payload: string) =>
  payload
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as EdgeJoinAnswerLine);

const joinPath = () => `/events/${eventId}/queue`;
const rows = async (accounts: string[]) =>
  (
    await sql<{
      account_id: string;
      n: number;
    }>`SELECT account_id, count(*)::int AS n FROM queue_entries WHERE event_id = ${eventId} AND account_id = ANY(${accounts}) GROUP BY account_id`.execute(
      h.t.db,
    )
  ).rows;
const bodyOf = (a: EdgeJoinAnswer) => JSON.parse(a.body) as { error?: string; position?: number; queueToken?: string };

describe('POST /edge/joins', () => {
  it('answers each join of a batch as the join route would: its own token and position, in the batch order', async () => {
    const accounts = Array.from({ length: 12 }, (_, i) => `ej-order-${i}`);
    const joins = await Promise.all(accounts.map(async (a) => ({ path: joinPath(), headers: await fanHeaders(a) })));
    const r = await sendBatch(joins);
    expect(r.statusCode).toBe(200);
    const { answers } = r.json<{ answers: EdgeJoinAnswer[] }>();
    expect(answers).toHaveLength(accounts.length);
    const positions = answers.map((a) => {
      expect(a.status).toBe(200);
      expect(a.headers['content-type']).toMatch(/application\/json/);
      expect(a.headers['retry-after']).toMatch(/^\d+$/);
      expect(a.headers['content-language']).toBe('en');
      expect(a.headers['content-length']).toBeUndefined();
      const b = bodyOf(a);
      expect(b.queueToken).toBeTruthy();
      return b.position!;
    });
    // Each its own place, in the order the edge received them.
    expect(positions).toEqual([...positions].sort((x, y) => x - y));
    expect(new Set(positions).size).toBe(accounts.length);
    expect((await rows(accounts)).every((x) => x.n === 1)).toBe(true);
    expect(await rows(accounts)).toHaveLength(accounts.length);
  });

  it('refuses within a batch what it refuses alone: a bad account, a script (bot gate), the address over its limit; a repeat gets the same place', async () => {
    const shared = newAddress();
    const good = await fanHeaders('ej-mix-good');
    const joins = [
      { path: joinPath(), headers: good },
      { path: joinPath(), headers: { ...good } }, // the same fan again: the same position
      { path: joinPath(), headers: { ...(await fanHeaders('ej-mix-bad')), authorization: 'Bearer not-a-token' } },
      {
        path: joinPath(),
        headers: {
          ...bearer(await login(h.app, 'ej-mix-curl')),
          'user-agent': 'curl/8.5.0',
          accept: '*/*',
          'x-device-id': 'device-ej-mix-curl',
          'x-forwarded-for': newAddress(),
        },
      },
      // Five fans behind one address, whose join limit is 3 a window: the first three pass, the last two are refused.
      ...(await Promise.all(
        [0, 1, 2, 3, 4].map(async (i) => ({
          path: joinPath(),
          headers: await fanHeaders(`ej-mix-ip-${i}`, { 'x-forwarded-for': shared }),
        })),
      )),
    ];
    const r = await sendBatch(joins);
    expect(r.statusCode).toBe(200);
    const a = r.json<{ answers: EdgeJoinAnswer[] }>().answers;
    expect(a.map((x) => x.status)).toEqual([200, 200, 401, 403, 200, 200, 200, 429, 429]);
    expect(bodyOf(a[0]!).position).toBe(bodyOf(a[1]!).position);
    expect(bodyOf(a[2]!).error).toBe('INVALID_TOKEN');
    expect(bodyOf(a[3]!).error).toBe('CHALLENGE_REQUIRED');
    expect(bodyOf(a[7]!).error).toBe('RATE_LIMITED');
    expect(a[7]!.headers['retry-after']).toMatch(/^\d+$/);
    expect(await rows(['ej-mix-curl', 'ej-mix-ip-3', 'ej-mix-ip-4'])).toEqual([]);
    expect(await rows(['ej-mix-good'])).toEqual([{ account_id: 'ej-mix-good', n: 1 }]);
  });

  it('answers a batch of good and bad joins each as the same join alone: status, headers, error and fields; only the odd ones run as requests', async () => {
    const curl = { 'user-agent': 'curl/8.5.0', accept: '*/*' };
    // Each kind of join twice, for two fans alike: one sent alone to the join route, one in a batch.
    const kinds: ((n: string) => Promise<{ path: string; headers: Record<string, string> }>)[] = [
      async (n) => ({ path: joinPath(), headers: await fanHeaders(`ej-alike-good-${n}`) }),
      async (n) => ({ path: `${joinPath()}?tier=no-such-tier`, headers: await fanHeaders(`ej-alike-tier-${n}`) }),
      async (n) => ({ path: joinPath(), headers: { ...(await fanHeaders(`ej-alike-bad-${n}`)), authorization: 'Bearer not-a-token' } }),
      async (n) => {
        const { authorization: _, ...headers } = await fanHeaders(`ej-alike-none-${n}`);
        return { path: joinPath(), headers };
      },
      async (n) => {
        const { 'accept-language': _, ...headers } = await fanHeaders(`ej-alike-curl-${n}`, curl);
        return { path: joinPath(), headers };
      },
      async (n) => ({ path: '/events/00000000-0000-4000-8000-00000000dead/queue', headers: await fanHeaders(`ej-alike-gone-${n}`) }),
      // The odd ones: run through the whole server as their own request (a bad device id, an escaped path).
      async (n) => ({ path: joinPath(), headers: await fanHeaders(`ej-alike-device-${n}`, { 'x-device-id': 'x' }) }),
      async (n) => ({
        path: `/events/%${eventId.charCodeAt(0).toString(16)}${eventId.slice(1)}/queue`,
        headers: await fanHeaders(`ej-alike-escaped-${n}`),
      }),
    ];
    const alone = await Promise.all(kinds.map((k) => k('alone')));
    const batched = await Promise.all(kinds.map((k) => k('batched')));
    const expected: { status: number; headers: Record<string, unknown>; body: string }[] = [];
    for (const j of alone) {
      const r = await h.app.inject({ method: 'POST', url: j.path, headers: j.headers });
      expected.push({ status: r.statusCode, headers: r.headers, body: r.payload });
    }
    const inject = vi.spyOn(h.app, 'inject');
    let answers: EdgeJoinAnswer[];
    try {
      const r = await sendBatch(batched);
      expect(r.statusCode).toBe(200);
      answers = r.json<{ answers: EdgeJoinAnswer[] }>().answers;
      // sendBatch's own request, and the two odd joins.
      expect(inject).toHaveBeenCalledTimes(3);
    } finally {
      inject.mockRestore();
    }
    // What differs between two fans alike: their tokens, places and challenges.
    const VARYING = new Set(['queueToken', 'position', 'challenge', 'message']);
    const shape = (body: string) =>
      Object.fromEntries(Object.entries(JSON.parse(body) as Record<string, unknown>).map(([k, v]) => [k, VARYING.has(k) ? typeof v : v]));
    const headerNames = (hs: Record<string, unknown>) =>
      Object.keys(hs)
        .filter((k) => !['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date'].includes(k))
        .sort();
    expect(answers.map((a) => a.status)).toEqual([200, 404, 401, 401, 403, 404, 400, 200]);
    answers.forEach((a, i) => {
      const e = expected[i]!;
      expect([i, a.status]).toEqual([i, e.status]);
      expect([i, shape(a.body)]).toEqual([i, shape(e.body)]);
      expect([i, headerNames(a.headers)]).toEqual([i, headerNames(e.headers)]);
      expect([i, a.headers['content-type']]).toEqual([i, e.headers['content-type']]);
    });
    expect(await rows(['ej-alike-good-batched'])).toEqual([{ account_id: 'ej-alike-good-batched', n: 1 }]);
    expect(await rows(['ej-alike-bad-batched', 'ej-alike-curl-batched', 'ej-alike-device-batched'])).toEqual([]);
  });

  it("counts a batch's joins in Redis when the limits are shared (REDIS_URL): the address over its limit refused, as alone", async () => {
    const r = await setupApp({
      env: {
        BOT_GATE_ENABLED: 'true',
        RATE_LIMIT_ENABLED: 'true',
        RATE_LIMIT_JOIN_PER_IP: '3',
        STORE_API_TRUST_PROXY: 'loopback',
        REDIS_URL: 'redis://127.0.0.1:6379',
        REDIS_KEY_PREFIX: `edge-joins-test:${process.pid}:${Date.now()}:`,
      },
      botScorer: new DefaultBotScorer(),
    });
    try {
      const { eventId: ev } = await makeEvent(r.t, { fairnessMode: 'FIFO' });
      const shared = newAddress();
      const joins = await Promise.all(
        [0, 1, 2, 3, 4].map(async (i) => ({
          path: `/events/${ev}/queue`,
          headers: { ...(await fanHeaders(`ej-redis-${i}`)), ...bearer(await login(r.app, `ej-redis-${i}`)), 'x-forwarded-for': shared },
        })),
      );
      const body = JSON.stringify({ joins });
      const res = await r.app.inject({
        method: 'POST',
        url: '/edge/joins',
        headers: { 'content-type': 'application/json', [EDGE_JOINS_HEADER]: await signEdgeJoins(key, body, Date.now()) },
        payload: body,
      });
      expect(res.statusCode).toBe(200);
      const a = res.json<{ answers: EdgeJoinAnswer[] }>().answers;
      expect(a.map((x) => x.status)).toEqual([200, 200, 200, 429, 429]);
      expect(bodyOf(a[3]!).error).toBe('RATE_LIMITED');
      expect(a[3]!.headers['x-ratelimit-limit']).toBe('3');
    } finally {
      await r.close();
    }
  });

  it("keeps the join route's check order alone and in a batch: the address's limit before the account check and before validation", async () => {
    // Per address: three joins pass (the limit is 3), then a bad token and a bad device id are both refused 429.
    const joinsFrom = async (address: string, n: string) => [
      ...(await Promise.all(
        [0, 1, 2].map(async (i) => ({ path: joinPath(), headers: await fanHeaders(`ej-order-${n}-${i}`, { 'x-forwarded-for': address }) })),
      )),
      {
        path: joinPath(),
        headers: { ...(await fanHeaders(`ej-order-${n}-bad`, { 'x-forwarded-for': address })), authorization: 'Bearer not-a-token' },
      },
      { path: joinPath(), headers: await fanHeaders(`ej-order-${n}-device`, { 'x-forwarded-for': address, 'x-device-id': 'x' }) },
    ];
    const alone: number[] = [];
    for (const j of await joinsFrom(newAddress(), 'alone'))
      alone.push((await h.app.inject({ method: 'POST', url: j.path, headers: j.headers })).statusCode);
    const r = await sendBatch(await joinsFrom(newAddress(), 'batched'));
    const batched = r.json<{ answers: EdgeJoinAnswer[] }>().answers.map((a) => a.status);
    expect(alone).toEqual([200, 200, 200, 429, 429]);
    expect(batched).toEqual(alone);
  });

  it("streams each join's answer when the edge asks (one line a join, by its place): the same answers as the whole batch's", async () => {
    const kinds = async (n: string) => {
      const shared = newAddress();
      return [
        { path: joinPath(), headers: await fanHeaders(`ej-stream-good-${n}`) },
        { path: joinPath(), headers: { ...(await fanHeaders(`ej-stream-bad-${n}`)), authorization: 'Bearer not-a-token' } },
        { path: `${joinPath()}?tier=no-such-tier`, headers: await fanHeaders(`ej-stream-tier-${n}`) },
        { path: joinPath(), headers: await fanHeaders(`ej-stream-device-${n}`, { 'x-device-id': 'x' }) },
        ...(await Promise.all(
          [0, 1, 2, 3].map(async (i) => ({
            path: joinPath(),
            headers: await fanHeaders(`ej-stream-ip-${n}-${i}`, { 'x-forwarded-for': shared }),
          })),
        )),
      ];
    };
    const whole = await sendBatch(await kinds('whole'));
    const streamed = await sendBatch(await kinds('streamed'), undefined, h.app, EDGE_JOINS_STREAM);
    expect(streamed.statusCode).toBe(200);
    expect(streamed.headers['content-type']).toBe(EDGE_JOINS_STREAM);
    const lines = linesOf(streamed.payload);
    expect(lines.map((l) => l.i).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const byPlace = [...lines].sort((a, b) => a.i - b.i);
    const answers = whole.json<{ answers: EdgeJoinAnswer[] }>().answers;
    expect(byPlace.map((l) => l.status)).toEqual([200, 401, 404, 400, 200, 200, 200, 429]);
    expect(byPlace.map((l) => l.status)).toEqual(answers.map((a) => a.status));
    byPlace.forEach((l, i) => {
      expect([i, bodyOf(l).error]).toEqual([i, bodyOf(answers[i]!).error]);
      expect([i, Object.keys(l.headers).sort()]).toEqual([i, Object.keys(answers[i]!.headers).sort()]);
    });
    expect(await rows(['ej-stream-good-streamed'])).toEqual([{ account_id: 'ej-stream-good-streamed', n: 1 }]);
  });

  it("streams a join as soon as it is done, not after the batch's slowest; one still running at the budget is answered 503 request_budget", async () => {
    const r = await setupApp({
      env: { STORE_API_TRUST_PROXY: 'loopback', REQUEST_BUDGET_MS: '1500', DB_POOL_WAIT_MS: '1000' },
    });
    let lock: { release: () => Promise<void> } | undefined;
    try {
      const { eventId: ev } = await makeEvent(r.t, { fairnessMode: 'FIFO' });
      const path = `/events/${ev}/queue`;
      const headersOf = async (account: string) => ({
        ...BROWSER,
        ...bearer(await login(r.app, account)),
        'x-device-id': `device-${account}`,
        'x-forwarded-for': newAddress(),
      });
      // A fan the store knows already (its account recorded by its first join) joins again at once; new fans wait
      // for their accounts to be recorded, which the lock below holds past the budget.
      const known = await headersOf('ej-budget-known');
      const first = await sendBatch([{ path, headers: known }], undefined, r.app);
      expect(first.json<{ answers: EdgeJoinAnswer[] }>().answers[0]!.status).toBe(200);
      const joins = [
        { path, headers: await headersOf('ej-budget-new-0') },
        { path, headers: known },
        { path, headers: await headersOf('ej-budget-new-1') },
      ];
      // The two new fans' accounts being written by a transaction not yet committed: recording them waits for it.
      const held = ['ej-budget-new-0', 'ej-budget-new-1'];
      await sql`DELETE FROM accounts WHERE id = ANY(${held})`.execute(r.t.db);
      lock = await holdInTransaction(r.t.db, async (trx) => {
        await sql`INSERT INTO accounts (id) SELECT unnest(${held}::text[])`.execute(trx);
      });
      const started = performance.now();
      const res = await sendBatch(joins, undefined, r.app, EDGE_JOINS_STREAM);
      const took = performance.now() - started;
      const lines = linesOf(res.payload);
      // The known fan's answer first, then the two held ones, answered at the budget as a request alone would be.
      expect(lines.map((l) => l.i)).toEqual([1, expect.any(Number), expect.any(Number)]);
      expect(lines[0]!.status).toBe(200);
      for (const l of lines.slice(1)) {
        expect(l.status).toBe(503);
        expect(bodyOf(l)).toMatchObject({ error: 'SERVICE_UNAVAILABLE', reason: 'request_budget' });
        expect(l.headers['retry-after']).toMatch(/^\d+$/);
      }
      expect(took).toBeGreaterThanOrEqual(1400);
    } finally {
      await lock?.release();
      await r.close();
    }
  });

  it('runs nothing the edge did not sign: no signature, another key, a body changed after signing, an old batch; only joins', async () => {
    const joins = [{ path: joinPath(), headers: await fanHeaders('ej-unsigned') }];
    const other = await createTokenKey('another install, another queue token secret!!');
    const refusals = [
      await sendBatch(joins, async () => ''),
      await sendBatch(joins, (b) => signEdgeJoins(other, b, Date.now())),
      await sendBatch(joins, (b) => signEdgeJoins(key, b.replace('ej-unsigned', 'ej-unsignex'), Date.now())),
      await sendBatch(joins, (b) => signEdgeJoins(key, b, Date.now() - 120_000)),
    ];
    expect(refusals.map((r) => [r.statusCode, r.json().error])).toEqual([
      [401, 'TOKEN_MALFORMED'],
      [401, 'TOKEN_FORGED'],
      [401, 'TOKEN_FORGED'],
      [401, 'TOKEN_EXPIRED'],
    ]);
    expect(await rows(['ej-unsigned'])).toEqual([]);
    const notJoins = await sendBatch([{ path: `/events/${eventId}/holds`, headers: joins[0]!.headers }]);
    expect([notJoins.statusCode, notJoins.json().error]).toEqual([400, 'VALIDATION_FAILED']);
    expect((await sendBatch([])).statusCode).toBe(400);
  });

  it('batches sent together with fans in more than one of them: one position per account, no two accounts sharing one', async () => {
    const accounts = Array.from({ length: 30 }, (_, i) => `ej-conc-${i}`);
    const headers = await Promise.all(accounts.map((a) => fanHeaders(a)));
    // Four batches of 20 at once; every account in two or three of them.
    const batches = [0, 1, 2, 3].map((b) =>
      Array.from({ length: 20 }, (_, i) => {
        const k = (b * 7 + i * 3) % accounts.length;
        // Each join from an address of its own (the per-address limit is 3 here; the per-account one is not met).
        return { k, join: { path: joinPath(), headers: { ...headers[k]!, 'x-forwarded-for': newAddress() } } };
      }),
    );
    const results = await Promise.all(batches.map((b) => sendBatch(b.map((x) => x.join))));
    const byAccount = new Map<number, Set<number>>();
    results.forEach((r, bi) => {
      expect(r.statusCode).toBe(200);
      r.json<{ answers: EdgeJoinAnswer[] }>().answers.forEach((a, i) => {
        expect(a.status).toBe(200);
        const k = batches[bi]![i]!.k;
        const s = byAccount.get(k) ?? new Set<number>();
        s.add(bodyOf(a).position!);
        byAccount.set(k, s);
      });
    });
    for (const s of byAccount.values()) expect(s.size).toBe(1);
    const positions = [...byAccount.values()].map((s) => [...s][0]!);
    expect(new Set(positions).size).toBe(byAccount.size);
    const written = await rows(accounts);
    expect(written).toHaveLength(byAccount.size);
    expect(written.every((x) => x.n === 1)).toBe(true);
  });
});
