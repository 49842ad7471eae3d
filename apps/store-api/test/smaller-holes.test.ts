import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_CARDS } from '@onsale/shared/checkout';
import { admissionClaimsFor, createTokenKey, hashDevice, signToken } from '@onsale/shared/queue';
import { testSecrets } from '@onsale/shared/testing';
import { admitted, login, makeEvent, setupApp, type TestApp } from './helper.js';

// The smaller holes found from outside, each closed: admission-token expiry on every gated route (hold routes
// included, with a token of the hold's own), cookies parsed by @fastify/cookie (a malformed one is 400), strict
// base64url signatures, and Prometheus labels only for events that exist.

let h: TestApp;
beforeAll(async () => {
  h = await setupApp();
});
afterAll(() => h?.close());

/** An admission token signed as the waiting room would, issued `ageSeconds` ago (10-minute life). */
async function admissionToken(accountId: string, eventId: string, deviceId: string, ageSeconds: number) {
  const key = await createTokenKey(testSecrets().queueTokenSecret);
  const deviceHash = await hashDevice(deviceId, accountId);
  const claims = admissionClaimsFor(
    { kind: 'queue', eventId, accountId, deviceHash, joinIndex: 0, cohort: 'FIFO', iat: 0, exp: 0 },
    1,
    Date.now() - ageSeconds * 1000,
  );
  return signToken(key, claims);
}

const pay = (holdId: string, headers: Record<string, string>, key = randomUUID()) =>
  h.app.inject({
    method: 'POST',
    url: `/holds/${holdId}/checkout`,
    headers: { ...headers, 'idempotency-key': key },
    payload: { payment: { instrument: { type: 'card', number: TEST_CARDS.success } } },
  });

