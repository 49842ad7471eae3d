import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TRPCError } from '@trpc/server';
import { DomainError } from '@onsale/shared';
import { sql } from '@onsale/shared/db';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { registerForLottery } from '@onsale/shared/lottery';
import { createTestDatabase, type TestDatabase } from '@onsale/shared/testing';
import { assignEventOrganisation, type ConsoleUser } from '@onsale/shared/users';
import { callerAs, seedUser, smallEventFile } from './fixtures.js';

// The lottery procedures through createCaller against real PostgreSQL: who may read and draw, the draw itself
// (idempotent), and the refusals.

let tdb: TestDatabase;
let admin: ConsoleUser;
let operator: ConsoleUser;
let viewer: ConsoleUser;
let acme: ConsoleUser;
let beta: ConsoleUser;
let acmeLottery: string;
let openLottery: string;
let plainEvent: string;
const HOUR = 3600_000;
const at = (h: number) => new Date(Date.now() + h * HOUR).toISOString();

const lotteryFile = (opensH: number, closesH: number, onsaleH: number) =>
  parseEventFile({
    ...smallEventFile('Acme Lottery'),
    startsAt: at(24 * 30),
    onsaleAt: at(onsaleH),
    fairnessMode: 'REGISTRATION_LOTTERY',
    lottery: { registrationOpensAt: at(opensH), registrationClosesAt: at(closesH), expectedConversion: 0.8, cohorts: 2, cohortMinutes: 30 },
  });

async function refusal(p: Promise<unknown>): Promise<{ code: string; domainCode: string | undefined }> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(TRPCError);
    const cause = (err as TRPCError).cause;
    return { code: (err as TRPCError).code, domainCode: cause instanceof DomainError ? cause.code : undefined };
  }
  throw new Error('expected the call to be refused');
}

beforeAll(async () => {
  tdb = await createTestDatabase(inject('templateDatabaseUrl'), { max: 8 });
  [admin, operator, viewer, acme, beta] = await Promise.all([
    seedUser(tdb.db, 'admin@lottery.test', 'admin'),
    seedUser(tdb.db, 'operator@lottery.test', 'operator'),
    seedUser(tdb.db, 'viewer@lottery.test', 'viewer'),
    seedUser(tdb.db, 'promoter@acme.test', 'promoter', 'Acme Live'),
    seedUser(tdb.db, 'promoter@beta.test', 'promoter', 'Beta Presents'),
  ]);
  ({ eventId: acmeLottery } = await tdb.db
    .transaction()
    .execute((trx) => createEvent(trx, lotteryFile(-3, -2, -1), 'test', { signOff: true })));
  ({ eventId: openLottery } = await tdb.db
    .transaction()
    .execute((trx) => createEvent(trx, lotteryFile(-1, 1, 2), 'test', { signOff: true })));
  ({ eventId: plainEvent } = await tdb.db
    .transaction()
    .execute((trx) => createEvent(trx, parseEventFile(smallEventFile('Plain')), 'test', { signOff: true })));
  await tdb.db.transaction().execute((trx) => assignEventOrganisation(trx, acmeLottery, 'Acme Live', 'test'));
  const during = new Date(Date.now() - 2.5 * HOUR);
  for (let i = 0; i < 30; i++)
    await tdb.db
      .transaction()
      .execute((trx) => registerForLottery(trx, { eventId: acmeLottery, accountId: `bff-fan-${i}`, quantity: (i % 2) + 1, now: during }));
});
afterAll(() => tdb?.drop());

