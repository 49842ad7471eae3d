import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { TEST_CARDS } from '@onsale/shared/checkout';
import { admitted, bearer, checkInvariants, login, makeEvent, setupApp, type TestApp } from './helper.js';

let h: TestApp;
let eventId: string;
let capacity: number;
let alice: string;
let bob: string;

beforeAll(async () => {
  h = await setupApp();
  ({ eventId, capacity } = await makeEvent(h.t));
  alice = await login(h.app, 'alice');
  bob = await login(h.app, 'bob');
});
afterAll(() => h.close());

const snapshot = async () =>
  (
    await sql<{
      s: string;
    }>`SELECT (SELECT count(*) FROM holds)::text || '/' || (SELECT count(*) FROM seats WHERE status <> 'AVAILABLE')::text || '/' || (SELECT count(*) FROM orders)::text AS s`.execute(
      h.t.db,
    )
  ).rows[0]!.s;

const hold = async (token: string, body: unknown, id = eventId) =>
  h.app.inject({ method: 'POST', url: `/events/${id}/holds`, headers: await admitted(token, id), payload: body as object });

describe('event reads', () => {
  it('serves the event page with an ETag and answers 304 to a matching If-None-Match', async () => {
    const r = await h.app.inject({ url: `/events/${eventId}` });
    expect(r.statusCode).toBe(200);
    expect(r.json().capacity).toBe(capacity);
    expect(r.headers['cache-control']).toContain('max-age');
    const again = await h.app.inject({ url: `/events/${eventId}`, headers: { 'if-none-match': r.headers.etag as string } });
    expect(again.statusCode).toBe(304);
  });

  it('serves the seat map with per-section counts', async () => {
    const r = await h.app.inject({ url: `/events/${eventId}/seatmap` });
    expect(r.statusCode).toBe(200);
    const a = r.json().sections.find((s: { code: string }) => s.code === 'A');
    expect(a).toMatchObject({ capacity: 300, available: 300, held: 0, sold: 0 });
  });

  it('answers 404 with a code for unknown and malformed event ids', async () => {
    for (const id of ['00000000-0000-0000-0000-000000000000', 'nope']) {
      const r = await h.app.inject({ url: `/events/${id}` });
      expect(r.statusCode).toBe(404);
      expect(r.json()).toMatchObject({ error: 'EVENT_NOT_FOUND', field: 'id' });
    }
  });
});

