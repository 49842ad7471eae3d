import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { planAdmission } from '../admission/plan.js';
import { MAX_RATE_OVERRIDE_PER_MIN, pauseQueue, resumeQueue, setRateOverride } from '../admission/operator.js';
import { tickEvent } from '../admission/controller.js';
import { findActiveEvents } from '../admission/controller.repository.js';
import { DomainError } from '../errors.js';
import { getInventoryCounts } from '../inventory/inventory.service.js';
import { createOpenEvent, createTestDatabase, type TestDatabase } from '../testing/index.js';
import { WarRoomHub, type WarRoomBoardMessage, type WarRoomMessage } from './hub.js';
import { RATE_OVERRIDE_BOUNDS } from './warroom.schema.js';
import { findBoardEvents, readWarRoomSnapshot, readWarRoomSnapshots, toTile, warRoomStateOf } from './warroom.service.js';
import { toPoint } from './series.js';

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
});
afterAll(() => t.drop());

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
const ahead = (ms: number) => new Date(Date.now() + ms).toISOString();

async function joinFans(eventId: string, n: number, from = 0): Promise<void> {
  await sql`INSERT INTO accounts (id) SELECT 'fan-' || g FROM generate_series(${from}::int, ${from + n - 1}::int) g ON CONFLICT DO NOTHING`.execute(
    t.db,
  );
  await sql`
    INSERT INTO queue_entries (event_id, account_id, device_hash, join_index, cohort)
    SELECT ${eventId}, 'fan-' || g, 'd', g, 'FIFO' FROM generate_series(${from}::int, ${from + n - 1}::int) g`.execute(t.db);
}

async function heartbeat(eventId: string, agoMs = 0): Promise<void> {
  await sql`UPDATE queue_state SET heartbeat_at = now() - make_interval(secs => ${agoMs / 1000}) WHERE event_id = ${eventId}`.execute(t.db);
}

/** One admission_minutes row for the last full minute. */
async function lastMinute(eventId: string, m: { admitted: number; holds: number; refused?: number; rate?: number }): Promise<void> {
  await sql`
    INSERT INTO admission_minutes (event_id, minute, watermark_advanced, admission_tokens_issued, rate_per_min, holds_created, holds_refused)
    VALUES (${eventId}, date_trunc('minute', now()) - interval '1 minute', ${m.admitted}, ${m.admitted}, ${m.rate ?? m.admitted}, ${m.holds}, ${m.refused ?? 0})`.execute(
    t.db,
  );
}

/** A live hold of `quantity` seats (section S) for a fan, with checkout attempts of the given statuses. */
async function holdWithCheckouts(
  eventId: string,
  account: string,
  statuses: ('PENDING' | 'SUCCEEDED' | 'FAILED')[],
  expiresInMs = 300_000,
): Promise<string> {
  await sql`INSERT INTO accounts (id) VALUES (${account}) ON CONFLICT DO NOTHING`.execute(t.db);
  const { rows } = await sql<{ id: string }>`
    INSERT INTO holds (event_id, account_id, section_code, quantity, status, expires_at)
    VALUES (${eventId}, ${account}, 'S', 2, 'HELD', now() + make_interval(secs => ${expiresInMs / 1000})) RETURNING id`.execute(t.db);
  const holdId = rows[0]!.id;
  for (const [i, status] of statuses.entries())
    await sql`
      INSERT INTO checkout_attempts (account_id, idempotency_key, hold_id, request_hash, instrument_fingerprint, seat_count, status)
      VALUES (${account}, ${`${holdId}-${i}`}, ${holdId}, 'h', 'card', 2, ${status})`.execute(t.db);
  return holdId;
}

