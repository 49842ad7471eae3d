import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TRPCError } from '@trpc/server';
import { sql } from '@onsale/shared/db';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { createTestDatabase, type TestDatabase } from '@onsale/shared/testing';
import { ZodError } from 'zod';
import { assignEventOrganisation, fieldErrors, type ConsoleUser } from '@onsale/shared/users';
import type { WarRoomMessage } from '@onsale/shared/warroom';
import { callerAs, seedUser, smallEventFile } from './fixtures.js';

let tdb: TestDatabase;
/** On sale now, a house event; `acmeEventId` is Acme Live's, also on sale. */
let eventId: string;
let acmeEventId: string;
let admin: ConsoleUser;
let operator: ConsoleUser;
let viewer: ConsoleUser;
let promoter: ConsoleUser;
let otherPromoter: ConsoleUser;

const onSaleNow = (name: string) => ({
  ...smallEventFile(name),
  onsaleAt: new Date(Date.now() - 600_000).toISOString(),
  startsAt: new Date(Date.now() + 86_400_000).toISOString(),
});

beforeAll(async () => {
  tdb = await createTestDatabase(inject('templateDatabaseUrl'));
  ({ eventId } = await tdb.db
    .transaction()
    .execute((trx) => createEvent(trx, parseEventFile(onSaleNow('War Room Night')), 'test', { signOff: true })));
  ({ eventId: acmeEventId } = await tdb.db
    .transaction()
    .execute((trx) => createEvent(trx, parseEventFile(onSaleNow('Acme Matinee')), 'test', { signOff: true })));
  // A controller heartbeat, so the queue is admitting rather than failed closed.
  await sql`UPDATE queue_state SET heartbeat_at = now() + interval '1 hour'`.execute(tdb.db);
  admin = await seedUser(tdb.db, 'admin@warroom.test', 'admin');
  operator = await seedUser(tdb.db, 'operator@warroom.test', 'operator');
  viewer = await seedUser(tdb.db, 'viewer@warroom.test', 'viewer');
  promoter = await seedUser(tdb.db, 'promoter@acme.test', 'promoter', 'Acme Live');
  otherPromoter = await seedUser(tdb.db, 'promoter@other.test', 'promoter', 'Other Presents');
  await tdb.db.transaction().execute((trx) => assignEventOrganisation(trx, acmeEventId, 'Acme Live', 'test'));
});

afterAll(async () => {
  await tdb?.drop();
});

/** The refusal: tRPC code, domain code, and the fields zod named (what the BFF's error formatter sends). */
async function codeOf(p: Promise<unknown>): Promise<{ code: string; domainCode: string | undefined; fields: string[] }> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(TRPCError);
    const e = err as TRPCError;
    const fields = e.cause instanceof ZodError ? Object.keys(fieldErrors(e.cause)) : [];
    return { code: e.code, domainCode: (e.cause as { code?: string } | undefined)?.code, fields };
  }
  throw new Error('expected the call to fail');
}

/** The first message of a war-room stream (through createCaller: the subscription's async iterable). */
async function firstMessage<T>(stream: Promise<AsyncIterable<T>>): Promise<T> {
  const it = (await stream)[Symbol.asyncIterator]();
  try {
    const r = await it.next();
    if (r.done) throw new Error('the stream ended');
    return r.value;
  } finally {
    await it.return?.();
  }
}

const audits = (action: string, id = eventId) =>
  tdb.db
    .selectFrom('audit_log')
    .select(['actor', 'details'])
    .where('event_id', '=', id)
    .where('action', '=', action)
    .orderBy('id')
    .execute();