describe('bad input never writes', () => {
  it.each([
    [{ section: 'A', quantity: 0 }, 'quantity'],
    [{ section: 'A', quantity: -2 }, 'quantity'],
    [{ section: 'A', quantity: 1.5 }, 'quantity'],
    [{ section: 'A', quantity: '2' }, 'quantity'],
    [{ section: 'A' }, undefined],
    [{ section: 'A', quantity: 2, extra: true }, undefined],
  ])('%j -> 400 naming the field', async (body, field) => {
    const before = await snapshot();
    const r = await hold(alice, body);
    expect(r.statusCode).toBe(400);
    expect(r.json().error).toBe('VALIDATION_FAILED');
    if (field) expect(r.json().field).toContain(field);
    expect(await snapshot()).toBe(before);
  });

  it('refuses a quantity above the per-account limit', async () => {
    const r = await hold(alice, { section: 'A', quantity: 5 });
    expect(r.statusCode).toBe(400);
    expect(r.json()).toMatchObject({ error: 'QUANTITY_ABOVE_LIMIT', field: 'quantity', limit: 4 });
  });

  it('answers 404 for an unknown section or event', async () => {
    expect((await hold(alice, { section: 'ZZ', quantity: 1 })).json()).toMatchObject({ error: 'SECTION_NOT_FOUND', field: 'section' });
    const r = await hold(alice, { section: 'A', quantity: 1 }, '00000000-0000-0000-0000-000000000000');
    expect(r.statusCode).toBe(404);
    expect(r.json().error).toBe('EVENT_NOT_FOUND');
  });

  it('answers 400 INVALID_JSON to malformed JSON', async () => {
    const r = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/holds`,
      headers: { ...(await admitted(alice, eventId)), 'content-type': 'application/json' },
      payload: '{"section": "A", "quantity": ',
    });
    expect(r.statusCode).toBe(400);
    expect(r.json().error).toBe('INVALID_JSON');
  });

  it('answers 401 to a missing or forged account token', async () => {
    const none = await h.app.inject({ method: 'POST', url: `/events/${eventId}/holds`, payload: { section: 'A', quantity: 1 } });
    expect(none.statusCode).toBe(401);
    expect(none.json()).toMatchObject({ error: 'MISSING_TOKEN', field: 'authorization' });
    const forged = alice.slice(0, -4) + (alice.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    const bad = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/holds`,
      headers: { ...(await admitted(alice, eventId)), ...bearer(forged) },
      payload: { section: 'A', quantity: 1 },
    });
    expect(bad.statusCode).toBe(401);
    expect(bad.json().error).toBe('INVALID_TOKEN');
  });

  it('refuses exact-seat picking before it opens, and says when it opens', async () => {
    const r = await hold(alice, { seatIds: [1, 2] });
    expect(r.statusCode).toBe(409);
    expect(r.json()).toMatchObject({ error: 'SEAT_PICKING_NOT_OPEN', field: 'seatIds' });
    expect(Date.parse(r.json().opensAt)).toBeGreaterThan(Date.now());
  });

  it('refuses holds before the on-sale opens', async () => {
    const later = await makeEvent(h.t, { onsaleAt: new Date(Date.now() + 86400_000).toISOString() });
    const r = await hold(alice, { section: 'A', quantity: 1 }, later.eventId);
    expect(r.statusCode).toBe(409);
    expect(r.json().error).toBe('ONSALE_NOT_OPEN');
  });
});