describe('warRoomStateOf', () => {
  const base = {
    now: new Date(1_000_000),
    onsale_at: new Date(0),
    starts_at: new Date(9_000_000),
    paused: false,
    inventory_state: 'AVAILABLE' as const,
    heartbeat_at: new Date(999_000),
  };
  it('puts sold-out first, then an operator pause, then the clock, then the heartbeat (fail closed)', () => {
    expect(warRoomStateOf(base)).toBe('ADMITTING');
    expect(warRoomStateOf({ ...base, inventory_state: 'LAST_CHANCE' })).toBe('LAST_CHANCE');
    expect(warRoomStateOf({ ...base, heartbeat_at: new Date(994_000) })).toBe('FAILED_CLOSED');
    expect(warRoomStateOf({ ...base, heartbeat_at: null })).toBe('FAILED_CLOSED');
    expect(warRoomStateOf({ ...base, paused: true, heartbeat_at: null })).toBe('PAUSED');
    expect(warRoomStateOf({ ...base, onsale_at: new Date(2_000_000), heartbeat_at: null })).toBe('NOT_OPEN');
    expect(warRoomStateOf({ ...base, starts_at: new Date(1_000_000) })).toBe('ENDED');
    expect(warRoomStateOf({ ...base, paused: true, inventory_state: 'SOLD_OUT' })).toBe('SOLD_OUT');
    // Not signed off: the time has come but the sale does not open (before the time it reads NOT_OPEN as ever).
    expect(warRoomStateOf({ ...base, signed_off: false, sealed_at: null })).toBe('AWAITING_SIGNOFF');
    expect(warRoomStateOf({ ...base, signed_off: false, sealed_at: null, heartbeat_at: null })).toBe('AWAITING_SIGNOFF');
    expect(warRoomStateOf({ ...base, signed_off: false, sealed_at: null, onsale_at: new Date(2_000_000) })).toBe('NOT_OPEN');
    expect(warRoomStateOf({ ...base, signed_off: false, sealed_at: new Date(500_000) })).toBe('ADMITTING');
  });

  it("the console's rate bounds are the operator module's", () => {
    expect(RATE_OVERRIDE_BOUNDS).toEqual({ min: 0, max: MAX_RATE_OVERRIDE_PER_MIN });
  });
});

