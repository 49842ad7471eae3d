// The waitlist over real HTTP against real PostgreSQL: join, leave, mine, bad input, and the sold-out bridge
import { pollUntil } from '@onsale/shared/testing';
// (queue status links the waitlist; returned seats become an offer; the claim makes a hold the fan can pay for).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { TEST_CARDS } from '@onsale/shared/checkout';
import { relayFanouts, runFanout } from '@onsale/shared/waitlist';
import { admitted, bearer, login, makeEvent, setupApp, type TestApp } from './helper.js';

let h: TestApp;
let base: string;
let eventId: string;
let listingId: string;

beforeAll(async () => {
  h = await setupApp();
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(h.app.server.address() as { port: number }).port}`;
  ({ eventId, listingId } = await makeEvent(h.t, {
    fairnessMode: 'FIFO',
    sections: [
      { code: 'A', priceLevel: 'P1', qualityRank: 1, rowCount: 1, seatsPerRow: 4 },
      { code: 'C', priceLevel: 'P2', qualityRank: 3, rowCount: 1, seatsPerRow: 4 },
    ],
  }));
});
afterAll(() => h.close());

async function call(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const r = await fetch(base + path, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
}

describe('joining and leaving over HTTP', () => {
  it('shows the listing publicly: performances, sections and price levels', async () => {
    const r = await call('GET', `/listings/${listingId}`, {});
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: listingId, waitlistMode: 'OFFER', sections: ['A', 'C'], priceLevels: ['P1', 'P2'] });
    expect(r.body.performances).toHaveLength(1);
  });

  it('concurrent identical joins make one row and one 201; a repeat keeps the place', async () => {
    const fan = await login(h.app, 'wl-burst');
    const results = await Promise.all(
      Array.from({ length: 30 }, () => call('PUT', `/listings/${listingId}/waitlist`, bearer(fan), { criteria: { quantity: 2 } })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 200)).toHaveLength(29);
    expect(new Set(results.map((r) => r.body.entryId)).size).toBe(1);
    const rows = await sql<{ n: number }>`SELECT count(*)::int AS n FROM waitlist_entries WHERE account_id = 'wl-burst'`.execute(h.t.db);
    expect(rows.rows[0]!.n).toBe(1);
    const mine = await call('GET', '/me/waitlist', bearer(fan));
    expect(mine.body.entries).toEqual([
      expect.objectContaining({
        listingId,
        entryId: results[0]!.body.entryId,
        place: 1,
        criteria: expect.objectContaining({ quantity: 2 }),
      }),
    ]);
    const left = await call('DELETE', `/listings/${listingId}/waitlist`, bearer(fan));
    expect(left.body).toEqual({ listingId, left: true });
    expect((await call('GET', '/me/waitlist', bearer(fan))).body.entries).toEqual([]);
  });

  it('refuses bad input with the status, code and field, and writes nothing', async () => {
    const fan = await login(h.app, 'wl-bad');
    const cases: [string, unknown, number, string, string][] = [
      [listingId, { criteria: { dateFrom: '2030-02-02', dateTo: '2030-01-01' } }, 400, 'INVALID_CRITERIA', 'criteria.dateTo'],
      [listingId, { criteria: { dateFrom: '2031-01-01' } }, 400, 'DATE_RANGE_OUTSIDE_LISTING', 'criteria.dateFrom'],
      [listingId, { criteria: { maxPriceCents: -5 } }, 400, 'INVALID_CRITERIA', 'criteria.maxPriceCents'],
      [listingId, { criteria: { quantity: 2.5 } }, 400, 'INVALID_CRITERIA', 'criteria.quantity'],
      [listingId, { criteria: { quantity: 9 } }, 400, 'QUANTITY_ABOVE_LIMIT', 'criteria.quantity'],
      [listingId, { criteria: { sections: ['Z'] } }, 400, 'SECTION_NOT_FOUND', 'criteria.sections'],
      [listingId, { criteria: {}, extra: 1 }, 400, 'VALIDATION_FAILED', ''],
      ['00000000-0000-4000-8000-000000000000', { criteria: {} }, 404, 'LISTING_NOT_FOUND', 'id'],
    ];
    for (const [id, body, status, code, field] of cases) {
      const r = await call('PUT', `/listings/${id}/waitlist`, bearer(fan), body);
      expect([r.status, r.body.error], JSON.stringify(body)).toEqual([status, code]);
      if (field) expect(r.body.field, JSON.stringify(body)).toBe(field);
    }
    expect((await call('PUT', `/listings/${listingId}/waitlist`, {}, { criteria: {} })).status).toBe(401);
    const rows = await sql<{ n: number }>`SELECT count(*)::int AS n FROM waitlist_entries WHERE account_id = 'wl-bad'`.execute(h.t.db);
    expect(rows.rows[0]!.n).toBe(0);
  });
});

describe('after a sell-out', () => {
  it('links the waitlist from the queue, offers returned seats to the first fan, and the claim is paid for like any hold', async () => {
    const holder = await login(h.app, 'wl-holder');
    const held = await call('POST', `/events/${eventId}/holds`, await admitted(holder, eventId), { section: 'A', quantity: 4 });
    expect(held.status).toBe(201);
    await sql`UPDATE queue_state SET sold_out_at = now(), inventory_state = 'SOLD_OUT' WHERE event_id = ${eventId}`.execute(h.t.db);

    const fan = await login(h.app, 'wl-fan');
    const joined = await call('POST', `/events/${eventId}/queue`, { ...bearer(fan), 'x-device-id': 'device-wl-fan' });
    // Each store-API instance reads the watermarks every half second.
    const status = await pollUntil(
      () =>
        call('GET', `/events/${eventId}/queue/status`, {
          ...bearer(fan),
          'x-device-id': 'device-wl-fan',
          'x-queue-token': joined.body.queueToken,
        }),
      (r) => r.body.state === 'SOLD_OUT',
    );
    expect(status.body).toMatchObject({ state: 'SOLD_OUT', waitlist: { listingId, join: `/listings/${listingId}/waitlist` } });

    expect((await call('PUT', status.body.waitlist.join, bearer(fan), { criteria: { quantity: 2, sections: ['A'] } })).status).toBe(201);
    const other = await login(h.app, 'wl-other');
    expect((await call('PUT', status.body.waitlist.join, bearer(other), { criteria: { quantity: 2 } })).status).toBe(201);

    // The holder lets go: the seats go to the waitlist, not back on sale.
    expect((await call('DELETE', `/holds/${held.body.holdId}`, await admitted(holder, eventId))).status).toBe(200);
    const av = await h.t.db
      .selectFrom('availability_events')
      .select(['id', 'mode', 'fanout_enqueued'])
      .where('event_id', '=', eventId)
      .executeTakeFirstOrThrow();
    expect(av.mode).toBe('OFFER');
    // A release defers its fan-out job to the relay (no job, no notification, in the release's own commit).
    const jobKey = `waitlist_fanout:${av.id}`;
    const jobs = () =>
      sql<{ n: number }>`SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE key = ${jobKey}`
        .execute(h.t.db)
        .then((r) => r.rows[0]!.n);
    expect([av.fanout_enqueued, await jobs()]).toEqual([false, 0]);
    expect(await relayFanouts(h.t.db)).toBeGreaterThanOrEqual(1);
    expect(await jobs()).toBe(1);
    expect(await relayFanouts(h.t.db)).toBe(0);
    await runFanout({ db: h.t.db }, Number(av.id));

    const inbox = await call('GET', '/me/notifications', bearer(fan));
    expect(inbox.status).toBe(200);
    const [offer] = inbox.body.notifications;
    expect(offer).toMatchObject({
      kind: 'OFFER',
      listingId,
      eventId,
      claim: { status: 'OPEN', quantity: 2 },
      links: { claim: '/waitlist/claims' },
      // The prices come with the event's currency (the same body goes to webhooks).
      release: { currency: 'USD', sections: [expect.objectContaining({ section: 'A', priceCents: expect.any(Number) })] },
    });
    // The second fan got the other two seats.
    const otherInbox = await call('GET', '/me/notifications', bearer(other));
    expect(otherInbox.body.notifications[0]).toMatchObject({ kind: 'OFFER', claim: { quantity: 2 } });

    const wrong = await call(
      'POST',
      '/waitlist/claims',
      { ...bearer(other), 'x-device-id': 'device-wl-other' },
      { claimToken: offer.claim.claimToken },
    );
    expect([wrong.status, wrong.body.error, wrong.body.field]).toEqual([403, 'CLAIM_TOKEN_WRONG_ACCOUNT', 'claimToken']);
    const forged = await call(
      'POST',
      '/waitlist/claims',
      { ...bearer(fan), 'x-device-id': 'device-wl-fan' },
      { claimToken: `${offer.claim.claimToken}x` },
    );
    expect([forged.status, forged.body.error]).toEqual([400, 'CLAIM_TOKEN_FORGED']);

    const claimed = await call(
      'POST',
      '/waitlist/claims',
      { ...bearer(fan), 'x-device-id': 'device-wl-fan' },
      { claimToken: offer.claim.claimToken },
    );
    expect(claimed.status).toBe(201);
    expect(claimed.body.seats).toHaveLength(2);
    const again = await call(
      'POST',
      '/waitlist/claims',
      { ...bearer(fan), 'x-device-id': 'device-wl-fan' },
      { claimToken: offer.claim.claimToken },
    );
    expect([again.status, again.body.error]).toEqual([409, 'OFFER_ALREADY_CLAIMED']);

    const paid = await call(
      'POST',
      `/holds/${claimed.body.holdId}/checkout`,
      { ...bearer(fan), 'x-device-id': 'device-wl-fan', 'x-admission-token': claimed.body.admissionToken, 'idempotency-key': 'wl-pay-1' },
      { payment: { instrument: { type: 'card', number: TEST_CARDS.success } } },
    );
    expect(paid.status).toBe(200);
    expect(paid.body.status).toBe('CONFIRMED');
    expect((await call('GET', '/me/waitlist', bearer(fan))).body.entries).toEqual([]);

    // The other fan declines: with nobody else waiting, their seats go back on sale.
    const declined = await call('POST', `/waitlist/offers/${otherInbox.body.notifications[0].claim.offerId}/decline`, bearer(other));
    expect(declined.body).toMatchObject({ status: 'DECLINED' });
    await runFanout({ db: h.t.db }, Number(av.id));
    const seats = await sql<{ status: string; n: number }>`
      SELECT status, count(*)::int AS n FROM seats WHERE event_id = ${eventId} AND section_code = 'A' GROUP BY status ORDER BY status`.execute(
      h.t.db,
    );
    expect(seats.rows).toEqual([
      { status: 'AVAILABLE', n: 2 },
      { status: 'SOLD', n: 2 },
    ]);
  });

  it('answers which entries match what is on sale now (fan-out on read)', async () => {
    const fan = await login(h.app, 'wl-reader');
    await call('PUT', `/listings/${listingId}/waitlist`, bearer(fan), { criteria: { quantity: 2, maxPriceCents: 20_000 } });
    const r = await call('GET', '/me/waitlist/matches', bearer(fan));
    expect(r.status).toBe(200);
    expect(r.body.matches).toEqual([
      expect.objectContaining({
        eventId,
        sections: expect.arrayContaining([expect.objectContaining({ section: 'A', available: 2, longestRun: 2 })]),
      }),
    ]);
  });
});
