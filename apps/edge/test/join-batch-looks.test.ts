import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenKey } from '@onsale/shared/queue/edge';
import { EDGE_JOINS_STREAM, type EdgeJoinsBody } from '@onsale/shared/queue/edge-joins';
import { OriginBreaker } from '../src/breaker.js';
import { EdgeJoinBatcher, type JoinOutcome } from '../src/join-batch.js';

// How often a join waiting for its batch looks at its outcome (each look is a timer of its own request on workerd; a
// batch out long in the stadium's mix costs each of its joins a look every 16 ms), and that it learns its answer soon
// after it arrives: in the joins bench (a closed loop of 200 connections) a join's time is the rate, and looks every
// eighth of the batch's time (up to 32 ms) cut the rate to 0.59-0.89 of main's in every round of an A/B (2026-12-07). The batcher runs here in Node against a stand-in origin that streams each join's line
// when it is due (the same code workerd runs; the cross-request rules are tested on workerd serve in
// edge-join-batch-load.test.ts and edge-join-batch-stream.test.ts).

/** When the stand-in origin answers each join of a batch, by its fan (ms after the batch arrives). */
const answerAfter = new Map<string, number>();
let server: Server;
let originUrl: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString('utf8')));
    req.on('end', () => {
      const body = JSON.parse(text) as EdgeJoinsBody;
      res.writeHead(200, { 'content-type': EDGE_JOINS_STREAM });
      res.write('\n');
      let left = body.joins.length;
      body.joins.forEach((j, i) => {
        const fan = j.headers['x-fan']!;
        setTimeout(
          () => {
            res.write(
              `${JSON.stringify({ i, status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ fan }) })}\n`,
            );
            if (--left === 0) res.end();
          },
          answerAfter.get(fan) ?? 0,
        );
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  originUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const batcher = () =>
  new EdgeJoinBatcher({
    originUrl,
    key: () => createTokenKey('join batch looks test queue secret, 32+ characters'),
    timeoutMs: 5000,
    breaker: new OriginBreaker({ failures: 5, openMs: 5000, trialMs: 7000 }),
    maxBatch: 100,
    aloneBelow: 0,
    maxWaitMs: 10,
  });

/** Timers set while `run` runs (every sleep of a waiting join is one). */
async function countingTimers<T>(run: () => Promise<T>): Promise<{ result: T; timers: number }> {
  const original = globalThis.setTimeout;
  let timers = 0;
  globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
    timers++;
    return original(...args);
  }) as typeof setTimeout;
  try {
    return { result: await run(), timers };
  } finally {
    globalThis.setTimeout = original;
  }
}

const join = (fan: string) => ({ path: '/events/e1/queue', headers: { 'user-agent': 'test', 'x-fan': fan } });
const fanOf = (o: JoinOutcome) => (o.kind === 'answer' ? (JSON.parse(o.answer.body) as { fan: string }).fan : o.kind);

describe('a join waiting for its batch', () => {
  it('learns its answer soon after it comes while its batch is out long', async () => {
    const b = batcher();
    // A first batch answered at once: the batcher learns the origin's time over a batch.
    answerAfter.set('warm', 0);
    expect(fanOf(await b.join(join('warm')))).toBe('warm');
    // Then 20 joins in one batch, the origin taking 600-980 ms over them (a batch in the stadium's mix).
    const fans = Array.from({ length: 20 }, (_, k) => `fan-${k}`);
    fans.forEach((f, k) => answerAfter.set(f, 600 + 20 * k));
    const started = Date.now();
    const { result, timers } = await countingTimers(() =>
      Promise.all(
        fans.map(async (f) => {
          // keepAlive: the sender's request reads the batch past its own answer (workerd's waitUntil).
          const o = await b.join(join(f), { gone: false }, () => {});
          return { fan: fanOf(o), ms: Date.now() - started };
        }),
      ),
    );
    expect(result.map((r) => r.fan)).toEqual(fans);
    expect(b.counts.batched).toBe(21);
    // No join learns its answer before the origin's line for it, and each join's looks are bounded (a look every
    // 16 ms once its batch is due back, the quick first batch having set that at once). How soon after its line a join
    // learns it is timing, measured by the joins bench (npm run bench -- joins), not asserted here: a loaded machine
    // fires timers late.
    result.forEach((r, k) => expect(r.ms).toBeGreaterThanOrEqual(600 + 20 * k));
    expect(timers / fans.length).toBeLessThan(70);
  });

  it('goes in a batch from the backlog, each join sleeping until its batch is due back', async () => {
    const b = batcher();
    answerAfter.set('w0', 40);
    expect(fanOf(await b.join(join('w0')))).toBe('w0');
    const fans = Array.from({ length: 30 }, (_, k) => `back-${k}`);
    for (const f of fans) answerAfter.set(f, 40);
    const { result, timers } = await countingTimers(() =>
      Promise.all(fans.map(async (f) => fanOf(await b.join(join(f), { gone: false }, () => {})))),
    );
    expect(result).toEqual(fans);
    // One batch as a rule (a machine that holds this test's timers back can split it).
    expect(b.counts.batches).toBeLessThanOrEqual(3);
    expect(b.counts.batched).toBe(31);
    // Each join: a timer to when the backlog is sent (the oldest) or, behind it, straight to when its batch is due back,
    // a look or two as its answer comes (4.2-4.7 timers a join measured, the batch's own fetch included; 5.3-6.1 when
    // every join of the backlog also woke when it was sent).
    expect(timers / fans.length).toBeLessThan(8);
  });

  it("keeps its request's deadline with its own looks: in the backlog it is not sent, in a batch out it comes back late", async () => {
    const b = batcher();
    answerAfter.set('d0', 0);
    expect(fanOf(await b.join(join('d0')))).toBe('d0');
    // In a batch the origin holds 400 ms, with a deadline 150 ms away: late at its deadline, its batch still answered.
    answerAfter.set('held', 400);
    const started = Date.now();
    const ticket = { gone: false, until: Date.now() + 150 };
    const late = await b.join(join('held'), ticket, () => {});
    expect(late.kind).toBe('late');
    expect(ticket.gone).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(Date.now() - started).toBeLessThan(390);
    // Past its deadline already while in the backlog: taken out, never sent.
    const batches = b.counts.batches;
    const gone = { gone: false, until: Date.now() - 1 };
    expect((await b.join(join('never'), gone, () => {})).kind).toBe('late');
    expect(gone.gone).toBe(true);
    answerAfter.set('after', 0);
    expect(fanOf(await b.join(join('after'), { gone: false }, () => {}))).toBe('after');
    expect(b.counts.batches).toBe(batches + 1);
    expect(b.counts.batched).toBe(3);
  });
});
