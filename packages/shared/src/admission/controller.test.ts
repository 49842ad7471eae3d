import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { Db } from '../db/connect.js';
import { parseEventFile } from '../events/index.js';
import { createEvent } from '../sale-setup/index.js';
import { verifyCommitment } from '../queue/fairness.js';
import { createTestDatabase, manualClock, type ManualClock, type TestDatabase } from '../testing/index.js';
import { AdmissionController, tickEvent, type EventTickOutcome } from './controller.js';
import { findActiveEvents, liveSignals } from './controller.repository.js';
import { pauseQueue, resumeQueue, setRateOverride } from './operator.js';

let t: TestDatabase;
const controllers: AdmissionController[] = [];
const events: string[] = [];

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
});
afterAll(() => t.drop());
afterEach(async () => {
  await Promise.all(controllers.splice(0).map((c) => c.stop()));
  // Take this test's events out of the controller window so the next test's controllers leave them alone.
  if (events.length > 0)
    await sql`UPDATE events SET onsale_at = now() - interval '2 days', starts_at = now() - interval '1 day' WHERE id = ANY(${events.splice(0)}::uuid[])`.execute(
      t.db,
    );
});

interface EventOptions {
  onsaleInMs?: number;
  rows?: number;
  seatsPerRow?: number;
  pacing?: Record<string, number>;
}

async function makeEvent(o: EventOptions = {}): Promise<string> {
  const spec = parseEventFile({
    name: 'Controller test',
    venueName: 'Hall',
    startsAt: new Date(Date.now() + 86_400_000).toISOString(),
    onsaleAt: new Date(Date.now() + (o.onsaleInMs ?? -3_600_000)).toISOString(),
    ...(o.pacing ? { pacing: o.pacing } : {}),
    priceLevels: [{ code: 'P', name: 'All', priceCents: 1000 }],
    sections: [{ code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: o.rows ?? 100, seatsPerRow: o.seatsPerRow ?? 40 }],
  });
  const { eventId } = await t.db.transaction().execute((trx) => createEvent(trx, spec, 'test', { signOff: true }));
  events.push(eventId);
  return eventId;
}

/** Queue entries straight into the table (accounts too): join indexes from..from+n-1. */
async function addEntries(db: Db, eventId: string, n: number, cohort: 'PREOPEN' | 'FIFO', from = 0): Promise<void> {
  await sql`INSERT INTO accounts (id) SELECT 'a-' || ${eventId}::text || '-' || g FROM generate_series(${from}::int, ${from + n - 1}::int) g ON CONFLICT DO NOTHING`.execute(
    db,
  );
  await sql`
    INSERT INTO queue_entries (event_id, account_id, device_hash, join_index, cohort)
    SELECT ${eventId}, 'a-' || ${eventId}::text || '-' || g, md5(g::text), g, ${cohort}
    FROM generate_series(${from}::int, ${from + n - 1}::int) g`.execute(db);
}

/** A controller on the test's clock: time passes only when the test moves it (see tickMany). */
/**
 * The window on the fans inside as a sale that has run a while leaves it, open to its maximum (the store kept up):
 * for the tests of the plan, the leader and the plausible seats, which the window's start (10% of the plan) would
 * bound otherwise (window.test.ts and controller-store.test.ts test the window).
 */
async function openWindow(db: Db, eventId: string): Promise<void> {
  await sql`UPDATE queue_state SET admit_window = 1e9 WHERE event_id = ${eventId}`.execute(db);
}

function controller(clock: ManualClock, opts: { tickMs?: number; instanceId?: string } = {}): AdmissionController {
  const c = new AdmissionController({
    db: t.db,
    connectionString: t.url,
    tickMs: opts.tickMs ?? 200,
    instanceId: opts.instanceId,
    clock: clock.now,
  });
  controllers.push(c);
  return c;
}

async function queueState(eventId: string) {
  return t.db.selectFrom('queue_state').selectAll().where('event_id', '=', eventId).executeTakeFirstOrThrow();
}

/**
 * A test clock 20 s into the current minute. The claim ratio reads the complete minutes before the tick's own, so a
 * test whose ticks rolled into the next minute would see its own advances unclaimed and speed the watermark up
 * tenfold partway through (a take-over test once moved 108 positions past its rate that way). It may trail the
 * database's now() by up to 40 s, so a test that dates rows with now() keeps the real clock.
 */
