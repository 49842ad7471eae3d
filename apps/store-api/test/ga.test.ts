import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { TEST_CARDS } from '@onsale/shared/checkout';
import { getInventoryCounts } from '@onsale/shared/inventory';
import { reconcileInventory } from '@onsale/shared/jobs';
import { admitted, login, makeEvent, setupApp, type TestApp } from './helper.js';

// General admission over real HTTP: a listening server, real concurrent requests, real PostgreSQL.
let h: TestApp;
let base: string;

beforeAll(async () => {
  h = await setupApp({ poolMax: 16, paymentLatencyMs: 5 });
  // 1,000 fans connect at once: a listen backlog above the default 511, so no connection waits on a SYN retry.
  await h.app.listen({ port: 0, host: '127.0.0.1', backlog: 2048 });
  const addr = h.app.server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
});
afterAll(() => h.close());

let currentEvent = '';
async function call(method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}) {
  const r = await fetch(base + path, {
    method,
    headers: { ...(await admitted(token, currentEvent)), ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json()) as Record<string, any> };
}
const tokens = (prefix: string, n: number) => Promise.all(Array.from({ length: n }, (_, i) => login(h.app, `${prefix}-${i}`)));
const pay = { payment: { instrument: { type: 'card', number: TEST_CARDS.success } } };
/** A card of one's own (the per-instrument limit is per event): a Luhn-valid 16-digit number from `i`. */
function cardOf(i: number) {
  const body = `5555${String(i).padStart(11, '0')}`;
  let sum = 0;
  for (let k = 0; k < body.length; k++) {
    let d = Number(body[body.length - 1 - k]);
    if (k % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return { payment: { instrument: { type: 'card', number: `${body}${(10 - (sum % 10)) % 10}` } } };
}

/** An event on sale with a GA section FLOOR (P2, 60.00) and the reserved section A (300 seats, P1). */
async function gaEvent(capacity: number, shards = 16) {
  const ev = await makeEvent(h.t, {
    sections: [
      { kind: 'GA', code: 'FLOOR', name: 'Floor', priceLevel: 'P2', capacity, shards },
      { code: 'A', priceLevel: 'P1', qualityRank: 1, rowCount: 15, seatsPerRow: 20 },
    ],
  });
  currentEvent = ev.eventId;
  return ev;
}

/**
 * The GA invariants: per shard, the held and sold counters equal the units in that state; units held by live holds
 * equal the section's held count; sold units equal the seats of confirmed orders; available + held + sold = capacity.
 */
async function checkGa(eventId: string, capacity: number) {
  const { rows } = await sql<{ mismatched: number; live: number; ordered: number; soldunits: number }>`
    SELECT
      (SELECT count(*) FROM ga_shards s WHERE s.event_id = ${eventId}
         AND (s.held <> (SELECT coalesce(sum(quantity), 0) FROM ga_hold_units u WHERE u.event_id = s.event_id AND u.shard = s.shard AND u.section_code = s.section_code AND u.state = 'HELD')
           OR s.sold <> (SELECT coalesce(sum(quantity), 0) FROM ga_hold_units u WHERE u.event_id = s.event_id AND u.shard = s.shard AND u.section_code = s.section_code AND u.state = 'SOLD')))::int AS mismatched,
      (SELECT coalesce(sum(u.quantity), 0) FROM ga_hold_units u JOIN holds h ON h.id = u.hold_id
         WHERE u.event_id = ${eventId} AND u.state = 'HELD' AND h.status IN ('HELD', 'PAYING') AND h.expires_at > now())::int AS live,
      (SELECT coalesce(sum(seat_count), 0) FROM orders WHERE event_id = ${eventId} AND status = 'CONFIRMED')::int AS ordered,
      (SELECT coalesce(sum(quantity), 0) FROM ga_hold_units WHERE event_id = ${eventId} AND state = 'SOLD')::int AS soldunits`.execute(
    h.t.db,
  );
  const r = rows[0]!;
  const counts = await getInventoryCounts(h.t.db, eventId, capacity);
  const floor = counts.sections.find((s) => s.code === 'FLOOR')!;
  expect(r.mismatched).toBe(0);
  expect(counts.drift).toBe(0);
  expect(floor.held).toBe(r.live);
  expect(floor.sold).toBe(r.soldunits);
  const recon = (await reconcileInventory(h.t.db)).find((x) => x.eventId === eventId)!;
  expect(recon).toMatchObject({ drift: 0, orderDrift: 0 });
  return { floor, ordered: r.ordered };
}

describe('general admission over HTTP', () => {
  it('400 concurrent GA holds on 600 units: no oversell, held + sold + available = capacity, then checkouts, releases and more holds at once', async () => {
    // Ten times the store API's 40 connections on 16 shards of about 37 units, demand well past supply: every shard sells
    // out under contention, as with more fans (1,000 took three times as long to show the same).
    const { eventId, capacity } = await gaEvent(600, 16);
    const fans = await tokens('ga-stampede', 400);
    const results = await Promise.all(
      fans.map((tk, i) => call('POST', `/events/${eventId}/holds`, tk, { section: 'FLOOR', quantity: (i % 4) + 1 })),
    );

    const ok = results.flatMap((r, i) => (r.status === 201 ? [{ ...r, fan: fans[i]! }] : []));
    for (const r of results.filter((x) => x.status !== 201)) {
      expect(r.status, JSON.stringify(r.body)).toBe(409);
      expect(['SECTION_SOLD_OUT', 'GA_QUANTITY_UNAVAILABLE']).toContain(r.body.error);
      expect(r.body.field).toBe(r.body.error === 'SECTION_SOLD_OUT' ? 'section' : 'quantity');
    }
    for (const r of ok) {
      expect(r.body.seats).toEqual([]);
      expect(r.body.units).toEqual([{ section: 'FLOOR', quantity: r.body.quantity, priceCents: 6000 }]);
    }
    const heldUnits = ok.reduce((a, r) => a + r.body.quantity, 0);
    expect(heldUnits).toBeLessThanOrEqual(600); // demand was 1,000 units
    expect(heldUnits).toBeGreaterThanOrEqual(597); // and nothing is stranded in a shard
    expect(new Set(ok.map((r) => r.body.holdId)).size).toBe(ok.length);
    const first = await checkGa(eventId, capacity);
    expect(first.floor).toEqual({ code: 'FLOOR', available: 600 - heldUnits, held: heldUnits, sold: 0 });

    // At once: 60 fans pay, 60 release, 120 newcomers ask for units as they come back.
    const paying = ok.slice(0, 60);
    const releasing = ok.slice(60, 120);
    const newcomers = await tokens('ga-newcomer', 120);
    const [paid, released, more] = await Promise.all([
      Promise.all(
        paying.map((r, i) => call('POST', `/holds/${r.body.holdId}/checkout`, r.fan, cardOf(i), { 'idempotency-key': `ga-pay-${i}-key` })),
      ),
      Promise.all(releasing.map((r) => call('DELETE', `/holds/${r.body.holdId}`, r.fan))),
      Promise.all(newcomers.map((tk) => call('POST', `/events/${eventId}/holds`, tk, { section: 'FLOOR', quantity: 1 }))),
    ]);
    for (const p of paid) expect(p.status, JSON.stringify(p.body)).toBe(200);
    for (const d of released) expect(d.body.status).toBe('RELEASED');
    for (const m of more.filter((x) => x.status !== 201)) expect(m.body.error).toBe('SECTION_SOLD_OUT');
    const soldUnits = paying.reduce((a, r) => a + r.body.quantity, 0);
    const releasedUnits = releasing.reduce((a, r) => a + r.body.quantity, 0);
    const newUnits = more.filter((x) => x.status === 201).length;
    expect(newUnits).toBeLessThanOrEqual(600 - heldUnits + releasedUnits);
    const after = await checkGa(eventId, capacity);
    expect(after.floor.sold).toBe(soldUnits);
    expect(after.ordered).toBe(soldUnits);
    expect(after.floor.held).toBe(heldUnits - soldUnits - releasedUnits + newUnits);
    expect(after.floor.available + after.floor.held + after.floor.sold).toBe(600);
    const orders = await sql<{
      n: number;
      cents: number;
    }>`SELECT count(*)::int AS n, sum(amount_cents)::int AS cents FROM orders WHERE event_id = ${eventId}`.execute(h.t.db);
    expect(orders.rows[0]).toEqual({ n: 60, cents: soldUnits * 6000 });
  }); // 520 fans on a shared two-core machine

  it('answers a GA hold with units, not seats; GET shows them; the seat map and event page show GA sections as counts', async () => {
    const { eventId } = await gaEvent(100, 4);
    const [fan] = await tokens('ga-shape', 1);
    const held = await call('POST', `/events/${eventId}/holds`, fan!, { section: 'FLOOR', quantity: 2 });
    expect(held.status).toBe(201);
    expect(held.body).toMatchObject({
      status: 'HELD',
      seats: [],
      units: [{ section: 'FLOOR', quantity: 2, priceCents: 6000 }],
      quantity: 2,
      amountCents: 12_000,
      extended: false,
    });
    const read = await call('GET', `/holds/${held.body.holdId}`, fan!);
    expect(read.body).toMatchObject({
      status: 'HELD',
      seats: [],
      units: [{ section: 'FLOOR', quantity: 2, priceCents: 6000 }],
      amountCents: 12_000,
    });
    const ext = await call('POST', `/holds/${held.body.holdId}/extend`, fan!);
    expect(ext.status).toBe(200);

    const map = await fetch(`${base}/events/${eventId}/seatmap`).then((r) => r.json() as Promise<{ sections: Record<string, unknown>[] }>);
    expect(map.sections).toContainEqual(
      expect.objectContaining({ code: 'FLOOR', kind: 'GA', capacity: 100, available: 98, held: 2, sold: 0 }),
    );
    expect(map.sections).toContainEqual(expect.objectContaining({ code: 'A', kind: 'RESERVED', capacity: 300 }));
    const page = await fetch(`${base}/events/${eventId}`).then(
      (r) => r.json() as Promise<{ capacity: number; sections: Record<string, unknown>[] }>,
    );
    expect(page.capacity).toBe(400);
    expect(page.sections).toContainEqual(expect.objectContaining({ code: 'FLOOR', kind: 'GA', capacity: 100 }));
  });

  it('bad input: a clear 4xx naming the field, and nothing written', async () => {
    const { eventId, capacity } = await gaEvent(5, 2);
    const [a, b, c] = await tokens('ga-bad', 3);
    const bad = async (body: unknown, status: number, error: string, field: string) => {
      const r = await call('POST', `/events/${eventId}/holds`, a!, body);
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      expect(r.body).toMatchObject({ error, field });
      return r;
    };
    await bad({ section: 'FLOOR', quantity: 0 }, 400, 'VALIDATION_FAILED', 'quantity');
    await bad({ section: 'FLOOR', quantity: 1.5 }, 400, 'VALIDATION_FAILED', 'quantity');
    await bad({ section: 'FLOOR' }, 400, 'VALIDATION_FAILED', 'quantity');
    await bad({ section: 'FLOOR', quantity: 5 }, 400, 'QUANTITY_ABOVE_LIMIT', 'quantity');
    await bad({ section: 'STANDING', quantity: 1 }, 404, 'SECTION_NOT_FOUND', 'section');
    expect((await checkGa(eventId, capacity)).floor).toEqual({ code: 'FLOOR', available: 5, held: 0, sold: 0 });

    expect((await call('POST', `/events/${eventId}/holds`, b!, { section: 'FLOOR', quantity: 3 })).status).toBe(201);
    // 2 left: asking for 3 is refused with how many there are and where else the party fits.
    const short = await bad({ section: 'FLOOR', quantity: 3 }, 409, 'GA_QUANTITY_UNAVAILABLE', 'quantity');
    expect(short.body.available).toBe(2);
    expect(short.body.alternatives).toEqual([{ section: 'A', name: 'Section A', available: 300, priceCents: 12_000 }]);
    expect((await call('POST', `/events/${eventId}/holds`, c!, { section: 'FLOOR', quantity: 2 })).status).toBe(201);
    const gone = await bad({ section: 'FLOOR', quantity: 1 }, 409, 'SECTION_SOLD_OUT', 'section');
    expect(gone.body.available).toBe(0);
    const mine = await sql<{ n: number }>`SELECT count(*)::int AS n FROM holds WHERE account_id = 'ga-bad-0'`.execute(h.t.db);
    expect(mine.rows[0]!.n).toBe(0);
    expect((await checkGa(eventId, capacity)).floor).toEqual({ code: 'FLOOR', available: 0, held: 5, sold: 0 });
  });

  it('the per-account limit spans GA and reserved seats under concurrent requests from one account', async () => {
    const { eventId, capacity } = await gaEvent(200, 8);
    const [fan] = await tokens('ga-greedy', 1);
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        call(
          'POST',
          `/events/${eventId}/holds`,
          fan!,
          { section: i % 2 === 0 ? 'FLOOR' : 'A', quantity: 2 },
          { 'idempotency-key': `ga-greedy-request-${i}` },
        ),
      ),
    );
    const ok = results.filter((r) => r.status === 201);
    expect(ok.length).toBe(2); // limit 4 = two holds of 2, whichever kind
    for (const r of results.filter((x) => x.status !== 201))
      expect(r.body).toMatchObject({ error: 'ACCOUNT_LIMIT_EXCEEDED', field: 'quantity', limit: 4 });
    const counts = await getInventoryCounts(h.t.db, eventId, capacity);
    expect(counts.held).toBe(4);
    await checkGa(eventId, capacity);
  });

  it('checkout and release of GA holds: one order at the GA price, units back at once, the limit counts orders', async () => {
    const { eventId, capacity } = await gaEvent(10, 2);
    const [buyer, leaver] = await tokens('ga-flow', 2);
    const held = await call('POST', `/events/${eventId}/holds`, buyer!, { section: 'FLOOR', quantity: 3 });
    // A duplicate still waiting on the first after a moment is told to retry (409 CHECKOUT_IN_PROGRESS): it does.
    const results = await Promise.all(
      Array.from({ length: 10 }, async () => {
        for (;;) {
          const r = await call('POST', `/holds/${held.body.holdId}/checkout`, buyer!, pay, { 'idempotency-key': 'ga-one-key-for-all' });
          if (r.body.error !== 'CHECKOUT_IN_PROGRESS') return r;
          await new Promise((done) => setTimeout(done, 200));
        }
      }),
    );
    for (const r of results) expect(r.body).toMatchObject({ status: 'CONFIRMED', seatCount: 3, amountCents: 18_000 });
    expect(new Set(results.map((r) => r.body.orderId)).size).toBe(1);
    expect((await call('GET', `/holds/${held.body.holdId}`, buyer!)).body).toMatchObject({
      status: 'PURCHASED',
      units: [{ section: 'FLOOR', quantity: 3 }],
    });
    const again = await call('POST', `/events/${eventId}/holds`, buyer!, { section: 'FLOOR', quantity: 2 });
    expect(again.body).toMatchObject({ error: 'ACCOUNT_LIMIT_EXCEEDED', current: 3 });

    const other = await call('POST', `/events/${eventId}/holds`, leaver!, { section: 'FLOOR', quantity: 4 });
    expect((await checkGa(eventId, capacity)).floor).toEqual({ code: 'FLOOR', available: 3, held: 4, sold: 3 });
    const rel = await call('DELETE', `/holds/${other.body.holdId}`, leaver!);
    expect(rel.body).toEqual({ holdId: other.body.holdId, status: 'RELEASED' });
    const late = await call('POST', `/holds/${other.body.holdId}/checkout`, leaver!, pay, { 'idempotency-key': 'ga-released-key' });
    expect(late).toMatchObject({ status: 409, body: { error: 'HOLD_RELEASED' } });
    expect((await checkGa(eventId, capacity)).floor).toEqual({ code: 'FLOOR', available: 7, held: 0, sold: 3 });
  });

  it("a lapsed GA hold's units are available the instant it expires, with no sweeper running", async () => {
    const { eventId, capacity } = await gaEvent(4, 2);
    const [first, second] = await tokens('ga-expiry', 2);
    const a = await call('POST', `/events/${eventId}/holds`, first!, { section: 'FLOOR', quantity: 4 });
    expect(a.status).toBe(201);
    expect((await call('POST', `/events/${eventId}/holds`, second!, { section: 'FLOOR', quantity: 2 })).body.error).toBe(
      'SECTION_SOLD_OUT',
    );

    await sql`UPDATE holds SET expires_at = now() - interval '1 millisecond' WHERE id = ${a.body.holdId}`.execute(h.t.db);
    expect((await getInventoryCounts(h.t.db, eventId, capacity)).sections).toContainEqual({
      code: 'FLOOR',
      available: 4,
      held: 0,
      sold: 0,
    });
    const b = await call('POST', `/events/${eventId}/holds`, second!, { section: 'FLOOR', quantity: 2 });
    expect(b.status).toBe(201);
    expect((await call('GET', `/holds/${a.body.holdId}`, first!)).body.status).toBe('EXPIRED');
    const late = await call('POST', `/holds/${a.body.holdId}/checkout`, first!, pay, { 'idempotency-key': 'ga-late-payer' });
    expect(late.status).toBe(410);
    expect((await checkGa(eventId, capacity)).floor).toEqual({ code: 'FLOOR', available: 2, held: 2, sold: 0 });
  });
});
