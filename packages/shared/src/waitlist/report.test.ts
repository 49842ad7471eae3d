import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOpenEvent, createTestDatabase, type TestDatabase } from '../testing/index.js';
import { waitlistReport } from './report.js';

// The console's waitlist view, from rows written straight into the tables (independent of the code that
// normally writes them): every figure is checked against what was written.

let t: TestDatabase;
let listingId: string;
let eventId: string;
let otherListingId: string;

async function entry(
  listing: string,
  account: string,
  opts: { quantity?: number; expired?: boolean; dateFrom?: string; maxPrice?: number; sections?: string[]; levels?: string[] } = {},
) {
  await sql`
    INSERT INTO waitlist_entries (listing_id, account_id, expires_at, quantity, date_from, max_price_cents, sections, price_levels)
    VALUES (${listing}, ${account}, now() + ${opts.expired ? sql`interval '-1 day'` : sql`interval '7 days'`}, ${opts.quantity ?? 2},
            ${opts.dateFrom ?? null}::date, ${opts.maxPrice ?? null}, ${opts.sections ?? null}::text[], ${opts.levels ?? null}::text[])`.execute(
    t.db,
  );
}

async function availability(
  listing: string,
  event: string,
  opts: { status: string; seconds: number | null; matched: number; notified: number },
): Promise<number> {
  const { rows } = await sql<{ id: number }>`
    INSERT INTO availability_events (listing_id, event_id, cause, performance_date, sections, seat_count, mode, status, matched, notified, created_at, completed_at)
    VALUES (${listing}, ${event}, 'HOLD_RELEASED', current_date, '[]', 2, 'OFFER', ${opts.status}, ${opts.matched}, ${opts.notified}, now() - interval '1 minute',
            ${opts.seconds === null ? null : sql`now() - interval '1 minute' + make_interval(secs => ${opts.seconds})`})
    RETURNING id`.execute(t.db);
  return rows[0]!.id;
}

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
  ({ eventId } = await createOpenEvent(t.db, { name: 'Waitlisted show' }));
  const other = await createOpenEvent(t.db, { name: 'Another show' });
  [listingId, otherListingId] = (await Promise.all(
    [eventId, other.eventId].map(
      async (id) => (await t.db.selectFrom('events').select('listing_id').where('id', '=', id).executeTakeFirstOrThrow()).listing_id,
    ),
  )) as [string, string];

  await sql`INSERT INTO accounts (id) SELECT 'w' || g FROM generate_series(1, 9) g`.execute(t.db);
  await entry(listingId, 'w1', { quantity: 1 });
  await entry(listingId, 'w2', { quantity: 2, sections: ['S'], levels: ['P'] });
  await entry(listingId, 'w3', { quantity: 2, maxPrice: 5000, dateFrom: '2000-01-01' });
  await entry(listingId, 'w4', { quantity: 4, sections: ['S', 'X'], dateFrom: '2999-01-01' });
  await entry(listingId, 'w5', { expired: true });
  await entry(otherListingId, 'w6');

  const a1 = await availability(listingId, eventId, { status: 'DONE', seconds: 2, matched: 3, notified: 3 });
  await availability(listingId, eventId, { status: 'DONE', seconds: 10, matched: 1, notified: 1 });
  await availability(listingId, eventId, { status: 'PENDING', seconds: null, matched: 0, notified: 0 });
  await availability(otherListingId, other.eventId, { status: 'DONE', seconds: 100, matched: 9, notified: 9 });

  await sql`
    INSERT INTO waitlist_offers (availability_id, listing_id, event_id, entry_id, account_id, quantity, status, expires_at)
    VALUES (${a1}, ${listingId}, ${eventId}, 1, 'w1', 1, 'OPEN', now() + interval '10 minutes'),
           (${a1}, ${listingId}, ${eventId}, 2, 'w2', 2, 'OPEN', now() + interval '5 minutes'),
           (${a1}, ${listingId}, ${eventId}, 3, 'w3', 2, 'OPEN', now() - interval '1 minute'),
           (${a1}, ${listingId}, ${eventId}, 4, 'w4', 4, 'CLAIMED', now() + interval '5 minutes')`.execute(t.db);

  const { rows: endpoints } = await sql<{
    id: string;
  }>`INSERT INTO webhook_endpoints (url, secret) VALUES ('http://127.0.0.1:9/hook', 'whsec_test_secret_0123') RETURNING id`.execute(t.db);
  const endpoint = endpoints[0]!.id;
  await sql`
    INSERT INTO webhook_deliveries (endpoint_id, availability_id, notification_ids, status, attempts, last_error, delivered_at)
    VALUES (${endpoint}, ${a1}, '{1,2,3}', 'DELIVERED', 1, NULL, now() - interval '1 minute' + interval '4 seconds'),
           (${endpoint}, ${a1}, '{4}', 'DEAD', 8, 'connect ECONNREFUSED', NULL),
           (${endpoint}, ${a1}, '{5}', 'RETRYING', 2, 'HTTP 503', NULL)`.execute(t.db);
});
afterAll(() => t.drop());

