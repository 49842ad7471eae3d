import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { drawLottery, signInvitation } from '@onsale/shared/lottery';
import { createTokenKey } from '@onsale/shared/queue';
import { testSecrets } from '@onsale/shared/testing';
import { bearer, checkInvariants, login, makeEvent, setupApp, type TestApp } from './helper.js';

// Registration + lottery over HTTP against real PostgreSQL: registration (once per account under real concurrent
// requests), the window and limit refusals, the public facts, the draw, and a winner's invitation turned into an
// admission token that holds seats; bad codes refused with nothing written.

let h: TestApp;
let base: string;
const HOUR = 3600_000;
const at = (hours: number) => new Date(Date.now() + hours * HOUR).toISOString();

/** A lottery event of 40 seats (section S, 2 rows x 20); registration and on-sale times in hours from now. */
function lottery(opensH: number, closesH: number, onsaleH: number, over: Record<string, unknown> = {}) {
  return {
    name: 'Lottery Night',
    onsaleAt: at(onsaleH),
    fairnessMode: 'REGISTRATION_LOTTERY' as const,
    priceLevels: [{ code: 'P', name: 'All', priceCents: 5000 }],
    sections: [{ code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: 2, seatsPerRow: 20 }],
    lottery: {
      registrationOpensAt: at(opensH),
      registrationClosesAt: at(closesH),
      expectedConversion: 0.5,
      cohorts: 2,
      cohortMinutes: 120,
    },
    ...over,
  };
}

beforeAll(async () => {
  h = await setupApp({ poolMax: 16 });
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const addr = h.app.server.address();
  if (!addr || typeof addr === 'string') throw new Error('no address');
  base = `http://127.0.0.1:${addr.port}`;
});
afterAll(() => h.close());

const register = (token: string, eventId: string, payload: unknown) =>
  h.app.inject({ method: 'POST', url: `/events/${eventId}/lottery/registrations`, headers: bearer(token), payload: payload as object });
const mine = (token: string, eventId: string) => h.app.inject({ url: `/events/${eventId}/lottery/registration`, headers: bearer(token) });
const redeem = (token: string, eventId: string, invitationCode: string, device = 'phone-of-the-winner') =>
  h.app.inject({
    method: 'POST',
    url: `/events/${eventId}/lottery/admission`,
    headers: { ...bearer(token), 'x-device-id': device },
    payload: { invitationCode },
  });

const snapshot = async () =>
  (
    await sql<{
      s: string;
    }>`SELECT concat_ws('/', (SELECT count(*) FROM holds), (SELECT count(*) FROM seats WHERE status <> 'AVAILABLE'), (SELECT count(*) FROM lottery_registrations),
      (SELECT count(*) FROM lottery_winners), (SELECT count(*) FROM waitlist_entries), (SELECT count(*) FROM audit_log), (SELECT count(*) FROM accounts)) AS s`.execute(
      h.t.db,
    )
  ).rows[0]!.s;

