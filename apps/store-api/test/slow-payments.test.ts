import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { liftSimulatedGatewayCondition, putSimulatedGatewayCondition, SimulatedPaymentGateway } from '@onsale/shared/checkout';
import type { TestDatabase } from '@onsale/shared/testing';
import { admitted, cardNumberOf, login, makeEvent, setupApp, type TestApp } from './helper.js';

// The rehearsal's slow-payments fault, through the store API as it runs (its own simulated gateway, on the database):
// a condition put on a rehearsal's event while the process runs makes that event's charges busy (503
// PAYMENT_GATEWAY_BUSY with Retry-After, nothing charged) or late; once lifted, the same Idempotency-Key pays once.
// A real sale's event is never touched by one.

let h: TestApp;
let t: TestDatabase;
let app: TestApp['app'];
let rehearsalEvent: string;
let realEvent: string;
let fans = 0;

beforeAll(async () => {
  // A simulated gateway on the database, as the store builds its own, except that it reads the condition on every
  // charge (a running store trusts what it read for a second): a change is seen at once, so no step waits for the
  // wall clock.
  h = await setupApp({
    payments: (tdb) => new SimulatedPaymentGateway({ tps: 1000, latencyMs: 10, failureRate: 0, db: tdb.db, conditionCacheMs: 0 }),
  });
  ({ t, app } = h);
  ({ eventId: rehearsalEvent } = await makeEvent(t, { name: 'Rehearsal Night' }));
  ({ eventId: realEvent } = await makeEvent(t, { name: 'Real Night' }));
  await t.db.updateTable('events').set({ rehearsal_time_scale: 30 }).where('id', '=', rehearsalEvent).execute();
});
afterAll(async () => {
  await h?.close();
});

/** A new fan holding one seat of the event: its headers and hold. */
async function holding(eventId: string) {
  const fan = `slowpay-${++fans}`;
  const headers = await admitted(await login(app, fan), eventId);
  const hold = await app.inject({ method: 'POST', url: `/events/${eventId}/holds`, headers, payload: { section: 'A', quantity: 1 } });
  expect(hold.statusCode).toBe(201);
  return { fan, headers, holdId: hold.json().holdId as string, card: cardNumberOf(fans) };
}

function pay(h: Awaited<ReturnType<typeof holding>>, key: string) {
  return app.inject({
    method: 'POST',
    url: `/holds/${h.holdId}/checkout`,
    headers: { ...h.headers, 'idempotency-key': key },
    payload: { payment: { instrument: { type: 'card', number: h.card } } },
  });
}

const charges = async (fan: string, key: string) =>
  (
    await sql<{ n: number }>`SELECT count(*)::int AS n FROM simulated_gateway_charges WHERE idempotency_key = ${`${fan}:${key}`}`.execute(
      t.db,
    )
  ).rows[0]!.n;
const ordersOf = (holdId: string) => t.db.selectFrom('orders').select(['id', 'status']).where('hold_id', '=', holdId).execute();
const put = (eventId: string, c: Parameters<typeof putSimulatedGatewayCondition>[2]) => putSimulatedGatewayCondition(t.db, eventId, c);