describe('admission-token expiry on every gated route', () => {
  it("refuses an expired admission token on a hold's routes too; the token a hold came with opens that hold only, and never a new one", async () => {
    const { eventId } = await makeEvent(h.t);
    const token = await login(h.app, 'late-payer');
    const device = 'late-payer-phone';
    // Admitted 9 minutes ago: holds now, with a minute of the admission left.
    const adm = await admissionToken('late-payer', eventId, device, 9 * 60);
    const base = { authorization: `Bearer ${token}`, 'x-device-id': device };
    const held = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/holds`,
      headers: { ...base, 'x-admission-token': adm },
      payload: { section: 'A', quantity: 2 },
    });
    expect(held.statusCode, held.body).toBe(201);
    const { holdId, admissionToken: holdToken } = held.json<{ holdId: string; admissionToken: string }>();
    const second = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/holds`,
      headers: { ...base, 'x-admission-token': adm },
      payload: { section: 'B', quantity: 1 },
    });
    expect(second.statusCode).toBe(201);

    // Minute 12: the waiting room's token has expired, on every route, /holds/:id included.
    const expired = await admissionToken('late-payer', eventId, device, 12 * 60);
    for (const [method, url] of [
      ['GET', `/holds/${holdId}`],
      ['POST', `/holds/${holdId}/extend`],
      ['DELETE', `/holds/${holdId}`],
    ] as const) {
      const r = await h.app.inject({ method, url, headers: { ...base, 'x-admission-token': expired } });
      expect(r.statusCode, `${method} ${url}`).toBe(401);
      expect(r.json().error).toBe('TOKEN_EXPIRED');
    }
    expect((await pay(holdId, { ...base, 'x-admission-token': expired })).json().error).toBe('TOKEN_EXPIRED');

    // The hold's own token: opens this hold, not the fan's other hold, and no new hold.
    const other = await h.app.inject({
      method: 'GET',
      url: `/holds/${second.json().holdId}`,
      headers: { ...base, 'x-admission-token': holdToken },
    });
    expect(other.statusCode).toBe(403);
    expect(other.json().error).toBe('TOKEN_WRONG_HOLD');
    const newHold = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/holds`,
      headers: { ...base, 'x-admission-token': holdToken },
      payload: { section: 'C', quantity: 1 },
    });
    expect(newHold.statusCode).toBe(403);
    expect(newHold.json().error).toBe('TOKEN_WRONG_HOLD');
    expect(
      (await h.app.inject({ method: 'GET', url: `/holds/${holdId}`, headers: { ...base, 'x-admission-token': holdToken } })).statusCode,
    ).toBe(200);
    const paid = await pay(holdId, { ...base, 'x-admission-token': holdToken });
    expect(paid.statusCode, paid.body).toBe(200);
    // Still bound to the fan and the device.
    const elsewhere = await h.app.inject({
      method: 'GET',
      url: `/holds/${holdId}`,
      headers: { ...base, 'x-device-id': 'another-phone', 'x-admission-token': holdToken },
    });
    expect(elsewhere.json().error).toBe('TOKEN_WRONG_DEVICE');
  });
});

describe('cookies and signatures', () => {
  it('reads the admission_token cookie with @fastify/cookie; a malformed Cookie header is a 400, never a 500', async () => {
    const { eventId } = await makeEvent(h.t);
    const token = await login(h.app, 'cookie-fan');
    const headers = await admitted(token, eventId);
    const adm = headers['x-admission-token']!;
    const base = { authorization: headers.authorization!, 'x-device-id': headers['x-device-id']! };
    const ok = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/holds`,
      headers: { ...base, cookie: `theme=dark; admission_token=${adm}` },
      payload: { section: 'A', quantity: 1 },
    });
    expect(ok.statusCode, ok.body).toBe(201);
    for (const cookie of [
      'admission_token=%E0%A4%A',
      'admission_token=%',
      'admission_token="abc',
      `admission_token=${adm}%00`,
      'admission_token=a b',
    ]) {
      const r = await h.app.inject({
        method: 'POST',
        url: `/events/${eventId}/holds`,
        headers: { ...base, cookie },
        payload: { section: 'A', quantity: 1 },
      });
      expect(r.statusCode, cookie).toBe(400);
      expect(r.json()).toMatchObject({ error: 'MALFORMED_COOKIE', field: 'cookie.admission_token' });
    }
    // Cookies the store does not read are not its business, however they are written.
    const unrelated = await h.app.inject({ method: 'GET', url: `/events/${eventId}`, headers: { cookie: 'tracker=%E0%A4%A; ;;==; x' } });
    expect(unrelated.statusCode).toBe(200);
  });

  it('refuses another spelling of a genuine signature (padding, re-spelt last character) as malformed', async () => {
    const { eventId } = await makeEvent(h.t);
    const token = await login(h.app, 'spelling-fan');
    const headers = await admitted(token, eventId);
    const adm = headers['x-admission-token']!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const respelt = adm.slice(0, -1) + alphabet[alphabet.indexOf(adm.at(-1)!) ^ 1];
    for (const variant of [`${adm}=`, respelt]) {
      const r = await h.app.inject({
        method: 'POST',
        url: `/events/${eventId}/holds`,
        headers: { ...headers, 'x-admission-token': variant },
        payload: { section: 'A', quantity: 1 },
      });
      expect(r.statusCode, variant).toBe(401);
      expect(r.json().error).toBe('TOKEN_MALFORMED');
    }
  });
});

describe('Prometheus labels', () => {
  it('label only events that exist: ids an attacker sends never become label values', async () => {
    const { eventId } = await makeEvent(h.t);
    const token = await login(h.app, 'label-fan');
    const bogus = ['00000000-0000-4000-8000-000000000000', 'attacker-chosen-label', randomUUID()];
    for (const id of bogus) {
      await h.app.inject({
        method: 'POST',
        url: `/events/${id}/holds`,
        headers: await admitted(token, id),
        payload: { section: 'A', quantity: 1 },
      });
      await h.app.inject({
        method: 'GET',
        url: `/events/${id}/queue/status`,
        headers: { authorization: `Bearer ${token}`, 'x-device-id': 'label-fan-phone', 'x-queue-token': 'x.y' },
      });
      await h.app.inject({
        method: 'POST',
        url: `/events/${id}/queue`,
        headers: { authorization: `Bearer ${token}`, 'x-device-id': 'label-fan-phone' },
      });
      await h.app.inject({ method: 'GET', url: `/events/${id}/watermark` });
    }
    await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/holds`,
      headers: await admitted(token, eventId),
      payload: { section: 'NOPE', quantity: 1 },
    });
    const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
    for (const id of bogus) expect(text).not.toContain(id);
    expect(text).toContain(`hold_failures_total{event="${eventId}",code="SECTION_NOT_FOUND"} 1`);
  });
});
