import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase, testSecrets } from '@onsale/shared/testing';
import { checkAccessCode } from '@onsale/shared/allocations';
import { findActiveEvents, tickEvent } from '@onsale/shared/admission';
import { sql } from '@onsale/shared/db';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { createTokenKey } from '@onsale/shared/queue';
import { onsale } from './run.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 4 });
});
afterAll(() => t?.drop());

describe('onsale tier:* / access:issue on examples/presale.json', () => {
  it('creates the tiered example, lists its tiers, issues codes an edge can check, and rolls a tier forward', async () => {
    const created = await onsale(t.url, 'event:create', '--file', 'examples/presale.json');
    expect(created.code).toBe(0);
    const { eventId, capacity } = JSON.parse(created.stdout);
    expect(capacity).toBe(5000);

    const listed = JSON.parse((await onsale(t.url, 'tier:list', eventId)).stdout);
    expect(
      listed.tiers.map((x: { code: string; capacity: number; access: string; drift: number }) => [x.code, x.capacity, x.access, x.drift]),
    ).toEqual([
      ['FANCLUB', 1500, 'ACCESS_CODE', 0],
      ['CARD', 1000, 'CARD_BIN', 0],
      ['GENERAL', 2500, 'OPEN', 0],
    ]);

    const issued = await onsale(t.url, 'access:issue', eventId, 'FANCLUB', '--count', '3');
    expect(issued.code).toBe(0);
    const codes = issued.stdout.trim().split('\n');
    expect(codes).toHaveLength(3);
    const key = await createTokenKey(testSecrets().queueTokenSecret);
    const checked = await checkAccessCode(key, codes[0]!, {
      eventId,
      tier: 'FANCLUB',
      accountId: 'anyone',
      now: Date.parse('2027-03-02T12:00:00Z'),
    });
    expect(checked.ok).toBe(true);
    const wrong = await onsale(t.url, 'access:issue', eventId, 'CARD');
    expect([wrong.code, wrong.stderr.includes('TIER_TAKES_NO_CODES')]).toEqual([1, true]);

    const early = await onsale(t.url, 'tier:roll', eventId, 'FANCLUB');
    expect([early.code, early.stderr.includes('ROLL_NOT_DUE')]).toEqual([1, true]);
    const rolled = await onsale(t.url, 'tier:roll', eventId, 'FANCLUB', '--force', '--actor', 'ops@test');
    expect(rolled.code).toBe(0);
    expect(JSON.parse(rolled.stdout)).toEqual({ eventId, from: 'FANCLUB', into: 'CARD', moved: 1500 });
    const after = JSON.parse((await onsale(t.url, 'tier:list', eventId)).stdout);
    expect(after.tiers.map((x: { capacity: number; drift: number }) => [x.capacity, x.drift])).toEqual([
      [0, 0],
      [2500, 0],
      [2500, 0],
    ]);
    const audit = await t.db
      .selectFrom('audit_log')
      .select(['actor', 'action'])
      .where('event_id', '=', eventId)
      .where('action', '=', 'allocation.rolled')
      .execute();
    expect(audit).toEqual([{ actor: 'ops@test', action: 'allocation.rolled' }]);
    expect((await onsale(t.url, 'tier:roll', eventId, 'GENERAL', '--force')).stderr).toContain('TIER_DOES_NOT_ROLL');
  });

  it("audit:verify re-derives a presale tier's own pre-open cohort, and checks every queue of the event", async () => {
    const at = (ms: number) => new Date(Date.now() + ms).toISOString();
    const file = JSON.parse(await import('node:fs').then((fs) => fs.readFileSync('examples/presale.json', 'utf8')));
    file.onsaleAt = at(3_600_000);
    file.allocations[0] = { ...file.allocations[0], opensAt: at(1_500), closesAt: at(1_800_000), rollsForwardAt: undefined };
    file.allocations[1] = { ...file.allocations[1], opensAt: at(1_800_000), closesAt: at(2_400_000), rollsForwardAt: undefined };
    const { eventId } = await t.db.transaction().execute((trx) => createEvent(trx, parseEventFile(file), 'test', { signOff: true }));
    const { queue_id: queueId } = await t.db
      .selectFrom('allocations')
      .select('queue_id')
      .where('event_id', '=', eventId)
      .where('code', '=', 'FANCLUB')
      .executeTakeFirstOrThrow();
    // Twenty fans joined the fan-club queue before it opened.
    await sql`INSERT INTO accounts (id) SELECT 'club-' || i FROM generate_series(0, 19) i ON CONFLICT DO NOTHING`.execute(t.db);
    await sql`INSERT INTO queue_entries (event_id, account_id, device_hash, join_index, cohort)
              SELECT ${queueId}::uuid, 'club-' || i, md5(i::text), i, 'PREOPEN' FROM generate_series(0, 19) i`.execute(t.db);
    // The presale opens: the controller's tick, at a time just after the open (the controller's clock, moved by the
    // test), seals its cohort and reveals its seed.
    const opened = new Date(Date.parse(file.allocations[0].opensAt) + 200);
    const row = (await findActiveEvents(t.db, 7200, opened)).find((e) => e.event_id === queueId)!;
    expect(row).toMatchObject({ owner_event_id: eventId, allocation: 'FANCLUB', general: false, open: true });
    expect(await tickEvent(t.db, { event: row, controllerId: 'cli-test', tickMs: 1000, now: opened })).toMatchObject({
      status: 'ticked',
      sealedCohortSize: 20,
    });

    const tier = await onsale(t.url, 'audit:verify', eventId, '--tier', 'FANCLUB');
    expect(tier.code).toBe(0);
    expect(tier.stdout).toContain(`fairness audit of presale tier FANCLUB of event ${eventId}: pre-open cohort of 20, 20 accounts`);
    // Without --tier every queue is checked: the general sale and the card presale have not opened, so their seeds are not out yet.
    const all = await onsale(t.url, 'audit:verify', eventId);
    expect(all.code).toBe(1);
    expect(all.stdout).toContain('presale tier FANCLUB');
    expect(all.stderr).toContain('AUDIT_FAILED');
    expect(all.stderr).toMatch(/seed_revealed.*CARD:seed_revealed|CARD:seed_revealed/);
    expect(all.stderr).not.toContain('FANCLUB:');
    expect((await onsale(t.url, 'audit:verify', eventId, '--tier', 'NOPE')).stderr).toContain('TIER_NOT_FOUND');
  });
});
