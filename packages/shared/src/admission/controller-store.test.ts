import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Db } from '../db/connect.js';
import { parseEventFile } from '../events/index.js';
import { createEvent } from '../sale-setup/index.js';
import { EventCache } from '../allocations/index.js';
import { HoldService, SeatmapCache, getInventoryCounts } from '../inventory/index.js';
import { CardFingerprints, CheckoutService, SimulatedPaymentGateway } from '../checkout/index.js';
import { computeStatusNow, POSITION_CLAIM_WINDOW_MS, type QueueStatus, type QueueTokenClaims } from '../queue/edge.js';
import { loadWatermarks, recordClaims } from '../queue/queue.repository.js';
import { WatermarkStore } from '../queue/watermark-store.js';
import { createTestDatabase, manualClock, testSecrets, type ManualClock, type TestDatabase } from '../testing/index.js';
import { AdmissionController, NEAR_END_TICK_MS, type EventTickOutcome } from './controller.js';
import { StoreLoadTracker } from '../queue/store-load.js';
import { reportStoreLoad } from '../queue/store-load.repository.js';
import { ARRIVAL_WINDOW_MS } from './advance.js';

// The admission controller against what the store does: a store that lags and recovers (its load reported as the
// store-API processes report it), the tail of a sale, leavers, and the club example sold to the end.

let t: TestDatabase;
const controllers: AdmissionController[] = [];
const events: string[] = [];

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
});
afterAll(() => t.drop());
afterEach(async () => {
  await Promise.all(controllers.splice(0).map((c) => c.stop()));
  if (events.length > 0)
    await sql`UPDATE events SET onsale_at = now() - interval '2 days', starts_at = now() - interval '1 day' WHERE id = ANY(${events.splice(0)}::uuid[])`.execute(
      t.db,
    );
});

async function makeEvent(o: { rows: number; seatsPerRow: number; pacing: Record<string, number> }): Promise<string> {
  const spec = parseEventFile({
    name: 'Store-following test',
    venueName: 'Hall',
    startsAt: new Date(Date.now() + 86_400_000).toISOString(),
    onsaleAt: new Date(Date.now() - 3_600_000).toISOString(),
    pacing: o.pacing,
    holds: { ttlSeconds: 3600, extensionSeconds: 0 },
    priceLevels: [{ code: 'P', name: 'All', priceCents: 1000 }],
    sections: [{ code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: o.rows, seatsPerRow: o.seatsPerRow }],
  });
  const { eventId } = await t.db.transaction().execute((trx) => createEvent(trx, spec, 'test', { signOff: true }));
  events.push(eventId);
  return eventId;
}

const account = (eventId: string, i: number) => `a-${eventId}-${i}`;

