import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdmissionController } from '@onsale/shared/admission';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { getInventoryCounts } from '@onsale/shared/inventory';
import { bearer, cardNumberOf, login, setupApp, type TestApp } from './helper.js';

// The 300-seat club example sold to one-at-a-time buyers (each admitted, holding and paying at
// once) stopped at 107 orders with one seat available and none held: the controller counted every fan admitted in
// the last 10 minutes who had not bought as inside, and a pace planned on one seat lets the next fan in 17 minutes
// later. Here the same example is bought to its last seat through the real waiting room, a real controller and the
// store API, with fans who are admitted and leave without buying along the way.
//
// The test drives time: the controller and the store API read one injected clock (the store records admission
// claims on it, so a leaver's checkout time runs on it too), the test ticks the controller and refreshes the store's
// watermarks itself, and it moves the clock on only while the sale waits on time (the plan's pace while a leaver is
// inside, a leaver's slot coming back after the checkout time, the seat map's cache turning). Each fan is let in
// the moment the controller's rule allows, instead of on the wall clock's next tick, poll and beat (two minutes a run).

let h: TestApp;
let controller: AdmissionController;
let eventId: string;

// The club's own file, on sale since a minute ago, with a 15 s checkout time (its own is 5 minutes) so a fan who
// leaves gives the slot back within the test's time.
const CHECKOUT_MINUTES = 0.25;

/** How far the test moved the sale's clock ahead of the wall clock. */
let aheadMs = 0;
const clock = () => Date.now() + aheadMs;

beforeAll(async () => {
  h = await setupApp({ paymentLatencyMs: 5, clock });
  const club = JSON.parse(readFileSync(new URL('../../../examples/club.json', import.meta.url), 'utf8'));
  const spec = parseEventFile({
    ...club,
    onsaleAt: new Date(Date.now() - 60_000).toISOString(),
    startsAt: new Date(Date.now() + 7 * 86_400_000).toISOString(),
    pacing: { ...club.pacing, checkoutMinutes: CHECKOUT_MINUTES },
  });
  ({ eventId } = await h.t.db.transaction().execute((trx) => createEvent(trx, spec, 'test', { signOff: true })));
  // Not started: the test ticks it (tickOnce), so no tick waits on a timer.
  controller = new AdmissionController({ db: h.t.db, connectionString: h.t.url, tickMs: 200, clock });
});
afterAll(async () => {
  await controller?.stop();
  await h?.close();
});

/**
 * One step of the sale: the claims the store counted reach the database, the controller ticks on them, and the store
 * reads the watermark it wrote (what the store's 500 ms beat and the controller's timer do by themselves).
 */
async function step(): Promise<void> {
  await h.app.refreshWatermarks();
  const report = await controller.tickOnce();
  expect(report.error).toBeUndefined();
  expect(report.events.map((e) => e.status)).toEqual(['ticked']);
  await h.app.refreshWatermarks();
}

/** A second of the sale's time passes (nothing else happens in it). */
const aSecondPasses = () => void (aheadMs += 1000);

interface Fan {
  n: number;
  headers: Record<string, string>;
}

/** Signs in, joins the queue and polls, a second of the sale's time apart, until admitted or told SOLD_OUT. */
async function enter(n: number): Promise<{ fan: Fan; admission: string | null; state: string }> {
  const token = await login(h.app, `club-fan-${n}`);
  const headers = { ...bearer(token), 'x-device-id': `club-device-${n}` };
  const join = await h.app.inject({ method: 'POST', url: `/events/${eventId}/queue`, headers });
  expect(join.statusCode, join.body).toBe(200);
  const queueToken = join.json().queueToken as string;
  for (;;) {
    await step();
    const r = await h.app.inject({ url: `/events/${eventId}/queue/status`, headers: { ...headers, 'x-queue-token': queueToken } });
    expect(r.statusCode, r.body).toBe(200);
    const s = r.json();
    if (s.admissionToken)
      return { fan: { n, headers: { ...headers, 'x-admission-token': s.admissionToken } }, admission: s.admissionToken, state: s.state };
    if (s.state === 'SOLD_OUT') return { fan: { n, headers }, admission: null, state: s.state };
    expect(s.state).not.toBe('PAUSED'); // the controller's heartbeat is never stale: it ticked just now
    expect(aheadMs).toBeLessThan(300_000); // a sale that stops admitting would loop here; holds last 6 minutes
    aSecondPasses();
  }
}