describe('registration', () => {
  let eventId: string;

  beforeAll(async () => {
    ({ eventId } = await makeEvent(h.t, lottery(-1, 1, 2)));
  });

  it('is one per account under real concurrent requests: one 201 each, the repeats 200 with the same registration', async () => {
    const fans = await Promise.all(Array.from({ length: 40 }, (_, i) => login(h.app, `conc-${i}`)));
    const requests = fans.flatMap((token, i) =>
      [0, 1, 2].map(() =>
        fetch(`${base}/events/${eventId}/lottery/registrations`, {
          method: 'POST',
          headers: { ...bearer(token), 'content-type': 'application/json' },
          body: JSON.stringify({ quantity: (i % 4) + 1 }),
        }).then(async (r) => ({ fan: i, status: r.status, body: (await r.json()) as { sequence: number; quantity: number } })),
      ),
    );
    const answers = await Promise.all(requests);
    for (let i = 0; i < fans.length; i++) {
      const own = answers.filter((a) => a.fan === i);
      expect(own.map((a) => a.status).sort()).toEqual([200, 200, 201]);
      expect(new Set(own.map((a) => a.body.sequence)).size).toBe(1);
      expect(own[0]!.body.quantity).toBe((i % 4) + 1);
    }
    const rows = await h.t.db
      .selectFrom('lottery_registrations')
      .select(['account_id', 'sequence'])
      .where('event_id', '=', eventId)
      .orderBy('sequence')
      .execute();
    expect(rows).toHaveLength(40);
    expect(rows.map((r) => r.sequence)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(
      (await h.t.db.selectFrom('lotteries').select('registration_count').where('event_id', '=', eventId).executeTakeFirstOrThrow())
        .registration_count,
    ).toBe(40);
  });

  it('shows the fan their registration, and the public its facts with the hashed registration list', async () => {
    const token = await login(h.app, 'conc-0');
    const r = await mine(token, eventId);
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ state: 'REGISTERED', registration: { eventId, quantity: 1 }, drawAfter: expect.any(String) });
    const facts = await h.app.inject({ url: `/events/${eventId}/lottery?limit=10` });
    expect(facts.statusCode).toBe(200);
    const f = facts.json();
    expect(f).toMatchObject({
      mode: 'REGISTRATION_LOTTERY',
      seed: null,
      drawnAt: null,
      registrationCount: 40,
      winnersCount: null,
      seatsOffered: 40,
      targetRequestedSeats: 80,
      nextFrom: 10,
    });
    expect(f.seedCommitment).toMatch(/^[0-9a-f]{64}$/);
    expect(f.registrations).toHaveLength(10);
    const own = createHash('sha256').update(`${eventId}conc-0`).digest('hex');
    const seq = r.json().registration.sequence;
    if (seq < 10) expect(f.registrations[seq]).toEqual({ account: own, sequence: seq, quantity: 1, won: null, rank: null, cohort: null });
    expect(facts.headers['cache-control']).toContain('public');
    expect((await h.app.inject({ url: `/events/${eventId}/lottery?limit=0` })).json()).toMatchObject({
      error: 'VALIDATION_FAILED',
      field: 'querystring.limit',
    });
  });

  it('refuses, writing nothing: above the limit, a bad quantity, outside the window, a non-lottery event, no account', async () => {
    const fan = await login(h.app, 'refused-fan');
    const { eventId: early } = await makeEvent(h.t, lottery(1, 2, 3));
    const { eventId: closed } = await makeEvent(h.t, lottery(-3, -2, -1));
    const { eventId: plain } = await makeEvent(h.t, { fairnessMode: 'FIFO' });
    const before = await snapshot();
    const cases: [string, unknown, number, Record<string, unknown>][] = [
      [eventId, { quantity: 5 }, 400, { error: 'QUANTITY_ABOVE_LIMIT', field: 'quantity', limit: 4 }],
      [eventId, { quantity: 0 }, 400, { error: 'VALIDATION_FAILED', field: 'quantity' }],
      [eventId, { quantity: 1.5 }, 400, { error: 'VALIDATION_FAILED', field: 'quantity' }],
      [eventId, {}, 400, { error: 'VALIDATION_FAILED', field: 'quantity' }],
      [early, { quantity: 1 }, 409, { error: 'REGISTRATION_NOT_OPEN', opensAt: expect.any(String) }],
      [closed, { quantity: 1 }, 409, { error: 'REGISTRATION_CLOSED', closesAt: expect.any(String) }],
      [plain, { quantity: 1 }, 409, { error: 'NOT_A_LOTTERY_EVENT' }],
      ['00000000-0000-4000-8000-000000000000', { quantity: 1 }, 404, { error: 'EVENT_NOT_FOUND' }],
    ];
    for (const [id, body, status, json] of cases) {
      const r = await register(fan, id, body);
      expect(r.statusCode, JSON.stringify(body)).toBe(status);
      expect(r.json()).toMatchObject(json);
    }
    const anonymous = await h.app.inject({ method: 'POST', url: `/events/${eventId}/lottery/registrations`, payload: { quantity: 1 } });
    expect(anonymous.statusCode).toBe(401);
    expect(await snapshot()).toBe(before);
    expect((await mine(fan, eventId)).json()).toMatchObject({ error: 'NOT_REGISTERED' });
    expect((await h.app.inject({ url: `/events/${plain}/lottery` })).json()).toMatchObject({ error: 'NOT_A_LOTTERY_EVENT' });
  });

  it('the waiting room refuses to queue for a lottery event, pointing at the registration', async () => {
    const fan = await login(h.app, 'queue-fan');
    const r = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/queue`,
      headers: { ...bearer(fan), 'x-device-id': 'phone-of-queue-fan' },
    });
    expect(r.statusCode).toBe(409);
    expect(r.json()).toMatchObject({ error: 'LOTTERY_REGISTRATION_REQUIRED', registration: `/events/${eventId}/lottery/registrations` });
    expect(
      (await sql<{ n: number }>`SELECT count(*)::int AS n FROM queue_entries WHERE event_id = ${eventId}`.execute(h.t.db)).rows[0]!.n,
    ).toBe(0);
  });
});

describe('after the draw', () => {
  let eventId: string;
  let listingId: string;
  let capacity: number;
  const tokens = new Map<string, string>();
  let winners: { account_id: string; rank: number; cohort: number; quantity: number }[];
  let invitations: Map<string, { code: string; cohort: number }>;
  let otherLottery: string;

  beforeAll(async () => {
    ({ eventId, listingId, capacity } = await makeEvent(h.t, lottery(-1, 1, 2)));
    ({ eventId: otherLottery } = await makeEvent(h.t, lottery(-1, 1, 2)));
    for (let i = 0; i < 60; i++) {
      const token = await login(h.app, `drawn-${i}`);
      tokens.set(`drawn-${i}`, token);
      expect((await register(token, eventId, { quantity: (i % 3) + 1 })).statusCode).toBe(201);
    }
    // Time passes: registration closed a moment ago and the on-sale opened an hour ago (cohort 0 buys now,
    // cohort 1 from an hour from now).
    await sql`UPDATE lotteries SET registration_closes_at = now() - interval '1 second' WHERE event_id = ${eventId}`.execute(h.t.db);
    await sql`UPDATE events SET onsale_at = now() - interval '1 hour', seat_picking_opens_at = now() WHERE id = ${eventId}`.execute(h.t.db);
    await h.t.db.transaction().execute((trx) => drawLottery(trx, eventId, { actor: 'test' }));
    winners = await h.t.db
      .selectFrom('lottery_winners')
      .select(['account_id', 'rank', 'cohort', 'quantity'])
      .where('event_id', '=', eventId)
      .orderBy('rank')
      .execute();
    invitations = new Map();
    for (const w of winners) {
      const r = await mine(tokens.get(w.account_id)!, eventId);
      expect(r.json()).toMatchObject({ state: 'WON', invitation: { rank: w.rank, cohort: w.cohort } });
      invitations.set(w.account_id, { code: r.json().invitation.code, cohort: w.cohort });
    }
  });

  it('publishes the seed and marks the winners in the public list; registration is closed', async () => {
    const f = (await h.app.inject({ url: `/events/${eventId}/lottery?limit=10000` })).json();
    expect(f.seed).toMatch(/^[0-9a-f]{64}$/);
    expect(f).toMatchObject({ registrationCount: 60, winnersCount: winners.length, nextFrom: null });
    expect(f.registrations.filter((r: { won: boolean }) => r.won)).toHaveLength(winners.length);
    expect(winners.reduce((a, w) => a + w.quantity, 0)).toBeGreaterThanOrEqual(80);
    const late = await register(await login(h.app, 'late-fan'), eventId, { quantity: 1 });
    expect(late.json()).toMatchObject({ error: 'REGISTRATION_CLOSED' });
  });

  it("a non-winner reads NOT_DRAWN with the listing's waitlist, and is on it with their quantity", async () => {
    const loser = [...tokens.keys()].find((a) => !winners.some((w) => w.account_id === a))!;
    const r = await mine(tokens.get(loser)!, eventId);
    expect(r.json()).toMatchObject({ state: 'NOT_DRAWN', waitlist: { listingId, join: `/listings/${listingId}/waitlist` } });
    const list = await h.app.inject({ url: '/me/waitlist', headers: bearer(tokens.get(loser)!) });
    expect(list.statusCode).toBe(200);
    expect(JSON.stringify(list.json())).toContain(listingId);
    const entry = await h.t.db
      .selectFrom('waitlist_entries')
      .select('quantity')
      .where('listing_id', '=', listingId)
      .where('account_id', '=', loser)
      .executeTakeFirstOrThrow();
    expect(entry.quantity).toBe(r.json().registration.quantity);
  });

  it('told every registered fan in GET /me/notifications: a winner their cohort and purchase window, a non-winner the waitlist', async () => {
    const inboxOf = async (account: string) => {
      const r = await h.app.inject({ url: '/me/notifications', headers: bearer(tokens.get(account)!) });
      expect(r.statusCode, r.body).toBe(200);
      return r.json<{ notifications: { kind: string; eventId: string }[] }>().notifications.filter((n) => n.eventId === eventId);
    };
    const w = winners[0]!;
    const row = await h.t.db
      .selectFrom('lottery_winners')
      .selectAll()
      .where('event_id', '=', eventId)
      .where('account_id', '=', w.account_id)
      .executeTakeFirstOrThrow();
    expect(await inboxOf(w.account_id)).toEqual([
      expect.objectContaining({
        kind: 'LOTTERY_WON',
        eventName: 'Lottery Night',
        listingId,
        claim: null,
        lottery: {
          won: true,
          rank: w.rank,
          cohort: w.cohort,
          windowOpensAt: row.window_opens_at.toISOString(),
          windowClosesAt: row.window_closes_at.toISOString(),
        },
        links: expect.objectContaining({ lottery: `/events/${eventId}/lottery/registration`, event: `/events/${eventId}` }),
        message: expect.stringContaining(row.window_opens_at.toISOString()),
      }),
    ]);
    const loser = [...tokens.keys()].find((a) => !winners.some((x) => x.account_id === a))!;
    expect(await inboxOf(loser)).toEqual([
      expect.objectContaining({
        kind: 'LOTTERY_NOT_DRAWN',
        lottery: { won: false, rank: null, cohort: null, windowOpensAt: null, windowClosesAt: null },
        links: expect.objectContaining({ waitlist: `/listings/${listingId}/waitlist` }),
      }),
    ]);
    // One per registration; the draw run again writes none.
    const count = async () =>
      (await sql<{ n: number }>`SELECT count(*)::int AS n FROM notifications WHERE event_id = ${eventId}`.execute(h.t.db)).rows[0]!.n;
    expect(await count()).toBe(60);
    await h.t.db.transaction().execute((trx) => drawLottery(trx, eventId, { actor: 'test' }));
    expect(await count()).toBe(60);
  });

  it("redeems a cohort-0 winner's invitation for an admission token that holds their seats", async () => {
    const w = winners.find((x) => x.cohort === 0)!;
    const token = tokens.get(w.account_id)!;
    const r = await redeem(token, eventId, invitations.get(w.account_id)!.code);
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ position: w.rank, cohort: 0, admissionToken: expect.any(String) });
    const headers = { ...bearer(token), 'x-device-id': 'phone-of-the-winner', 'x-admission-token': r.json().admissionToken };
    const hold = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/holds`,
      headers,
      payload: { section: 'S', quantity: w.quantity },
    });
    expect(hold.statusCode, hold.body).toBe(201);
    expect(hold.json().seats).toHaveLength(w.quantity);
    // The token is bound to the device it was redeemed on.
    const elsewhere = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/holds`,
      headers: { ...headers, 'x-device-id': 'another-phone-0001' },
      payload: { section: 'S', quantity: 1 },
    });
    expect(elsewhere.json().error).toBe('TOKEN_WRONG_DEVICE');
    const inv = await checkInvariants(h.t, eventId, capacity);
    expect(inv.counts.drift).toBe(0);
    expect(inv.counts.held).toBe(w.quantity);
  });

  it('refuses forged, malformed, expired, early, wrong-account and wrong-event codes with clear codes, writing nothing', async () => {
    const [w0, w1] = [winners.find((x) => x.cohort === 0)!, winners.find((x) => x.cohort === 1)!];
    const code0 = invitations.get(w0.account_id)!.code;
    const token0 = tokens.get(w0.account_id)!;
    const stranger = tokens.get([...tokens.keys()].find((a) => a !== w0.account_id)!)!;
    const [payload, mac] = code0.split('.') as [string, string];
    const forgedPayload = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), cohort: 1 })).toString(
      'base64url',
    );
    const key = await createTokenKey(testSecrets().queueTokenSecret);
    const nowS = Math.floor(Date.now() / 1000);
    const expired = await signInvitation(key, {
      kind: 'invitation',
      eventId,
      accountId: w0.account_id,
      rank: w0.rank,
      cohort: w0.cohort,
      nbf: nowS - 7200,
      exp: nowS - 60,
    });
    const before = await snapshot();
    const cases: [string, ReturnType<typeof redeem>, number, Record<string, unknown>][] = [
      ['forged', redeem(token0, eventId, `${forgedPayload}.${mac}`), 403, { error: 'INVITATION_FORGED', field: 'invitationCode' }],
      [
        'bad signature',
        redeem(token0, eventId, `${payload}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`),
        403,
        { error: 'INVITATION_FORGED' },
      ],
      ['malformed', redeem(token0, eventId, 'not-a-code'), 400, { error: 'INVITATION_MALFORMED', field: 'invitationCode' }],
      ['expired', redeem(token0, eventId, expired), 410, { error: 'INVITATION_EXPIRED', closesAt: expect.any(String) }],
      [
        'early',
        redeem(tokens.get(w1.account_id)!, eventId, invitations.get(w1.account_id)!.code),
        409,
        { error: 'INVITATION_NOT_YET_VALID', opensAt: expect.any(String) },
      ],
      ["another account's", redeem(stranger, eventId, code0), 403, { error: 'INVITATION_WRONG_ACCOUNT' }],
      ["another event's", redeem(token0, otherLottery, code0), 403, { error: 'INVITATION_WRONG_EVENT' }],
      [
        'no device',
        h.app.inject({
          method: 'POST',
          url: `/events/${eventId}/lottery/admission`,
          headers: bearer(token0),
          payload: { invitationCode: code0 },
        }),
        400,
        { error: 'VALIDATION_FAILED' },
      ],
    ];
    for (const [name, p, status, json] of cases) {
      const r = await p;
      expect(r.statusCode, name).toBe(status);
      expect(r.json(), name).toMatchObject(json);
      expect(r.json().admissionToken, name).toBeUndefined();
    }
    // An invitation is not an admission token.
    const asAdmission = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/holds`,
      headers: { ...bearer(token0), 'x-device-id': 'phone-of-the-winner', 'x-admission-token': code0 },
      payload: { section: 'S', quantity: 1 },
    });
    expect(asAdmission.statusCode).toBe(401);
    expect(asAdmission.json().error).toBe('TOKEN_MALFORMED');
    expect(await snapshot()).toBe(before);
  });

  it('lists the lottery routes in the OpenAPI document', async () => {
    const doc = (await h.app.inject({ url: '/docs/json' })).json();
    for (const p of [
      '/events/{id}/lottery',
      '/events/{id}/lottery/registrations',
      '/events/{id}/lottery/registration',
      '/events/{id}/lottery/admission',
    ])
      expect(doc.paths[p], p).toBeDefined();
    expect(doc.paths['/events/{id}/lottery/admission'].post.responses['410']).toBeDefined();
  });
});
