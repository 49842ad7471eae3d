import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { readWarRoomSnapshot } from '@onsale/shared/warroom';
import { admitted, cardNumberOf, checkInvariants, login, makeEvent, setupApp, type TestApp } from './helper.js';

// With HOLD_COMMIT=async, a PostgreSQL crash lost 12 holds answered 201 within ~270 ms, and their
// fans' next step (checkout) read a bare HOLD_NOT_FOUND. The commit mode stays; a hold lost that way is now answered
// 410 HOLD_LOST with a token to hold again, and counted for the war room.
//
// The crash itself is PostgreSQL's (this shared server is never restarted by a test): what it leaves behind is a
// hold that was answered and never committed, i.e. no hold row and its seats as they were before. The test makes
// exactly that state on real PostgreSQL between the answer and the fan's next request.

let h: TestApp;
let eventId: string;
let capacity: number;

beforeAll(async () => {
  h = await setupApp({ env: { HOLD_COMMIT: 'async' } });
  ({ eventId, capacity } = await makeEvent(h.t));
});
afterAll(() => h.close());

/** What a crash that lost the hold's unflushed commit leaves: the transaction never happened. */
async function loseHold(holdId: string): Promise<void> {
  await h.t.db.transaction().execute(async (trx) => {
    await sql`UPDATE seats SET status = 'AVAILABLE', hold_id = NULL, expires_at = NULL WHERE hold_id = ${holdId}`.execute(trx);
    await sql`DELETE FROM holds WHERE id = ${holdId}`.execute(trx);
  });
}

const pay = (holdId: string, token: string, headers: Record<string, string>, key: string) =>
  h.app.inject({
    method: 'POST',
    url: `/holds/${holdId}/checkout`,
    headers: { ...headers, 'x-admission-token': token, 'idempotency-key': key },
    payload: { payment: { instrument: { type: 'card', number: cardNumberOf(61) } } },
  });

describe('a hold lost to a database crash under HOLD_COMMIT=async', () => {
  it('its checkout answers 410 HOLD_LOST with a token to hold again (not a bare HOLD_NOT_FOUND); the fan holds again and pays; the war room counts it once', async () => {
    const fan = await admitted(await login(h.app, 'lost-fan'), eventId);
    const first = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/holds`,
      headers: fan,
      payload: { section: 'A', quantity: 2 },
    });
    expect(first.statusCode, first.body).toBe(201);
    const { holdId, admissionToken: holdToken } = first.json<{ holdId: string; admissionToken: string }>();

    await loseHold(holdId);

    // The fan pays with the token the hold came with: told the hold was lost, and given a token to hold again.
    const lost = await pay(holdId, holdToken, fan, 'lost-key-1');
    expect(lost.statusCode, lost.body).toBe(410);
    expect(lost.json()).toMatchObject({
      error: 'HOLD_LOST',
      field: 'id',
      holdId,
      admissionToken: expect.any(String),
      message: expect.stringContaining('hold again'),
    });
    // Retried (another key, or a reload reading the hold): the same answer, counted once.
    expect((await pay(holdId, holdToken, fan, 'lost-key-2')).json()).toMatchObject({ error: 'HOLD_LOST' });
    const read = await h.app.inject({ url: `/holds/${holdId}`, headers: { ...fan, 'x-admission-token': holdToken } });
    expect(read.statusCode).toBe(410);
    expect(read.json()).toMatchObject({ error: 'HOLD_LOST' });

    // Without the hold's own token nothing proves the hold was made: a missing hold stays HOLD_NOT_FOUND.
    const unproven = await h.app.inject({ url: `/holds/${holdId}`, headers: fan });
    expect(unproven.statusCode).toBe(404);
    expect(unproven.json()).toMatchObject({ error: 'HOLD_NOT_FOUND' });

    // The hold's token opens no new hold; the HOLD_LOST answer's token does, and the fan pays for the new hold.
    const withHoldToken = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/holds`,
      headers: { ...fan, 'x-admission-token': holdToken },
      payload: { section: 'A', quantity: 2 },
    });
    expect(withHoldToken.json()).toMatchObject({ error: 'TOKEN_WRONG_HOLD' });
    const again = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/holds`,
      headers: { ...fan, 'x-admission-token': lost.json().admissionToken },
      payload: { section: 'A', quantity: 2 },
    });
    expect(again.statusCode, again.body).toBe(201);
    const paid = await pay(again.json().holdId, again.json().admissionToken, fan, 'paid-key');
    expect(paid.statusCode, paid.body).toBe(200);
    expect(paid.json()).toMatchObject({ status: 'CONFIRMED', seatCount: 2 });

    // Counted once for the war room (and in this instance's /metrics); the inventory adds up.
    const snapshot = await readWarRoomSnapshot(h.t.db, eventId);
    expect(snapshot.holds).toMatchObject({ lost: 1, lostLast5Minutes: 1 });
    const metrics = (await h.app.inject({ url: '/metrics' })).body;
    expect(metrics).toContain(`holds_lost_total{event="${eventId}"} 1`);
    const inv = await checkInvariants(h.t, eventId, capacity);
    expect(inv.counts.drift).toBe(0);
    expect(inv.counts.sold).toBe(2);
  });
});