describe('readWarRoomSnapshot', () => {
  it('an event before its open: NOT_OPEN, fans WAITING, the plan of its pacing inputs, the invariant', async () => {
    const { eventId, capacity } = await createOpenEvent(t.db, {
      name: 'Before the open',
      onsaleAt: ahead(3_600_000),
      startsAt: ahead(86_400_000),
    });
    const s = await readWarRoomSnapshot(t.db, eventId);
    expect(s).toMatchObject({ eventId, name: 'Before the open', state: 'NOT_OPEN', fanState: 'WAITING' });
    expect(s.inventory).toMatchObject({ capacity, available: capacity, held: 0, sold: 0, drift: 0, holdTtlSeconds: 360 });
    const plan = planAdmission({
      seats: capacity,
      ticketsPerOrder: 2.5,
      targetSaleMinutes: 25,
      overbookFactor: 1.3,
      checkoutMinutes: 6,
      paymentTps: 1000,
    });
    expect(s.admission.plan).toEqual({
      admitsPerMinute: plan.admitsPerMinute,
      buyersPerMinute: plan.buyersPerMinute,
      concurrentShoppers: plan.concurrentShoppers,
      expectedSaleMinutes: plan.expectedSaleMinutes,
      bindingConstraint: 'inventory_pacing',
    });
    expect(s.admission.minutes).toHaveLength(30);
    expect(s.alerts).toEqual([]);
    expect(s.store.configured).toBe(false);
    expect(s.holdLatency.p99Ms).toBeNull();
  });

  it('an event that is not signed off: the war room says it will not open (warning before its time, critical after), and a tile says so', async () => {
    const { eventId: later } = await createOpenEvent(
      t.db,
      { name: 'Unsigned later', onsaleAt: ahead(3_600_000), startsAt: ahead(86_400_000) },
      { signOff: false },
    );
    let s = await readWarRoomSnapshot(t.db, later);
    expect(s).toMatchObject({ state: 'NOT_OPEN', fairness: { signedOff: false, awaitingSignOff: true, signedOffBy: null } });
    expect(s.alerts.map((a) => [a.code, a.severity])).toEqual([['FAIRNESS_NOT_SIGNED_OFF', 'warning']]);
    expect(toTile(s).awaitingSignOff).toBe(true);

    const { eventId: now } = await createOpenEvent(t.db, { name: 'Unsigned now', onsaleAt: ago(60_000) }, { signOff: false });
    await heartbeat(now);
    s = await readWarRoomSnapshot(t.db, now);
    expect(s).toMatchObject({ state: 'AWAITING_SIGNOFF', fanState: 'WAITING' });
    expect(s.alerts[0]).toMatchObject({ code: 'FAIRNESS_NOT_SIGNED_OFF', severity: 'critical' });

    const { eventId: signed } = await createOpenEvent(t.db, { name: 'Signed', onsaleAt: ago(60_000) });
    await heartbeat(signed);
    s = await readWarRoomSnapshot(t.db, signed);
    expect(s).toMatchObject({
      state: 'ADMITTING',
      fairness: { signedOff: true, awaitingSignOff: false, signedOffBy: 'system' },
      alerts: [],
    });
  });

  it('an unknown or malformed id is EVENT_NOT_FOUND', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'nope']) {
      const e = await readWarRoomSnapshot(t.db, id).catch((err: unknown) => err);
      expect(e).toBeInstanceOf(DomainError);
      expect(e).toMatchObject({ kind: 'not_found', code: 'EVENT_NOT_FOUND' });
    }
  });

  it('on sale: the queue, the watermark, fail closed without a heartbeat, and an operator pause with who and why', async () => {
    const { eventId } = await createOpenEvent(t.db, { name: 'On sale', onsaleAt: ago(600_000) });
    await joinFans(eventId, 120);
    await sql`UPDATE queue_state SET admitted_through = 45, rate_per_min = 60 WHERE event_id = ${eventId}`.execute(t.db);

    let s = await readWarRoomSnapshot(t.db, eventId);
    expect(s.queue).toMatchObject({ joined: 120, waiting: 75, admittedThrough: 45, publishedRatePerMin: 60, heartbeatAgeSeconds: null });
    expect(s).toMatchObject({ state: 'FAILED_CLOSED', fanState: 'PAUSED' });
    expect(s.alerts.map((a) => a.code)).toEqual(['CONTROLLER_SILENT']);

    await heartbeat(eventId);
    s = await readWarRoomSnapshot(t.db, eventId);
    expect(s).toMatchObject({ state: 'ADMITTING', fanState: 'WAITING', alerts: [] });

    await pauseQueue(t.db, eventId, { actor: 'ops@example.com', reason: 'gateway 429s' });
    s = await readWarRoomSnapshot(t.db, eventId);
    expect(s).toMatchObject({
      state: 'PAUSED',
      fanState: 'PAUSED',
      queue: { paused: true, pausedBy: 'ops@example.com', pausedReason: 'gateway 429s' },
    });
    expect(s.alerts.map((a) => [a.code, a.severity])).toEqual([['QUEUE_PAUSED', 'warning']]);
    await resumeQueue(t.db, eventId, { actor: 'ops@example.com', reason: 'gateway fine' });
  });

  it("says why nobody is being let in: the controller's last constraint, reason, fans inside and cap", async () => {
    const { eventId } = await createOpenEvent(t.db, { name: 'Why not', onsaleAt: ago(600_000) });
    await joinFans(eventId, 10, 500);
    expect((await readWarRoomSnapshot(t.db, eventId)).admission.controller).toBeNull(); // never ticked
    const [event] = (await findActiveEvents(t.db, 7200)).filter((e) => e.event_id === eventId);
    await setRateOverride(t.db, eventId, 0, { actor: 'ops@example.com', reason: 'hold the line' });
    await tickEvent(t.db, { event: event!, controllerId: 'c', tickMs: 1000 });
    const s = await readWarRoomSnapshot(t.db, eventId);
    expect(s.admission.controller).toMatchObject({ constraint: 'override', reason: 'override: operator rate 0/min', fansInside: 0 });
    expect(s.admission.controller!.cap).toBeGreaterThan(0);
  });

  it('admissions, holds per admitted fan (the bypass alert), checkout errors and payment attempts from the tables', async () => {
    const { eventId } = await createOpenEvent(t.db, { name: 'Busy', onsaleAt: ago(600_000) });
    await heartbeat(eventId);
    await lastMinute(eventId, { admitted: 30, holds: 90, refused: 0, rate: 2 });
    for (let i = 0; i < 20; i++) await holdWithCheckouts(eventId, `buyer-${i}`, i < 5 ? ['FAILED', 'SUCCEEDED'] : ['SUCCEEDED']);

    const s = await readWarRoomSnapshot(t.db, eventId);
    expect(s.admission).toMatchObject({ admittedLastMinute: 30, admittedThisMinute: 0 });
    expect(s.holds).toMatchObject({ createdLastMinute: 90, perAdmittedFan: 3 });
    expect(s.checkout).toEqual({ attempts2m: 25, failed2m: 5, declined2m: 0, errorRate: 0.2 });
    expect(s.payment).toMatchObject({ attemptsPerSecond: 2.5, attemptsLastMinute: 25, ceilingTps: 1000 });
    const codes = s.alerts.map((a) => a.code);
    expect(codes).toContain('ADMISSION_BYPASS');
    expect(codes).toContain('ADMITTED_OVER_PLAN'); // the plan of a 20-seat house is ~1 admit a minute
    expect(codes).toContain('CHECKOUT_ERRORS');
    // Live holds in the holds table (no seat rows taken here): the expired-unswept count stays 0 while they live.
    expect(s.inventory.expiredUnsweptSeats).toBe(0);
  });

  it("the money: gross sales, orders and the average order in the event's currency, by the minute; cancelled orders apart", async () => {
    // Three orders in the last full minute, one this minute, one cancelled: amounts in pence. The minutes are the
    // database's: should one end between the writes and the read, the whole is done again on a fresh event.
    const orders: { pence: number; minutesAgo: number; status?: 'CANCELLED' }[] = [
      { pence: 5000, minutesAgo: 1 },
      { pence: 2500, minutesAgo: 1 },
      { pence: 7500, minutesAgo: 1 },
      { pence: 2500, minutesAgo: 0 },
      { pence: 9900, minutesAgo: 2, status: 'CANCELLED' },
    ];
    async function sell(attempt: number) {
      const { eventId } = await createOpenEvent(t.db, { name: `Paid in pounds ${attempt}`, onsaleAt: ago(600_000), currency: 'GBP' });
      await heartbeat(eventId);
      const { rows } = await sql<{ minute: Date }>`SELECT date_trunc('minute', now()) AS minute`.execute(t.db);
      const minute = rows[0]!.minute;
      for (const [i, o] of orders.entries()) {
        const account = `payer-${attempt}-${i}`;
        const holdId = await holdWithCheckouts(eventId, account, []);
        await sql`
          INSERT INTO orders (hold_id, event_id, account_id, idempotency_key, seat_count, amount_cents, instrument_fingerprint, payment_reference, status, created_at)
          VALUES (${holdId}, ${eventId}, ${account}, ${`k-${i}`}, 2, ${o.pence}, 'card', 'ref', ${o.status ?? 'CONFIRMED'},
                  ${minute}::timestamptz - make_interval(mins => ${o.minutesAgo}) + interval '1 second')`.execute(t.db);
      }
      const snapshot = await readWarRoomSnapshot(t.db, eventId);
      return { snapshot, sameMinute: Math.floor(Date.parse(snapshot.at) / 60_000) * 60_000 === minute.getTime() };
    }
    let attempt = 0;
    let sold = await sell(attempt);
    while (!sold.sameMinute && attempt < 3) sold = await sell(++attempt);
    expect(sold.sameMinute).toBe(true);
    const s = sold.snapshot;
    expect(s.sales).toEqual({
      currency: 'GBP',
      orders: 4,
      grossCents: 17_500,
      averageOrderCents: 4375,
      ordersLastMinute: 3,
      grossLastMinuteCents: 15_000,
      cancelledOrders: 1,
    });
    const byMinute = s.admission.minutes.slice(-3).map((m) => [m.orders, m.grossCents]);
    expect(byMinute).toEqual([
      [0, 0],
      [3, 15_000],
      [1, 2500],
    ]);
    expect(toTile(s).sales).toEqual({
      currency: 'GBP',
      orders: 4,
      grossCents: 17_500,
      averageOrderCents: 4375,
      grossLastMinuteCents: 15_000,
    });

    // An event with no order yet: nothing sold, no average, in its own currency.
    const { eventId: quiet } = await createOpenEvent(t.db, { name: 'Nothing sold', onsaleAt: ago(60_000), currency: 'EUR' });
    expect((await readWarRoomSnapshot(t.db, quiet)).sales).toMatchObject({
      currency: 'EUR',
      orders: 0,
      grossCents: 0,
      averageOrderCents: null,
    });
  });

  it("a card declined by its issuer is the fan's outcome: not a checkout failure and no alert; gateway failures the store API counted are", async () => {
    const { eventId } = await createOpenEvent(t.db, { name: 'Declines', onsaleAt: ago(600_000) });
    await heartbeat(eventId);
    // 30 checkouts, 10 of them declined test cards (PAYMENT_DECLINED on the attempt).
    for (let i = 0; i < 30; i++) await holdWithCheckouts(eventId, `decliner-${i}`, [i < 10 ? 'FAILED' : 'SUCCEEDED']);
    await sql`UPDATE checkout_attempts a SET error_code = 'PAYMENT_DECLINED' FROM holds h WHERE h.id = a.hold_id AND h.event_id = ${eventId} AND a.status = 'FAILED'`.execute(
      t.db,
    );
    let s = await readWarRoomSnapshot(t.db, eventId);
    expect(s.checkout).toEqual({ attempts2m: 30, failed2m: 0, declined2m: 10, errorRate: 0 });
    expect(s.alerts.map((a) => a.code)).not.toContain('CHECKOUT_ERRORS');

    // The gateway refused 5 for load (their attempts forgotten, counted by the store API in the minute's row).
    await sql`INSERT INTO admission_minutes (event_id, minute, checkout_gateway_failures) VALUES (${eventId}, date_trunc('minute', now()), 5)`.execute(
      t.db,
    );
    s = await readWarRoomSnapshot(t.db, eventId);
    expect(s.checkout).toEqual({ attempts2m: 35, failed2m: 5, declined2m: 10, errorRate: 0.1429 });
    const alert = s.alerts.find((a) => a.code === 'CHECKOUT_ERRORS');
    expect(alert).toMatchObject({ severity: 'warning', title: 'Payments are failing at the payment gateway' });
    expect(alert!.detail).toContain("10 cards declined by their issuers are the fans' outcome and not counted");
  });

  it("inventory is the inventory domain's count; lapsed holds nobody swept are reported", async () => {
    const { eventId, capacity } = await createOpenEvent(t.db, { name: 'Stock', onsaleAt: ago(600_000) });
    await heartbeat(eventId);
    await sql`UPDATE seats SET status = 'HELD', hold_id = gen_random_uuid(), expires_at = now() + interval '5 min'
              WHERE event_id = ${eventId} AND row_index = 0 AND seat_number <= 4`.execute(t.db);
    await sql`UPDATE seats SET status = 'SOLD', hold_id = gen_random_uuid() WHERE event_id = ${eventId} AND row_index = 1 AND seat_number <= 3`.execute(
      t.db,
    );
    await holdWithCheckouts(eventId, 'late-payer', [], -300_000); // expired five minutes ago, still HELD
    const s = await readWarRoomSnapshot(t.db, eventId);
    const counts = await getInventoryCounts(t.db, eventId, capacity);
    expect(s.inventory).toMatchObject({ available: counts.available, held: 4, sold: 3, drift: 0, expiredUnsweptSeats: 2 });
    expect(s.alerts.map((a) => a.code)).toEqual(['EXPIRED_HOLDS_UNSWEPT']);
  });

  it('the waitlist behind the event: live entries, returned seats pending, notifications, open offers', async () => {
    const { eventId } = await createOpenEvent(t.db, { name: 'Waitlisted', onsaleAt: ago(600_000) });
    await heartbeat(eventId);
    const { listing_id: listingId } = await t.db
      .selectFrom('events')
      .select('listing_id')
      .where('id', '=', eventId)
      .executeTakeFirstOrThrow();
    await sql`INSERT INTO accounts (id) SELECT 'wl-' || g FROM generate_series(1, 3) g ON CONFLICT DO NOTHING`.execute(t.db);
    await sql`INSERT INTO waitlist_entries (listing_id, account_id, quantity, expires_at)
              SELECT ${listingId}, 'wl-' || g, 2, now() + interval '7 days' FROM generate_series(1, 3) g`.execute(t.db);
    await sql`INSERT INTO waitlist_entries (listing_id, account_id, quantity, expires_at) VALUES (${listingId}, 'wl-old', 2, now() - interval '1 day')`.execute(
      t.db,
    );
    await sql`INSERT INTO availability_events (listing_id, event_id, cause, performance_date, sections, seat_count, mode, status, matched, notified, created_at, completed_at)
              VALUES (${listingId}, ${eventId}, 'HOLD_EXPIRED', current_date, '[]', 2, 'BROADCAST', 'DONE', 3, 3, now() - interval '5 minutes', now() - interval '5 minutes' + interval '2 seconds'),
                     (${listingId}, ${eventId}, 'ORDER_CANCELLED', current_date, '[]', 4, 'BROADCAST', 'FANNING_OUT', 1, 1, now() - interval '90 seconds', NULL)`.execute(
      t.db,
    );
    const s = await readWarRoomSnapshot(t.db, eventId);
    expect(s.waitlist).toMatchObject({
      entries: 3,
      availabilityEvents: 2,
      pendingAvailabilityEvents: 1,
      matched: 4,
      notified: 4,
      notifiedLast10Min: 4,
      openOffers: 0,
      lastFanoutSeconds: 2,
    });
    expect(s.waitlist.oldestPendingSeconds!).toBeGreaterThanOrEqual(89);
    expect(s.alerts.map((a) => a.code)).toEqual(['WAITLIST_FANOUT_BEHIND']);
  });

  it('reads many events in one go, in the order asked, leaving out unknown ids', async () => {
    const a = await createOpenEvent(t.db, { name: 'Many A' });
    const b = await createOpenEvent(t.db, { name: 'Many B' });
    const list = await readWarRoomSnapshots(t.db, [b.eventId, '00000000-0000-4000-8000-000000000000', a.eventId, 'junk', b.eventId]);
    expect(list.map((s) => s.name)).toEqual(['Many B', 'Many A']);
    expect(toTile(list[0]!)).toMatchObject({
      eventId: b.eventId,
      name: 'Many B',
      capacity: 20,
      available: 20,
      alerts: { critical: 1, warning: 0, top: { code: 'CONTROLLER_SILENT' } },
    });
  });
});