describe("the simulated gateway's condition for a rehearsal's event", () => {
  it('answers busy (503 PAYMENT_GATEWAY_BUSY, Retry-After, nothing charged); after the lift the same key pays once', async () => {
    await put(rehearsalEvent, { busyShare: 1, retryAfterSeconds: 3, delayMs: 0, forSeconds: 60 });
    const h = await holding(rehearsalEvent);
    const key = 'slowpay-key-0001';
    const busy = await pay(h, key);
    expect(busy.statusCode).toBe(503);
    expect(busy.json()).toMatchObject({ error: 'PAYMENT_GATEWAY_BUSY' });
    expect(busy.headers['retry-after']).toBe('3');
    expect(await charges(h.fan, key)).toBe(0);
    expect(await ordersOf(h.holdId)).toEqual([]);
    // The hold is the fan's still, to pay for once the gateway answers.
    expect((await t.db.selectFrom('holds').select('status').where('id', '=', h.holdId).executeTakeFirstOrThrow()).status).toBe('HELD');

    // A real sale's event, paid for meanwhile: not touched.
    const real = await holding(realEvent);
    expect((await pay(real, 'slowpay-real-0001')).statusCode).toBe(200);

    await liftSimulatedGatewayCondition(t.db, rehearsalEvent);
    const paid = await pay(h, key);
    expect(paid.statusCode, paid.body).toBe(200);
    expect(paid.json()).toMatchObject({ status: 'CONFIRMED' });
    expect(paid.headers['idempotent-replayed']).toBeUndefined();
    const again = await pay(h, key);
    expect(again.json()).toMatchObject({ orderId: paid.json().orderId });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await ordersOf(h.holdId)).toEqual([{ id: paid.json().orderId, status: 'CONFIRMED' }]);
    expect(await charges(h.fan, key)).toBe(1);
  });

  it('answers the charges it does not refuse late', async () => {
    await put(rehearsalEvent, { busyShare: 0, retryAfterSeconds: 1, delayMs: 1500, forSeconds: 60 });
    try {
      const h = await holding(rehearsalEvent);
      const started = performance.now();
      const r = await pay(h, 'slowpay-late-0001');
      expect(r.statusCode, r.body).toBe(200);
      // (10 ms latency + 1500 ms) x 0.5..1.5.
      expect(performance.now() - started).toBeGreaterThan(750);
    } finally {
      await liftSimulatedGatewayCondition(t.db, rehearsalEvent);
    }
  });

  it('ends by itself at its time, without being lifted', async () => {
    const h = await holding(rehearsalEvent);
    await putSimulatedGatewayCondition(t.db, rehearsalEvent, { busyShare: 1, retryAfterSeconds: 1, delayMs: 0, forSeconds: 60 });
    expect((await pay(h, 'slowpay-ends-0001')).statusCode).toBe(503);
    // Its time comes (the database's clock decides: moved here rather than waited for).
    await sql`UPDATE simulated_gateway_conditions SET started_at = now() - interval '60 seconds', until = now() WHERE event_id = ${rehearsalEvent}`.execute(
      t.db,
    );
    expect((await pay(h, 'slowpay-ends-0001')).statusCode).toBe(200);
    // Over, not deleted.
    expect(await t.db.selectFrom('simulated_gateway_conditions').select('event_id').execute()).toEqual([{ event_id: rehearsalEvent }]);
    await liftSimulatedGatewayCondition(t.db, rehearsalEvent);
  });

  it("is refused for an event that is not a rehearsal's, and ignored on one that stopped being one", async () => {
    await expect(
      putSimulatedGatewayCondition(t.db, realEvent, { busyShare: 1, retryAfterSeconds: 1, delayMs: 0, forSeconds: 60 }),
    ).rejects.toMatchObject({ code: 'EVENT_NOT_FOUND' });
    // Written around the service, the database refuses it too.
    await expect(
      sql`INSERT INTO simulated_gateway_conditions (event_id, busy_share, retry_after_seconds, delay_ms, until)
          VALUES (${realEvent}, 1, 1, 0, now() + interval '1 minute')`.execute(t.db),
    ).rejects.toThrow(/rehearsals only/);
    expect(await t.db.selectFrom('simulated_gateway_conditions').select('event_id').where('event_id', '=', realEvent).execute()).toEqual(
      [],
    );

    // A condition left on an event no longer marked as a rehearsal's: the gateway does not honour it.
    const other = (await makeEvent(t, { name: 'Became Real' })).eventId;
    await t.db.updateTable('events').set({ rehearsal_time_scale: 30 }).where('id', '=', other).execute();
    await putSimulatedGatewayCondition(t.db, other, { busyShare: 1, retryAfterSeconds: 1, delayMs: 0, forSeconds: 60 });
    await t.db.updateTable('events').set({ rehearsal_time_scale: null }).where('id', '=', other).execute();
    const h = await holding(other);
    expect((await pay(h, 'slowpay-other-0001')).statusCode).toBe(200);
  });
});