/** Holds up to `want` seats where the seat map says there are some (fewer when no section has that many together). */
async function holdSome(fan: Fan, want: number): Promise<{ holdId: string; seats: number } | null> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const map = (await h.app.inject({ url: `/events/${eventId}/seatmap` })).json<{ sections: { code: string; available: number }[] }>();
    const sections = map.sections.filter((s) => s.available > 0).sort((a, b) => b.available - a.available);
    for (const s of sections)
      for (let q = Math.min(want, s.available); q >= 1; q--) {
        const r = await h.app.inject({
          method: 'POST',
          url: `/events/${eventId}/holds`,
          headers: fan.headers,
          payload: { section: s.code, quantity: q },
        });
        if (r.statusCode === 201) return { holdId: r.json().holdId, seats: r.json().seats.length };
        expect(r.statusCode, r.body).toBe(409); // SECTION_NEARLY_FULL / SECTION_SOLD_OUT from a stale seat map
      }
    const counts = await getInventoryCounts(h.t.db, eventId, 300);
    if (counts.available === 0) return null;
    aSecondPasses(); // the seat map is 1-2 s stale by design
  }
  return null;
}

describe('the last seats are sold', () => {
  it('the club example bought to its last seat by one-at-a-time buyers ends SOLD_OUT (available 0, held 0), with fans who leave without buying along the way', async () => {
    let orders = 0;
    let n = 0;
    const leavers: number[] = [];
    for (;;) {
      n++;
      const { fan, admission, state } = await enter(n);
      if (!admission) {
        expect(state).toBe('SOLD_OUT');
        break;
      }
      const before = await getInventoryCounts(h.t.db, eventId, 300);
      // Along the way: one fan is admitted and leaves (early), one holds and lets go, and one leaves near the end,
      // when their slot is the one the last seats need.
      if (n === 5 || (before.available <= 3 && leavers.length < 3)) {
        leavers.push(n);
        continue;
      }
      const want = 2 + (n % 3); // 2, 3 or 4 (the club's limit is 4 per account)
      const hold = await holdSome(fan, want);
      if (!hold) continue; // someone else's hold took the last seats meanwhile: nothing to buy
      if (n === 9) {
        const released = await h.app.inject({ method: 'DELETE', url: `/holds/${hold.holdId}`, headers: fan.headers });
        expect(released.statusCode, released.body).toBe(200);
        leavers.push(n);
        continue;
      }
      const paid = await h.app.inject({
        method: 'POST',
        url: `/holds/${hold.holdId}/checkout`,
        headers: { ...fan.headers, 'idempotency-key': randomUUID() },
        payload: { payment: { instrument: { type: 'card', number: cardNumberOf(n) } } },
      });
      expect(paid.statusCode, paid.body).toBe(200);
      orders++;
      expect(n).toBeLessThan(400); // a sale that stops selling would loop here until the test's timeout
    }
    const counts = await getInventoryCounts(h.t.db, eventId, 300);
    expect(counts).toMatchObject({ capacity: 300, available: 0, held: 0, sold: 300, drift: 0 });
    const confirmed = await h.t.db
      .selectFrom('orders')
      .select((eb) => eb.fn.sum<number>('seat_count').as('seats'))
      .where('event_id', '=', eventId)
      .executeTakeFirstOrThrow();
    expect(Number(confirmed.seats)).toBe(300);
    expect(orders).toBeGreaterThan(75);
    expect(leavers.length).toBeGreaterThanOrEqual(3);
    const q = await h.t.db
      .selectFrom('queue_state')
      .select(['inventory_state', 'controller_constraint'])
      .where('event_id', '=', eventId)
      .executeTakeFirstOrThrow();
    expect(q).toMatchObject({ inventory_state: 'SOLD_OUT', controller_constraint: 'sold_out' });
    // The store reported what it was doing for the event (the load the controller's window follows): this process's row,
    // nothing left in flight after the sale.
    const load = await h.t.db.selectFrom('store_load').selectAll().where('event_id', '=', eventId).execute();
    expect(load).toHaveLength(1);
    expect(load[0]).toMatchObject({ holds_in_flight: 0, checkouts_in_flight: 0 });
    expect(load[0]!.instance).toMatch(/^store:/);
    // About 150 controller ticks and 300 requests of CPU: seconds alone, two minutes beside two full runs.
  });
});