describe('the board of every on-sale', () => {
  it("has every event on sale today in the operator's zone or on sale now; a promoter's board has only theirs", async () => {
    const fresh = await createTestDatabase(inject('templateDatabaseUrl'));
    try {
      const open = await createOpenEvent(fresh.db, { name: 'Open now', onsaleAt: ago(3_600_000 * 30), startsAt: ahead(86_400_000) });
      const soon = await createOpenEvent(fresh.db, { name: 'Later today', onsaleAt: ahead(60_000), startsAt: ahead(86_400_000 * 2) });
      await createOpenEvent(fresh.db, { name: 'Next month', onsaleAt: ahead(86_400_000 * 30), startsAt: ahead(86_400_000 * 60) });
      await createOpenEvent(fresh.db, { name: 'Long over', onsaleAt: ago(86_400_000 * 10), startsAt: ago(86_400_000 * 5) });
      const soldOut = await createOpenEvent(fresh.db, {
        name: 'Sold out yesterday',
        onsaleAt: ago(3_600_000 * 30),
        startsAt: ahead(86_400_000),
      });
      await sql`UPDATE queue_state SET inventory_state = 'SOLD_OUT' WHERE event_id = ${soldOut.eventId}`.execute(fresh.db);

      // "Later today" is today in a zone where the next minute is still today: pick the zone by the clock.
      const { rows } = await sql<{ tz: string }>`
        SELECT name AS tz FROM pg_timezone_names
        WHERE name IN ('UTC', 'Pacific/Kiritimati', 'Pacific/Pago_Pago', 'Asia/Kolkata', 'America/New_York')
          AND date_trunc('day', now() AT TIME ZONE name) = date_trunc('day', (now() + interval '1 minute') AT TIME ZONE name)
          AND date_trunc('day', now() AT TIME ZONE name) <> date_trunc('day', (now() - interval '30 hours') AT TIME ZONE name)
        ORDER BY name LIMIT 1`.execute(fresh.db);
      const timeZone = rows[0]!.tz;
      expect(await findBoardEvents(fresh.db, { timeZone, organisationId: null })).toEqual([open.eventId, soon.eventId]);

      const { rows: org } = await sql<{ id: string }>`INSERT INTO organisations (name) VALUES ('Acme Live') RETURNING id`.execute(fresh.db);
      await sql`UPDATE events SET organisation_id = ${org[0]!.id} WHERE id = ${soon.eventId}`.execute(fresh.db);
      expect(await findBoardEvents(fresh.db, { timeZone, organisationId: org[0]!.id })).toEqual([soon.eventId]);
      expect(await findBoardEvents(fresh.db, { timeZone, organisationId: '00000000-0000-4000-8000-000000000000' })).toEqual([]);
    } finally {
      await fresh.drop();
    }
  });
});

