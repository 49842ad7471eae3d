import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startWorker } from '../jobs/worker.js';
import { createOpenEvent, createTestDatabase, domainError, type TestDatabase } from '../testing/index.js';
import { readQueueControls } from './operator.js';
import {
  cancelQueueSchedule,
  listQueueSchedules,
  QUEUE_SCHEDULE_TASK,
  runScheduledControl,
  scheduleQueueControl,
} from './schedule.service.js';

// A pause, a resume or a rate change set for a time, run once at that time by a graphile-worker
// job through the war room's own controls, audited with who scheduled it; cancelled before it runs, it never runs.

let t: TestDatabase;
let eventId: string;
const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
  ({ eventId } = await createOpenEvent(t.db, { name: 'Scheduled Night' }));
});
afterAll(() => t.drop());

const schedule = (input: Record<string, unknown>, actor = 'ops@example.com') =>
  t.db.transaction().execute((trx) => scheduleQueueControl(trx, { eventId, ...input }, actor));
const jobOf = async (id: number) =>
  (
    await sql<{ run_at: Date; key: string }>`
      SELECT j.run_at, j.key FROM graphile_worker.jobs j WHERE j.task_identifier = ${QUEUE_SCHEDULE_TASK} AND j.key = ${`queue_schedule:${id}`}`.execute(
      t.db,
    )
  ).rows[0];

