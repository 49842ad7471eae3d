import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@onsale/shared/testing';
import { checkAccessCode } from '@onsale/shared/allocations';
import { createTokenKey, DEV_QUEUE_TOKEN_SECRET } from '@onsale/shared/queue';
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
    expect(listed.tiers.map((x: { code: string; capacity: number; access: string; drift: number }) => [x.code, x.capacity, x.access, x.drift])).toEqual([
      ['FANCLUB', 1500, 'ACCESS_CODE', 0],
      ['CARD', 1000, 'CARD_BIN', 0],
      ['GENERAL', 2500, 'OPEN', 0],
    ]);

    const issued = await onsale(t.url, 'access:issue', eventId, 'FANCLUB', '--count', '3');
    expect(issued.code).toBe(0);
    const codes = issued.stdout.trim().split('\n');
    expect(codes).toHaveLength(3);
    const key = await createTokenKey(DEV_QUEUE_TOKEN_SECRET);
    const checked = await checkAccessCode(key, codes[0]!, { eventId, tier: 'FANCLUB', accountId: 'anyone', now: Date.parse('2027-03-02T12:00:00Z') });
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
    const audit = await t.db.selectFrom('audit_log').select(['actor', 'action']).where('event_id', '=', eventId).where('action', '=', 'allocation.rolled').execute();
    expect(audit).toEqual([{ actor: 'ops@test', action: 'allocation.rolled' }]);
    expect((await onsale(t.url, 'tier:roll', eventId, 'GENERAL', '--force')).stderr).toContain('TIER_DOES_NOT_ROLL');
  });
});
