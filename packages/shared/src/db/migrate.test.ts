import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from '../testing/index.js';
import { migrateToLatest } from './migrate.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
});
afterAll(() => t.drop());

describe('migrations', () => {
  it('are applied and re-running them is a no-op', async () => {
    const r = await migrateToLatest(t.db);
    expect(r.results).toEqual([]);
    const { rows } = await sql<{ name: string }>`SELECT name FROM kysely_migration`.execute(t.db);
    expect(rows.map((x) => x.name)).toContain('2026_11_29_1530_create_core_schema');
  });

  it('reject a seat whose status and hold disagree', async () => {
    await expect(
      sql`INSERT INTO seats (event_id, section_code, row_label, row_index, seat_number, quality, status)
          VALUES (gen_random_uuid(), 'A', 'A', 1, 1, 1, 'HELD')`.execute(t.db),
    ).rejects.toThrow();
  });
});