describe('waitlistReport', () => {
  it('counts live entries by criteria and by performance, leaving out expired ones and other listings', async () => {
    const r = await waitlistReport(t.db, listingId);
    expect(r.listing).toMatchObject({ id: listingId, name: 'Waitlisted show', mode: 'OFFER' });
    expect(r.entries).toMatchObject({ live: 4, expired: 1, criteria: { dateRange: 2, maxPrice: 1, sections: 2, priceLevels: 1 } });
    expect(r.entries.byQuantity).toEqual([
      { quantity: 1, entries: 1 },
      { quantity: 2, entries: 2 },
      { quantity: 4, entries: 1 },
    ]);
    expect(r.entries.bySection).toEqual([
      { section: 'S', entries: 2 },
      { section: 'X', entries: 1 },
    ]);
    expect(r.entries.byPriceLevel).toEqual([{ priceLevel: 'P', entries: 1 }]);
    // w4 wants dates from 2999 on: it matches no performance of tomorrow.
    expect(r.entries.byPerformance).toEqual([{ date: r.listing.performances[0]!.date, entries: 3 }]);
  });

  it('sums matches, lists offers out soonest first (a lapsed OPEN offer counts as expired), deliveries by status and latency', async () => {
    const r = await waitlistReport(t.db, listingId);
    expect(r.matches).toMatchObject({
      availabilityEvents: 3,
      byStatus: { PENDING: 1, FANNING_OUT: 0, DONE: 2 },
      seatsReturned: 6,
      matched: 4,
      notified: 4,
    });
    expect(r.matches.recent).toHaveLength(3);
    expect(r.offers.byStatus).toEqual({ OPEN: 2, CLAIMED: 1, DECLINED: 0, EXPIRED: 1, GONE: 0 });
    expect(r.offers.open.map((o) => o.accountId)).toEqual(['w2', 'w1']);
    expect(r.deliveries.byStatus).toEqual({
      PENDING: { deliveries: 0, notifications: 0 },
      RETRYING: { deliveries: 1, notifications: 1 },
      DELIVERED: { deliveries: 1, notifications: 3 },
      DEAD: { deliveries: 1, notifications: 1 },
    });
    expect(r.deliveries.failing.map((d) => [d.status, d.lastError])).toEqual(
      expect.arrayContaining([
        ['DEAD', 'connect ECONNREFUSED'],
        ['RETRYING', 'HTTP 503'],
      ]),
    );
    expect(r.latency.fanout).toEqual({ count: 2, p50Seconds: 6, p95Seconds: 9.6, maxSeconds: 10 });
    // Four seconds after the availability event (written a moment earlier, in its own statement).
    expect(r.latency.webhookDelivery.count).toBe(1);
    expect(r.latency.webhookDelivery.maxSeconds).toBeGreaterThanOrEqual(4);
    expect(r.latency.webhookDelivery.maxSeconds).toBeLessThan(5);
  });

  it('an empty listing reads as zeros; an unknown one is LISTING_NOT_FOUND', async () => {
    const { eventId: lonely } = await createOpenEvent(t.db, { name: 'Quiet show' });
    const listing = (await t.db.selectFrom('events').select('listing_id').where('id', '=', lonely).executeTakeFirstOrThrow()).listing_id;
    const r = await waitlistReport(t.db, listing);
    expect(r.entries.live).toBe(0);
    expect(r.latency.fanout).toEqual({ count: 0, p50Seconds: null, p95Seconds: null, maxSeconds: null });
    await expect(waitlistReport(t.db, '00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({ code: 'LISTING_NOT_FOUND' });
    await expect(waitlistReport(t.db, 'nope')).rejects.toMatchObject({ code: 'LISTING_NOT_FOUND' });
  });
});
