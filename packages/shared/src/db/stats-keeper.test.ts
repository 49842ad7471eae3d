import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from '../testing/index.js';
import { StatsKeeper } from './stats-keeper.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 4 });
});
afterAll(() => t?.drop());

const lastAnalyze = async (table: string) =>
  (await sql<{ at: Date | null }>`SELECT last_analyze AS at FROM pg_stat_user_tables WHERE relname = ${table}`.execute(t.db)).rows[0]?.at ??
  null;

describe('StatsKeeper', () => {
  it('analyzes a hot table once enough of it changed, and leaves quiet tables alone', async () => {
    const keeper = new StatsKeeper(t.db, { minChangedRows: 500 });
    expect(await lastAnalyze('accounts')).toBeNull();
    await sql`INSERT INTO accounts (id) SELECT 'stats-' || i FROM generate_series(1, 1200) i`.execute(t.db);
    // The server publishes a backend's table counters within a second or so of its transaction.
    let analyzed: string[] = [];
    for (let i = 0; i < 40 && !analyzed.includes('accounts'); i++) {
      await new Promise((r) => setTimeout(r, 500));
      analyzed = await keeper.tick();
    }
    expect(analyzed).toContain('accounts');
    expect(analyzed).not.toContain('holds');
    expect(await lastAnalyze('accounts')).not.toBeNull();
    // Analyzed: its changes are counted from zero again, so the next look does nothing (the rows came in one
    // transaction, whose counters the server published at once, before the analyze).
    expect(await keeper.tick()).not.toContain('accounts');
  });
});
