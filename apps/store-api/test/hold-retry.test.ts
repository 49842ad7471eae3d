import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { sql } from '@onsale/shared/db';
import { SimulatedPaymentGateway } from '@onsale/shared/checkout';
import { buildStoreApi } from '../src/app.js';
import { loadStoreApiConfig } from '../src/env.js';
import { admitted, checkInvariants, login, makeEvent, setupApp, type TestApp } from './helper.js';

// A hold whose answer was lost (a timeout, a reset connection) stayed held and counted against
// the fan's limit, so the retry got ACCOUNT_LIMIT_EXCEEDED and the seats were stranded for six minutes (228 holds,
// 320 seats in one run). Holds are idempotent now, over real HTTP against real PostgreSQL.

let h: TestApp;
let base: string;
let eventId: string;
let capacity: number;

beforeAll(async () => {
  h = await setupApp();
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const addr = h.app.server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  ({ eventId, capacity } = await makeEvent(h.t, { limits: { perAccountSeats: 4, perInstrumentSeats: 4 } }));
});
afterAll(() => h.close());

async function hold(headers: Record<string, string>, body: unknown, url = base) {
  const r = await fetch(`${url}/events/${eventId}/holds`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: r.status, replayed: r.headers.get('idempotent-replayed'), body: (await r.json()) as Record<string, any> };
}

/**
 * Sends a hold request and hangs up as its answer starts to arrive: the server did its work, the fan never reads
 * what it answered (a proxy timing out, a phone losing its connection).
 */
function lostHold(headers: Record<string, string>, body: unknown): Promise<void> {
  const payload = JSON.stringify(body);
  const u = new URL(`${base}/events/${eventId}/holds`);
  return new Promise((resolve) => {
    const req = http.request({
      host: u.hostname,
      port: u.port,
      path: u.pathname,
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
    });
    req.on('error', () => resolve());
    req.on('response', (res) => {
      res.destroy();
      req.destroy(); // the connection reset: the answer is lost
      resolve();
    });
    req.end(payload);
  });
}

async function seatsHeldBy(account: string): Promise<{ holds: number; seats: number }> {
  const { rows } = await sql<{ holds: number; seats: number }>`
    SELECT count(*)::int AS holds, coalesce(sum(quantity), 0)::int AS seats FROM holds
    WHERE event_id = ${eventId} AND account_id = ${account} AND status = 'HELD' AND expires_at > now()`.execute(h.t.db);
  return rows[0]!;
}

