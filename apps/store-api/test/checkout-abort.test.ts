import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { TEST_CARDS } from '@onsale/shared/checkout';
import { admitted, login, makeEvent, setupApp, type TestApp } from './helper.js';

// The checkout route tells a retry waiting on the first request under its key (awaitAttempt) that its client went
// away, through an AbortSignal. Every answered response closes too, after it was written: the route aborts only a
// response that did not finish (an abort builds a DOMException with a stack trace, for nothing, on every checkout).
let h: TestApp;
let base: string;

beforeAll(async () => {
  // Payments slow enough that a retry under the same key is still waiting when its client hangs up.
  h = await setupApp({ paymentLatencyMs: 600 });
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const addr = h.app.server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
});
afterAll(() => h.close());
afterEach(() => vi.restoreAllMocks());

const body = JSON.stringify({ payment: { instrument: { type: 'card', number: TEST_CARDS.success } } });

async function heldSeats(fan: string) {
  const { eventId } = await makeEvent(h.t);
  const token = await login(h.app, fan);
  const headers = { ...(await admitted(token, eventId)), 'content-type': 'application/json' };
  const r = await fetch(`${base}/events/${eventId}/holds`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ section: 'A', quantity: 2 }),
  });
  expect(r.status).toBe(201);
  const hold = (await r.json()) as { holdId: string };
  return { headers, holdId: hold.holdId };
}

async function until(cond: () => boolean, ms = 5000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setImmediate(r));
  }
}

describe('checkout: the client-gone signal', () => {
  it('is not aborted for a checkout that was answered', async () => {
    const { headers, holdId } = await heldSeats('abort-answered');
    const abort = vi.spyOn(AbortController.prototype, 'abort');
    const r = await fetch(`${base}/holds/${holdId}/checkout`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': 'answered-key-1' },
      body,
    });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { status: string }).status).toBe('CONFIRMED');
    // The response's close comes after the answer: give it its turn before counting.
    await new Promise((r) => setTimeout(r, 50));
    expect(abort).not.toHaveBeenCalled();
  });

  it('is aborted when the client of a waiting retry hangs up, and the first request still gets its order', async () => {
    const { headers, holdId } = await heldSeats('abort-gone');
    const abort = vi.spyOn(AbortController.prototype, 'abort');
    const init = { method: 'POST', headers: { ...headers, 'idempotency-key': 'gone-key-1' }, body };
    let arrived = 0;
    const count = (req: { url?: string }) => {
      if (req.url?.endsWith('/checkout')) arrived++;
    };
    h.app.server.on('request', count);
    const first = fetch(`${base}/holds/${holdId}/checkout`, init);
    // The first request's attempt exists (the payment takes 600 ms): a retry under the key now waits on it.
    await expect
      .poll(
        async () =>
          (await sql<{ n: number }>`SELECT count(*)::int AS n FROM checkout_attempts WHERE hold_id = ${holdId}`.execute(h.t.db)).rows[0]!.n,
      )
      .toBeGreaterThan(0);
    const hangUp = new AbortController();
    const retry = fetch(`${base}/holds/${holdId}/checkout`, { ...init, signal: hangUp.signal })
      .then(async (r) => `${r.status} ${await r.text()}`)
      .catch((e: Error) => e);
    await until(() => arrived >= 2); // the retry reached the route
    h.app.server.off('request', count);
    hangUp.abort(); // the fetch's own controller: one call of the spy
    await until(() => abort.mock.calls.length >= 2); // ... and the route's, for the response that never finished
    const gone = await retry;
    expect(gone instanceof Error ? 'hung up' : gone).toBe('hung up');
    const r = await first;
    expect(r.status).toBe(200);
    expect(((await r.json()) as { status: string }).status).toBe('CONFIRMED');
  });
});
