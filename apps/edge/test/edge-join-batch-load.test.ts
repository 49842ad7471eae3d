import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EdgeJoinsBody } from '@onsale/shared/queue/edge-joins';
import { startLocalEdge, type LocalEdge } from '../src/local.js';
import { FakeOrigin } from './fake-origin.js';

// Joins in batches under load, on `workerd serve`: many joins at once, so that several batches are at the origin
// while more joins wait for the next, and fans hanging up while their batch is in flight (the leader of a batch
// among them). Every fan still connected gets its own join's answer, and workerd logs no cross-request I/O error
// ("Cannot perform I/O on behalf of a different request") and no cancelled continuation. A 20,000-fan rehearsal with
// batching on showed both (docs/edge.md, "Joins in batches").

const QUEUE_SECRET = 'edge join batch load test queue secret, 32+ characters';
const AUTH_SECRET = 'edge join batch load test account secret, 32+ characters';

let origin: FakeOrigin;
let edge: LocalEdge;
const logs: string[] = [];
/** Batches the origin is answering now, and the most at once. */
let atOrigin = 0;
let mostAtOrigin = 0;
let batches = 0;
/** How long the origin takes over a batch. */
let originDelayMs = 40;

/** The origin's batch route: each join answered with its own path and the fan's id, after a pause (a busy origin). */
function answerBatch(_req: IncomingMessage, res: ServerResponse, text: string): void {
  {
    const body = JSON.parse(text) as EdgeJoinsBody;
    atOrigin++;
    batches++;
    mostAtOrigin = Math.max(mostAtOrigin, atOrigin);
    setTimeout(() => {
      atOrigin--;
      const answers = body.joins.map((j) => ({
        status: 201,
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ path: j.path, fan: j.headers['x-fan'] }),
      }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ answers }));
    }, originDelayMs);
  }
}

beforeAll(async () => {
  origin = await new FakeOrigin().start();
  origin.raw.set('POST /edge/joins', answerBatch);
  edge = await startLocalEdge({
    storeApiUrl: origin.url,
    queueTokenSecret: QUEUE_SECRET,
    authSecret: AUTH_SECRET,
    originTimeoutMs: 2500,
    proxyTimeoutMs: 2500,
    fanTimeoutMs: 2500,
    joinBatch: 100,
    // Every join in a batch (none alone while the origin has few in hand): the batch path is what is tested here.
    joinAloneBelow: 0,
    // Batches fail on purpose below (timeouts): the breaker has its own tests.
    breakerFailures: 1000,
    log: (line) => logs.push(line),
  });
});

afterAll(async () => {
  await edge?.close();
  await origin?.stop();
});

/** One fan's join; `hangUpAfterMs` aborts it (the fan closes the page) that long after it is sent. */
async function join(fan: number, hangUpAfterMs?: number): Promise<{ fan: number; status: number; body: unknown } | 'hung up'> {
  const abort = new AbortController();
  const timer = hangUpAfterMs === undefined ? undefined : setTimeout(() => abort.abort(), hangUpAfterMs);
  try {
    const r = await fetch(`${edge.url}/events/e${fan % 7}/queue`, {
      method: 'POST',
      headers: { 'user-agent': 'Mozilla/5.0 (a browser)', accept: 'application/json', 'x-fan': String(fan), connection: 'close' },
      signal: abort.signal,
    });
    const text = await r.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // kept as text: the assertion below shows it
    }
    return { fan, status: r.status, body };
  } catch (e) {
    if (abort.signal.aborted) return 'hung up';
    // A connection closed on a fan: never right (the assertions show it with workerd's log).
    return { fan, status: 0, body: String((e as { cause?: { code?: string } }).cause?.code ?? e) };
  } finally {
    clearTimeout(timer);
  }
}

/** A fan's answer as it may be: its own join's answer, or a 503 with the edge's code (never another fan's, never a 500). */
function acceptable(r: { fan: number; status: number; body: unknown }): boolean {
  if (r.status === 201) return JSON.stringify(r.body) === JSON.stringify({ path: `/events/e${r.fan % 7}/queue`, fan: String(r.fan) });
  const error = (r.body as { error?: unknown } | null)?.error;
  return r.status === 503 && (error === 'ORIGIN_UNAVAILABLE' || error === 'EDGE_FAULT');
}

/** Joins until one is answered by its batch (the batcher is not wedged): polls, the machine may be slow. */
async function answeredAgain(from: number): Promise<void> {
  for (let i = 0; i < 40; i++) {
    const r = await join(from + i);
    if (r !== 'hung up' && r.status === 201) return;
  }
  throw new Error('no join was answered by a batch in 40 tries: the batcher is wedged');
}