describe('warRoom: watching', () => {
  it('a viewer reads the snapshot and watches the stream of an event', async () => {
    const s = await callerAs(tdb.db, viewer).warRoom.snapshot({ eventId });
    expect(s).toMatchObject({
      eventId,
      name: 'War Room Night',
      state: 'ADMITTING',
      fanState: 'WAITING',
      inventory: { capacity: 22, available: 22, drift: 0 },
    });
    const m = (await firstMessage(callerAs(tdb.db, viewer).warRoom.watch({ eventId }))) as Extract<WarRoomMessage, { type: 'snapshot' }>;
    expect(m.type).toBe('snapshot');
    expect(m.snapshot).toMatchObject({ eventId, state: 'ADMITTING' });
    expect(m.history!.at(-1)).toMatchObject({ available: 22, held: 0, sold: 0 });
  });

  it("a promoter watches their organisation's event and is refused another's, by snapshot and by stream", async () => {
    const acme = callerAs(tdb.db, promoter);
    expect((await acme.warRoom.snapshot({ eventId: acmeEventId })).name).toBe('Acme Matinee');
    expect(await codeOf(acme.warRoom.snapshot({ eventId }))).toMatchObject({ code: 'FORBIDDEN', domainCode: 'EVENT_FORBIDDEN' });
    expect(await codeOf(firstMessage(acme.warRoom.watch({ eventId })))).toMatchObject({ code: 'FORBIDDEN', domainCode: 'EVENT_FORBIDDEN' });
    expect(await codeOf(callerAs(tdb.db, otherPromoter).warRoom.snapshot({ eventId: acmeEventId }))).toMatchObject({ code: 'FORBIDDEN' });
  });

  it("the board has every event on sale now for staff, and only the organisation's for a promoter", async () => {
    const all = await firstMessage(callerAs(tdb.db, viewer).warRoom.board({ timeZone: 'Europe/London' }));
    expect(all.type).toBe('board');
    if (all.type !== 'board') return;
    expect(all.tiles.map((t) => t.name).sort()).toEqual(['Acme Matinee', 'War Room Night']);
    const mine = await firstMessage(callerAs(tdb.db, promoter).warRoom.board({ timeZone: 'Europe/London' }));
    expect(mine.type === 'board' && mine.tiles.map((t) => t.name)).toEqual(['Acme Matinee']);
    const none = await firstMessage(callerAs(tdb.db, otherPromoter).warRoom.board({ timeZone: 'UTC' }));
    expect(none.type === 'board' && none.tiles).toEqual([]);
  });

  it('refuses a time zone that does not exist, signed-out callers, and unknown events', async () => {
    expect(await codeOf(firstMessage(callerAs(tdb.db, viewer).warRoom.board({ timeZone: 'Mars/Olympus_Mons' })))).toMatchObject({
      code: 'BAD_REQUEST',
    });
    expect(await codeOf(callerAs(tdb.db, null).warRoom.snapshot({ eventId }))).toMatchObject({ code: 'UNAUTHORIZED' });
    expect(await codeOf(firstMessage(callerAs(tdb.db, null).warRoom.watch({ eventId })))).toMatchObject({ code: 'UNAUTHORIZED' });
    expect(await codeOf(callerAs(tdb.db, viewer).warRoom.snapshot({ eventId: '00000000-0000-4000-8000-000000000000' }))).toMatchObject({
      code: 'NOT_FOUND',
    });
    expect(await codeOf(callerAs(tdb.db, viewer).warRoom.snapshot({ eventId: 'not-an-id' }))).toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('warRoom: controls and their role boundaries', () => {
  it('an operator pauses with a reason: the queue fails closed, the war room shows who and why, the audit has their e-mail', async () => {
    const ops = callerAs(tdb.db, operator);
    const state = await ops.warRoom.pause({ eventId, reason: '  gateway returning 429s  ' });
    expect(state).toMatchObject({ eventId, paused: true, pausedBy: operator.email, pausedReason: 'gateway returning 429s' });
    const s = await ops.warRoom.snapshot({ eventId });
    expect(s).toMatchObject({ state: 'PAUSED', fanState: 'PAUSED', queue: { paused: true, pausedBy: operator.email } });
    expect(s.alerts.map((a) => a.code)).toContain('QUEUE_PAUSED');
    expect(await audits('queue.paused')).toEqual([
      { actor: operator.email, details: expect.objectContaining({ reason: 'gateway returning 429s' }) },
    ]);

    const resumed = await ops.warRoom.resume({ eventId, reason: 'gateway healthy again' });
    expect(resumed).toMatchObject({ paused: false, pausedBy: null });
    expect(await audits('queue.resumed')).toEqual([
      { actor: operator.email, details: expect.objectContaining({ reason: 'gateway healthy again', wasPaused: true }) },
    ]);
    expect((await ops.warRoom.snapshot({ eventId })).state).toBe('ADMITTING');
  });

  it('a viewer and a promoter may watch but not pause, resume or set the rate; nothing is written', async () => {
    for (const user of [viewer, promoter]) {
      const c = callerAs(tdb.db, user);
      for (const target of [eventId, acmeEventId]) {
        expect(await codeOf(c.warRoom.pause({ eventId: target, reason: 'curious' }))).toMatchObject({
          code: 'FORBIDDEN',
          domainCode: 'ROLE_FORBIDDEN',
        });
        expect(await codeOf(c.warRoom.resume({ eventId: target, reason: 'curious' }))).toMatchObject({ code: 'FORBIDDEN' });
        expect(await codeOf(c.warRoom.setRate({ eventId: target, perMinute: 10, reason: 'curious' }))).toMatchObject({ code: 'FORBIDDEN' });
      }
    }
    const { paused } = await tdb.db
      .selectFrom('queue_state')
      .select('paused')
      .where('event_id', '=', acmeEventId)
      .executeTakeFirstOrThrow();
    expect(paused).toBe(false);
    expect(await audits('queue.paused', acmeEventId)).toEqual([]);
  });

  it('an admin may control any event, a house event included', async () => {
    const a = callerAs(tdb.db, admin);
    expect(await a.warRoom.pause({ eventId: acmeEventId, reason: 'admin drill' })).toMatchObject({ paused: true, pausedBy: admin.email });
    expect(await a.warRoom.resume({ eventId: acmeEventId, reason: 'drill over' })).toMatchObject({ paused: false });
  });

  it('a pause or resume needs a reason, named at its field; a mutation needs the CSRF header', async () => {
    const ops = callerAs(tdb.db, operator);
    for (const reason of ['', '   ', 'x'.repeat(501)]) {
      const e = await codeOf(ops.warRoom.pause({ eventId, reason }));
      expect(e).toMatchObject({ code: 'BAD_REQUEST', fields: ['reason'] });
    }
    expect(await codeOf(ops.warRoom.resume({ eventId, reason: ' ' }))).toMatchObject({ code: 'BAD_REQUEST', fields: ['reason'] });
    expect(await codeOf(callerAs(tdb.db, operator, { csrf: false }).warRoom.pause({ eventId, reason: 'no header' }))).toMatchObject({
      code: 'FORBIDDEN',
      domainCode: 'CSRF_HEADER_MISSING',
    });
    expect(await audits('queue.paused')).toHaveLength(1); // only the one from the first test
  });

  it('the rate override stays within 0..100,000 whole admits a minute, or clears back to the plan; each change audited', async () => {
    const ops = callerAs(tdb.db, operator);
    for (const perMinute of [-1, 100_001, 12.5]) {
      const e = await codeOf(ops.warRoom.setRate({ eventId, perMinute, reason: 'out of bounds' }));
      expect(e).toMatchObject({ code: 'BAD_REQUEST', fields: ['perMinute'] });
    }
    expect(await ops.warRoom.setRate({ eventId, perMinute: 600, reason: 'rehearsal: let the load in' })).toMatchObject({
      rateOverridePerMin: 600,
    });
    expect((await ops.warRoom.snapshot({ eventId })).queue.rateOverridePerMin).toBe(600);
    expect(await ops.warRoom.setRate({ eventId, perMinute: null, reason: 'back to plan' })).toMatchObject({ rateOverridePerMin: null });
    expect(await audits('queue.rate_override')).toEqual([
      { actor: operator.email, details: { perMinute: 600, previousPerMinute: null, reason: 'rehearsal: let the load in' } },
      { actor: operator.email, details: { perMinute: null, previousPerMinute: 600, reason: 'back to plan' } },
    ]);
  });

  it('controls on an unknown event are NOT_FOUND', async () => {
    expect(
      await codeOf(callerAs(tdb.db, operator).warRoom.pause({ eventId: '00000000-0000-4000-8000-000000000000', reason: 'x' })),
    ).toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('admissionPlan.inputs', () => {
  it("answers the event's pacing inputs, seats and hold TTL, scoped like every event read", async () => {
    const inputs = await callerAs(tdb.db, viewer).admissionPlan.inputs({ eventId });
    expect(inputs).toMatchObject({
      eventId,
      seats: 22,
      remainingSeats: 22,
      holdTtlSeconds: 360,
      pacing: { targetSaleMinutes: 25, ticketsPerOrder: 2.5, checkoutMinutes: 6, paymentTps: 1000, overbookFactor: 1.3 },
      defaults: { abandonmentRate: 0.3, paymentAttemptsPerBuyer: 1.1 },
    });
    expect((await callerAs(tdb.db, promoter).admissionPlan.inputs({ eventId: acmeEventId })).name).toBe('Acme Matinee');
    expect(await codeOf(callerAs(tdb.db, promoter).admissionPlan.inputs({ eventId }))).toMatchObject({ code: 'FORBIDDEN' });
  });
});

describe('warRoom: presale tiers each have their own queue', () => {
  /** Presales FANCLUB (selling now) and CARD (later), the general sale tomorrow. Created here so the board above never sees it. */
  let tieredId: string;
  const at = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();
  const queueOf = async (code: string) =>
    (
      await tdb.db
        .selectFrom('allocations')
        .select('queue_id')
        .where('event_id', '=', tieredId)
        .where('code', '=', code)
        .executeTakeFirstOrThrow()
    ).queue_id;
  const pausedOf = async (queueId: string) =>
    (await tdb.db.selectFrom('queue_state').select('paused').where('event_id', '=', queueId).executeTakeFirstOrThrow()).paused;

  beforeAll(async () => {
    const file = {
      ...smallEventFile('Tiered War Room'),
      onsaleAt: at(24 * 60),
      startsAt: at(7 * 24 * 60),
      allocations: [
        { code: 'FANCLUB', name: 'Fan club', share: 0.5, access: 'OPEN', opensAt: at(-30), closesAt: at(120), fairnessMode: 'FIFO' },
        { code: 'CARD', name: 'Card partner', share: 0.25, access: 'OPEN', opensAt: at(180), closesAt: at(240) },
        { code: 'GENERAL', name: 'General sale' },
      ],
    };
    ({ eventId: tieredId } = await tdb.db
      .transaction()
      .execute((trx) => createEvent(trx, parseEventFile(file), 'test', { signOff: true })));
    // The fan club's queue: 5 fans joined, 2 admitted, the controller beating on it at 30/min; the card queue has no heartbeat.
    const fanclub = await queueOf('FANCLUB');
    await sql`INSERT INTO accounts (id) SELECT 'tier-fan-' || i FROM generate_series(0, 4) i ON CONFLICT DO NOTHING`.execute(tdb.db);
    await sql`INSERT INTO queue_entries (event_id, account_id, device_hash, join_index, cohort)
              SELECT ${fanclub}::uuid, 'tier-fan-' || i, 'd' || i, i, 'FIFO' FROM generate_series(0, 4) i`.execute(tdb.db);
    await sql`UPDATE queue_state SET admitted_through = 2, rate_per_min = 30, heartbeat_at = now() + interval '1 hour' WHERE event_id = ${fanclub}::uuid`.execute(
      tdb.db,
    );
  });

  it("each presale tier carries its queue's figures; the general sale's are the event's own queue", async () => {
    const s = await callerAs(tdb.db, viewer).warRoom.snapshot({ eventId: tieredId });
    const [fanclub, card, general] = s.tiers;
    expect(fanclub).toMatchObject({
      code: 'FANCLUB',
      queue: {
        queueId: await queueOf('FANCLUB'),
        paused: false,
        joined: 5,
        admittedThrough: 2,
        waiting: 3,
        publishedRatePerMin: 30,
        rateOverridePerMin: null,
        heartbeatFresh: true,
      },
    });
    expect(card).toMatchObject({
      code: 'CARD',
      queue: { paused: false, joined: 0, waiting: 0, heartbeatAgeSeconds: null, heartbeatFresh: false },
    });
    expect(general).toMatchObject({
      code: 'GENERAL',
      general: true,
      queue: { queueId: tieredId, paused: s.queue.paused, joined: s.queue.joined, admittedThrough: s.queue.admittedThrough },
    });
  });

  it('an operator pauses one tier: only its queue stops, the snapshot shows who and why on that tier; resume restores it', async () => {
    const ops = callerAs(tdb.db, operator);
    const state = await ops.warRoom.pause({ eventId: tieredId, tier: 'FANCLUB', reason: 'fan club codes leaked' });
    expect(state).toMatchObject({
      eventId: tieredId,
      tier: 'FANCLUB',
      paused: true,
      pausedBy: operator.email,
      pausedReason: 'fan club codes leaked',
    });
    expect(await pausedOf(await queueOf('FANCLUB'))).toBe(true);
    expect(await pausedOf(await queueOf('CARD'))).toBe(false);
    expect(await pausedOf(tieredId)).toBe(false);

    const s = await ops.warRoom.snapshot({ eventId: tieredId });
    expect(s.queue.paused).toBe(false);
    expect(s.tiers.map((t) => [t.code, t.queue?.paused])).toEqual([
      ['FANCLUB', true],
      ['CARD', false],
      ['GENERAL', false],
    ]);
    expect(s.tiers[0]!.queue).toMatchObject({
      pausedBy: operator.email,
      pausedReason: 'fan club codes leaked',
      pausedAt: expect.any(String),
      waiting: 3,
    });
    expect(await audits('queue.paused', tieredId)).toEqual([
      { actor: operator.email, details: expect.objectContaining({ reason: 'fan club codes leaked', tier: 'FANCLUB' }) },
    ]);

    expect(await ops.warRoom.resume({ eventId: tieredId, tier: 'FANCLUB', reason: 'codes rotated' })).toMatchObject({
      tier: 'FANCLUB',
      paused: false,
    });
    expect((await ops.warRoom.snapshot({ eventId: tieredId })).tiers.every((t) => t.queue?.paused === false)).toBe(true);
  });

  it('a viewer may not pause or resume a tier; nothing is written', async () => {
    const v = callerAs(tdb.db, viewer);
    expect(await codeOf(v.warRoom.pause({ eventId: tieredId, tier: 'FANCLUB', reason: 'curious' }))).toMatchObject({
      code: 'FORBIDDEN',
      domainCode: 'ROLE_FORBIDDEN',
    });
    expect(await codeOf(v.warRoom.resume({ eventId: tieredId, tier: 'FANCLUB', reason: 'curious' }))).toMatchObject({ code: 'FORBIDDEN' });
    expect(await pausedOf(await queueOf('FANCLUB'))).toBe(false);
    expect(await audits('queue.paused', tieredId)).toHaveLength(1); // the operator's, above
  });

  it('the event-level pause stops every queue of the event and the snapshot shows each tier paused; an unknown tier is NOT_FOUND', async () => {
    const ops = callerAs(tdb.db, operator);
    await ops.warRoom.pause({ eventId: tieredId, reason: 'payment provider down' });
    const s = await ops.warRoom.snapshot({ eventId: tieredId });
    expect(s.queue.paused).toBe(true);
    expect(s.tiers.map((t) => t.queue?.paused)).toEqual([true, true, true]);
    await ops.warRoom.resume({ eventId: tieredId, reason: 'provider back' });
    expect((await ops.warRoom.snapshot({ eventId: tieredId })).tiers.map((t) => t.queue?.paused)).toEqual([false, false, false]);
    expect(await codeOf(ops.warRoom.pause({ eventId: tieredId, tier: 'NOPE', reason: 'x' }))).toMatchObject({
      code: 'NOT_FOUND',
      domainCode: 'TIER_NOT_FOUND',
    });
  });
});

describe('warRoom: alert history and receivers, the words fans read, schedules, the whole sale', () => {
  // Last in the file: it pauses and resumes, which the counts of the tests above must not see.
  it('reads the controls back as the server has them (what the console confirms a control by), scoped like every event read', async () => {
    const ops = callerAs(tdb.db, operator);
    await ops.warRoom.pause({ eventId, reason: 'read-back check' });
    const read = await callerAs(tdb.db, viewer).warRoom.controls({ eventId });
    expect(read).toMatchObject({
      eventId,
      paused: true,
      pausedBy: operator.email,
      pausedReason: 'read-back check',
      rateOverridePerMin: null,
      at: expect.any(String),
    });
    await ops.warRoom.resume({ eventId, reason: 'read-back done' });
    expect((await ops.warRoom.controls({ eventId })).paused).toBe(false);
    expect(await codeOf(callerAs(tdb.db, otherPromoter).warRoom.controls({ eventId: acmeEventId }))).toMatchObject({ code: 'FORBIDDEN' });
    expect(await codeOf(callerAs(tdb.db, null).warRoom.controls({ eventId }))).toMatchObject({ code: 'UNAUTHORIZED' });
    expect(await codeOf(ops.warRoom.controls({ eventId: '00000000-0000-4000-8000-000000000000' }))).toMatchObject({ code: 'NOT_FOUND' });
  });

  const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();

  it('every reader sees the alert history; only admins and operators manage alert receivers, audited', async () => {
    expect(await callerAs(tdb.db, viewer).warRoom.alertHistory({ eventId })).toEqual(expect.any(Array));
    expect(await codeOf(callerAs(tdb.db, otherPromoter).warRoom.alertHistory({ eventId: acmeEventId }))).toMatchObject({
      code: 'FORBIDDEN',
    });
    const added = await callerAs(tdb.db, operator).warRoom.addAlertReceiver({
      url: 'https://hooks.slack.com/services/T1/B1/ops',
      eventId,
      minSeverity: 'critical',
    });
    expect(added).toMatchObject({
      url: 'https://hooks.slack.com/services/T1/B1/ops',
      eventId,
      minSeverity: 'critical',
      active: true,
      createdBy: operator.email,
      secret: expect.stringMatching(/^whsec_/),
    });
    expect((await callerAs(tdb.db, admin).warRoom.alertReceivers()).map((r) => r.id)).toContain(added.id);
    expect((await callerAs(tdb.db, admin).warRoom.alertReceivers())[0]).not.toHaveProperty('secret');
    for (const u of [viewer, promoter]) {
      expect(await codeOf(callerAs(tdb.db, u).warRoom.alertReceivers())).toMatchObject({ code: 'FORBIDDEN' });
      expect(await codeOf(callerAs(tdb.db, u).warRoom.addAlertReceiver({ url: 'https://example.com/x' }))).toMatchObject({
        code: 'FORBIDDEN',
      });
    }
    expect((await codeOf(callerAs(tdb.db, operator).warRoom.addAlertReceiver({ url: 'ftp://example.com' }))).fields).toEqual(['url']);
    // Internal receivers (the metadata service, this machine in any spelling) are refused.
    for (const url of ['http://metadata.google.internal/computeMetadata/v1/', 'http://0x7f.1:3001/', 'http://[fd00:ec2::254]/'])
      expect(await codeOf(callerAs(tdb.db, operator).warRoom.addAlertReceiver({ url })), url).toMatchObject({
        code: 'BAD_REQUEST',
        domainCode: 'INVALID_ALERT_ENDPOINT',
      });
    expect(await callerAs(tdb.db, operator).warRoom.setAlertReceiverActive({ id: added.id, active: false })).toMatchObject({
      active: false,
    });
    expect((await audits('alerts.receiver_added')).map((a) => a.actor)).toEqual([operator.email]);
    expect(await callerAs(tdb.db, operator).warRoom.alertDeliveries({ id: added.id })).toEqual([]);
  });

  it("the words fans read: every reader sees them; admins, operators and the event's promoter change them against the version; others are refused", async () => {
    const view = await callerAs(tdb.db, viewer).warRoom.queueCopy({ eventId: acmeEventId });
    expect(view.words.en.WAITING.custom).toBe(false);
    const saved = await callerAs(tdb.db, promoter).warRoom.setQueueCopy({
      eventId: acmeEventId,
      expectedVersion: view.version,
      words: { en: { PAUSED: 'A short pause: your place is kept.' } },
      reason: 'our words',
    });
    expect(saved.words.en.PAUSED).toMatchObject({ text: 'A short pause: your place is kept.', custom: true });
    expect(
      await codeOf(
        callerAs(tdb.db, otherPromoter).warRoom.setQueueCopy({
          eventId: acmeEventId,
          expectedVersion: saved.version,
          words: { en: { PAUSED: 'x' } },
          reason: 'x',
        }),
      ),
    ).toMatchObject({ code: 'FORBIDDEN' });
    expect(
      await codeOf(
        callerAs(tdb.db, viewer).warRoom.setQueueCopy({
          eventId: acmeEventId,
          expectedVersion: saved.version,
          words: { en: { PAUSED: 'x' } },
          reason: 'x',
        }),
      ),
    ).toMatchObject({ code: 'FORBIDDEN', domainCode: 'ROLE_FORBIDDEN' });
    expect(
      await codeOf(
        callerAs(tdb.db, operator).warRoom.setQueueCopy({
          eventId: acmeEventId,
          expectedVersion: view.version,
          words: { en: { PAUSED: 'x' } },
          reason: 'x',
        }),
      ),
    ).toMatchObject({ code: 'CONFLICT', domainCode: 'STALE_EVENT_VERSION' });
  });

  it('schedules: operators schedule and cancel with a reason, everyone sees them, viewers and promoters may not schedule', async () => {
    const ops = callerAs(tdb.db, operator);
    const s = await ops.warRoom.schedule({
      eventId,
      action: 'RATE',
      perMinute: 300,
      runAt: inSeconds(1800),
      reason: 'second wave at half past',
    });
    expect(s).toMatchObject({ action: 'RATE', perMinute: 300, status: 'PENDING', createdBy: operator.email });
    expect((await callerAs(tdb.db, viewer).warRoom.schedules({ eventId })).map((x) => x.id)).toEqual([s.id]);
    expect(
      await codeOf(callerAs(tdb.db, viewer).warRoom.schedule({ eventId, action: 'PAUSE', runAt: inSeconds(1800), reason: 'x' })),
    ).toMatchObject({ code: 'FORBIDDEN' });
    expect(
      await codeOf(
        callerAs(tdb.db, promoter).warRoom.schedule({ eventId: acmeEventId, action: 'PAUSE', runAt: inSeconds(1800), reason: 'x' }),
      ),
    ).toMatchObject({ code: 'FORBIDDEN' });
    expect((await codeOf(ops.warRoom.schedule({ eventId, action: 'PAUSE', runAt: inSeconds(-10), reason: 'x' }))).domainCode).toBe(
      'SCHEDULE_IN_PAST',
    );
    expect(await ops.warRoom.cancelSchedule({ eventId, id: s.id, reason: 'no second wave' })).toMatchObject({
      status: 'CANCELLED',
      cancelledBy: operator.email,
    });
  });

  it('the series of the whole sale, every reader, scoped like the war room', async () => {
    await sql`
      INSERT INTO sale_minutes (event_id, minute, state, capacity, available, held, sold, joined, waiting, admitted_through, admitted, controller_rate_per_min,
                                plan_admits_per_min, rate_override_per_min, checkout_attempts, checkout_failed, checkout_declined, payment_attempts_per_second,
                                hold_latency_p99_ms, alerts_critical, alerts_warning)
      VALUES (${eventId}, date_trunc('minute', now()) - interval '1 minute', 'ADMITTING', 40, 30, 4, 6, 20, 8, 12, 5, 6, 6, NULL, 3, 0, 1, 0.1, NULL, 0, 0)`.execute(
      tdb.db,
    );
    const series = await callerAs(tdb.db, viewer).warRoom.series({ eventId });
    expect(series).toHaveLength(1);
    expect(series[0]).toMatchObject({ state: 'ADMITTING', available: 30, held: 4, sold: 6, waiting: 8, admitted: 5 });
    expect(await codeOf(callerAs(tdb.db, otherPromoter).warRoom.series({ eventId: acmeEventId }))).toMatchObject({ code: 'FORBIDDEN' });

    // The same minutes as CSV: one row a minute, UTC and the venue's wall clock, units in the column names.
    const csv = await callerAs(tdb.db, viewer).warRoom.seriesCsv({ eventId });
    expect(csv).toMatchObject({ filename: `onsale-series-${eventId}.csv`, rows: 1 });
    const rows = parse<Record<string, string>>(csv.csv, { columns: true });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      'Minute (UTC)': series[0]!.minute,
      State: 'ADMITTING',
      Capacity: '40',
      Available: '30',
      Held: '4',
      Sold: '6',
      Waiting: '8',
      'Admitted (admission tokens issued)': '5',
      'Operator rate override (admits/min)': '',
      'Cards declined by their issuer': '1',
    });
    expect(rows[0]!['Minute at the venue']).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:00$/);
    expect(await codeOf(callerAs(tdb.db, otherPromoter).warRoom.seriesCsv({ eventId: acmeEventId }))).toMatchObject({ code: 'FORBIDDEN' });
    expect(await codeOf(callerAs(tdb.db, null).warRoom.seriesCsv({ eventId }))).toMatchObject({ code: 'UNAUTHORIZED' });
  });
});