describe('a hold, end to end', () => {
  it('holds adjacent best-available seats, extends once, and releases', async () => {
    const r = await hold(alice, { section: 'B', quantity: 3 });
    expect(r.statusCode).toBe(201);
    const body = r.json();
    expect(body.seats).toHaveLength(3);
    expect(new Set(body.seats.map((s: { row: string }) => s.row)).size).toBe(1);
    const nums = body.seats.map((s: { number: number }) => s.number).sort((a: number, b: number) => a - b);
    expect(nums[2] - nums[0]).toBe(2);
    expect(['A', 'B']).toContain(body.seats[0].row); // the front tier (two rows) of an empty section
    const ttl = Date.parse(body.expiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(340_000);
    expect(ttl).toBeLessThanOrEqual(361_000);

    const other = await h.app.inject({ method: 'POST', url: `/holds/${body.holdId}/extend`, headers: await admitted(bob, eventId) });
    expect(other.statusCode).toBe(403);
    expect(other.json().error).toBe('HOLD_NOT_OWNED');

    const ext = await h.app.inject({ method: 'POST', url: `/holds/${body.holdId}/extend`, headers: await admitted(alice, eventId) });
    expect(ext.statusCode).toBe(200);
    expect(Date.parse(ext.json().expiresAt) - Date.parse(body.expiresAt)).toBe(180_000);
    const twice = await h.app.inject({ method: 'POST', url: `/holds/${body.holdId}/extend`, headers: await admitted(alice, eventId) });
    expect(twice.statusCode).toBe(409);
    expect(twice.json().error).toBe('HOLD_ALREADY_EXTENDED');

    const bobDelete = await h.app.inject({ method: 'DELETE', url: `/holds/${body.holdId}`, headers: await admitted(bob, eventId) });
    expect(bobDelete.statusCode).toBe(403);
    const del = await h.app.inject({ method: 'DELETE', url: `/holds/${body.holdId}`, headers: await admitted(alice, eventId) });
    expect(del.json()).toEqual({ holdId: body.holdId, status: 'RELEASED' });
    const inv = await checkInvariants(h.t, eventId, capacity);
    expect(inv.counts.drift).toBe(0);
    expect(inv.counts.held).toBe(inv.live);
  });

  it('answers 404 for an unknown hold', async () => {
    const r = await h.app.inject({
      method: 'DELETE',
      url: '/holds/00000000-0000-0000-0000-000000000000',
      headers: await admitted(alice, eventId),
    });
    expect(r.statusCode).toBe(404);
    expect(r.json().error).toBe('HOLD_NOT_FOUND');
  });

  it("answers each of many concurrent releases alone (batched into shared transactions): own, twice, another fan's, unknown", async () => {
    const fans = await Promise.all(Array.from({ length: 30 }, (_, i) => login(h.app, `releaser-${i}`)));
    const held = await Promise.all(fans.map(async (fan) => ({ fan, body: (await hold(fan, { section: 'A', quantity: 2 })).json() })));
    for (const x of held) expect(x.body.holdId, JSON.stringify(x.body)).toBeDefined();
    const del = async (fan: string, id: string) =>
      h.app.inject({ method: 'DELETE', url: `/holds/${id}`, headers: await admitted(fan, eventId) });
    const [own, twice, stolen, unknown] = await Promise.all([
      Promise.all(held.map((x) => del(x.fan, x.body.holdId))),
      Promise.all(held.slice(0, 10).map((x) => del(x.fan, x.body.holdId))),
      Promise.all(held.slice(10, 20).map((x, i) => del(held[(i + 11) % 30]!.fan, x.body.holdId))),
      del(fans[0]!, '11111111-1111-4111-8111-111111111111'),
    ]);
    for (const r of [...own, ...twice]) expect([r.statusCode, r.json().status]).toEqual([200, 'RELEASED']);
    for (const r of stolen) expect([r.statusCode, r.json().error, r.json().field]).toEqual([403, 'HOLD_NOT_OWNED', 'id']);
    expect([unknown.statusCode, unknown.json().error]).toEqual([404, 'HOLD_NOT_FOUND']);
    const ids = held.map((x) => x.body.holdId as string);
    const { rows } = await sql<{ released: number; seats: number; returned: number }>`
      SELECT (SELECT count(*) FROM holds WHERE id = ANY(${ids}::uuid[]) AND status = 'RELEASED')::int AS released,
             (SELECT count(*) FROM seats WHERE hold_id = ANY(${ids}::uuid[]))::int AS seats,
             (SELECT coalesce(sum(seat_count), 0) FROM availability_events WHERE event_id = ${eventId} AND cause = 'HOLD_RELEASED'
                AND created_at > now() - interval '1 minute')::int AS returned`.execute(h.t.db);
    // Every hold released once, no seat still pointing at one, and the waitlist told of each seat once.
    expect(rows[0]).toMatchObject({ released: 30, seats: 0 });
    expect(rows[0]!.returned).toBeGreaterThanOrEqual(60);
    const inv = await checkInvariants(h.t, eventId, capacity);
    expect(inv.holdseatmismatch).toBe(0);
    expect(inv.counts.available + inv.counts.held + inv.counts.sold).toBe(capacity);
  });

  it('enforces the per-account limit across holds (held + sold)', async () => {
    const carol = await login(h.app, 'carol');
    expect((await hold(carol, { section: 'C', quantity: 3 })).statusCode).toBe(201);
    const r = await hold(carol, { section: 'C', quantity: 2 });
    expect(r.statusCode).toBe(409);
    expect(r.json()).toMatchObject({ error: 'ACCOUNT_LIMIT_EXCEEDED', limit: 4, current: 3 });
  });

  it('checks out, refuses a reused key with another body, and an expired hold', async () => {
    const dave = await login(h.app, 'dave');
    const held = (await hold(dave, { section: 'C', quantity: 2 })).json();
    const pay = async (key: string, number: string = TEST_CARDS.success, holdId = held.holdId) =>
      h.app.inject({
        method: 'POST',
        url: `/holds/${holdId}/checkout`,
        headers: { ...(await admitted(dave, eventId)), 'idempotency-key': key },
        payload: { payment: { instrument: { type: 'card', number } } },
      });
    const missingKey = await h.app.inject({
      method: 'POST',
      url: `/holds/${held.holdId}/checkout`,
      headers: await admitted(dave, eventId),
      payload: { payment: { instrument: { type: 'card', number: TEST_CARDS.success } } },
    });
    expect(missingKey.statusCode).toBe(400);
    expect(missingKey.json().field).toContain('idempotency-key');

    const badCard = await pay('key-dave-0001', '4242424242424241');
    expect(badCard.statusCode).toBe(400);
    expect(badCard.json().field).toContain('payment.instrument.number');

    const declined = await pay('key-dave-0002', TEST_CARDS.declined);
    expect(declined.statusCode).toBe(402);
    expect(declined.json().error).toBe('PAYMENT_DECLINED');

    const ok = await pay('key-dave-0003');
    expect(ok.json()).toMatchObject({});
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ status: 'CONFIRMED', seatCount: 2, amountCents: 12_000 });
    const replay = await pay('key-dave-0003');
    expect(replay.json().orderId).toBe(ok.json().orderId);
    expect(replay.headers['idempotent-replayed']).toBe('true');

    const reused = await pay('key-dave-0003', '5555555555554444');
    expect(reused.statusCode).toBe(400);
    expect(reused.json()).toMatchObject({ error: 'IDEMPOTENCY_KEY_REUSED', field: 'idempotency-key' });

    const again = await pay('key-dave-0004');
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toBe('HOLD_PURCHASED');

    // An expired hold at checkout: 410, nothing sold, nothing charged.
    const erin = await login(h.app, 'erin');
    const eh = (await hold(erin, { section: 'C', quantity: 1 })).json();
    await sql`UPDATE holds SET expires_at = now() - interval '1 second' WHERE id = ${eh.holdId}`.execute(h.t.db);
    await sql`UPDATE seats SET expires_at = now() - interval '1 second' WHERE hold_id = ${eh.holdId}`.execute(h.t.db);
    const before = h.payments.charges;
    const late = await h.app.inject({
      method: 'POST',
      url: `/holds/${eh.holdId}/checkout`,
      headers: { ...(await admitted(erin, eventId)), 'idempotency-key': 'key-erin-0001' },
      payload: { payment: { instrument: { type: 'card', number: TEST_CARDS.success } } },
    });
    expect(late.statusCode).toBe(410);
    expect(late.json().error).toBe('HOLD_EXPIRED');
    expect(h.payments.charges).toBe(before);
    const inv = await checkInvariants(h.t, eventId, capacity);
    expect(inv.counts.drift).toBe(0);
    expect(inv.counts.sold).toBe(inv.ordered);
    expect(inv.holdseatmismatch).toBe(0);
  });
});

