import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from '../testing/index.js';
import { AccountRecorder } from './account-recorder.js';

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 6 });
});
afterAll(async () => {
  await t?.drop();
});

const count = async (prefix: string) =>
  Number((await sql<{ n: string }>`SELECT count(*)::text AS n FROM accounts WHERE id LIKE ${`${prefix}%`}`.execute(t.db)).rows[0]!.n);

describe('AccountRecorder', () => {
  it('records the new accounts of concurrent requests in a few shared statements, each caller answered once its own is in', async () => {
    const r = new AccountRecorder(t.db);
    const ids = Array.from({ length: 600 }, (_, i) => `recorder-crowd-${i}`);
    // Every account twice at once (a fan's two first requests), in no particular order.
    await Promise.all([...ids, ...ids.slice().reverse()].map((id) => r.record(id)));
    expect(await count('recorder-crowd-')).toBe(600);
    expect(r.stats.accounts).toBe(1200);
    expect(r.stats.statements).toBeLessThan(1200 / 10);
    // Known accounts again: nothing changes, nothing fails.
    await Promise.all(ids.slice(0, 50).map((id) => r.record(id)));
    expect(await count('recorder-crowd-')).toBe(600);
  });

  it('refuses a bad account alone: the others in its batch are recorded, as they would have been without it', async () => {
    const r = new AccountRecorder(t.db);
    const bad = 'x'.repeat(129); // longer than an account id may be (the table's check)
    const results = await Promise.allSettled(['recorder-mixed-1', bad, 'recorder-mixed-2', 'recorder-mixed-3'].map((id) => r.record(id)));
    expect(results.map((x) => x.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/accounts_id_length/);
    expect(await count('recorder-mixed-')).toBe(3);
  });
});