const clockInMinute = (): ManualClock => manualClock(Math.floor(Date.now() / 60_000) * 60_000 + 20_000);

const outcomeOf = (events: EventTickOutcome[], eventId: string) => events.find((e) => e.eventId === eventId);

/** Ticks `n` times, moving the clock `everyMs` before each, and returns the last outcome for the event. */
async function tickMany(c: AdmissionController, clock: ManualClock, eventId: string, n: number, everyMs: number) {
  let last: EventTickOutcome | undefined;
  for (let i = 0; i < n; i++) {
    clock.advance(everyMs);
    last = outcomeOf((await c.tickOnce()).events, eventId);
  }
  return last;
}

describe('the admission controller advances the watermark at the planned rate', () => {
  it('with an operator override of 600/min and 200 ms ticks, about 30 positions in 3 s', async () => {
    const eventId = await makeEvent();
    await addEntries(t.db, eventId, 1000, 'FIFO');
    await setRateOverride(t.db, eventId, 600, { actor: 'test', reason: 'drill' });
    const clock = clockInMinute();
    const c = controller(clock, { tickMs: 200 });
    await c.tickOnce();
    const first = await queueState(eventId);
    expect(first.heartbeat_at).not.toBeNull();
    await tickMany(c, clock, eventId, 15, 200);
    const last = await queueState(eventId);
    const spanMs = last.heartbeat_at!.getTime() - first.heartbeat_at!.getTime();
    expect(spanMs).toBe(3000);
    const expected = (600 * spanMs) / 60_000;
    expect(Math.abs(last.admitted_through - first.admitted_through - expected)).toBeLessThanOrEqual(1.01);
    expect(last.admitted_through).toBeGreaterThanOrEqual(29);
    expect(last.admitted_through).toBeLessThanOrEqual(31);
    expect(last.rate_per_min).toBe(600); // claim ratio 1: the watermark moves at the admission rate
    expect(last.controller_id).toBe(c.instanceId);
    // The published history: when positions were reached, at most one point per 10 s, ending at or below the watermark.
    const history = last.watermark_history;
    expect(history.length).toBeGreaterThanOrEqual(1);
    expect(history.length).toBeLessThanOrEqual(2);
    expect(Number(history[0]![1])).toBeGreaterThan(0);
    expect(Number(history[history.length - 1]![1])).toBeLessThanOrEqual(last.admitted_through);
    // Every advance is in the minute rows, once.
    const minutes = await t.db
      .selectFrom('admission_minutes')
      .select(['watermark_advanced', 'rate_per_min'])
      .where('event_id', '=', eventId)
      .execute();
    expect(minutes.reduce((a, m) => a + m.watermark_advanced, 0)).toBe(last.admitted_through);
    expect(minutes.every((m) => m.rate_per_min === 600)).toBe(true);
  });

  it("with the plan's own rate for a small event (800 seats in 2 min, 1 ticket/order, x1.3 = 520/min)", async () => {
    const eventId = await makeEvent({
      rows: 40,
      seatsPerRow: 20,
      pacing: { targetSaleMinutes: 2, ticketsPerOrder: 1, overbookFactor: 1.3, checkoutMinutes: 6, paymentTps: 1000 },
    });
    await addEntries(t.db, eventId, 500, 'FIFO');
    await openWindow(t.db, eventId);
    const clock = clockInMinute();
    const c = controller(clock, { tickMs: 200 });
    const firstTick = outcomeOf((await c.tickOnce()).events, eventId);
    // No earlier tick, so nothing elapsed; but nobody is inside yet, so one fan is let in at once.
    expect(firstTick).toMatchObject({ status: 'ticked', phase: 'ADMITTING', advanced: 1, admitAtOnce: 1, inside: { total: 0 } });
    const first = await queueState(eventId);
    const last = await tickMany(c, clock, eventId, 15, 200);
    expect(last).toMatchObject({
      status: 'ticked',
      phase: 'ADMITTING',
      ratePerMinute: 520,
      constraint: 'plan',
      claimRatio: 1,
      inventoryState: 'AVAILABLE',
    });
    expect(last?.status === 'ticked' && last.reason).toMatch(/^plan: /);
    const end = await queueState(eventId);
    // The fans let in before the last tick are on their way (nobody polls here): they count as inside, and the cap
    // is what is left of 800 x 1.3.
    const before = end.admitted_through - (last?.status === 'ticked' ? last.advanced : 0);
    expect(last?.status === 'ticked' && last.inside).toEqual({ holding: 0, shopping: 0, arriving: before, total: before, notCome: 0 });
    expect(last?.status === 'ticked' && last.cap).toBe(1040 - before);
    expect(end).toMatchObject({ controller_constraint: 'plan', fans_inside: before, admit_cap: 1040 - before });
    const expected = (520 * (end.heartbeat_at!.getTime() - first.heartbeat_at!.getTime())) / 60_000;
    expect(Math.abs(end.admitted_through - first.admitted_through - expected)).toBeLessThanOrEqual(1.01);
    expect(end.admitted_through).toBeGreaterThanOrEqual(24);
  });

  it('never advances past the last position that exists (an idle queue banks nothing)', async () => {
    const eventId = await makeEvent();
    await addEntries(t.db, eventId, 5, 'FIFO');
    await setRateOverride(t.db, eventId, 60_000, { actor: 'test' });
    const clock = clockInMinute();
    const c = controller(clock, { tickMs: 200 });
    await c.tickOnce();
    await tickMany(c, clock, eventId, 3, 200);
    expect((await queueState(eventId)).admitted_through).toBe(5);
    await addEntries(t.db, eventId, 3, 'FIFO', 5);
    await tickMany(c, clock, eventId, 1, 200);
    expect((await queueState(eventId)).admitted_through).toBe(8);
  });

  it('speeds the watermark up by 1 / claim ratio when admitted fans do not claim', async () => {
    const clock = clockInMinute();
    const eventId = await makeEvent();
    await addEntries(t.db, eventId, 2000, 'FIFO');
    // The five complete minutes before this one: 1,000 positions advanced, 500 admission tokens issued.
    await sql`
      INSERT INTO admission_minutes (event_id, minute, watermark_advanced, admission_tokens_issued, rate_per_min)
      SELECT ${eventId}, date_trunc('minute', ${clock.date()}::timestamptz) - make_interval(mins => g), 200, 100, 600 FROM generate_series(1, 5) g`.execute(
      t.db,
    );
    await setRateOverride(t.db, eventId, 600, { actor: 'test' });
    const c = controller(clock, { tickMs: 200 });
    await c.tickOnce();
    const before = await queueState(eventId);
    const last = await tickMany(c, clock, eventId, 10, 200);
    expect(last).toMatchObject({ status: 'ticked', claimRatio: 0.5, ratePerMinute: 600, watermarkPerMinute: 1200 });
    const after = await queueState(eventId);
    const expected = (1200 * (after.heartbeat_at!.getTime() - before.heartbeat_at!.getTime())) / 60_000;
    expect(Math.abs(after.admitted_through - before.admitted_through - expected)).toBeLessThanOrEqual(1.01);
    expect(after.rate_per_min).toBe(1200);
  });
});

