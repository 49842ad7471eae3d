import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { admitted, login, makeEvent, setupApp, type TestApp } from './helper.js';

// "No single seats" over HTTP: the refusal a party that cannot sit together reads (the split offered, the most seats
// together, in words and fields, in the usual error shape), `split: true` taking that split, and an exact-seat pick
// that would leave a seat alone.
let h: TestApp;
beforeAll(async () => {
  h = await setupApp();
});
afterAll(() => h.close());

async function hold(eventId: string, fan: string, body: unknown) {
  const token = await login(h.app, fan);
  const r = await h.app.inject({
    method: 'POST',
    url: `/events/${eventId}/holds`,
    headers: await admitted(token, eventId),
    payload: body as object,
  });
  return { status: r.statusCode, body: r.json<Record<string, any>>() };
}

async function seatIds(eventId: string) {
  const { rows } = await sql<{ id: number; row: string; n: number }>`
    SELECT id, row_label AS row, seat_number AS n FROM seats WHERE event_id = ${eventId} ORDER BY row_index, seat_number`.execute(h.t.db);
  return (row: string, n: number) => rows.find((r) => r.row === row && r.n === n)!.id;
}

describe('seats that fit the party', () => {
  it('a party of four with only pairs left is offered two pairs and two together, and split: true holds the pairs', async () => {
    const { eventId } = await makeEvent(h.t, {
      seatPickingOpensAfterMinutes: 0,
      sections: [
        {
          code: 'A',
          name: 'Stalls',
          priceLevel: 'P1',
          qualityRank: 1,
          rows: [
            { label: 'A', seats: 6 },
            { label: 'B', seats: 6 },
          ],
        },
      ],
    });
    const seat = await seatIds(eventId);
    expect((await hold(eventId, 'middle', { seatIds: [seat('A', 3), seat('A', 4), seat('B', 3), seat('B', 4)] })).status).toBe(201);
    const refused = await hold(eventId, 'four', { section: 'A', quantity: 4 });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: 'SECTION_NEARLY_FULL', field: 'section', alternatives: [], together: 2 });
    expect(refused.body.split).toHaveLength(2);
    expect(refused.body.message).toMatch(
      /you can have 4 seats as 2 \+ 2 \(row [AB] seats \d-\d; row [AB] seats \d-\d\) or 2 seats together/,
    );
    const taken = await hold(eventId, 'four', { section: 'A', quantity: 4, split: true });
    expect(taken.status, JSON.stringify(taken.body)).toBe(201);
    expect(taken.body.seats).toHaveLength(4);
    expect(taken.body.quantity).toBe(4);
  });

  it('an exact-seat pick that would leave a seat alone is 409 SINGLE_SEAT_LEFT with the seats to pick instead; split is refused with exact seats', async () => {
    const { eventId } = await makeEvent(h.t, {
      seatPickingOpensAfterMinutes: 0,
      sections: [{ code: 'A', name: 'Stalls', priceLevel: 'P1', qualityRank: 1, rows: [{ label: 'A', seats: 6 }] }],
    });
    const seat = await seatIds(eventId);
    const r = await hold(eventId, 'picker', { seatIds: [seat('A', 2), seat('A', 3)] });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({
      error: 'SINGLE_SEAT_LEFT',
      field: 'seatIds',
      seats: [seat('A', 1)],
      instead: [seat('A', 1), seat('A', 2)],
    });
    expect((await hold(eventId, 'picker', { seatIds: r.body.instead })).status).toBe(201);
    const both = await hold(eventId, 'both', { seatIds: [seat('A', 5)], split: true });
    expect(both.status).toBe(400);
    expect(both.body).toMatchObject({ error: 'VALIDATION_FAILED', field: 'split' });
  });
});
