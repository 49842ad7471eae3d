import { Writable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createDb, type Db } from '@onsale/shared/db';
import { SimulatedPaymentGateway } from '@onsale/shared/checkout';
import { createTestDatabase, DatabaseProxy, type ProxyMode, type TestDatabase } from '@onsale/shared/testing';
import { buildStoreApi } from '../src/app.js';
import { loadStoreApiConfig } from '../src/env.js';
import { admitted, cardNumberOf, checkInvariants, login, makeEvent } from './helper.js';

// While PostgreSQL was down, holds, checkout and release answered 500 INTERNAL, with an
// "unhandled error" log line per request. Here the store API reaches its database through a proxy the test cuts
// (the machine's shared server is never stopped): connections reset and refused, a server "starting up", a server
// that accepts and never answers (the pool's wait limit) — under concurrent fans holding, paying, releasing,
// joining and polling over real HTTP.

let t: TestDatabase;
let proxy: DatabaseProxy;
let appDb: Db;
let app: FastifyInstance;
let base: string;
const logLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
  proxy = await DatabaseProxy.start(t.url);
  appDb = createDb(proxy.url(t.url), { max: 10, connectionTimeoutMillis: 1500, applicationName: 'outage-test' });
  const config = loadStoreApiConfig({
    NODE_ENV: 'test',
    DEV_AUTH: 'true',
    RATE_LIMIT_ENABLED: 'false',
    BOT_GATE_ENABLED: 'false',
    LOAD_SHED_ENABLED: 'false',
    // The app shares the test runner's event loop (as setupApp's do): no request budget, so every 503 here is the
    // outage's own (request-budget.test.ts runs the store API in a process of its own with its budget).
    REQUEST_BUDGET_MS: '0',
  });
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) logLines.push(JSON.parse(line));
      done();
    },
  });
  app = await buildStoreApi(
    { db: appDb, config, payments: new SimulatedPaymentGateway({ tps: 10_000, latencyMs: 5, failureRate: 0 }) },
    { logger: { level: 'info', stream } },
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
});
afterAll(async () => {
  await app?.close();
  await appDb?.destroy();
  await proxy?.close();
  await t?.drop();
});