describe('fail closed', () => {
  it('a paused queue does not advance but keeps the heartbeat; resume advances again', async () => {
    const eventId = await makeEvent();
    await addEntries(t.db, eventId, 1000, 'FIFO');
    await setRateOverride(t.db, eventId, 6000, { actor: 'test' });
    const clock = clockInMinute();
    const c = controller(clock, { tickMs: 200 });
    await c.tickOnce();
    await tickMany(c, clock, eventId, 2, 200);
    await pauseQueue(t.db, eventId, { actor: 'ops:alice', reason: 'payment provider degraded' });
    const paused = await queueState(eventId);
    const last = await tickMany(c, clock, eventId, 5, 200);
    expect(last).toMatchObject({ status: 'ticked', phase: 'PAUSED', advanced: 0, ratePerMinute: 0 });
    const still = await queueState(eventId);
    expect(still.admitted_through).toBe(paused.admitted_through);
    expect(still.paused).toBe(true);
    expect(still.heartbeat_at!.getTime()).toBeGreaterThan(paused.heartbeat_at!.getTime() + 500);
    expect(still.heartbeat_at!.getTime()).toBe(clock.now());
    expect(still.controller_id).toBe(c.instanceId);
    expect(still.rate_per_min).toBe(0);

    await resumeQueue(t.db, eventId, { actor: 'ops:alice' });
    await tickMany(c, clock, eventId, 3, 200);
    expect((await queueState(eventId)).admitted_through).toBeGreaterThan(still.admitted_through);
  });

  it('before the open nothing advances, the heartbeat is kept, and the seed stays secret; at the open the cohort is sealed and the seed revealed', async () => {
    const clock = manualClock();
    const eventId = await makeEvent({ onsaleInMs: 1500 });
    await addEntries(t.db, eventId, 7, 'PREOPEN');
    await setRateOverride(t.db, eventId, 6000, { actor: 'test' });
    const c = controller(clock, { tickMs: 200 });
    const before = outcomeOf((await c.tickOnce()).events, eventId);
    expect(before).toMatchObject({ status: 'ticked', phase: 'BEFORE_OPEN', advanced: 0 });
    const q0 = await queueState(eventId);
    expect(q0).toMatchObject({ admitted_through: 0, sealed_at: null, seed_revealed_at: null, cohort_size: null });
    expect(q0.heartbeat_at).not.toBeNull();

    const { onsale_at } = await t.db.selectFrom('events').select('onsale_at').where('id', '=', eventId).executeTakeFirstOrThrow();
    clock.set(onsale_at.getTime() + 200);
    const atOpen = outcomeOf((await c.tickOnce()).events, eventId);
    expect(atOpen).toMatchObject({ status: 'ticked', phase: 'ADMITTING', sealedCohortSize: 7 });
    const q1 = await queueState(eventId);
    expect(q1.cohort_size).toBe(7);
    expect(q1.sealed_at).not.toBeNull();
    expect(q1.seed_revealed_at).toEqual(q1.sealed_at);
    const event = await t.db.selectFrom('events').select('onsale_at').where('id', '=', eventId).executeTakeFirstOrThrow();
    expect(q1.sealed_at!.getTime()).toBeGreaterThanOrEqual(event.onsale_at.getTime());
    const audit = await t.db
      .selectFrom('audit_log')
      .selectAll()
      .where('event_id', '=', eventId)
      .where('action', '=', 'queue.sealed')
      .execute();
    expect(audit).toHaveLength(1);
    const details = audit[0]!.details as { seed: string; seedCommitment: string; cohortSize: number };
    expect(details).toMatchObject({ seed: q1.seed_hex, seedCommitment: q1.seed_commitment, cohortSize: 7 });
    expect(await verifyCommitment(details.seed, details.seedCommitment)).toBe(true);

    // Sealed once: later ticks leave it alone and admit the cohort.
    await tickMany(c, clock, eventId, 3, 200);
    const q2 = await queueState(eventId);
    expect(q2.sealed_at).toEqual(q1.sealed_at);
    expect(q2.admitted_through).toBeGreaterThan(0);
    expect(q2.admitted_through).toBeLessThanOrEqual(7);
  });

  it('SOLD_OUT only when available = 0 and held = 0; LAST_CHANCE while seats are held or only a few are left for fans waiting', async () => {
    const eventId = await makeEvent({
      rows: 1,
      seatsPerRow: 4,
      pacing: { targetSaleMinutes: 1, ticketsPerOrder: 2.5, overbookFactor: 1.3, checkoutMinutes: 6, paymentTps: 1000 },
    });
    await addEntries(t.db, eventId, 100, 'FIFO');
    const clock = clockInMinute();
    const c = controller(clock, { tickMs: 200 });
    const setSeats = async (sold: number, held: number, heldExpired = false) => {
      await sql`UPDATE seats SET status = 'AVAILABLE', hold_id = NULL, expires_at = NULL WHERE event_id = ${eventId}`.execute(t.db);
      await sql`
        UPDATE seats s SET status = CASE WHEN r.n <= ${sold} THEN 'SOLD' ELSE 'HELD' END, hold_id = gen_random_uuid(),
          expires_at = CASE WHEN r.n <= ${sold} THEN NULL ELSE now() + ${heldExpired ? sql`interval '-1 minute'` : sql`interval '5 minutes'`} END
        FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM seats WHERE event_id = ${eventId}) r
        WHERE s.event_id = ${eventId} AND s.id = r.id AND r.n <= ${sold + held}`.execute(t.db);
    };

    await setSeats(2, 2);
    let o = outcomeOf((await c.tickOnce()).events, eventId);
    expect(o).toMatchObject({ status: 'ticked', inventoryState: 'LAST_CHANCE', available: 0, held: 2, soldOut: false });
    expect(o?.status === 'ticked' && o.reason).toMatch(/^last_chance: /);
    expect(await queueState(eventId)).toMatchObject({ inventory_state: 'LAST_CHANCE', sold_out_at: null });
    // LAST_CHANCE admits at the rate seats come back (2 seats released in the last minute / 2.5 per order), below
    // the plan on the unsold seats (2 held / 2.5 per order / 1 min x 1.3 = 1.04).
    await sql`INSERT INTO accounts (id) VALUES ('releaser') ON CONFLICT DO NOTHING`.execute(t.db);
    await sql`INSERT INTO holds (event_id, account_id, section_code, quantity, status, expires_at) VALUES (${eventId}, 'releaser', 'S', 2, 'RELEASED', now() + interval '5 minutes')`.execute(
      t.db,
    );
    clock.advance(200);
    o = outcomeOf((await c.tickOnce()).events, eventId);
    expect(o).toMatchObject({ status: 'ticked', inventoryState: 'LAST_CHANCE', ratePerMinute: 0.8 });

    // The holds lapse (no sweeper ran): read-time expiry makes those seats available again. Two seats left, with fans
    // waiting for them, are only a few (fewer than two orders' worth): still LAST_CHANCE, not AVAILABLE.
    await setSeats(2, 2, true);
    clock.advance(200);
    o = outcomeOf((await c.tickOnce()).events, eventId);
    expect(o).toMatchObject({ inventoryState: 'LAST_CHANCE', available: 2, held: 0 });

    await setSeats(4, 0);
    clock.advance(200);
    o = outcomeOf((await c.tickOnce()).events, eventId);
    expect(o).toMatchObject({ status: 'ticked', phase: 'SOLD_OUT', inventoryState: 'SOLD_OUT', soldOut: true, advanced: 0 });
    const soldOut = await queueState(eventId);
    expect(soldOut.inventory_state).toBe('SOLD_OUT');
    expect(soldOut.sold_out_at).not.toBeNull();

    // Sold out stays audited once; the heartbeat goes on and nothing advances.
    await tickMany(c, clock, eventId, 3, 200);
    const later = await queueState(eventId);
    expect(later.admitted_through).toBe(soldOut.admitted_through);
    expect(later.heartbeat_at!.getTime()).toBeGreaterThan(soldOut.heartbeat_at!.getTime());
    expect(later.sold_out_at).toEqual(soldOut.sold_out_at);
    const audits = await t.db
      .selectFrom('audit_log')
      .select('details')
      .where('event_id', '=', eventId)
      .where('action', '=', 'queue.sold_out')
      .execute();
    expect(audits).toHaveLength(1);
  });
});

