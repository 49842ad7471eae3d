import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DomainError } from '../errors.js';
import { createOpenEvent, createTestDatabase, type TestDatabase } from '../testing/index.js';
import { MAX_RATE_OVERRIDE_PER_MIN, pauseQueue, resumeQueue, setRateOverride } from './operator.js';

let t: TestDatabase;
let eventId: string;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
  ({ eventId } = await createOpenEvent(t.db, { name: 'Operator test', onsaleAt: new Date(Date.now() - 60_000).toISOString() }));
});
afterAll(() => t.drop());

const audits = (action: string) =>
  t.db
    .selectFrom('audit_log')
    .select(['actor', 'details', 'at'])
    .where('event_id', '=', eventId)
    .where('action', '=', action)
    .orderBy('id')
    .execute();

async function refusal(p: Promise<unknown>): Promise<DomainError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(DomainError);
  return e as DomainError;
}

describe('operator controls', () => {
  it('pause needs a reason, writes queue_state and an audit row in one go; resume clears it and audits it', async () => {
    const paused = await pauseQueue(t.db, eventId, { actor: 'ops:alice', reason: '  payment provider degraded  ' });
    expect(paused).toMatchObject({ eventId, paused: true, pausedReason: 'payment provider degraded', pausedBy: 'ops:alice' });
    expect(paused.pausedAt).toBeInstanceOf(Date);
    const row = await t.db.selectFrom('queue_state').selectAll().where('event_id', '=', eventId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ paused: true, paused_reason: 'payment provider degraded', paused_by: 'ops:alice' });
    expect(await audits('queue.paused')).toEqual([
      expect.objectContaining({
        actor: 'ops:alice',
        details: expect.objectContaining({ reason: 'payment provider degraded', wasPaused: false }),
      }),
    ]);

    const resumed = await resumeQueue(t.db, eventId, { actor: 'ops:bob' });
    expect(resumed).toMatchObject({ paused: false, pausedReason: null, pausedBy: null, pausedAt: null });
    const [r] = await audits('queue.resumed');
    expect(r).toMatchObject({
      actor: 'ops:bob',
      details: { wasPaused: true, pausedBy: 'ops:alice', pauseReason: 'payment provider degraded' },
    });
    expect((r!.details as { pausedSeconds: number }).pausedSeconds).toBeGreaterThanOrEqual(0);
  });

  it('refuses a pause without a reason or an actor, naming the field, and writes nothing', async () => {
    const before = (await audits('queue.paused')).length;
    for (const reason of ['', '   ', undefined as unknown as string]) {
      const e = await refusal(pauseQueue(t.db, eventId, { actor: 'ops', reason }));
      expect(e).toMatchObject({ kind: 'invalid', code: 'REASON_REQUIRED', details: { field: 'reason' } });
    }
    expect(await refusal(pauseQueue(t.db, eventId, { actor: ' ', reason: 'x' }))).toMatchObject({
      kind: 'invalid',
      details: { field: 'actor' },
    });
    expect(await refusal(pauseQueue(t.db, eventId, { actor: 'ops', reason: 'x'.repeat(501) }))).toMatchObject({
      details: { field: 'reason' },
    });
    expect((await audits('queue.paused')).length).toBe(before);
    expect((await t.db.selectFrom('queue_state').select('paused').where('event_id', '=', eventId).executeTakeFirstOrThrow()).paused).toBe(
      false,
    );
  });

  it('an unknown or malformed event is EVENT_NOT_FOUND', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-an-event']) {
      expect(await refusal(pauseQueue(t.db, id, { actor: 'ops', reason: 'x' }))).toMatchObject({
        kind: 'not_found',
        code: 'EVENT_NOT_FOUND',
      });
      expect(await refusal(resumeQueue(t.db, id, { actor: 'ops' }))).toMatchObject({ kind: 'not_found', code: 'EVENT_NOT_FOUND' });
      expect(await refusal(setRateOverride(t.db, id, 5, { actor: 'ops' }))).toMatchObject({ kind: 'not_found', code: 'EVENT_NOT_FOUND' });
    }
  });

  it('sets, bounds and clears the rate override, auditing each change with the previous value', async () => {
    expect(await setRateOverride(t.db, eventId, 900, { actor: 'ops:alice', reason: 'gateway at half capacity' })).toMatchObject({
      rateOverridePerMin: 900,
    });
    expect(await setRateOverride(t.db, eventId, 0, { actor: 'ops:alice' })).toMatchObject({ rateOverridePerMin: 0 });
    expect(await setRateOverride(t.db, eventId, MAX_RATE_OVERRIDE_PER_MIN, { actor: 'ops:alice' })).toMatchObject({
      rateOverridePerMin: 100_000,
    });
    expect(await setRateOverride(t.db, eventId, null, { actor: 'ops:bob' })).toMatchObject({ rateOverridePerMin: null });
    for (const bad of [-1, 100_001, 1.5, Number.NaN, Infinity]) {
      const e = await refusal(setRateOverride(t.db, eventId, bad, { actor: 'ops' }));
      expect(e).toMatchObject({ kind: 'invalid', code: 'INVALID_RATE_OVERRIDE', details: { field: 'perMinute' } });
    }
    const rows = await audits('queue.rate_override');
    expect(rows.map((r) => r.details)).toEqual([
      { perMinute: 900, previousPerMinute: null, reason: 'gateway at half capacity' },
      { perMinute: 0, previousPerMinute: 900 },
      { perMinute: 100_000, previousPerMinute: 0 },
      { perMinute: null, previousPerMinute: 100_000 },
    ]);
  });

  it("runs inside the caller's transaction when given one (and rolls back with it)", async () => {
    await t.db
      .transaction()
      .execute(async (trx) => {
        await pauseQueue(trx, eventId, { actor: 'ops', reason: 'rolled back' });
        throw new Error('abort');
      })
      .catch(() => {});
    expect((await t.db.selectFrom('queue_state').select('paused').where('event_id', '=', eventId).executeTakeFirstOrThrow()).paused).toBe(
      false,
    );
    expect((await audits('queue.paused')).some((a) => (a.details as { reason: string }).reason === 'rolled back')).toBe(false);
  });
});