describe('lottery procedures', () => {
  it('summary before the draw: the commitment, no seed, the registrations; refused to another organisation', async () => {
    const s = await callerAs(tdb.db, viewer).lottery.summary({ eventId: acmeLottery });
    expect(s).toMatchObject({
      eventId: acmeLottery,
      registrationCount: 30,
      seed: null,
      draw: null,
      seatsOffered: 22,
      targetRequestedSeats: 27,
      cohorts: 2,
    });
    expect(s.seedCommitment).toMatch(/^[0-9a-f]{64}$/);
    expect(await callerAs(tdb.db, acme).lottery.summary({ eventId: acmeLottery })).toMatchObject({ registrationCount: 30 });
    expect(await refusal(callerAs(tdb.db, beta).lottery.summary({ eventId: acmeLottery }))).toEqual({
      code: 'FORBIDDEN',
      domainCode: 'EVENT_FORBIDDEN',
    });
    expect(await refusal(callerAs(tdb.db, admin).lottery.summary({ eventId: plainEvent }))).toEqual({
      code: 'CONFLICT',
      domainCode: 'NOT_A_LOTTERY_EVENT',
    });
    expect(await refusal(callerAs(tdb.db, null).lottery.summary({ eventId: acmeLottery }))).toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('draw: viewers, other organisations and early draws are refused; nothing is written', async () => {
    expect(await refusal(callerAs(tdb.db, viewer).lottery.draw({ eventId: acmeLottery }))).toEqual({
      code: 'FORBIDDEN',
      domainCode: 'ROLE_FORBIDDEN',
    });
    expect(await refusal(callerAs(tdb.db, beta).lottery.draw({ eventId: acmeLottery }))).toEqual({
      code: 'FORBIDDEN',
      domainCode: 'EVENT_FORBIDDEN',
    });
    expect(await refusal(callerAs(tdb.db, operator).lottery.draw({ eventId: openLottery }))).toEqual({
      code: 'CONFLICT',
      domainCode: 'DRAW_TOO_EARLY',
    });
    expect(await refusal(callerAs(tdb.db, acme, { csrf: false }).lottery.draw({ eventId: acmeLottery }))).toEqual({
      code: 'FORBIDDEN',
      domainCode: 'CSRF_HEADER_MISSING',
    });
    expect(await tdb.db.selectFrom('lottery_winners').select('rank').execute()).toEqual([]);
  });

  it("the event's promoter runs the draw (audited with their e-mail); run again by an operator it returns the same draw", async () => {
    const draw = await callerAs(tdb.db, acme).lottery.draw({ eventId: acmeLottery });
    expect(draw).toMatchObject({ alreadyDrawn: false, drawnBy: 'promoter@acme.test', registrations: 30, targetRequestedSeats: 27 });
    expect(draw.invitedSeats).toBeGreaterThanOrEqual(27);
    expect(draw.cohorts.map((c) => c.cohort)).toEqual([0, 1]);
    const again = await callerAs(tdb.db, operator).lottery.draw({ eventId: acmeLottery });
    expect(again).toMatchObject({ alreadyDrawn: true, seed: draw.seed, winners: draw.winners, drawnBy: 'promoter@acme.test' });
    const audit = await tdb.db
      .selectFrom('audit_log')
      .select(['actor'])
      .where('event_id', '=', acmeLottery)
      .where('action', '=', 'lottery.drawn')
      .execute();
    expect(audit).toEqual([{ actor: 'promoter@acme.test' }]);
    const s = await callerAs(tdb.db, admin).lottery.summary({ eventId: acmeLottery });
    expect(s).toMatchObject({ seed: draw.seed, draw: { winners: draw.winners, nonWinners: 30 - draw.winners } });
    const v = await callerAs(tdb.db, viewer).lottery.verify({ eventId: acmeLottery });
    expect(v).toMatchObject({ ok: true, registrations: 30, winners: draw.winners });
  });
  it('the draw told each registered fan: one notification per registration, none more when run again', async () => {
    const { rows } = await sql<{ kind: string; n: number }>`
      SELECT kind, count(*)::int AS n FROM notifications WHERE event_id = ${acmeLottery} GROUP BY kind ORDER BY kind`.execute(tdb.db);
    const s = await callerAs(tdb.db, admin).lottery.summary({ eventId: acmeLottery });
    expect(rows).toEqual([
      { kind: 'LOTTERY_NOT_DRAWN', n: 30 - s.draw!.winners },
      { kind: 'LOTTERY_WON', n: s.draw!.winners },
    ]);
  });

  it('lottery.draw is a permission the console reads: admin, operator and promoter have it, a viewer not', async () => {
    for (const [user, has] of [
      [admin, true],
      [operator, true],
      [acme, true],
      [viewer, false],
    ] as const)
      expect((await callerAs(tdb.db, user).auth.me())?.permissions.includes('lottery.draw')).toBe(has);
  });
});

describe('editing a lottery event', () => {
  it('reads the lottery back; saved unchanged nothing changes; a change once registration opened is CONFLICT at `lottery`', async () => {
    const config = await callerAs(tdb.db, admin).eventConfig.get({ id: openLottery });
    expect(config.file.lottery).toMatchObject({ expectedConversion: 0.8, cohorts: 2, cohortMinutes: 30 });
    expect(
      await callerAs(tdb.db, admin).eventConfig.update({ eventId: openLottery, expectedVersion: config.version, event: config.file }),
    ).toMatchObject({ changes: [] });
    expect(config.locked.lottery).toContain('registration opened');
    const refused = await refusal(
      callerAs(tdb.db, admin).eventConfig.update({
        eventId: openLottery,
        expectedVersion: config.version,
        event: { ...config.file, lottery: { ...config.file.lottery!, cohorts: 3 } },
      }),
    );
    expect(refused).toEqual({ code: 'CONFLICT', domainCode: 'REGISTRATION_OPENED' });
  });

  it('an event switched to the lottery before registration opens takes registrations', async () => {
    const { eventId } = await tdb.db.transaction().execute((trx) =>
      createEvent(trx, parseEventFile({ ...smallEventFile('Switched'), startsAt: at(24 * 30), onsaleAt: at(48) }), 'test', {
        signOff: true,
      }),
    );
    const config = await callerAs(tdb.db, admin).eventConfig.get({ id: eventId });
    const lottery = { registrationOpensAt: at(1), registrationClosesAt: at(24) };
    const saved = await callerAs(tdb.db, admin).eventConfig.update({
      eventId,
      expectedVersion: config.version,
      event: { ...config.file, fairnessMode: 'REGISTRATION_LOTTERY', lottery },
    });
    expect(saved.changes.map((c) => c.setting)).toEqual(['fairnessMode', 'lottery']);
    const r = await tdb.db
      .transaction()
      .execute((trx) => registerForLottery(trx, { eventId, accountId: 'switched-fan', quantity: 1, now: new Date(Date.now() + 2 * HOUR) }));
    expect(r.created).toBe(true);
  });
});
