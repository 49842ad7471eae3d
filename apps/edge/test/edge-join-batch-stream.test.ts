import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EDGE_JOINS_STREAM, type EdgeJoinsBody } from '@onsale/shared/queue/edge-joins';
import { startLocalEdge, type LocalEdge } from '../src/local.js';
import { FakeOrigin } from './fake-origin.js';

// Joins in batches whose answers the origin streams (EDGE_JOINS_STREAM: one line a join, as each is done), on
// `workerd serve`. In the stadium's mix a batch's answer waited for its slowest join (one waiting for a pooled
// connection behind holds and checkouts), and so did every other fan of the batch and the edge's place for the next
// batch. Streamed, each fan gets its own answer when its own join is done; a stream cut short leaves only the joins
// not yet answered 503 ORIGIN_UNAVAILABLE, as a proxied join whose origin failed.

const QUEUE_SECRET = 'edge join batch stream test queue secret, 32+ characters';
const AUTH_SECRET = 'edge join batch stream test account secret, 32+ characters';

let origin: FakeOrigin;
let edge: LocalEdge;
const logs: string[] = [];
/** Fans whose join the origin holds this long (ms); the rest are answered at once. */
const slowFans = new Map<string, number>();
/** Fans whose join the origin holds until the test opens their gate (no clock: a loaded machine cannot break it). */
const gatedFans = new Map<string, Promise<void>>();
/** Cut the stream after this many lines (undefined: answer every join). */
let cutAfter: number | undefined;
let batches = 0;
const accepts: (string | undefined)[] = [];

function answerBatch(req: IncomingMessage, res: ServerResponse, text: string): void {
  const body = JSON.parse(text) as EdgeJoinsBody;
  batches++;
  accepts.push(req.headers.accept);
  res.writeHead(200, { 'content-type': EDGE_JOINS_STREAM });
  res.write('\n');
  let written = 0;
  let left = body.joins.length;
  body.joins.forEach((j, i) => {
    const fan = j.headers['x-fan']!;
    const answerNow = () => {
      if (res.destroyed) return;
      if (cutAfter !== undefined && written >= cutAfter) {
        res.destroy();
        return;
      }
      written++;
      const answer = {
        i,
        status: 201,
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ path: j.path, fan }),
      };
      res.write(`${JSON.stringify(answer)}\n`);
      if (--left === 0) res.end();
    };
    const gate = gatedFans.get(fan);
    if (gate) void gate.then(answerNow);
    else setTimeout(answerNow, slowFans.get(fan) ?? 5);
  });
}

beforeAll(async () => {
  origin = await new FakeOrigin().start();
  origin.raw.set('POST /edge/joins', answerBatch);
  edge = await startLocalEdge({
    storeApiUrl: origin.url,
    queueTokenSecret: QUEUE_SECRET,
    authSecret: AUTH_SECRET,
    // Long enough that a loaded machine never times a join out here (the held joins wait on the test, not a clock).
    originTimeoutMs: 30_000,
    proxyTimeoutMs: 30_000,
    fanTimeoutMs: 30_000,
    joinBatch: 100,
    // Every join in a batch (none alone while the origin has few in hand): the batch path is what is tested here.
    joinAloneBelow: 0,
    breakerFailures: 1000,
    log: (line) => logs.push(line),
  });
});

afterAll(async () => {
  await edge?.close();
  await origin?.stop();
});

async function join(fan: string): Promise<{ fan: string; status: number; body: unknown; ms: number }> {
  const started = performance.now();
  const r = await fetch(`${edge.url}/events/e1/queue`, {
    method: 'POST',
    headers: { 'user-agent': 'Mozilla/5.0 (a browser)', accept: 'application/json', 'x-fan': fan, connection: 'close' },
  });
  const text = await r.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // kept as text: the assertion shows it
  }
  return { fan, status: r.status, body, ms: performance.now() - started };
}

const noCrossRequest = () =>
  logs.filter((l) => /different request|Continuations for that request|hanging Promise|never generate a response|Uncaught/i.test(l));

describe('joins in batches, answers streamed (workerd serve)', () => {
  it("answers each fan when its own join is done, not after its batch's slowest: the batch's others and the next batches go on", async () => {
    // Ask for streamed answers: the origin is asked for them.
    const warm = await join('warm');
    expect(warm.status).toBe(201);
    expect(accepts.at(-1)).toBe(EDGE_JOINS_STREAM);
    // Waves of 60 fans, each wave with one fan the origin holds until the test lets it go: every other fan of the
    // waves must be answered while those are still held (their batches' others and the next batches go on).
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    for (let w = 0; w < 4; w++) gatedFans.set(`slow-${w}`, gate);
    let slowSettled = 0;
    const slowJoins = [0, 1, 2, 3].map((w) =>
      join(`slow-${w}`).finally(() => {
        slowSettled++;
      }),
    );
    const quick = (
      await Promise.all(
        [0, 1, 2, 3].map(async (w) => {
          if (w > 0) await new Promise((r) => setTimeout(r, w * 150));
          return Promise.all(Array.from({ length: 59 }, (_, i) => join(`w${w}-${i}`)));
        }),
      )
    ).flat();
    // Every quick fan answered, and no held fan yet.
    expect(slowSettled).toBe(0);
    open();
    const results = [...quick, ...(await Promise.all(slowJoins))];
    gatedFans.clear();
    for (const r of results) {
      expect([r.fan, r.status, r.body]).toEqual([r.fan, 201, { path: '/events/e1/queue', fan: r.fan }]);
    }
    expect(batches).toBeLessThan(results.length);
    expect({ bad: noCrossRequest().slice(0, 3) }).toEqual({ bad: [] });
  });

  it('a stream cut short: the joins answered keep their answers, the rest are answered 503 ORIGIN_UNAVAILABLE; batching goes on', async () => {
    logs.length = 0;
    // Each join of the batch held a little longer than the one before, so that two lines come, then the cut.
    for (let i = 0; i < 20; i++) slowFans.set(`cut-${i}`, 50 + i * 40);
    cutAfter = 2;
    let results: Awaited<ReturnType<typeof join>>[];
    try {
      results = await Promise.all(Array.from({ length: 20 }, (_, i) => join(`cut-${i}`)));
    } finally {
      cutAfter = undefined;
    }
    let answered = 0;
    let unavailable = 0;
    for (const r of results) {
      if (r.status === 201) {
        answered++;
        expect(r.body).toEqual({ path: '/events/e1/queue', fan: r.fan });
      } else {
        expect([r.fan, r.status, (r.body as { error?: string }).error]).toEqual([r.fan, 503, 'ORIGIN_UNAVAILABLE']);
        unavailable++;
      }
    }
    expect(answered).toBeGreaterThan(0);
    expect(unavailable).toBeGreaterThan(0);
    expect(logs.some((l) => /answers ended after|failed/.test(l))).toBe(true);
    // Still batching, still streamed.
    const again = await join('after-cut');
    expect(again.status).toBe(201);
    expect({ bad: noCrossRequest().slice(0, 3) }).toEqual({ bad: [] });
  });
});