describe('holds are idempotent', () => {
  it('a hold whose answer was lost, retried with the same Idempotency-Key, gets the same hold; the limit never refuses the retry', async () => {
    const fan = await admitted(await login(h.app, 'lost-answer'), eventId);
    const headers = { ...fan, 'idempotency-key': 'hold-lost-answer-0001' };
    await lostHold(headers, { section: 'A', quantity: 3 });
    // The server made the hold although nobody heard the answer.
    await vi.waitFor(async () => expect(await seatsHeldBy('lost-answer')).toEqual({ holds: 1, seats: 3 }));
    // Before: 3 of 4 seats taken, the retry of 3 refused with ACCOUNT_LIMIT_EXCEEDED. Now: the same hold, again and again.
    const retries = await Promise.all([0, 1, 2].map(() => hold(headers, { section: 'A', quantity: 3 })));
    for (const r of retries) expect(r).toMatchObject({ status: 201, replayed: 'true', body: { status: 'HELD', quantity: 3 } });
    expect(new Set(retries.map((r) => r.body.holdId)).size).toBe(1);
    expect(await seatsHeldBy('lost-answer')).toEqual({ holds: 1, seats: 3 });
    // The key with another request is refused, naming the header.
    const reused = await hold(headers, { section: 'A', quantity: 1 });
    expect(reused).toMatchObject({ status: 400, body: { error: 'IDEMPOTENCY_KEY_REUSED', field: 'idempotency-key' } });
    // A new key is a new hold, and the limit applies to it as ever.
    const another = await hold({ ...fan, 'idempotency-key': 'hold-lost-answer-0002' }, { section: 'A', quantity: 2 });
    expect(another).toMatchObject({ status: 409, body: { error: 'ACCOUNT_LIMIT_EXCEEDED', current: 3 } });
    // Once released, the key still names that hold: its retry tells the fan what became of it.
    const holdId = retries[0]!.body.holdId as string;
    expect((await fetch(`${base}/holds/${holdId}`, { method: 'DELETE', headers: fan })).status).toBe(200);
    expect(await hold(headers, { section: 'A', quantity: 3 })).toMatchObject({
      status: 201,
      replayed: 'true',
      body: { holdId, status: 'RELEASED' },
    });
  });

  it('ten requests with one key at once make one hold', async () => {
    const fan = await admitted(await login(h.app, 'key-stampede'), eventId);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => hold({ ...fan, 'idempotency-key': 'hold-stampede-0001' }, { section: 'B', quantity: 2 })),
    );
    for (const r of results) expect(r.status).toBe(201);
    expect(new Set(results.map((r) => r.body.holdId)).size).toBe(1);
    expect(results.filter((r) => r.replayed === 'true')).toHaveLength(9);
    expect(await seatsHeldBy('key-stampede')).toEqual({ holds: 1, seats: 2 });
  });

  it('without a key, the same request again within the window gets the live hold back rather than a second', async () => {
    const fan = await admitted(await login(h.app, 'no-key'), eventId);
    await lostHold(fan, { section: 'C', quantity: 2 });
    await vi.waitFor(async () => expect(await seatsHeldBy('no-key')).toEqual({ holds: 1, seats: 2 }));
    const again = await hold(fan, { section: 'C', quantity: 2 });
    expect(again).toMatchObject({ status: 201, replayed: 'true', body: { quantity: 2 } });
    expect(await seatsHeldBy('no-key')).toEqual({ holds: 1, seats: 2 });
    // Another request is another hold: a different quantity, or the same request once the first hold is gone.
    const other = await hold(fan, { section: 'C', quantity: 1 });
    expect(other).toMatchObject({ status: 201, replayed: null });
    expect(await seatsHeldBy('no-key')).toEqual({ holds: 2, seats: 3 });
    expect((await fetch(`${base}/holds/${again.body.holdId}`, { method: 'DELETE', headers: fan })).status).toBe(200);
    const fresh = await hold(fan, { section: 'C', quantity: 2 });
    expect(fresh).toMatchObject({ status: 201, replayed: null });
    expect(fresh.body.holdId).not.toBe(again.body.holdId);
  });

  it('two store-API processes given one key at once: one hold, the other requests take no seat (the key is read under the account lock in the hold statement)', async () => {
    const config = loadStoreApiConfig({
      NODE_ENV: 'test',
      DEV_AUTH: 'true',
      RATE_LIMIT_ENABLED: 'false',
      BOT_GATE_ENABLED: 'false',
      LOAD_SHED_ENABLED: 'false',
    });
    const second: FastifyInstance = await buildStoreApi({
      db: h.t.db,
      config,
      payments: new SimulatedPaymentGateway({ tps: 1000, latencyMs: 1, failureRate: 0 }),
    });
    await second.listen({ port: 0, host: '127.0.0.1' });
    try {
      const addr = second.server.address();
      const secondBase = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
      const fan = await admitted(await login(h.app, 'two-processes'), eventId);
      const headers = { ...fan, 'idempotency-key': 'hold-two-processes-01' };
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => hold(headers, { section: 'A', quantity: 2 }, i % 2 ? secondBase : base)),
      );
      for (const r of results) expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(new Set(results.map((r) => r.body.holdId)).size).toBe(1);
      expect(await seatsHeldBy('two-processes')).toEqual({ holds: 1, seats: 2 });
      const inv = await checkInvariants(h.t, eventId, capacity);
      expect(inv.counts.drift).toBe(0);
      expect(inv.holdseatmismatch).toBe(0);
    } finally {
      await second.close();
    }
  });

  it('the OpenAPI document describes the header and the replay', async () => {
    const doc = (await (await fetch(`${base}/docs/json`)).json()) as {
      paths: Record<string, Record<string, { description?: string; parameters?: { name: string; in: string }[] }>>;
    };
    const op = doc.paths['/events/{id}/holds']!.post!;
    expect(op.parameters?.find((p) => p.name === 'idempotency-key')).toMatchObject({ in: 'header' });
    expect(op.description).toMatch(/Idempotent-Replayed/);
  });
});