describe('one leader per event', () => {
  it('two controllers on one event: only one ticks it, and the watermark advances once per tick', async () => {
    const eventId = await makeEvent();
    await addEntries(t.db, eventId, 1000, 'FIFO');
    await setRateOverride(t.db, eventId, 1200, { actor: 'test' });
    await openWindow(t.db, eventId);
    const clock = clockInMinute();
    const a = controller(clock, { tickMs: 200, instanceId: 'controller-a' });
    const b = controller(clock, { tickMs: 200, instanceId: 'controller-b' });
    /** One tick interval: the clock moves, then both controllers run a pass at once, as two processes would. */
    const round = async () => {
      clock.advance(200);
      await Promise.all([a.tickOnce(), b.tickOnce()]);
    };
    await round();
    const start = await queueState(eventId);
    for (let i = 0; i < 12; i++) await round();
    const end = await queueState(eventId);
    const [leader, other] = a.leading.includes(eventId) ? [a, b] : [b, a];
    expect(leader.leading).toContain(eventId);
    expect(other.leading).not.toContain(eventId);
    expect(other.appliedTicks(eventId)).toBe(0);
    expect(leader.appliedTicks(eventId)).toBe(13);
    expect(end.controller_id).toBe(leader.instanceId);
    // No double advance: the watermark moved at one rate over the time that passed (2.4 s at 1,200/min = 48).
    const expected = (1200 * (end.heartbeat_at!.getTime() - start.heartbeat_at!.getTime())) / 60_000;
    expect(expected).toBe(48);
    expect(Math.abs(end.admitted_through - start.admitted_through - expected)).toBeLessThanOrEqual(1.01);

    // Kill the leader's dedicated connection: its locks go with it, and once the server has ended that backend the
    // other controller takes over on its next pass.
    const killed = leader.connectionPid!;
    await sql`SELECT pg_terminate_backend(${killed})`.execute(t.db);
    await vi.waitFor(
      async () => {
        const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ${killed}`.execute(t.db);
        expect(rows[0]!.n).toBe(0);
      },
      { timeout: 60_000, interval: 20 },
    );
    await round();
    expect((await queueState(eventId)).controller_id).toBe(other.instanceId);
    expect(other.leading).toContain(eventId);
    expect(leader.leading).not.toContain(eventId);
    // The old leader sits out two ticks, reconnects, and finds the lead taken.
    for (let i = 0; i < 3; i++) await round();
    expect(leader.connectionPid).toBeDefined();
    expect(leader.connectionPid).not.toBe(killed);
    expect(leader.leading).not.toContain(eventId);

    const afterTakeover = await queueState(eventId);
    for (let i = 0; i < 5; i++) await round();
    const final = await queueState(eventId);
    expect(final.controller_id).toBe(other.instanceId);
    const expectedAfter = (1200 * (final.heartbeat_at!.getTime() - afterTakeover.heartbeat_at!.getTime())) / 60_000;
    expect(Math.abs(final.admitted_through - afterTakeover.admitted_through - expectedAfter)).toBeLessThanOrEqual(1.01);
    const minutes = await t.db.selectFrom('admission_minutes').select('watermark_advanced').where('event_id', '=', eventId).execute();
    expect(minutes.reduce((s, m) => s + m.watermark_advanced, 0)).toBe(final.admitted_through);
  });

  it('the fence: a tick from another controller less than tickMs/2 after the last one is skipped', async () => {
    const eventId = await makeEvent();
    await addEntries(t.db, eventId, 100, 'FIFO');
    const [event] = (await findActiveEvents(t.db, 7200)).filter((e) => e.event_id === eventId);
    const clock = manualClock();
    const tick = (controllerId: string) => tickEvent(t.db, { event: event!, controllerId, tickMs: 1000, now: clock.date() });
    const [x, y] = await Promise.all([tick('x'), tick('y')]);
    const outcomes = [x, y].map((o) => o.status).sort();
    expect(outcomes).toEqual(['fenced', 'ticked']);
    const fenced = [x, y].find((o) => o.status === 'fenced')!;
    expect(fenced).toMatchObject({ lastTickBy: expect.stringMatching(/^[xy]$/), lastTickAgoMs: 0 });
    // The same controller is never fenced by itself; another one is, until tickMs/2 has passed.
    const by = (await queueState(eventId)).controller_id!;
    const otherId = by === 'x' ? 'y' : 'x';
    expect((await tick(by)).status).toBe('ticked');
    clock.advance(499);
    expect((await tick(otherId)).status).toBe('fenced');
    clock.advance(51);
    expect((await tick(otherId)).status).toBe('ticked');
  });

  it('start() ticks on its own every tickMs; stop() gives the lead up at once', async () => {
    const eventId = await makeEvent();
    const clock = manualClock();
    const a = controller(clock, { tickMs: 50, instanceId: 'stopper-a' });
    await a.start();
    expect(a.leading).toContain(eventId);
    // The loop runs on the process's timers: its passes show up without anyone calling tickOnce.
    await vi.waitFor(() => expect(a.appliedTicks(eventId)).toBeGreaterThanOrEqual(3), { timeout: 60_000, interval: 20 });
    const b = controller(clock, { tickMs: 50, instanceId: 'stopper-b' });
    await b.tickOnce();
    expect(b.leading).not.toContain(eventId);
    await a.stop();
    const ticksAtStop = a.appliedTicks(eventId);
    await b.tickOnce();
    expect(b.leading).toContain(eventId);
    expect(a.appliedTicks(eventId)).toBe(ticksAtStop);
  });
});

describe('who counts as inside (fans who can still buy)', () => {
  it('40 seats left, 27 admitted fans gone for 8 minutes, 61 waiting: a 120/min override admits, and only holders and recent shoppers count', async () => {
    const eventId = await makeEvent({
      rows: 2,
      seatsPerRow: 20,
      pacing: { targetSaleMinutes: 10, ticketsPerOrder: 2, overbookFactor: 1.2, checkoutMinutes: 5, paymentTps: 50 },
    });
    await addEntries(t.db, eventId, 27 + 61, 'FIFO');
    const account = (i: number) => `a-${eventId}-${i}`;
    // The 27 first were admitted and claimed 8 minutes ago (past the 5-minute checkout time) and did nothing.
    await sql`UPDATE queue_state SET admitted_through = 27 WHERE event_id = ${eventId}`.execute(t.db);
    await sql`UPDATE queue_entries SET claimed_at = now() - interval '8 minutes' WHERE event_id = ${eventId} AND join_index < 27`.execute(
      t.db,
    );
    await setRateOverride(t.db, eventId, 120, { actor: 'ops', reason: 'sell the rest' });
    await openWindow(t.db, eventId);
    // The real clock: the rows above are dated by the database's now(), which a clock set back into the minute trails.
    const clock = manualClock();
    const c = controller(clock, { tickMs: 200 });
    let o = outcomeOf((await c.tickOnce()).events, eventId);
    // Before: 27 admitted in the last 10 minutes, none bought = 27 inside for 40 x 1.2 / 2 = 24 plausible fans: 0/min.
    expect(o).toMatchObject({
      status: 'ticked',
      inside: { holding: 0, shopping: 0, arriving: 0, total: 0 },
      cap: 24,
      admitAtOnce: 1,
      advanced: 1,
    });
    expect((await queueState(eventId)).admitted_through).toBe(28);
    const more = await tickMany(c, clock, eventId, 5, 200);
    // The override is clamped to what the 40 seats can plausibly take: 24 fans, less those on their way in.
    expect(more).toMatchObject({ status: 'ticked', constraint: 'plausible_seats' });
    expect(more?.status === 'ticked' && more.ratePerMinute).toBeGreaterThan(0);
    expect(more?.status === 'ticked' && more.reason).toMatch(/\(override: operator rate 120\/min\)$/);

    // Three of the old ones come back and hold (they are inside again); two fans claimed 30 s ago and hold nothing
    // (shopping: within the minute a fan has to choose before counting as a leaver); one claimed two minutes ago and
    // bought (done: not inside).
    await sql`
      INSERT INTO holds (event_id, account_id, section_code, quantity, status, expires_at)
      SELECT ${eventId}, 'a-' || ${eventId}::text || '-' || g, 'S', 2, 'HELD', now() + interval '5 minutes' FROM generate_series(0, 2) g`.execute(
      t.db,
    );
    await sql`UPDATE queue_entries SET claimed_at = now() - interval '30 seconds' WHERE event_id = ${eventId} AND join_index IN (27, 28)`.execute(
      t.db,
    );
    await sql`UPDATE queue_entries SET claimed_at = now() - interval '2 minutes' WHERE event_id = ${eventId} AND join_index = 29`.execute(
      t.db,
    );
    const bought = await sql<{ id: string }>`
      INSERT INTO holds (event_id, account_id, section_code, quantity, status, expires_at)
      VALUES (${eventId}, ${account(29)}, 'S', 2, 'PURCHASED', now()) RETURNING id`.execute(t.db);
    await sql`
      INSERT INTO orders (hold_id, event_id, account_id, idempotency_key, seat_count, amount_cents, instrument_fingerprint, payment_reference)
      VALUES (${bought.rows[0]!.id}, ${eventId}, ${account(29)}, 'k', 2, 2000, 'fp', 'ref')`.execute(t.db);
    clock.advance(200);
    o = outcomeOf((await c.tickOnce()).events, eventId);
    expect(o?.status === 'ticked' && o.inside).toMatchObject({ holding: 3, shopping: 2 });
    // A hold that lapsed gives its fan's slot back too (they claimed 8 minutes ago).
    await sql`UPDATE holds SET expires_at = now() - interval '1 second' WHERE event_id = ${eventId} AND account_id = ${account(0)}`.execute(
      t.db,
    );
    clock.advance(200);
    o = outcomeOf((await c.tickOnce()).events, eventId);
    expect(o?.status === 'ticked' && o.inside).toMatchObject({ holding: 2, shopping: 2 });
  });

  it('with seats available, none held and nobody inside, the next fan is let in on the next tick however slow the pace', async () => {
    // 1 seat left of 40 at 2 tickets/order over 10 minutes: the plan's pace is 0.06 fans/min.
    const eventId = await makeEvent({
      rows: 2,
      seatsPerRow: 20,
      pacing: { targetSaleMinutes: 10, ticketsPerOrder: 2, overbookFactor: 1.2, checkoutMinutes: 5, paymentTps: 50 },
    });
    await sql`UPDATE seats SET status = 'SOLD', hold_id = gen_random_uuid() WHERE event_id = ${eventId} AND id <> (SELECT min(id) FROM seats WHERE event_id = ${eventId})`.execute(
      t.db,
    );
    await addEntries(t.db, eventId, 3, 'FIFO');
    const clock = clockInMinute();
    const c = controller(clock, { tickMs: 200 });
    const o = outcomeOf((await c.tickOnce()).events, eventId);
    // The tail: one fan at once, and a published rate of one fan every 2 s (so the next in line polls that soon).
    expect(o).toMatchObject({
      status: 'ticked',
      available: 1,
      held: 0,
      ratePerMinute: 30,
      admitAtOnce: 1,
      advanced: 1,
      constraint: 'tail',
    });
    // That fan is on their way now: nobody else is let in for the one seat before the tail's gap (2 s + 1 s per fan
    // let in who has not held) has passed.
    const next = await tickMany(c, clock, eventId, 3, 200);
    expect(next).toMatchObject({ status: 'ticked', constraint: 'tail', inside: { arriving: 1 }, advanced: 0 });
    expect(await queueState(eventId)).toMatchObject({ admitted_through: 1, controller_constraint: 'tail', fans_inside: 1, admit_cap: 0 });
    expect((await queueState(eventId)).controller_reason).toMatch(
      /^tail: 1 seats available and nobody holding any; the next fan is let in 3 s/,
    );
    const later = await tickMany(c, clock, eventId, 15, 200);
    expect(later).toMatchObject({ status: 'ticked', admittedThrough: 2 });
  });
});

describe("the controller's checkout signal counts the platform's failures only", () => {
  it("a card declined by its issuer is the fan's outcome; gateway failures counted by the store API and payments that could not complete are failures", async () => {
    const eventId = await makeEvent({ rows: 2, seatsPerRow: 10 });
    await sql`INSERT INTO accounts (id) SELECT 'buyer-' || g FROM generate_series(1, 4) g ON CONFLICT DO NOTHING`.execute(t.db);
    const attempt = async (n: number, status: 'SUCCEEDED' | 'FAILED', errorCode: string | null) => {
      const { rows } = await sql<{ id: string }>`
        INSERT INTO holds (event_id, account_id, section_code, quantity, status, expires_at)
        VALUES (${eventId}, ${`buyer-${n}`}, 'S', 1, 'HELD', now() + interval '5 minutes') RETURNING id`.execute(t.db);
      await sql`
        INSERT INTO checkout_attempts (account_id, idempotency_key, hold_id, request_hash, instrument_fingerprint, seat_count, status, error_code)
        VALUES (${`buyer-${n}`}, ${`k-${n}`}, ${rows[0]!.id}, 'h', 'card', 1, ${status}, ${errorCode})`.execute(t.db);
    };
    await attempt(1, 'SUCCEEDED', null);
    await attempt(2, 'FAILED', 'PAYMENT_DECLINED');
    await attempt(3, 'FAILED', 'PAYMENT_DECLINED');
    let s = await liveSignals(t.db, eventId, { queueId: eventId, allocation: null, checkoutSeconds: 300, arrivalSeconds: 35 });
    expect({ total: s.checkout_total, failed: s.checkout_failed }).toEqual({ total: 3, failed: 0 });
    await attempt(4, 'FAILED', 'PAYMENT_NOT_COMPLETED');
    await sql`INSERT INTO admission_minutes (event_id, minute, checkout_gateway_failures) VALUES (${eventId}, date_trunc('minute', now()), 2)`.execute(
      t.db,
    );
    s = await liveSignals(t.db, eventId, { queueId: eventId, allocation: null, checkoutSeconds: 300, arrivalSeconds: 35 });
    expect({ total: s.checkout_total, failed: s.checkout_failed }).toEqual({ total: 6, failed: 3 });
  });
});
