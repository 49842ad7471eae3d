import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { TEST_CARDS, type ChargeRequest, type ChargeResult, type PaymentProvider } from '@onsale/shared/checkout';
import { createTestDatabase, type TestDatabase } from '@onsale/shared/testing';
import { readWarRoomSnapshot } from '@onsale/shared/warroom';
import { buildStoreApi } from '../src/app.js';
import { loadStoreApiConfig } from '../src/env.js';
import { admitted, login, makeEvent } from './helper.js';

// A card refused by its issuer is the fan's outcome, not a platform error; only the gateway's
// failures (refusals for load, errors, timeouts) count towards slowing admissions. The store API counts the
// gateway's failures (their attempts are forgotten so the fan can retry) into the minute's admission row.

/** A gateway that declines the declining test card, and is down (errors) while `down` is set. */
class FlakyGateway implements PaymentProvider {
  down = false;
  async charge(req: ChargeRequest): Promise<ChargeResult> {
    if (this.down) throw new Error('gateway connection reset');
    if (req.instrument.number === TEST_CARDS.declined) return { status: 'declined', reason: 'card_declined' };
    return { status: 'succeeded', reference: `ref-${req.idempotencyKey}` };
  }
  async refund(): Promise<void> {}
  async lookup(): Promise<ChargeResult | null> {
    return null;
  }
}

let t: TestDatabase;
let app: Awaited<ReturnType<typeof buildStoreApi>>;
const gateway = new FlakyGateway();
let eventId: string;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
  app = await buildStoreApi({
    db: t.db,
    // No load shedding: the test runner shares the store API's event loop (see setupApp in helper.ts).
    config: loadStoreApiConfig({
      NODE_ENV: 'test',
      DEV_AUTH: 'true',
      RATE_LIMIT_ENABLED: 'false',
      BOT_GATE_ENABLED: 'false',
      LOAD_SHED_ENABLED: 'false',
    }),
    payments: gateway,
  });
  await app.ready();
  ({ eventId } = await makeEvent(t));
});
afterAll(async () => {
  await app?.close();
  await t?.drop();
});

async function holdAndPay(fan: string, card: string, key: string) {
  const token = await login(app, fan);
  const headers = await admitted(token, eventId);
  const hold = await app.inject({ method: 'POST', url: `/events/${eventId}/holds`, headers, payload: { section: 'A', quantity: 1 } });
  expect(hold.statusCode).toBe(201);
  return app.inject({
    method: 'POST',
    url: `/holds/${hold.json().holdId}/checkout`,
    headers: { ...headers, 'idempotency-key': key },
    payload: { payment: { instrument: { type: 'card', number: card } } },
  });
}

describe('checkout failures the war room and the controller count', () => {
  it("declined cards are recorded as the fans' outcome; gateway errors are counted per event and minute, nothing charged", async () => {
    expect((await holdAndPay('pays', TEST_CARDS.success, 'key-ok-0001')).statusCode).toBe(200);
    const declined = await holdAndPay('declined', TEST_CARDS.declined, 'key-declined-01');
    expect(declined.json()).toMatchObject({ error: 'PAYMENT_DECLINED' });
    gateway.down = true;
    for (let i = 0; i < 3; i++) {
      const r = await holdAndPay(`unlucky-${i}`, TEST_CARDS.success, `key-gateway-${i}-x`);
      expect(r.statusCode).toBe(503);
      expect(r.json().error).toBe('PAYMENT_GATEWAY_BUSY');
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    }
    gateway.down = false;
    // Flushed with the hold outcomes on the watermark store's beat (500 ms).
    await expect
      .poll(
        async () =>
          (
            await sql<{
              n: number;
            }>`SELECT coalesce(sum(checkout_gateway_failures), 0)::int AS n FROM admission_minutes WHERE event_id = ${eventId}`.execute(
              t.db,
            )
          ).rows[0]!.n,
      )
      .toBe(3);
    const s = await readWarRoomSnapshot(t.db, eventId);
    expect(s.checkout).toEqual({ attempts2m: 5, failed2m: 3, declined2m: 1, errorRate: 0.6 });
  });
});