interface Answer {
  status: number;
  error?: string;
  retryAfter: string | null;
  what: string;
  /** The request's place in the order they were sent. */
  sent: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a database outage is a retryable 503, not a 500', () => {
  it('under concurrent holds, checkouts, releases, joins and polls, every answer is a 2xx, a 4xx with a code, or a 503 with Retry-After; logged once per outage; counted in /metrics', async () => {
    const { eventId, capacity } = await makeEvent(t, { fairnessMode: 'FIFO' });
    const fans = await Promise.all(Array.from({ length: 16 }, (_, i) => login(app, `outage-fan-${i}`)));
    const answers: Answer[] = [];
    let sentSoFar = 0;
    const call = async (what: string, method: string, path: string, headers: Record<string, string>, body?: unknown) => {
      const sent = ++sentSoFar;
      try {
        const r = await fetch(base + path, {
          method,
          headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(20_000),
        });
        const json = (await r.json().catch(() => ({}))) as { error?: string };
        const a: Answer = { status: r.status, error: json.error, retryAfter: r.headers.get('retry-after'), what, sent };
        answers.push(a);
        return { ...a, json: json as Record<string, any> };
      } catch (err) {
        // A socket closed without an answer is a failure of its own kind.
        answers.push({ status: 0, error: String(err), retryAfter: null, what, sent });
        return { status: 0, json: {} as Record<string, any>, retryAfter: null, what };
      }
    };

    let running = true;
    const fan = async (i: number) => {
      const token = fans[i]!;
      const headers = await admitted(token, eventId);
      const plain = { authorization: `Bearer ${token}`, 'x-device-id': headers['x-device-id']! };
      let queueToken: string | null = null;
      while (running) {
        if (i % 4 === 0) {
          // Waiting-room traffic: join, then poll.
          if (!queueToken) queueToken = (await call('join', 'POST', `/events/${eventId}/queue`, plain)).json.queueToken ?? null;
          else await call('status', 'GET', `/events/${eventId}/queue/status`, { ...plain, 'x-queue-token': queueToken });
          await sleep(30);
          continue;
        }
        const hold = await call('hold', 'POST', `/events/${eventId}/holds`, headers, { section: i % 2 ? 'B' : 'C', quantity: 1 });
        if (hold.status !== 201) {
          await sleep(30);
          continue;
        }
        const holdId = hold.json.holdId as string;
        if (i % 3 === 0) {
          await call('release', 'DELETE', `/holds/${holdId}`, headers);
          continue;
        }
        const key = randomUUID();
        const pay = { payment: { instrument: { type: 'card', number: cardNumberOf(1000 + i) } } };
        // Retry the checkout with the same key until it has an answer that is not "retry later".
        for (let k = 0; k < 50 && running; k++) {
          const paid = await call('checkout', 'POST', `/holds/${holdId}/checkout`, { ...headers, 'idempotency-key': key }, pay);
          if (paid.status !== 503 && paid.status !== 409) break;
          await sleep(100);
        }
        // Give the seat back so the section does not run out during the test.
        await call('release', 'DELETE', `/holds/${holdId}`, headers);
      }
    };
    const load = Promise.all(fans.map((_, i) => fan(i)));

    // Each fault lasts until the load has met it: `refusals` requests sent after it began answered 503, and for a
    // server that accepts (reset, starting up, hanging) `connections` new connections met it, however slow the machine.
    const phase = async (mode: ProxyMode, until: { refusals: number; connections?: number }, cut = false) => {
      const accepted = proxy.accepted;
      if (cut) proxy.cut();
      await proxy.setMode(mode);
      const from = sentSoFar;
      await vi.waitFor(
        () => {
          expect(answers.filter((a) => a.sent > from && a.status === 503).length).toBeGreaterThanOrEqual(until.refusals);
          expect(proxy.accepted - accepted).toBeGreaterThanOrEqual(until.connections ?? 0);
        },
        { timeout: 30_000, interval: 20 },
      );
    };
    const okBefore = () => answers.filter((a) => a.status >= 200 && a.status < 300).length;
    // Healthy first, then the crash: every connection cut, then refused, then the server "starting up", then back.
    await vi.waitFor(() => expect(okBefore()).toBeGreaterThan(30), { timeout: 20_000 });
    await phase('refuse', { refusals: 10 }, true);
    await phase('reset', { refusals: 5, connections: 3 });
    await phase('starting', { refusals: 5, connections: 3 });
    // Every kind of request has met the outage before the server comes back.
    await vi.waitFor(
      () => {
        for (const what of ['hold', 'checkout', 'release'])
          expect(
            answers.some((a) => a.what === what && a.status === 503),
            what,
          ).toBe(true);
      },
      { timeout: 30_000, interval: 20 },
    );
    await proxy.setMode('pass');
    const firstOutage = answers.length;
    await vi.waitFor(
      () => expect(answers.slice(firstOutage).filter((a) => a.what === 'hold' && a.status === 201).length).toBeGreaterThan(5),
      { timeout: 30_000 },
    );
    // Later a server that accepts and never answers: requests wait at most the pool's limit, then 503.
    const hangFrom = answers.length;
    // Requests sent after the cut find no live connection, only a server that never answers: the pool's wait limit
    // (1.5 s) answers them 503, not the sockets' timeouts.
    await phase('hang', { refusals: 3, connections: 1 }, true);
    await proxy.setMode('pass');
    // Connections opened while it hung fail at the pool's wait limit, which can come after the server is back: the
    // outage they start must be logged before the count of outages below is read.
    await vi.waitFor(() => expect(proxy.hanging).toBe(0), { timeout: 30_000 });
    await vi.waitFor(() => expect(answers.slice(hangFrom).filter((a) => a.what === 'hold' && a.status === 201).length).toBeGreaterThan(5), {
      timeout: 30_000,
    });
    // An outage ends once queries have succeeded for a settling time: keep the load on until the last one is logged
    // as over (on a loaded machine that can come after the holds above).
    const logged = (prefix: string) => logLines.filter((l) => String(l.msg).startsWith(prefix)).length;
    await vi.waitFor(() => expect(logged('database back after')).toBe(logged('database unavailable')), { timeout: 60_000 });
    running = false;
    await load;

    // No 500, no socket closed without an answer; every refusal has a code; every 503 says when to retry.
    const bad = answers.filter((a) =>
      a.status === 0 || a.status >= 500 ? a.status !== 503 || !a.retryAfter || !a.error : a.status >= 400 && !a.error,
    );
    // On failure, say what the server logged for each 500 (the error's class, message and code).
    const unhandled = logLines.filter((l) => l.msg === 'unhandled error').map((l) => l.err);
    expect(bad, JSON.stringify(unhandled)).toEqual([]);
    const unavailable = answers.filter((a) => a.status === 503 && a.error === 'SERVICE_UNAVAILABLE');
    expect(unavailable.length).toBeGreaterThan(0);
    for (const what of ['hold', 'checkout', 'release'])
      expect(answers.filter((a) => a.what === what && a.status === 503).length, what).toBeGreaterThan(0);
    for (const a of unavailable) expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(1);
    // The pool's wait limit answered the hanging server's requests too (they did not wait for the socket timeouts).
    expect(answers.slice(hangFrom).filter((a) => a.status === 503).length).toBeGreaterThan(0);

    // Logged once when each outage began and once when it ended, never per request.
    const downs = logLines.filter((l) => String(l.msg).startsWith('database unavailable'));
    const ups = logLines.filter((l) => String(l.msg).startsWith('database back after'));
    expect(logLines.filter((l) => l.msg === 'unhandled error')).toEqual([]);
    // One outage or two: the hanging server may fall inside the first outage's settling time, then it is the same one.
    expect(downs.length).toBeGreaterThanOrEqual(1);
    expect(downs.length).toBeLessThanOrEqual(4);
    expect(ups.length, JSON.stringify([...downs, ...ups].map((l) => [l.time, l.msg, l.error]))).toBe(downs.length);
    // No other warning or error: background beats (seat-view warming, payment recovery) stay quiet during an outage.
    const loud = logLines.filter((l) => Number(l.level) >= 40 && !downs.includes(l) && !ups.includes(l));
    expect(loud.map((l) => l.msg)).toEqual([]);

    // Counted where the war room reads it.
    const metrics = await (await fetch(`${base}/metrics`)).text();
    const counted = Number(/service_unavailable_responses_total\{reason="database"\} (\d+)/.exec(metrics)?.[1] ?? 0);
    expect(counted).toBe(answers.filter((a) => a.status === 503 && a.error === 'SERVICE_UNAVAILABLE').length);
    expect(metrics).toMatch(/^database_up 1$/m);
    expect(Number(/^database_outages_total (\d+)$/m.exec(metrics)?.[1])).toBe(downs.length);

    // Nothing half-written: the invariant holds, every sold seat is in a confirmed order.
    await vi.waitFor(async () => {
      const inv = await checkInvariants(t, eventId, capacity);
      expect(inv.counts.drift).toBe(0);
      expect(inv.soldseats).toBe(inv.ordered);
      expect(inv.holdseatmismatch).toBe(0);
    });
  });
});
