import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { TEST_CARDS } from '@onsale/shared/checkout';
import { deviceFingerprint } from '@onsale/shared/abuse';
import { admitted, checkInvariants, login, makeEvent, setupApp, type TestApp } from './helper.js';

// The per-device seat limit: real concurrent HTTP requests against a listening server and real PostgreSQL.
let h: TestApp;
let base: string;

beforeAll(async () => {
  h = await setupApp({ poolMax: 16 });
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const addr = h.app.server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
});
afterAll(() => h.close());

async function call(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const r = await fetch(base + path, {
    method,
    headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: r.status, body: (await r.json()) as Record<string, any> };
}

const fans = (prefix: string, n: number) => Promise.all(Array.from({ length: n }, (_, i) => login(h.app, `${prefix}-${i}`)));

async function deviceSeats(eventId: string, deviceId: string) {
  const { rows } = await sql<{ live: number; holds: number }>`
    SELECT coalesce(sum(quantity) FILTER (WHERE status IN ('HELD', 'PAYING', 'PURCHASED')), 0)::int AS live, count(*)::int AS holds
    FROM holds WHERE event_id = ${eventId} AND device_hash = ${deviceFingerprint(deviceId)}`.execute(h.t.db);
  return rows[0]!;
}

describe('the per-device seat limit', () => {
  it('holds under concurrent best-available holds by many accounts on one device, and other devices are untouched', async () => {
    const { eventId, capacity } = await makeEvent(h.t, { limits: { perAccountSeats: 4, perInstrumentSeats: 4, perDeviceSeats: 4 } });
    const farm = await fans('farm', 12);
    // 12 accounts, one phone, 3 requests of 2 seats each, all at once: 36 requests for 72 seats; the device may have 4.
    const requests = farm.flatMap((tk, i) =>
      [0, 1, 2].map(async (k) => ({
        fan: i,
        // Separate requests, each its own Idempotency-Key (an identical request without one gets the first's hold back).
        ...(await call(
          'POST',
          `/events/${eventId}/holds`,
          { ...(await admitted(tk, eventId, 'one-farm-phone')), 'idempotency-key': `farm-${i}-${k}-key` },
          { section: 'A', quantity: 2 },
        )),
      })),
    );
    const honest = await fans('honest', 3);
    const others = honest.map(async (tk, i) =>
      call('POST', `/events/${eventId}/holds`, await admitted(tk, eventId, `own-phone-${i}`), { section: 'A', quantity: 2 }),
    );
    const results = await Promise.all(requests);
    const ok = results.filter((r) => r.status === 201);
    expect(ok.length).toBe(2);
    const holders = new Set(ok.map((r) => r.fan));
    const refused = results.filter((r) => r.status !== 201);
    for (const r of refused) {
      expect(r.status).toBe(409);
      // A fan who got both holds is told about their own account's limit first; everyone else about the device's.
      if (r.body.error === 'ACCOUNT_LIMIT_EXCEEDED') expect(holders.has(r.fan)).toBe(true);
      else expect(r.body).toMatchObject({ error: 'DEVICE_LIMIT_EXCEEDED', field: 'x-device-id', limit: 4 });
    }
    expect(refused.filter((r) => r.body.error === 'DEVICE_LIMIT_EXCEEDED').length).toBeGreaterThanOrEqual(30);
    for (const r of await Promise.all(others)) expect(r.status).toBe(201);
    expect(await deviceSeats(eventId, 'one-farm-phone')).toEqual({ live: 4, holds: 2 });
    const inv = await checkInvariants(h.t, eventId, capacity);
    expect(inv.counts.drift).toBe(0);
    expect(inv.counts.held).toBe(4 + 6);
    expect(inv.holdseatmismatch).toBe(0);
  });

  it('holds for exact-seat picks too, counts bought seats, and defaults to the per-account limit', async () => {
    // No perDeviceSeats: the device may have as many seats as one account (3 here).
    const { eventId, capacity } = await makeEvent(h.t, {
      seatPickingOpensAfterMinutes: 0,
      limits: { perAccountSeats: 3, perInstrumentSeats: 10 },
    });
    const [buyer, ...pickers] = await fans('picker', 9);
    const held = await call('POST', `/events/${eventId}/holds`, await admitted(buyer!, eventId, 'family-tablet'), {
      section: 'B',
      quantity: 2,
    });
    expect(held.status).toBe(201);
    const paid = await call(
      'POST',
      `/holds/${held.body.holdId}/checkout`,
      { ...(await admitted(buyer!, eventId, 'family-tablet')), 'idempotency-key': 'device-limit-pay-1' },
      { payment: { instrument: { type: 'card', number: TEST_CARDS.success } } },
    );
    expect(paid.status).toBe(200);
    // One seat left for the tablet; 8 accounts on it each pick a different exact seat at once (a seat at a row's end,
    // so that no pick leaves a seat alone: the single-seat rule would refuse that first).
    const { rows: seats } = await sql<{
      id: string;
    }>`SELECT id FROM seats WHERE event_id = ${eventId} AND section_code = 'C' AND seat_number IN (1, 10)
       ORDER BY row_index, seat_number LIMIT 8`.execute(h.t.db);
    const picks = await Promise.all(
      pickers.map(async (tk, i) =>
        call('POST', `/events/${eventId}/holds`, await admitted(tk, eventId, 'family-tablet'), { seatIds: [Number(seats[i]!.id)] }),
      ),
    );
    expect(picks.filter((r) => r.status === 201).length).toBe(1);
    for (const r of picks.filter((r) => r.status !== 201))
      expect(r.body).toMatchObject({ error: 'DEVICE_LIMIT_EXCEEDED', current: 3, limit: 3 });
    expect(await deviceSeats(eventId, 'family-tablet')).toEqual({ live: 3, holds: 2 });
    expect((await checkInvariants(h.t, eventId, capacity)).counts.drift).toBe(0);
  });

  it('refuses a position shared to another device on the hold route, and writes nothing', async () => {
    const { eventId } = await makeEvent(h.t);
    const [owner] = await fans('reseller', 1);
    const headers = await admitted(owner!, eventId, 'the-owners-phone');
    // The same account and admission token, presented from the buyer's device: the token is bound to the owner's.
    const resold = await call(
      'POST',
      `/events/${eventId}/holds`,
      { ...headers, 'x-device-id': 'the-buyers-phone' },
      { section: 'A', quantity: 2 },
    );
    expect(resold.status).toBe(403);
    expect(resold.body.error).toBe('TOKEN_WRONG_DEVICE');
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM holds WHERE event_id = ${eventId}`.execute(h.t.db);
    expect(rows[0]!.n).toBe(0);
  });
});