describe('the contract', () => {
  it('publishes OpenAPI generated from the route schemas', async () => {
    const r = await h.app.inject({ url: '/docs/json' });
    expect(r.statusCode).toBe(200);
    const paths = Object.keys(r.json().paths);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/events/{id}',
        '/events/{id}/seatmap',
        '/events/{id}/holds',
        '/holds/{id}/checkout',
        '/holds/{id}/extend',
        '/holds/{id}',
      ]),
    );
    // Every documented route says it may answer 503 with Retry-After (a database outage, load shed).
    const doc = r.json<{ paths: Record<string, Record<string, { responses: Record<string, { description?: string }> }>> }>();
    for (const [path, ops] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(ops)) expect(op.responses['503']?.description, `${method} ${path}`).toMatch(/Retry-After/);
  });

  it('serves Prometheus metrics and health', async () => {
    expect((await h.app.inject({ url: '/healthz' })).json()).toEqual({
      status: 'ok',
      instance: 'store-1',
      pid: process.pid,
      database: 'ok',
    });
    const m = await h.app.inject({ url: '/metrics' });
    expect(m.statusCode).toBe(200);
    expect(m.body).toContain('holds_created_total');
  });

  it('answers unknown routes with the error shape', async () => {
    const r = await h.app.inject({ url: '/nope' });
    expect(r.statusCode).toBe(404);
    expect(r.json().error).toBe('ROUTE_NOT_FOUND');
  });
});
