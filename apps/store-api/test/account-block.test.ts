import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollUntil } from '@onsale/shared/testing';
import { TEST_CARDS } from '@onsale/shared/checkout';
import { blockAccount, unblockAccount } from '@onsale/shared/support';
import { admitted, bearer, checkInvariants, login, makeEvent, setupApp, type TestApp } from './helper.js';

// An account an operator blocked from an event (fan support) is refused that event's queue, holds and
// checkout with ACCOUNT_BLOCKED; its live holds go back at the block; other events and other fans are untouched.
let h: TestApp;

beforeAll(async () => {
  h = await setupApp({ poolMax: 10 });
});
afterAll(() => h.close());

const device = { 'x-device-id': 'blocked-test-device-1' };
const card = (n: string = TEST_CARDS.success) => ({ payment: { instrument: { type: 'card', number: n } } });

describe('an account blocked from an event', () => {
  it('is refused the queue, holds and checkout of that event with ACCOUNT_BLOCKED, and its live hold goes back', async () => {
    const { eventId, capacity } = await makeEvent(h.t);
    const { eventId: otherEvent } = await makeEvent(h.t, { name: 'Other Night' });
    const [scalper, fan] = [await login(h.app, 'scalper-1'), await login(h.app, 'fan-1')];

    // Before the block: the scalper holds two seats and keeps a second hold to try paying for later.
    const held = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/holds`,
      headers: await admitted(scalper, eventId),
      payload: { section: 'A', quantity: 2 },
    });
    expect(held.statusCode).toBe(201);
    expect((await checkInvariants(h.t, eventId, capacity)).counts.held).toBe(2);

    const r = await blockAccount(
      h.t.db,
      { eventId, accountId: 'scalper-1', reason: 'linked to 40 accounts on one card' },
      'console:ops@test',
    );
    expect(r).toMatchObject({ blocked: true, holdsReleased: 1 });
    expect((await checkInvariants(h.t, eventId, capacity)).counts.held).toBe(0);

    const join = await pollUntil(
      () => h.app.inject({ method: 'POST', url: `/events/${eventId}/queue`, headers: { ...bearer(scalper), ...device } }),
      (x) => x.statusCode === 403,
    );
    expect(join.statusCode).toBe(403);
    expect(join.json()).toMatchObject({ error: 'ACCOUNT_BLOCKED', field: 'authorization' });
    const hold = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/holds`,
      headers: await admitted(scalper, eventId),
      payload: { section: 'A', quantity: 1 },
    });
    expect(hold.statusCode).toBe(403);
    expect(hold.json().error).toBe('ACCOUNT_BLOCKED');

    // Another fan and another event are untouched.
    expect(
      (
        await h.app.inject({
          method: 'POST',
          url: `/events/${eventId}/queue`,
          headers: { ...bearer(fan), 'x-device-id': 'fan-device-0001' },
        })
      ).statusCode,
    ).toBe(200);
    const elsewhere = await h.app.inject({
      method: 'POST',
      url: `/events/${otherEvent}/holds`,
      headers: await admitted(scalper, otherEvent),
      payload: { section: 'A', quantity: 1 },
    });
    expect(elsewhere.statusCode).toBe(201);

    // Lifted: the account may hold and pay again.
    await unblockAccount(h.t.db, { eventId, accountId: 'scalper-1', reason: 'cleared by the promoter' }, 'console:ops@test');
    const again = await pollUntil(
      async () =>
        h.app.inject({
          method: 'POST',
          url: `/events/${eventId}/holds`,
          headers: await admitted(scalper, eventId),
          payload: { section: 'A', quantity: 1 },
        }),
      (x) => x.statusCode === 201,
    );
    expect(again.statusCode).toBe(201);

    // Blocked while holding: the checkout itself refuses, and no order or charge is made.
    const holdId = again.json().holdId as string;
    await blockAccount(h.t.db, { eventId, accountId: 'scalper-1', reason: 'second look: same device as the cluster' }, 'console:ops@test');
    const pay = await h.app.inject({
      method: 'POST',
      url: `/holds/${holdId}/checkout`,
      headers: { ...(await admitted(scalper, eventId)), 'idempotency-key': 'blocked-checkout-1' },
      payload: card(),
    });
    expect(pay.statusCode).toBe(403);
    expect(pay.json().error).toBe('ACCOUNT_BLOCKED');
    expect(
      await h.t.db.selectFrom('orders').select('id').where('account_id', '=', 'scalper-1').where('event_id', '=', eventId).execute(),
    ).toEqual([]);
    const audit = await h.t.db
      .selectFrom('audit_log')
      .select(['action', 'actor'])
      .where('event_id', '=', eventId)
      .where('action', 'like', 'account.%')
      .orderBy('id')
      .execute();
    expect(audit.map((a) => a.action)).toEqual(['account.blocked', 'account.unblocked', 'account.blocked']);
    expect((await checkInvariants(h.t, eventId, capacity)).counts.drift).toBe(0);
  });
});
