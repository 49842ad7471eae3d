import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { CardFingerprints, legacyCardFingerprint, rekeyLegacyCardFingerprints, TEST_CARDS } from '@onsale/shared/checkout';
import { testSecrets } from '@onsale/shared/testing';
import { admitted, login, makeEvent, setupApp, type TestApp } from './helper.js';

// Payment instruments: one card counts once however it is written, its stored fingerprint is keyed with the
// install's secret, and an Idempotency-Key is bound to the whole request body.

let h: TestApp;
const cards = () => new CardFingerprints(testSecrets().cardFingerprintSecret);
const card = (number: string, extra: object = {}) => ({ payment: { instrument: { type: 'card', number, ...extra } } });

beforeAll(async () => {
  h = await setupApp();
});
afterAll(() => h?.close());

async function hold(eventId: string, account: string, quantity = 2) {
  const token = await login(h.app, account);
  const headers = await admitted(token, eventId);
  const r = await h.app.inject({ method: 'POST', url: `/events/${eventId}/holds`, headers, payload: { section: 'A', quantity } });
  expect(r.statusCode, r.body).toBe(201);
  return { holdId: r.json().holdId as string, headers };
}

const count = async (table: 'orders' | 'checkout_attempts') =>
  (await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(table)}`.execute(h.t.db)).rows[0]!.n;

describe('payment instruments', () => {
  it('refuses every other spelling of a card number (leading zero, spaces, dashes, other digits) at the field, writing nothing', async () => {
    const { eventId } = await makeEvent(h.t);
    const { holdId, headers } = await hold(eventId, 'spelling-fan');
    const before = await count('checkout_attempts');
    for (const number of [
      `0${TEST_CARDS.success}`,
      `00${TEST_CARDS.success}`,
      '4242 4242 4242 4242',
      '4242-4242-4242-4242',
      '４２４２４２４２４２４２４２４２',
    ]) {
      const r = await h.app.inject({
        method: 'POST',
        url: `/holds/${holdId}/checkout`,
        headers: { ...headers, 'idempotency-key': `spell-${number.length}-${Math.random()}` },
        payload: card(number),
      });
      expect(r.statusCode, number).toBe(400);
      expect(r.json().field, number).toBe('payment.instrument.number');
    }
    expect(await count('checkout_attempts')).toBe(before);
  });

  it('stores a fingerprint keyed with the install secret: not the unkeyed hash a BIN and last four could be searched for', async () => {
    const { eventId } = await makeEvent(h.t);
    const { holdId, headers } = await hold(eventId, 'keyed-fan');
    const r = await h.app.inject({
      method: 'POST',
      url: `/holds/${holdId}/checkout`,
      headers: { ...headers, 'idempotency-key': 'keyed-fan-0001' },
      payload: card(TEST_CARDS.success),
    });
    expect(r.statusCode, r.body).toBe(200);
    const { rows } = await sql<{ f: string }>`SELECT instrument_fingerprint AS f FROM orders WHERE id = ${r.json().orderId}`.execute(
      h.t.db,
    );
    expect(rows[0]!.f).toBe(cards().of(TEST_CARDS.success));
    expect(rows[0]!.f).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0]!.f).not.toContain(legacyCardFingerprint(TEST_CARDS.success));
    expect(new CardFingerprints('another-install-secret-of-32-bytes!!').of(TEST_CARDS.success)).not.toBe(rows[0]!.f);
  });

  it('refuses an Idempotency-Key replayed with a different body (IDEMPOTENCY_KEY_REUSED), and replays the same body', async () => {
    const { eventId } = await makeEvent(h.t);
    const { holdId, headers } = await hold(eventId, 'replay-fan');
    const key = { ...headers, 'idempotency-key': 'replay-fan-0001' };
    const first = await h.app.inject({
      method: 'POST',
      url: `/holds/${holdId}/checkout`,
      headers: key,
      payload: card(TEST_CARDS.success, { expMonth: 12, expYear: 2030 }),
    });
    expect(first.statusCode, first.body).toBe(200);
    const [orders, attempts] = [await count('orders'), await count('checkout_attempts')];
    for (const body of [
      card(TEST_CARDS.success, { expMonth: 11, expYear: 2030 }),
      card(TEST_CARDS.success),
      card('5555555555554444', { expMonth: 12, expYear: 2030 }),
    ]) {
      const r = await h.app.inject({ method: 'POST', url: `/holds/${holdId}/checkout`, headers: key, payload: body });
      expect(r.statusCode, r.body).toBe(400);
      expect(r.json()).toMatchObject({ error: 'IDEMPOTENCY_KEY_REUSED', field: 'idempotency-key' });
    }
    const again = await h.app.inject({
      method: 'POST',
      url: `/holds/${holdId}/checkout`,
      headers: key,
      payload: card(TEST_CARDS.success, { expMonth: 12, expYear: 2030 }),
    });
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().orderId).toBe(first.json().orderId);
    expect([await count('orders'), await count('checkout_attempts')]).toEqual([orders, attempts]);
  });

  it('counts a card paid with before fingerprints were keyed as the same card, and keys those rows in place', async () => {
    const { eventId } = await makeEvent(h.t, { limits: { perAccountSeats: 4, perInstrumentSeats: 2 } });
    // What the migration leaves of an order paid before the upgrade: the unkeyed fingerprint, marked.
    const earlier = await hold(eventId, 'early-buyer');
    await sql`UPDATE holds SET status = 'PURCHASED' WHERE id = ${earlier.holdId}`.execute(h.t.db);
    await sql`UPDATE seats SET status = 'SOLD', expires_at = NULL WHERE hold_id = ${earlier.holdId}`.execute(h.t.db);
    await sql`INSERT INTO orders (hold_id, event_id, account_id, idempotency_key, seat_count, amount_cents, instrument_fingerprint, payment_reference)
              VALUES (${earlier.holdId}, ${eventId}, 'early-buyer', 'early-key-0001', 2, 24000, ${`legacy:${legacyCardFingerprint(TEST_CARDS.success)}`}, 'ref-early')`.execute(
      h.t.db,
    );
    const { holdId, headers } = await hold(eventId, 'late-buyer');
    const refused = await h.app.inject({
      method: 'POST',
      url: `/holds/${holdId}/checkout`,
      headers: { ...headers, 'idempotency-key': 'late-buyer-0001' },
      payload: card(TEST_CARDS.success),
    });
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json()).toMatchObject({ error: 'INSTRUMENT_LIMIT_EXCEEDED', current: 2 });

    expect(await rekeyLegacyCardFingerprints(h.t.db, cards())).toBeGreaterThanOrEqual(1);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM orders WHERE instrument_fingerprint LIKE 'legacy:%'`.execute(
      h.t.db,
    );
    expect(rows[0]!.n).toBe(0);
    const keyed = await sql<{ f: string }>`SELECT instrument_fingerprint AS f FROM orders WHERE idempotency_key = 'early-key-0001'`.execute(
      h.t.db,
    );
    expect(keyed.rows[0]!.f).toBe(cards().of(TEST_CARDS.success));
    expect(await rekeyLegacyCardFingerprints(h.t.db, cards())).toBe(0);
    const still = await h.app.inject({
      method: 'POST',
      url: `/holds/${holdId}/checkout`,
      headers: { ...headers, 'idempotency-key': 'late-buyer-0002' },
      payload: card(TEST_CARDS.success),
    });
    expect(still.json()).toMatchObject({ error: 'INSTRUMENT_LIMIT_EXCEEDED', current: 2 });
  });
});