/** The next message of a stream, or a failure after `ms`. */
async function next<T>(it: AsyncGenerator<T>, ms = 5_000): Promise<T> {
  const r = await Promise.race([
    it.next(),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no message in time')), ms)),
  ]);
  if (r.done) throw new Error('the stream ended');
  return r.value;
}

describe('WarRoomHub', () => {
  it('streams an event every tick to every watcher from one read, with the kept series first, and stops when nobody watches', async () => {
    const { eventId } = await createOpenEvent(t.db, { name: 'Streamed', onsaleAt: ago(600_000) });
    await heartbeat(eventId);
    const hub = new WarRoomHub({ db: t.db, tickMs: 100 });
    const aborts = [new AbortController(), new AbortController()];
    try {
      const first = hub.watchEvent(eventId, aborts[0]!.signal);
      const m1 = (await next(first)) as Extract<WarRoomMessage, { type: 'snapshot' }>;
      expect(m1.type).toBe('snapshot');
      // The series so far ends with this very snapshot's point.
      expect(m1.history).toEqual([toPoint(m1.snapshot)]);
      expect(m1.snapshot.queue.joined).toBe(0);

      await joinFans(eventId, 7);
      let m: WarRoomMessage;
      do m = await next(first);
      while (m.type === 'snapshot' && m.snapshot.queue.joined !== 7);
      expect(m).toMatchObject({ type: 'snapshot', snapshot: { queue: { joined: 7, waiting: 7 } } });
      expect((m as { history?: unknown }).history).toBeUndefined();

      // A second watcher (a reloaded page) gets the series this process kept.
      const second = hub.watchEvent(eventId, aborts[1]!.signal);
      const m2 = (await next(second)) as Extract<WarRoomMessage, { type: 'snapshot' }>;
      expect(m2.history!.length).toBeGreaterThan(1);
      expect(m2.history!.at(-1)).toMatchObject({ joined: 7, available: 20 });
      expect(hub.watchers).toEqual({ events: 2, boards: 0 });

      aborts[0]!.abort();
      await first.next(); // lets the generator see the abort and detach
      aborts[1]!.abort();
      await second.next();
      expect(hub.watchers).toEqual({ events: 0, boards: 0 });
    } finally {
      await hub.close();
    }
  });

  it("shows an operator's control at once after refresh(), not at the next tick", async () => {
    const { eventId } = await createOpenEvent(t.db, { name: 'Refreshed', onsaleAt: ago(600_000) });
    await heartbeat(eventId);
    // A tick far longer than the test: only refresh() can bring the pause in time.
    const hub = new WarRoomHub({ db: t.db, tickMs: 60_000 });
    const abort = new AbortController();
    try {
      const stream = hub.watchEvent(eventId, abort.signal);
      const m1 = (await next(stream)) as Extract<WarRoomMessage, { type: 'snapshot' }>;
      expect(m1.snapshot.queue.paused).toBe(false);
      await pauseQueue(t.db, eventId, { actor: 'ops@example.com', reason: 'refresh test' });
      hub.refresh();
      const m2 = (await next(stream)) as Extract<WarRoomMessage, { type: 'snapshot' }>;
      expect(m2.snapshot.queue).toMatchObject({ paused: true, pausedReason: 'refresh test' });
      // Asked for while a tick is reading: a second read follows it, so a change made meanwhile is not missed.
      hub.refresh();
      await resumeQueue(t.db, eventId, { actor: 'ops@example.com', reason: 'done' });
      hub.refresh();
      let m: WarRoomMessage;
      do m = await next(stream);
      while (m.type === 'snapshot' && m.snapshot.queue.paused);
      expect(m).toMatchObject({ type: 'snapshot', snapshot: { queue: { paused: false } } });
    } finally {
      abort.abort();
      await hub.close();
    }
  });

  it('streams the board as tiles, and says "unavailable" rather than repeating old figures when the database fails', async () => {
    const fresh = await createTestDatabase(inject('templateDatabaseUrl'));
    const hub = new WarRoomHub({ db: fresh.db, tickMs: 100, boardEveryTicks: 1 });
    const abort = new AbortController();
    try {
      const a = await createOpenEvent(fresh.db, { name: 'Board A', onsaleAt: ago(60_000) });
      const b = await createOpenEvent(fresh.db, { name: 'Board B', onsaleAt: ago(30_000) });
      await pauseQueue(fresh.db, b.eventId, { actor: 'ops@example.com', reason: 'bot wave' });
      const board = hub.watchBoard({ timeZone: 'UTC', organisationId: null }, abort.signal);
      const m = (await next(board)) as Extract<WarRoomBoardMessage, { type: 'board' }>;
      expect(m.tiles.map((x) => [x.name, x.state])).toEqual([
        ['Board A', 'FAILED_CLOSED'],
        ['Board B', 'PAUSED'],
      ]);
      expect(m.tiles[1]).toMatchObject({ eventId: b.eventId, pausedBy: 'ops@example.com', pausedReason: 'bot wave', capacity: 20 });
      expect(m.tiles[0]!.eventId).toBe(a.eventId);

      await fresh.drop();
      let u: WarRoomBoardMessage;
      do u = await next(board);
      while (u.type === 'board');
      expect(u).toMatchObject({ type: 'unavailable', reason: 'the war room cannot read the database' });
    } finally {
      abort.abort();
      await hub.close();
      await fresh.drop().catch(() => {});
    }
  });
});