describe('joins in batches under load (workerd serve)', () => {
  it('answers every fan still waiting with its own join, with fans hanging up while their batch is at the origin', async () => {
    const rounds = 4;
    const perRound = 600;
    let answered = 0;
    let hungUp = 0;
    const wrong: unknown[] = [];
    let ok = 0;
    for (let round = 0; round < rounds; round++) {
      const results = await Promise.all(
        Array.from({ length: perRound }, (_, i) => {
          const fan = round * perRound + i;
          // One fan in three hangs up 0-60 ms after sending: mostly while its batch (or the one before) is at the
          // origin, some of them a batch's first join, whose request sends it.
          return join(fan, fan % 3 === 0 ? fan % 61 : undefined);
        }),
      );
      for (const r of results) {
        if (r === 'hung up') {
          hungUp++;
          continue;
        }
        answered++;
        if (r.status === 201) ok++;
        if (!acceptable(r)) wrong.push({ fan: r.fan, status: r.status, body: r.body });
      }
    }
    const bad = logs.filter((l) => /different request|Continuations for that request|hanging Promise|never generate a response/i.test(l));
    expect({ wrong: wrong.slice(0, 3), wrongCount: wrong.length, bad: bad.slice(0, 3), badCount: bad.length }).toEqual({
      wrong: [],
      wrongCount: 0,
      bad: [],
      badCount: 0,
    });
    // Every fan that did not hang up was answered, and at least as many as never hung up.
    expect(answered + hungUp).toBe(rounds * perRound);
    expect(answered).toBeGreaterThanOrEqual((rounds * perRound * 2) / 3);
    expect(ok).toBeGreaterThan(0);
    // The joins went in batches (a backlog sent when full or when its oldest has waited EDGE_JOIN_BATCH_WAIT_MS).
    expect(batches).toBeLessThan(ok);
    expect(mostAtOrigin).toBeGreaterThanOrEqual(1);
    // And after all that, the edge still batches.
    await answeredAgain(1_000_000);
  });

  it('stays whole when the origin is slower than fans wait: joins queued past their deadline are answered 503 and the batcher keeps going', async () => {
    logs.length = 0;
    // Slower than a fan's deadline (2.5 s): no batch waits for a place at the origin any more (a backlog goes once full
    // or once its oldest has waited its bound), so it is the origin itself that outlasts the fans here.
    originDelayMs = 3000;
    const results = await Promise.all(Array.from({ length: 1500 }, (_, i) => join(10_000 + i, i % 4 === 0 ? 200 + (i % 1000) : undefined)));
    let unavailable = 0;
    for (const r of results) {
      if (r === 'hung up') continue;
      // Its own answer, or never workerd's bare 500: a 503 with the edge's code.
      expect({ r, acceptable: acceptable(r) }).toMatchObject({ acceptable: true });
      if (r.status === 503) unavailable++;
    }
    // Joins whose batch outlasted their deadline were answered 503.
    expect(unavailable).toBeGreaterThan(0);
    // The origin quick again: a join is answered at once, in a batch (the batcher is not wedged).
    originDelayMs = 40;
    const sent = batches;
    await answeredAgain(20_000);
    expect(batches).toBeGreaterThan(sent);
    const bad = logs.filter((l) => /different request|Continuations for that request|hanging Promise|never generate a response/i.test(l));
    expect({ bad: bad.slice(0, 3), badCount: bad.length }).toEqual({ bad: [], badCount: 0 });
  });

  it('stays whole when batches time out at the origin while more joins arrive', async () => {
    logs.length = 0;
    originDelayMs = 3200;
    const results = await Promise.all(
      Array.from({ length: 900 }, async (_, i) => {
        // Arriving over about 4 s: some while the first batches are timing out.
        await new Promise((r) => setTimeout(r, (i % 40) * 100));
        return join(30_000 + i, i % 5 === 0 ? 300 + (i % 3000) : undefined);
      }),
    );
    const bad0 = logs.filter((l) =>
      /different request|Continuations for that request|hanging Promise|never generate a response|Uncaught/i.test(l),
    );
    expect({ bad: bad0.slice(0, 3), badCount: bad0.length }).toEqual({ bad: [], badCount: 0 });
    for (const r of results) if (r !== 'hung up') expect({ r, acceptable: acceptable(r) }).toMatchObject({ acceptable: true });
    originDelayMs = 40;
    await answeredAgain(40_000);
    const bad = logs.filter((l) =>
      /different request|Continuations for that request|hanging Promise|never generate a response|Uncaught/i.test(l),
    );
    expect({ bad: bad.slice(0, 3), badCount: bad.length }).toEqual({ bad: [], badCount: 0 });
  });
});
