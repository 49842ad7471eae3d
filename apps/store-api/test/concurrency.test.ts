import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { TEST_CARDS } from '@onsale/shared/checkout';
import { admitted, checkInvariants, login, makeEvent, setupApp, type TestApp } from './helper.js';

// Real concurrent HTTP requests against a listening server and real PostgreSQL.
let h: TestApp;
let base: string;

beforeAll(async () => {
  h = await setupApp({ poolMax: 16, paymentLatencyMs: 20 });
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const addr = h.app.server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
});
afterAll(() => h.close());

let currentEvent = '';
/** A fan's request, admitted to the current test's event by the waiting room. */
async function call(method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}) {
  const r = await fetch(base + path, {
    method,
    headers: { ...(await admitted(token, currentEvent)), ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: r.status, body: (await r.json()) as Record<string, any> };
}

const tokens = (prefix: string, n: number) => Promise.all(Array.from({ length: n }, (_, i) => login(h.app, `${prefix}-${i}`)));

describe('under concurrency', () => {
  it('500 concurrent hold requests on one 300-seat section never hold a seat twice nor exceed capacity', async () => {
    const { eventId, capacity } = await makeEvent(h.t);
    currentEvent = eventId;
    const fans = await tokens('stampede', 500);
    const results = await Promise.all(
      fans.map((tk, i) => call('POST', `/events/${eventId}/holds`, tk, { section: 'A', quantity: (i % 4) + 1 })),
    );

    const ok = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status !== 201);
    for (const r of refused) {
      expect(r.status).toBe(409);
      expect(['SECTION_NEARLY_FULL', 'SECTION_SOLD_OUT']).toContain(r.body.error);
    }
    const seatIds = ok.flatMap((r) => r.body.seats.map((s: { id: number }) => s.id));
    expect(new Set(seatIds).size).toBe(seatIds.length); // no seat in two responses
    expect(seatIds.length).toBeLessThanOrEqual(300);
    expect(seatIds.length).toBeGreaterThan(250); // most of the section sells, few seats stranded by party sizes
    for (const r of ok) expect(new Set(r.body.seats.map((s: { section: string }) => s.section))).toEqual(new Set(['A']));

    const { rows } = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM seats WHERE event_id = ${eventId} AND section_code = 'A' AND status = 'HELD'`.execute(h.t.db);
    expect(rows[0]!.n).toBe(seatIds.length);
    const inv = await checkInvariants(h.t, eventId, capacity);
    expect(inv.counts.drift).toBe(0);
    expect(inv.counts.held).toBe(inv.live);
    expect(inv.holdseatmismatch).toBe(0);
  });

  it('50 concurrent checkouts of one hold with one key make exactly one order and one charge', async () => {
    const { eventId, capacity } = await makeEvent(h.t);
    currentEvent = eventId;
    const [fan] = await tokens('payer', 1);
    const held = await call('POST', `/events/${eventId}/holds`, fan!, { section: 'B', quantity: 2 });
    expect(held.status).toBe(201);
    const chargesBefore = h.payments.charges;
    const body = { payment: { instrument: { type: 'card', number: TEST_CARDS.success } } };
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        call('POST', `/holds/${held.body.holdId}/checkout`, fan!, body, { 'idempotency-key': 'one-key-for-all-50' }),
      ),
    );
    // Each duplicate waits a moment for the first; one still waiting after it is told to retry (409 with Retry-After),
    // and its retry with the same key gets the same order.
    for (const r of results) if (r.status !== 200) expect(r.body).toMatchObject({ error: 'CHECKOUT_IN_PROGRESS', retryAfterSeconds: 2 });
    const ok = results.filter((r) => r.status === 200);
    expect(ok.length).toBeGreaterThan(0);
    expect(new Set(ok.map((r) => r.body.orderId)).size).toBe(1);
    const retried = await call('POST', `/holds/${held.body.holdId}/checkout`, fan!, body, { 'idempotency-key': 'one-key-for-all-50' });
    expect(retried).toMatchObject({ status: 200, body: { orderId: ok[0]!.body.orderId } });
    expect(h.payments.charges - chargesBefore).toBe(1);
    const orders = await sql<{ n: number }>`SELECT count(*)::int AS n FROM orders WHERE hold_id = ${held.body.holdId}`.execute(h.t.db);
    expect(orders.rows[0]!.n).toBe(1);

    // 20 more with fresh keys on the same, now purchased, hold: no second order.
    const more = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call('POST', `/holds/${held.body.holdId}/checkout`, fan!, body, { 'idempotency-key': `other-key-${i}-xx` }),
      ),
    );
    for (const r of more) expect(r.body.error).toBe('HOLD_PURCHASED');
    const inv = await checkInvariants(h.t, eventId, capacity);
    expect(inv.counts.drift).toBe(0);
    expect(inv.counts.sold).toBe(2);
    expect(inv.ordered).toBe(2);
  });

  it('the per-account limit holds under concurrent requests from one account', async () => {
    const { eventId, capacity } = await makeEvent(h.t);
    currentEvent = eventId;
    const [fan] = await tokens('greedy', 1);
    // Thirty separate requests (each its own Idempotency-Key: an identical request without one gets the first's hold back).
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        call('POST', `/events/${eventId}/holds`, fan!, { section: 'A', quantity: 2 }, { 'idempotency-key': `greedy-request-${i}` }),
      ),
    );
    const ok = results.filter((r) => r.status === 201);
    expect(ok.length).toBe(2); // limit 4 = two holds of 2
    for (const r of results.filter((r) => r.status !== 201)) expect(r.body.error).toBe('ACCOUNT_LIMIT_EXCEEDED');
    const inv = await checkInvariants(h.t, eventId, capacity);
    expect(inv.counts.held).toBe(4);
    expect(inv.counts.drift).toBe(0);
  });

  it('the per-instrument limit holds under concurrent checkouts by different accounts', async () => {
    const { eventId, capacity } = await makeEvent(h.t);
    currentEvent = eventId;
    const fans = await tokens('card-sharer', 6);
    const holds = await Promise.all(fans.map((tk) => call('POST', `/events/${eventId}/holds`, tk, { section: 'C', quantity: 3 })));
    for (const hd of holds) expect(hd.status, JSON.stringify(hd.body)).toBe(201);
    const body = { payment: { instrument: { type: 'card', number: '5555555555554444' } } };
    const results = await Promise.all(
      holds.map((hd, i) =>
        call('POST', `/holds/${hd.body.holdId}/checkout`, fans[i]!, body, { 'idempotency-key': `shared-card-${i}-key` }),
      ),
    );
    expect(results.filter((r) => r.status === 200).length).toBe(1); // 3 + 3 > 4
    for (const r of results.filter((r) => r.status !== 200)) expect(r.body.error).toBe('INSTRUMENT_LIMIT_EXCEEDED');
    const inv = await checkInvariants(h.t, eventId, capacity);
    expect(inv.counts.sold).toBe(3);
    expect(inv.counts.drift).toBe(0);
  });

  it("an expired hold's seats are available the instant it expires, with no sweeper running", async () => {
    // A one-section event of exactly 4 seats: once held, nothing else is left.
    const { eventId, capacity } = await makeEvent(h.t, {
      sections: [{ code: 'TINY', priceLevel: 'P1', qualityRank: 1, rows: [{ label: 'A', seats: 4 }] }],
    });
    currentEvent = eventId;
    const [first, second] = await tokens('expiry', 2);
    const a = await call('POST', `/events/${eventId}/holds`, first!, { section: 'TINY', quantity: 4 });
    expect(a.status).toBe(201);
    const blocked = await call('POST', `/events/${eventId}/holds`, second!, { section: 'TINY', quantity: 2 });
    expect(blocked.status).toBe(409);
    expect(blocked.body.error).toBe('SECTION_SOLD_OUT');

    // Time passes: the hold's expiry is now in the past. No job runs; nothing else writes.
    await sql`UPDATE holds SET expires_at = now() - interval '1 millisecond' WHERE id = ${a.body.holdId}`.execute(h.t.db);
    await sql`UPDATE seats SET expires_at = now() - interval '1 millisecond' WHERE hold_id = ${a.body.holdId}`.execute(h.t.db);
    const counts = await checkInvariants(h.t, eventId, capacity);
    expect(counts.counts).toMatchObject({ available: 4, held: 0, drift: 0 });
    const b = await call('POST', `/events/${eventId}/holds`, second!, { section: 'TINY', quantity: 2 });
    expect(b.status).toBe(201);
    const lapsed = await call('GET', `/holds/${a.body.holdId}`, first!);
    expect(lapsed.body.status).toBe('EXPIRED');
    const late = await call(
      'POST',
      `/holds/${a.body.holdId}/checkout`,
      first!,
      { payment: { instrument: { type: 'card', number: TEST_CARDS.success } } },
      { 'idempotency-key': 'late-payer-key' },
    );
    expect(late.status).toBe(410);
    const inv = await checkInvariants(h.t, eventId, capacity);
    expect(inv.counts).toMatchObject({ available: 2, held: 2, sold: 0, drift: 0 });
  });
});