/** A card number of the fan's own (Luhn-valid; the simulated gateway charges any but its declined test card). */
function cardOf(i: number): string {
  const body = `4000${String(i).padStart(11, '0')}`;
  let sum = 0;
  for (let k = 0; k < body.length; k++) {
    let d = Number(body[body.length - 1 - k]);
    if (k % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return `${body}${(10 - (sum % 10)) % 10}`;
}

async function addEntries(db: Db, eventId: string, n: number): Promise<void> {
  await sql`INSERT INTO accounts (id) SELECT 'a-' || ${eventId}::text || '-' || g FROM generate_series(0, ${n - 1}::int) g ON CONFLICT DO NOTHING`.execute(
    db,
  );
  await sql`
    INSERT INTO queue_entries (event_id, account_id, device_hash, join_index, cohort)
    SELECT ${eventId}, 'a-' || ${eventId}::text || '-' || g, md5(g::text), g, 'FIFO' FROM generate_series(0, ${n - 1}::int) g`.execute(db);
}

function controller(clock: ManualClock): AdmissionController {
  const c = new AdmissionController({ db: t.db, connectionString: t.url, tickMs: 1000, clock: clock.now });
  controllers.push(c);
  return c;
}

const clockInMinute = (): ManualClock => manualClock(Math.floor(Date.now() / 60_000) * 60_000 + 5_000);

async function tick(c: AdmissionController, eventId: string): Promise<Extract<EventTickOutcome, { status: 'ticked' }>> {
  const o = (await c.tickOnce()).events.find((e) => e.eventId === eventId);
  if (o?.status !== 'ticked') throw new Error(`the tick did not run: ${JSON.stringify(o)}`);
  return o;
}

async function queueState(eventId: string) {
  return t.db.selectFrom('queue_state').selectAll().where('event_id', '=', eventId).executeTakeFirstOrThrow();
}

/**
 * A rehearsal's sale: 4,000 seats at one ticket an order over a minute, 4,000 fans waiting, the event's clock 30 times
 * fast and a 12 s checkout; its controller on a manual clock, a store-load tracker and the hold service.
 */
async function rehearsedSale() {
  const eventId = await makeEvent({
    rows: 100,
    seatsPerRow: 40,
    pacing: { targetSaleMinutes: 1, ticketsPerOrder: 1, overbookFactor: 1, checkoutMinutes: 1, paymentTps: 1000 },
  });
  await sql`UPDATE events SET rehearsal_time_scale = 30, checkout_minutes = 0.2 WHERE id = ${eventId}`.execute(t.db);
  await addEntries(t.db, eventId, 4000);
  const clock = clockInMinute();
  const c = controller(clock);
  const store = new StoreLoadTracker(clock.now);
  const holds = new HoldService({ db: t.db, events: new EventCache(t.db), seatmap: new SeatmapCache(t.db) });
  return { eventId, clock, c, store, holds };
}

/** The lagging-store tests' sale: 4,000 seats at one ticket an order over 6 minutes (about 11 fans a second), 4,000 fans waiting. */
async function sixMinuteSale() {
  const eventId = await makeEvent({
    rows: 100,
    seatsPerRow: 40,
    pacing: { targetSaleMinutes: 6, ticketsPerOrder: 1, overbookFactor: 1, checkoutMinutes: 1, paymentTps: 1000 },
  });
  await addEntries(t.db, eventId, 4000);
  const clock = clockInMinute();
  const c = controller(clock);
  const store = new StoreLoadTracker(clock.now);
  const holds = new HoldService({ db: t.db, events: new EventCache(t.db), seatmap: new SeatmapCache(t.db) });
  const checkout = new CheckoutService({
    db: t.db,
    cards: new CardFingerprints(testSecrets().cardFingerprintSecret),
    payments: new SimulatedPaymentGateway({ tps: 10_000, latencyMs: 0, failureRate: 0 }),
  });
  return { eventId, clock, c, store, holds, checkout };
}

/**
 * One second of those tests after the holds: the fans whose time came pay, the store reports its load, the controller
 * ticks, and the fans it let in collect. Returns the tick and the fans let in.
 */
async function payReportAndTick(
  sale: Omit<Awaited<ReturnType<typeof sixMinuteSale>>, 'holds'>,
  holding: { until: number; fan: number; holdId: string }[],
  now: number,
) {
  const { eventId, clock, c, store, checkout } = sale;
  for (const h of holding.filter((x) => x.until <= now))
    await checkout.checkout(account(eventId, h.fan), h.holdId, `key-${h.fan}-0000000`, {
      payment: { instrument: { type: 'card', number: cardOf(h.fan) } },
    });
  holding.splice(0, holding.length, ...holding.filter((x) => x.until > now));
  await reportStoreLoad(t.db, 'store-test', store.snapshot(), clock.date());
  const before = (await queueState(eventId)).admitted_through;
  const o = await tick(c, eventId);
  const fans = Array.from({ length: o.admittedThrough - before }, (_, k) => before + k);
  await recordClaims(
    t.db,
    fans.map((f) => ({ eventId, accountId: account(eventId, f) })),
    clock.date(),
  );
  return { o, fans };
}

describe('admission follows what the store serves', () => {
  it('a store that lags (holds answered 3 s late) slows admission within seconds; when it catches up admission rises again', async () => {
    // 4,000 seats at one ticket an order over 6 minutes: the plan admits about 667 fans a minute, 11 a second.
    const { eventId, clock, c, store, holds, checkout } = await sixMinuteSale();
    let delayMs = 200;
    // Fans admitted collect at once and ask for a seat; the store answers after delayMs (the injected delay: the hold is
    // made when its answer is due); they pay 5 s after holding.
    const pending: { due: number; done: () => void; fan: number }[] = [];
    const holding: { until: number; fan: number; holdId: string }[] = [];
    const perSecond: { t: number; admitted: number; window: number | null; constraint: string }[] = [];
    await tick(c, eventId);
    for (let s = 1; s <= 75; s++) {
      if (s === 20) delayMs = 3000; // the store lags
      if (s === 45) delayMs = 200; // and catches up
      clock.advance(1000);
      const now = clock.now();
      for (const p of pending.filter((x) => x.due <= now)) {
        const hold = await holds.create(account(eventId, p.fan), eventId, { section: 'S', quantity: 1 });
        p.done();
        holding.push({ until: now + 5000, fan: p.fan, holdId: hold.holdId });
      }
      pending.splice(0, pending.length, ...pending.filter((x) => x.due > now));
      const { o, fans } = await payReportAndTick({ eventId, clock, c, store, checkout }, holding, now);
      for (const f of fans) pending.push({ due: now + delayMs, done: store.begin(eventId, 'hold'), fan: f });
      perSecond.push({ t: s, admitted: fans.length, window: o.window, constraint: o.constraint });
    }
    const sum = (from: number, to: number) => perSecond.filter((p) => p.t >= from && p.t < to).reduce((a, p) => a + p.admitted, 0);
    const healthy = sum(5, 20) / 15;
    const lagging = sum(25, 45) / 20;
    const recovered = sum(55, 75) / 20;
    expect(healthy).toBeGreaterThan(8); // about the plan's 11 a second
    // Within 5 s of the lag the window was cut and the controller named the store as what binds it.
    expect(perSecond.filter((p) => p.t >= 20 && p.t < 25).some((p) => p.constraint === 'store_lag')).toBe(true);
    expect(lagging).toBeLessThan(healthy * 0.5);
    // Within 10 s of the store catching up, admission is back to at least half the healthy pace, and it keeps rising.
    expect(sum(45, 55)).toBeGreaterThan(0);
    expect(recovered).toBeGreaterThan(healthy * 0.6);
  });
  it('a store that sheds the holds of fans let in (the holds it serves answered at once) slows admission within seconds; when it stops shedding admission rises again', async () => {
    // The same sale as above, but the store never lags on what it serves: from 20 s to 45 s it answers half the
    // holds of admitted fans 503 before any work (load shedding), and those fans retry 2 s later. A shed hold never
    // reaches the handler that times holds, so only the store's count of holds shed can tell the controller.
    const { eventId, clock, c, store, holds, checkout } = await sixMinuteSale();
    let shedding = false;
    let shedNext = false;
    const pending: { due: number; fan: number }[] = [];
    const holding: { until: number; fan: number; holdId: string }[] = [];
    const perSecond: { t: number; admitted: number; constraint: string; reason: string }[] = [];
    let shed = 0;
    await tick(c, eventId);
    for (let s = 1; s <= 75; s++) {
      if (s === 20) shedding = true;
      if (s === 45) shedding = false;
      clock.advance(1000);
      const now = clock.now();
      const due = pending.filter((x) => x.due <= now);
      pending.splice(0, pending.length, ...pending.filter((x) => x.due > now));
      for (const p of due) {
        // Every other hold is shed while the store sheds: 503 with Retry-After 2 s, the fan comes back.
        shedNext = shedding && !shedNext;
        if (shedNext) {
          store.shed(eventId);
          shed++;
          pending.push({ due: now + 2000, fan: p.fan });
          continue;
        }
        const done = store.begin(eventId, 'hold');
        const hold = await holds.create(account(eventId, p.fan), eventId, { section: 'S', quantity: 1 });
        done();
        holding.push({ until: now + 5000, fan: p.fan, holdId: hold.holdId });
      }
      const { o, fans } = await payReportAndTick({ eventId, clock, c, store, checkout }, holding, now);
      // Admitted fans send their hold 200 ms later (they are answered on the next second's pass).
      for (const f of fans) pending.push({ due: now + 200, fan: f });
      perSecond.push({ t: s, admitted: fans.length, constraint: o.constraint, reason: o.reason });
    }
    const sum = (from: number, to: number) => perSecond.filter((p) => p.t >= from && p.t < to).reduce((a, p) => a + p.admitted, 0);
    const healthy = sum(5, 20) / 15;
    const whileShedding = sum(25, 45) / 20;
    const recovered = sum(55, 75) / 20;
    expect(shed).toBeGreaterThan(0);
    expect(healthy).toBeGreaterThan(8); // about the plan's 11 a second
    // Within 5 s of the first shed hold the window was cut, the controller naming the store's shed holds.
    expect(
      perSecond.filter((p) => p.t >= 20 && p.t < 25).some((p) => p.constraint === 'store_lag' && /shed \d+ holds/.test(p.reason)),
    ).toBe(true);
    expect(whileShedding).toBeLessThan(healthy * 0.5);
    // Within 10 s of the store no longer shedding (its count covers 5 s), admission is back and rising.
    expect(sum(45, 55)).toBeGreaterThan(0);
    expect(recovered).toBeGreaterThan(healthy * 0.6);
  });

  it('at the open the window starts small and grows only as fast as the store answers: fans whose holds wait in line before the store do not pile in', async () => {
    // 4,000 seats at one ticket an order over a minute: the plan admits 4,000 fans a minute (67 a second), and with a
    // 12 s checkout (a rehearsal's compressed 6 minutes) 800 fans inside at once; the event's clock runs 30 times fast,
    // as a rehearsal's: a fan's round trip is 2 s of seat choice + the 1 s target, a leaver is one who has not held
    // within 5 s (plus the waits).
    const { eventId, clock, c, store, holds } = await rehearsedSale();
    const checkout = new CheckoutService({
      db: t.db,
      cards: new CardFingerprints(testSecrets().cardFingerprintSecret),
      payments: new SimulatedPaymentGateway({ tps: 10_000, latencyMs: 0, failureRate: 0 }),
    });
    // A line in front of the store (its HTTP server's backlog, the fans' connections, the edge): it lets through
    // `doorPerSecond` fans' holds a second, oldest first, and the store answers each at once. The store never sees the
    // line, so its own latency stays low: only its answers say how fast it serves.
    let doorPerSecond = 5;
    const door: number[] = [];
    const holding: { until: number; fan: number; holdId: string }[] = [];
    const perSecond: { t: number; admitted: number; door: number; window: number | null; inside: number }[] = [];
    let admittedThrough = 0;
    const admit = async (o: Awaited<ReturnType<typeof tick>>) => {
      const fans = Array.from({ length: o.admittedThrough - admittedThrough }, (_, k) => admittedThrough + k);
      admittedThrough = o.admittedThrough;
      await recordClaims(
        t.db,
        fans.map((f) => ({ eventId, accountId: account(eventId, f) })),
        clock.date(),
      );
      door.push(...fans);
      return fans.length;
    };
    const first = await tick(c, eventId);
    await admit(first);
    // The first tick: the initial window (10% of the 800 planned fans inside), not 4x the plan's.
    expect(first.window).toBe(80);
    for (let s = 1; s <= 40; s++) {
      if (s === 20) doorPerSecond = 40; // the line clears: the store answers 40 fans a second
      clock.advance(1000);
      const now = clock.now();
      // The fans through the door hold at once, together (real concurrent holds), and pay 2 s later.
      await Promise.all(
        door.splice(0, doorPerSecond).map(async (fan) => {
          const done = store.begin(eventId, 'hold');
          const hold = await holds.create(account(eventId, fan), eventId, { section: 'S', quantity: 1 });
          done();
          holding.push({ until: now + 2000, fan, holdId: hold.holdId });
        }),
      );
      await Promise.all(
        holding
          .filter((x) => x.until <= now)
          .map((h) =>
            checkout.checkout(account(eventId, h.fan), h.holdId, `key-${h.fan}-0000000`, {
              payment: { instrument: { type: 'card', number: cardOf(h.fan + 1) /* fan 0's would be the declined test card */ } },
            }),
          ),
      );
      holding.splice(0, holding.length, ...holding.filter((x) => x.until > now));
      await reportStoreLoad(t.db, 'store-test', store.snapshot(), clock.date());
      const o = await tick(c, eventId);
      perSecond.push({ t: s, admitted: await admit(o), door: door.length, window: o.window, inside: o.inside.total });
    }
    const sum = (from: number, to: number) => perSecond.filter((p) => p.t >= from && p.t < to).reduce((a, p) => a + p.admitted, 0);
    const longestLine = (from: number, to: number) => Math.max(...perSecond.filter((p) => p.t >= from && p.t < to).map((p) => p.door));
    // While the line lets 5 fans a second through, the plan's 67 a second would have put about 1,200 fans in it by
    // 20 s (the fans stuck in it taken for leavers after 5 s, so the window never bound): here admission follows the
    // store's answers, and the line stays a few round trips long.
    expect(sum(1, 20)).toBeLessThan(400);
    expect(longestLine(1, 20)).toBeLessThan(250);
    // Once the store answers 40 a second, admission rises to it within seconds (the window grows with the answers).
    expect(sum(30, 40) / 10).toBeGreaterThan(20);
    expect(Math.max(...perSecond.map((p) => p.window ?? 0))).toBeGreaterThan(100);
  }, 600_000);
});

describe('a fan who collected is inside until it holds or its round trip lapses', () => {
  it('holds that reach the store 20 s after the admission (a line in front of it): the fans in line stay counted inside and admission slows; once the line clears the leaver time comes back', async () => {
    // 4,000 seats at one ticket an order over a minute, a rehearsal's clock (30 times fast): the plan admits 67 fans a
    // second, a leaver by the estimate alone is one who has not held within 5 s.
    const { eventId, clock, c, store, holds } = await rehearsedSale();
    // Each fan let in collects at once; its hold reaches the store `delayS` seconds later (an injected line in front of
    // the store: the driver's connections, the edge), and the store answers it at once. Fan 0 never holds (a leaver).
    let delayS = 20;
    const line: { fan: number; collectedAt: number; reachesAt: number }[] = [];
    let admittedThrough = 0;
    const admit = async (o: Awaited<ReturnType<typeof tick>>) => {
      const fans = Array.from({ length: o.admittedThrough - admittedThrough }, (_, k) => admittedThrough + k);
      admittedThrough = o.admittedThrough;
      await recordClaims(
        t.db,
        fans.map((f) => ({ eventId, accountId: account(eventId, f) })),
        clock.date(),
      );
      for (const fan of fans) if (fan !== 0) line.push({ fan, collectedAt: clock.now(), reachesAt: clock.now() + delayS * 1000 });
    };
    await admit(await tick(c, eventId));
    const seen: { t: number; inLine: number; shopping: number; leaver: number; through: number }[] = [];
    for (let s = 1; s <= 80; s++) {
      if (s === 45) {
        delayS = 0; // the line clears: holds reach the store at once
        for (const f of line) f.reachesAt = Math.min(f.reachesAt, clock.now());
      }
      clock.advance(1000);
      const now = clock.now();
      const arriving = line.filter((f) => f.reachesAt <= now);
      line.splice(0, line.length, ...line.filter((f) => f.reachesAt > now));
      await Promise.all(
        arriving.map(async (f) => {
          const done = store.begin(eventId, 'hold', now - f.collectedAt);
          await holds.create(account(eventId, f.fan), eventId, { section: 'S', quantity: 1 });
          done();
        }),
      );
      await reportStoreLoad(t.db, 'store-test', store.snapshot(), clock.date());
      const o = await tick(c, eventId);
      seen.push({ t: s, inLine: line.length, shopping: o.inside.shopping, leaver: o.leaverSeconds, through: o.admittedThrough });
      await admit(o);
    }
    const at = (k: number) => seen.find((x) => x.t === k)!;
    // Before any hold has reached the store nothing is measured: the estimate (5 s, plus the line it infers from the
    // answers) is all there is. Once the first holds arrive, 20 s after their admission, the leaver time is twice that
    // round trip, and every fan still in line is counted inside (fan 0, who never holds, too, for now).
    for (let k = 25; k < 45; k++) {
      expect(at(k).leaver).toBeGreaterThanOrEqual(40);
      expect(at(k).shopping).toBeGreaterThanOrEqual(at(k).inLine);
    }
    // The fans counted fill the window, so admission slows: over the second 20 s far fewer fans come in than the plan's
    // 67 a second (1,340), and the line in front of the store stops growing.
    expect(at(44).through - at(24).through).toBeLessThan(700);
    expect(at(44).inLine).toBeLessThanOrEqual(at(30).inLine + 100);
    // The line clears: the waits measured age out of the store's 30 s, the leaver time comes back to the estimate, and
    // the leaver's slot (fan 0) is given back with it.
    expect(at(80).leaver).toBeLessThan(20);
    expect(at(80).shopping).toBe(0);
    expect(at(80).through - at(60).through).toBeGreaterThan(200);
  }, 600_000);

  it("a leaver's slot comes back twice the measured round trip after it collected, never later than its admission token", async () => {
    const eventId = await makeEvent({
      rows: 1,
      seatsPerRow: 20,
      pacing: { targetSaleMinutes: 10, ticketsPerOrder: 2, overbookFactor: 1, checkoutMinutes: 5, paymentTps: 50 },
    });
    await sql`UPDATE events SET rehearsal_time_scale = 30 WHERE id = ${eventId}`.execute(t.db);
    await addEntries(t.db, eventId, 10);
    await sql`UPDATE queue_state SET admitted_through = 2 WHERE event_id = ${eventId}`.execute(t.db);
    const clock = clockInMinute();
    // Fan 0 collected 30 s ago, fan 1 50 s ago; neither holds. The store reports that fans reached it 20 s after their
    // admission lately: a fan who collected is inside for 40 s.
    await recordClaims(t.db, [{ eventId, accountId: account(eventId, 0) }], new Date(clock.now() - 30_000));
    await recordClaims(t.db, [{ eventId, accountId: account(eventId, 1) }], new Date(clock.now() - 50_000));
    const store = new StoreLoadTracker(clock.now);
    store.begin(eventId, 'hold', 20_000)();
    await reportStoreLoad(t.db, 'store-test', store.snapshot(), clock.date());
    const c = controller(clock);
    let o = await tick(c, eventId);
    expect(o.admittedWaitMs).toBe(20_000);
    expect(o.leaverSeconds).toBe(40);
    expect(o.inside.shopping).toBe(1);
    // 11 s later fan 0 is past the 40 s too: its slot is back.
    clock.advance(11_000);
    await reportStoreLoad(t.db, 'store-test', store.snapshot(), clock.date());
    o = await tick(c, eventId);
    expect(o.leaverSeconds).toBe(40);
    expect(o.inside.shopping).toBe(0);
    // However long the measured trip, the admission token's 10 minutes bound it.
    const slow = new StoreLoadTracker(clock.now);
    slow.begin(eventId, 'hold', 900_000)();
    await reportStoreLoad(t.db, 'store-test', slow.snapshot(), clock.date());
    clock.advance(1000);
    o = await tick(c, eventId);
    expect(o.leaverSeconds).toBe(600);
    expect(o.inside.shopping).toBe(2);
  });
  it('a fan whose hold since its claim ended unbought (released, or lapsed) gives its slot back at once, not the leaver time after its claim', async () => {
    const eventId = await makeEvent({
      rows: 1,
      seatsPerRow: 20,
      pacing: { targetSaleMinutes: 10, ticketsPerOrder: 2, overbookFactor: 1, checkoutMinutes: 5, paymentTps: 50 },
    });
    await addEntries(t.db, eventId, 10);
    await sql`UPDATE queue_state SET admitted_through = 5 WHERE event_id = ${eventId}`.execute(t.db);
    const clock = clockInMinute();
    // Fans 0-4 collected 10 s ago. Fan 0 holds; fan 1 held and released; fan 2 held and its hold lapsed; fan 3 has not
    // held yet (choosing); fan 4 released a hold it made before this claim (an earlier turn), and has not held since.
    await recordClaims(
      t.db,
      [0, 1, 2, 3, 4].map((f) => ({ eventId, accountId: account(eventId, f) })),
      new Date(clock.now() - 10_000),
    );
    const holds = new HoldService({ db: t.db, events: new EventCache(t.db), seatmap: new SeatmapCache(t.db) });
    const held = new Map<number, string>();
    for (const f of [0, 1, 2, 4]) held.set(f, (await holds.create(account(eventId, f), eventId, { section: 'S', quantity: 1 })).holdId);
    const c = controller(clock);
    let o = await tick(c, eventId);
    expect(o.inside).toMatchObject({ holding: 4, shopping: 1 });
    await t.db.transaction().execute((trx) => holds.release(trx, account(eventId, 1), held.get(1)!));
    await t.db.transaction().execute((trx) => holds.release(trx, account(eventId, 4), held.get(4)!));
    await sql`UPDATE holds SET created_at = ${new Date(clock.now() - 60_000)} WHERE id = ${held.get(4)!}`.execute(t.db);
    await sql`UPDATE holds SET expires_at = ${new Date(clock.now() - 1000)} WHERE id = ${held.get(2)!}`.execute(t.db);
    await sql`UPDATE seats SET expires_at = ${new Date(clock.now() - 1000)} WHERE hold_id = ${held.get(2)!}`.execute(t.db);
    clock.advance(1000);
    o = await tick(c, eventId);
    // Fans 1 and 2 left with their holds: out at once, 11 s after their claim, against a leaver time of a minute.
    expect(o.leaverSeconds).toBeGreaterThan(11);
    expect(o.inside).toMatchObject({ holding: 1, shopping: 2 });
    // Fan 1 comes back and holds again within its turn: holding again.
    await holds.create(account(eventId, 1), eventId, { section: 'S', quantity: 1 });
    clock.advance(1000);
    o = await tick(c, eventId);
    expect(o.inside).toMatchObject({ holding: 2, shopping: 2 });
  });
});

describe('a turn a fan keeps by polling as told', () => {
  it('fans polling exactly at their Retry-After (the longest the jitter gives) never read POSITION_EXPIRED, and the controller keeps the slot of each fan whose turn came until that poll', async () => {
    const eventId = await makeEvent({
      rows: 10,
      seatsPerRow: 40,
      pacing: { targetSaleMinutes: 10, ticketsPerOrder: 1, overbookFactor: 1, checkoutMinutes: 5, paymentTps: 50 },
    });
    const FANS = 150;
    await addEntries(t.db, eventId, FANS);
    // An operator's 6 a minute, raised to 300 after 40 s: the fans far back were told 30 s while their turn looked
    // minutes away, and it comes a few seconds after they polled (the worst case for a fan polling as told).
    await sql`UPDATE queue_state SET rate_override_per_min = 6 WHERE event_id = ${eventId}`.execute(t.db);
    const clock = clockInMinute();
    const c = controller(clock);
    const start = clock.now();
    // Every fan polls at once, then exactly when told (jitter 1: 30 s, the longest a waiting fan is told), and collects.
    const nextPoll = Array.from({ length: FANS }, () => start);
    const collected = new Set<number>();
    let expired = 0;
    const unkept: string[] = [];
    let through = 0;
    for (let s = 0; s <= 150; s++) {
      const now = clock.now();
      if (s === 40) await sql`UPDATE queue_state SET rate_override_per_min = 300 WHERE event_id = ${eventId}`.execute(t.db);
      // Turns that came before this tick and whose fans have not polled since: the tick must count each arriving.
      const owed = Array.from({ length: through }, (_, k) => k).filter((k) => !collected.has(k)).length;
      const o = await tick(c, eventId);
      through = o.admittedThrough;
      // At most one short: the claims subtracted are those recorded within the window, and one of them may be a fan's
      // whose turn came just before it (the controller does not know which position each claim was).
      if (o.inside.arriving < owed - 1) unkept.push(`t+${s} s: ${o.inside.arriving} counted arriving, ${owed} owed`);
      const [row] = await loadWatermarks(t.db, eventId);
      const w = WatermarkStore.toState(row!, now);
      const claims: { eventId: string; accountId: string }[] = [];
      for (let i = 0; i < FANS; i++) {
        if (collected.has(i) || nextPoll[i]! > now) continue;
        const st = computeStatusNow(fanClaims(eventId, i, start), w, now, { jitter: () => 1 }) as QueueStatus;
        if (st.expired) expired++;
        if (st.admit) {
          collected.add(i);
          claims.push({ eventId, accountId: account(eventId, i) });
        } else nextPoll[i] = now + st.retryAfterSeconds * 1000; // exactly as told
      }
      // The fans who collected hold at once (the seats are many: nobody leaves the store's count for want of them).
      await recordClaims(t.db, claims, clock.date());
      clock.advance(1000);
    }
    expect(collected.size).toBeGreaterThan(100);
    expect(expired).toBe(0);
    expect(unkept).toEqual([]);
  }, 600_000);
});

describe('a tail that never stalls', () => {
  it('seats free, nobody inside, fans waiting: the next fan is let in at the first tick (within 5 s)', async () => {
    const eventId = await makeEvent({
      rows: 2,
      seatsPerRow: 20,
      pacing: { targetSaleMinutes: 10, ticketsPerOrder: 2, overbookFactor: 1.2, checkoutMinutes: 5, paymentTps: 50 },
    });
    // 10 seats left; the plan paces them at under a fan a minute.
    await sql`UPDATE seats SET status = 'SOLD', hold_id = gen_random_uuid() WHERE event_id = ${eventId} AND id NOT IN (SELECT id FROM seats WHERE event_id = ${eventId} ORDER BY id LIMIT 10)`.execute(
      t.db,
    );
    await addEntries(t.db, eventId, 20);
    const clock = clockInMinute();
    const c = controller(clock);
    const first = await tick(c, eventId);
    // The plan paces the 10 seats at under a fan a minute; the tail lets the first fan in at once and publishes a fan
    // every 2 s, so the next in line are told to come back that soon.
    expect(first).toMatchObject({ available: 10, held: 0, advanced: 1, constraint: 'tail', ratePerMinute: 30 });
  });

  it('seats free and none held, the fans let in not holding: one more fan every few seconds, not at the plan pace', async () => {
    const eventId = await makeEvent({
      rows: 1,
      seatsPerRow: 20,
      pacing: { targetSaleMinutes: 10, ticketsPerOrder: 2, overbookFactor: 1.2, checkoutMinutes: 5, paymentTps: 50 },
    });
    // 2 seats left (plausibly one fan); 30 waiting.
    await sql`UPDATE seats SET status = 'SOLD', hold_id = gen_random_uuid() WHERE event_id = ${eventId} AND id NOT IN (SELECT id FROM seats WHERE event_id = ${eventId} ORDER BY id LIMIT 2)`.execute(
      t.db,
    );
    await addEntries(t.db, eventId, 30);
    const clock = clockInMinute();
    const c = controller(clock);
    const admittedAt: number[] = [];
    let last = 0;
    for (let s = 0; s <= 60; s++) {
      const o = await tick(c, eventId);
      if (o.admittedThrough > last) {
        // Each fan let in collects at once and then does nothing (a leaver who never holds).
        await recordClaims(
          t.db,
          Array.from({ length: o.admittedThrough - last }, (_, k) => ({ eventId, accountId: account(eventId, last + k) })),
          clock.date(),
        );
        for (let k = last; k < o.admittedThrough; k++) admittedAt.push(s);
        last = o.admittedThrough;
      }
      clock.advance(1000);
    }
    // The plan's pace on 2 seats is 0.12 fans a minute: one fan in a minute at most. The tail lets more in, spaced by
    // 2 s plus 1 s per fan let in who has not held (never more than 8 s), and never stops.
    expect(admittedAt.length).toBeGreaterThanOrEqual(6);
    const gaps = admittedAt.slice(1).map((x, i) => x - admittedAt[i]!);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(9);
    const st = await queueState(eventId);
    expect(['tail', 'no_plausible_seats']).toContain(st.controller_constraint);
  });

  it("a leaver's slot comes back: a fan who collected and held nothing within the leaver time, and a place nobody collected within the arrival window", async () => {
    const eventId = await makeEvent({
      rows: 1,
      seatsPerRow: 20,
      pacing: { targetSaleMinutes: 10, ticketsPerOrder: 2, overbookFactor: 1, checkoutMinutes: 5, paymentTps: 50 },
    });
    await sql`UPDATE seats SET status = 'SOLD', hold_id = gen_random_uuid() WHERE event_id = ${eventId} AND id NOT IN (SELECT id FROM seats WHERE event_id = ${eventId} ORDER BY id LIMIT 4)`.execute(
      t.db,
    );
    await addEntries(t.db, eventId, 10);
    // Fan 0 collected 10 s ago and fan 1 70 s ago; neither holds. Seats are held by another fan so the tail rule is out.
    await sql`UPDATE queue_state SET admitted_through = 2 WHERE event_id = ${eventId}`.execute(t.db);
    const clock = clockInMinute();
    await recordClaims(t.db, [{ eventId, accountId: account(eventId, 0) }], new Date(clock.now() - 10_000));
    await recordClaims(t.db, [{ eventId, accountId: account(eventId, 1) }], new Date(clock.now() - 70_000));
    await sql`UPDATE seats SET status = 'HELD', expires_at = now() + interval '1 hour', hold_id = gen_random_uuid()
              WHERE id = (SELECT id FROM seats WHERE event_id = ${eventId} AND status = 'AVAILABLE' ORDER BY id LIMIT 1)`.execute(t.db);
    // An operator's 600 a minute, so the plausible seats alone bound what comes in.
    await sql`UPDATE queue_state SET rate_override_per_min = 600 WHERE event_id = ${eventId}`.execute(t.db);
    const c = controller(clock);
    await tick(c, eventId);
    clock.advance(1000);
    const o = await tick(c, eventId);
    // 3 available + 1 held = 2 plausible fans; the one who collected 11 s ago is still choosing, the other left.
    expect(o.leaverSeconds).toBe(60);
    expect(o.inside).toMatchObject({ shopping: 1, arriving: 0 });
    expect(o.cap).toBe(1); // the leaver's slot is free again (counted, it would be 0)
    // The next fan's turn: the pace on those seats is a fan a minute; then that fan never collects. Counted on the way in
    // for the arrival window (30 s of Retry-After + 10 s), then not: its place is given back too.
    let advancedAt: number | null = null;
    for (let s = 0; s < 70 && advancedAt === null; s++) {
      clock.advance(1000);
      if ((await tick(c, eventId)).advanced > 0) advancedAt = clock.now();
    }
    expect(advancedAt).not.toBeNull();
    clock.set(advancedAt! + ARRIVAL_WINDOW_MS - 1000);
    let later = await tick(c, eventId);
    expect(later.inside.arriving).toBe(1);
    clock.set(advancedAt! + ARRIVAL_WINDOW_MS + 1000);
    later = await tick(c, eventId);
    expect(later.inside.arriving).toBe(0);
  });
});

describe('the end of a sale: fans let in who have not come yet count against the seats left', () => {
  /**
   * 20 seats in a row, `available` of them free and `held` held by someone else; 40 fans waiting; the first `letIn`
   * passed a minute ago (past the arrival window, within their claim window) and not one of them has come yet.
   */
  async function endOfSale(o: { available: number; held: number; letIn: number }) {
    const eventId = await makeEvent({
      rows: 1,
      seatsPerRow: 20,
      pacing: { targetSaleMinutes: 10, ticketsPerOrder: 2, overbookFactor: 1, checkoutMinutes: 5, paymentTps: 50 },
    });
    await sql`UPDATE seats SET status = 'SOLD', hold_id = gen_random_uuid() WHERE event_id = ${eventId} AND id NOT IN (SELECT id FROM seats WHERE event_id = ${eventId} ORDER BY id LIMIT ${o.available + o.held})`.execute(
      t.db,
    );
    if (o.held > 0)
      await sql`UPDATE seats SET status = 'HELD', expires_at = now() + interval '1 hour', hold_id = gen_random_uuid()
                WHERE id IN (SELECT id FROM seats WHERE event_id = ${eventId} AND status = 'AVAILABLE' ORDER BY id LIMIT ${o.held})`.execute(
        t.db,
      );
    await addEntries(t.db, eventId, 40);
    const clock = clockInMinute();
    const reachedAt = clock.now() - 60_000;
    await sql`UPDATE queue_state SET admitted_through = ${o.letIn}, last_advance_at = ${new Date(reachedAt)},
                     watermark_history = ${JSON.stringify([[reachedAt, o.letIn]])}::jsonb,
                     rate_override_per_min = 600
              WHERE event_id = ${eventId}`.execute(t.db);
    return { eventId, clock, c: controller(clock) };
  }

  it('no over-admission: 5 fans let in a minute ago and not come yet cover the 10 seats left (5 parties of 2), so nobody more is let in while they may still come', async () => {
    // 8 free and 2 held (by a fan paying: the tail rule is out): 5 plausible fans at 2 seats a fan.
    const { eventId, clock, c } = await endOfSale({ available: 8, held: 2, letIn: 5 });
    const ticks: Extract<EventTickOutcome, { status: 'ticked' }>[] = [];
    for (let s = 0; s < 20; s++) {
      ticks.push(await tick(c, eventId));
      clock.advance(1000);
    }
    expect(ticks[0]!.inside).toMatchObject({ total: 0, notCome: 5 });
    // Before the rule the cap was 5 - 0 inside: 5 more fans at once for the seats the 5 let in are coming for.
    expect(ticks.every((o) => o.cap === 0 && o.advanced === 0)).toBe(true);
    expect(ticks.at(-1)!.constraint).toBe('no_plausible_seats');
    expect((await queueState(eventId)).controller_reason).toContain('5 let in who have not come yet');
    // Three of them come (their claims recorded): they are inside now, the two others still on their way.
    await recordClaims(
      t.db,
      [0, 1, 2].map((f) => ({ eventId, accountId: account(eventId, f) })),
      clock.date(),
    );
    const came = await tick(c, eventId);
    expect(came.inside).toMatchObject({ shopping: 3, notCome: 2 });
    expect(came).toMatchObject({ cap: 0, advanced: 0 });
  });

  it('only what the seats left take: 2 let in not come yet for 10 seats (5 parties) leave room for 3 more', async () => {
    const { eventId, clock, c } = await endOfSale({ available: 8, held: 2, letIn: 2 });
    const o = await tick(c, eventId);
    expect(o.inside.notCome).toBe(2);
    expect(o.cap).toBe(3);
    const through: number[] = [o.admittedThrough];
    for (let s = 0; s < 90; s++) {
      clock.advance(1000);
      through.push((await tick(c, eventId)).admittedThrough);
    }
    // The 3 go in (paced at the cap a minute, the first at once) and nobody after them: the fans let in and not
    // come yet (the 2 before, then those 3 while on their way or within their claim window) cover the seats.
    expect(Math.max(...through)).toBe(5);
  });

  it('a position whose claim window passed is no longer counted: its slot comes back', async () => {
    const { eventId, clock, c } = await endOfSale({ available: 8, held: 2, letIn: 5 });
    expect((await tick(c, eventId)).inside.notCome).toBe(5);
    clock.advance(POSITION_CLAIM_WINDOW_MS - 60_000 + 1_000);
    const later = await tick(c, eventId);
    expect(later.inside.notCome).toBe(0);
    expect(later.advanced).toBeGreaterThan(0);
  });

  it('still no stall: seats free, nobody holding, fans waiting, and fans not come yet covering the seats: the next fan is let in within 5 s', async () => {
    const { eventId, clock, c } = await endOfSale({ available: 10, held: 0, letIn: 5 });
    let admittedAt: number | null = null;
    const start = clock.now();
    for (let s = 0; s <= 5 && admittedAt === null; s++) {
      const o = await tick(c, eventId);
      expect(o.inside.notCome).toBeGreaterThan(0);
      if (o.advanced > 0) admittedAt = clock.now();
      else clock.advance(1000);
    }
    expect(admittedAt).not.toBeNull();
    expect(admittedAt! - start).toBeLessThanOrEqual(5_000);
    expect((await queueState(eventId)).controller_constraint).toBe('tail');
  });
});

describe('the club example sold to the end', () => {
  it('at the plan pace to one-at-a-time buyers, 30% of admitted fans leaving without buying: SOLD_OUT (available 0, held 0), never 30 s with seats free, none held and fans waiting', async () => {
    const club = JSON.parse(readFileSync(new URL('../../../../examples/club.json', import.meta.url), 'utf8')) as Record<string, unknown>;
    const spec = parseEventFile({
      ...club,
      startsAt: new Date(Date.now() + 86_400_000).toISOString(),
      onsaleAt: new Date(Date.now() - 60_000).toISOString(),
      // Holds outlive the simulated sale (the injected clock runs ahead of the database's, which times holds).
      holds: { ttlSeconds: 3600, extensionSeconds: 0 },
    });
    const { eventId, capacity } = await t.db.transaction().execute(async (trx) => {
      const r = await createEvent(trx, spec, 'test', { signOff: true });
      return {
        eventId: r.eventId,
        capacity: spec.sections.reduce(
          (a, s) => a + ('rows' in s && s.rows ? s.rows.reduce((b, r) => b + r.seats, 0) : (s.rowCount ?? 0) * (s.seatsPerRow ?? 0)),
          0,
        ),
      };
    });
    events.push(eventId);
    expect(capacity).toBe(300);
    const FANS = 600;
    await addEntries(t.db, eventId, FANS);
    const clock = clockInMinute();
    const c = controller(clock);
    const holds = new HoldService({ db: t.db, events: new EventCache(t.db), seatmap: new SeatmapCache(t.db), now: () => Date.now() });
    const checkout = new CheckoutService({
      db: t.db,
      cards: new CardFingerprints(testSecrets().cardFingerprintSecret),
      payments: new SimulatedPaymentGateway({ tps: 10_000, latencyMs: 0, failureRate: 0 }),
    });
    // A seeded choice per fan: 10% never come back after joining (a place nobody uses), and of the fans who collect
    // their turn, 30% leave without holding.
    let seed = 2026;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    type Fan = { next: number; phase: 'waiting' | 'gone' | 'shopping' | 'holding' | 'done'; holdId?: string; tries: number };
    const start = clock.now();
    const fans: Fan[] = Array.from({ length: FANS }, () => ({ next: start, phase: random() < 0.1 ? 'gone' : 'waiting', tries: 0 }));
    let admitted = 0;
    let leavers = 0;
    let stall = 0;
    let longestStall = 0;
    let soldOutAt: number | null = null;
    const SECTIONS = ['FRONT', 'MAIN', 'BALC'];
    for (let s = 0; s < 3600 && soldOutAt === null; s++) {
      const now = clock.now();
      // Buyers act when due: a hold of two (one if two no longer fit anywhere), then payment 10 s later.
      for (let i = 0; i < FANS; i++) {
        const f = fans[i]!;
        if (f.next > now) continue;
        if (f.phase === 'shopping') {
          let holdId: string | undefined;
          for (const quantity of [2, 1])
            for (const section of SECTIONS) {
              if (holdId) break;
              holdId = await holds
                .create(account(eventId, i), eventId, { section, quantity })
                .then((h) => h.holdId)
                .catch(() => undefined);
            }
          if (holdId) Object.assign(f, { phase: 'holding', holdId, next: now + 10_000 });
          else Object.assign(f, { phase: 'waiting', next: now + 5_000, tries: f.tries + 1 }); // back to the queue page
        } else if (f.phase === 'holding') {
          await checkout.checkout(account(eventId, i), f.holdId!, `club-${i}-key-000000`, {
            payment: { instrument: { type: 'card', number: cardOf(i) } },
          });
          f.phase = 'done';
        }
      }
      const o = await tick(c, eventId);
      const [row] = await loadWatermarks(t.db, eventId);
      const w = WatermarkStore.toState(row!, now);
      const claims: { eventId: string; accountId: string }[] = [];
      for (let i = 0; i < FANS; i++) {
        const f = fans[i]!;
        if (f.phase !== 'waiting' || f.next > now) continue;
        const st = computeStatusNow(fanClaims(eventId, i, start), w, now, { jitter: random }) as QueueStatus;
        expect(st.expired).toBeUndefined(); // a fan polling as told never reads POSITION_EXPIRED
        if (st.state === 'SOLD_OUT') f.phase = 'done';
        else if (st.admit) {
          if (f.tries === 0) {
            admitted++;
            claims.push({ eventId, accountId: account(eventId, i) });
          }
          if (f.tries === 0 && random() < 0.3) {
            leavers++;
            f.phase = 'gone';
          } else Object.assign(f, { phase: 'shopping', next: now + 5_000 });
        } else f.next = now + st.retryAfterSeconds * 1000;
      }
      await recordClaims(t.db, claims, clock.date());
      // Seats free, nobody holding them, fans waiting for their turn: how long in a row (the tick's own counts).
      const counts = { available: o.available, held: o.held };
      const waiting = fans.some((f, i) => f.phase === 'waiting' && i + 1 > o.admittedThrough);
      stall = counts.available > 0 && counts.held === 0 && waiting ? stall + 1 : 0;
      longestStall = Math.max(longestStall, stall);
      if (counts.available === 0 && counts.held === 0 && o.inventoryState === 'SOLD_OUT') soldOutAt = now;
      clock.advance(1000);
    }
    const counts = await getInventoryCounts(t.db, eventId, 300);
    expect(counts).toMatchObject({ available: 0, held: 0, sold: 300, drift: 0 });
    expect((await queueState(eventId)).inventory_state).toBe('SOLD_OUT');
    expect(soldOutAt).not.toBeNull();
    expect(leavers / admitted).toBeGreaterThan(0.2);
    expect(longestStall).toBeLessThan(30);
    const orders = await sql<{
      seats: number;
    }>`SELECT coalesce(sum(seat_count), 0)::int AS seats FROM orders WHERE event_id = ${eventId} AND status = 'CONFIRMED'`.execute(t.db);
    expect(orders.rows[0]!.seats).toBe(300);
  });
});

describe('the end of a sale, told at once', () => {
  it('while an event is in LAST_CHANCE the controller passes every 250 ms, not every second; sold out, every second again', async () => {
    const eventId = await makeEvent({
      rows: 1,
      seatsPerRow: 4,
      pacing: { targetSaleMinutes: 10, ticketsPerOrder: 2, overbookFactor: 1.2, checkoutMinutes: 5, paymentTps: 50 },
    });
    await addEntries(t.db, eventId, 10);
    const clock = clockInMinute();
    const c = controller(clock);
    expect(c.passIntervalMs).toBe(1000);
    // Two seats sold, two held: nothing available, the held seats may still come back.
    await sql`UPDATE seats s SET status = CASE WHEN r.n <= 2 THEN 'SOLD' ELSE 'HELD' END, hold_id = gen_random_uuid(),
                expires_at = CASE WHEN r.n <= 2 THEN NULL ELSE now() + interval '1 hour' END
              FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM seats WHERE event_id = ${eventId}) r
              WHERE s.id = r.id`.execute(t.db);
    expect(await tick(c, eventId)).toMatchObject({ inventoryState: 'LAST_CHANCE', available: 0, held: 2 });
    expect(c.passIntervalMs).toBe(NEAR_END_TICK_MS);
    expect(NEAR_END_TICK_MS).toBeLessThanOrEqual(250);
    // The held seats sell: the next pass (a quarter second later) sees the sell-out.
    await sql`UPDATE seats SET status = 'SOLD', expires_at = NULL WHERE event_id = ${eventId}`.execute(t.db);
    clock.advance(NEAR_END_TICK_MS);
    expect(await tick(c, eventId)).toMatchObject({ inventoryState: 'SOLD_OUT', soldOut: true, available: 0, held: 0 });
    expect(c.passIntervalMs).toBe(1000);
  });
});

/** The queue token's claims of fan `i` (FIFO, joined at the start). */
function fanClaims(eventId: string, i: number, startMs: number): QueueTokenClaims {
  return {
    kind: 'queue',
    eventId,
    accountId: account(eventId, i),
    deviceHash: '0'.repeat(64),
    joinIndex: i,
    cohort: 'FIFO',
    iat: Math.floor(startMs / 1000),
    exp: Math.floor(startMs / 1000) + 86_400,
  };
}