describe('scheduled queue controls', () => {
  it('records the control with a job due at its time, audited; runs it once at its time as its scheduler; a second run does nothing', async () => {
    const s = await schedule({ action: 'PAUSE', runAt: inSeconds(3600), reason: 'the venue asked for a break at half past' });
    expect(s).toMatchObject({ eventId, action: 'PAUSE', status: 'PENDING', createdBy: 'ops@example.com', perMinute: null });
    const job = await jobOf(s.id);
    expect(job?.run_at.toISOString()).toBe(s.runAt.toISOString());
    const audit = await t.db
      .selectFrom('audit_log')
      .select(['actor', 'details'])
      .where('action', '=', 'queue.control_scheduled')
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({
      actor: 'ops@example.com',
      details: { scheduleId: s.id, action: 'PAUSE', reason: 'the venue asked for a break at half past' },
    });

    const ran = await runScheduledControl(t.db, s.id);
    expect(ran).toMatchObject({ status: 'DONE', result: 'admissions paused' });
    expect(await readQueueControls(t.db, eventId)).toMatchObject({
      paused: true,
      pausedBy: 'ops@example.com',
      pausedReason: expect.stringContaining('(scheduled by ops@example.com for '),
    });
    expect(await runScheduledControl(t.db, s.id)).toBeNull();
    const pauses = await t.db
      .selectFrom('audit_log')
      .select('actor')
      .where('action', '=', 'queue.paused')
      .where('event_id', '=', eventId)
      .execute();
    expect(pauses).toEqual([{ actor: 'ops@example.com' }]);
  });

  it('a rate change and a resume; cancelled before its time it never runs, and its job is gone', async () => {
    const rate = await schedule({ action: 'RATE', perMinute: 900, runAt: inSeconds(600), reason: 'open the taps after the pause' });
    const resume = await schedule({ action: 'RESUME', runAt: inSeconds(300), reason: 'break over' });
    const back = await schedule({ action: 'RATE', perMinute: null, runAt: inSeconds(900), reason: 'back to the plan' });
    expect((await listQueueSchedules(t.db, eventId)).filter((x) => x.status === 'PENDING').map((x) => x.id)).toEqual([
      resume.id,
      rate.id,
      back.id,
    ]);
    await runScheduledControl(t.db, resume.id);
    await runScheduledControl(t.db, rate.id);
    expect(await readQueueControls(t.db, eventId)).toMatchObject({ paused: false, rateOverridePerMin: 900 });

    const cancelled = await t.db
      .transaction()
      .execute((trx) => cancelQueueSchedule(trx, { eventId, id: back.id, reason: 'plan stays at 900' }, 'lead@example.com'));
    expect(cancelled).toMatchObject({ status: 'CANCELLED', cancelledBy: 'lead@example.com' });
    expect(await jobOf(back.id)).toBeUndefined();
    expect(await runScheduledControl(t.db, back.id)).toBeNull();
    expect((await readQueueControls(t.db, eventId)).rateOverridePerMin).toBe(900);
    const again = await domainError(
      t.db.transaction().execute((trx) => cancelQueueSchedule(trx, { eventId, id: back.id, reason: 'twice' }, 'x')),
    );
    expect(again).toMatchObject({ code: 'SCHEDULE_NOT_PENDING', details: { field: 'id' } });
  });

  it('refuses a time in the past or after the event starts, a rate without admits per minute, a bad tier, at the field; writes nothing', async () => {
    const before = (await listQueueSchedules(t.db, eventId)).length;
    const refused = async (input: Record<string, unknown>) => {
      const e = await domainError(schedule(input));
      return [e.code, e.details.field];
    };
    expect(await refused({ action: 'PAUSE', runAt: inSeconds(-60), reason: 'x' })).toEqual(['SCHEDULE_IN_PAST', 'runAt']);
    expect(await refused({ action: 'PAUSE', runAt: inSeconds(3), reason: 'x' })).toEqual(['SCHEDULE_IN_PAST', 'runAt']);
    expect(await refused({ action: 'PAUSE', runAt: inSeconds(3 * 86_400), reason: 'x' })).toEqual(['SCHEDULE_AFTER_EVENT', 'runAt']);
    expect(await refused({ action: 'RATE', runAt: inSeconds(600), reason: 'x' })).toEqual(['INVALID_QUEUE_SCHEDULE', 'perMinute']);
    expect(await refused({ action: 'RATE', perMinute: 200_000, runAt: inSeconds(600), reason: 'x' })).toEqual([
      'INVALID_QUEUE_SCHEDULE',
      'perMinute',
    ]);
    expect(await refused({ action: 'PAUSE', runAt: 'half past ten', reason: 'x' })).toEqual(['INVALID_QUEUE_SCHEDULE', 'runAt']);
    expect(await refused({ action: 'PAUSE', runAt: inSeconds(600), reason: '  ' })).toEqual(['INVALID_QUEUE_SCHEDULE', 'reason']);
    expect(await refused({ action: 'PAUSE', runAt: inSeconds(600), reason: 'x', tier: 'NOPE' })).toEqual(['TIER_NOT_FOUND', 'tier']);
    expect((await listQueueSchedules(t.db, eventId)).length).toBe(before);
  });

  it('the worker runs a control at its time through its job', async () => {
    await t.db
      .transaction()
      .execute((trx) =>
        sql`UPDATE queue_state SET paused = false, paused_by = NULL, paused_reason = NULL, paused_at = NULL WHERE event_id = ${eventId}`.execute(
          trx,
        ),
      );
    const s = await schedule({ action: 'PAUSE', runAt: inSeconds(20), reason: 'scheduled break' });
    const worker = await startWorker({
      connectionString: t.url,
      db: t.db,
      concurrency: 1,
      claimTokenSecret: 'schedule-test-secret',
      admission: false,
      warRoomMonitor: false,
    });
    try {
      // Its time comes (moved to now, rather than waiting 20 s): the job runs it.
      await sql`UPDATE graphile_worker._private_jobs SET run_at = now() WHERE key = ${`queue_schedule:${s.id}`}`.execute(t.db);
      await expect
        .poll(async () => (await listQueueSchedules(t.db, eventId)).find((x) => x.id === s.id)?.status, { timeout: 20_000 })
        .toBe('DONE');
      expect((await readQueueControls(t.db, eventId)).paused).toBe(true);
    } finally {
      await worker.stop();
    }
  });
});
