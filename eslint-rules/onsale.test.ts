import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// The project's own rules on planted source text, through ESLint's Node API and the entries of eslint.config.js that
// turn them on (eslint-rules/own.config.js): a file path inside a domain decides which rules apply.
const eslint = new ESLint({ overrideConfigFile: 'eslint-rules/own.config.js' });

async function lint(filePath: string, code: string) {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((m) => ({ rule: m.ruleId, message: m.message, line: m.line }));
}

describe('domain borders', () => {
  it("refuses a domain importing another domain's repository or table file, and says what to import instead", async () => {
    const messages = await lint(
      'packages/shared/src/support/planted.ts',
      [
        "import { findHold } from '../inventory/holds.repository.js';",
        "import type { SeatRow } from '../inventory/inventory.table.js';",
        "export { insertGaShards } from '../inventory/ga.repository.js';",
        'export const planted = [findHold, null as unknown as SeatRow];',
      ].join('\n'),
    );
    expect(messages.map((m) => [m.rule, m.line])).toEqual([
      ['onsale/domain-borders', 1],
      ['onsale/domain-borders', 2],
      ['onsale/domain-borders', 3],
    ]);
    expect(messages[0]!.message).toContain('support/ may not import ../inventory/holds.repository.js');
    expect(messages[0]!.message).toContain("'../inventory/index.js'");
  });

  it("accepts another domain's index, service and rule files, and the domain's own repository", async () => {
    const messages = await lint(
      'packages/shared/src/support/planted.ts',
      [
        "import { HoldService } from '../inventory/index.js';",
        "import { releaseHolds } from '../inventory/holds.service.js';",
        "import { assertSeatLimits } from '../inventory/hold-rules.js';",
        "import * as repo from './support.repository.js';",
        'export const planted = [HoldService, releaseHolds, assertSeatLimits, repo];',
      ].join('\n'),
    );
    expect(messages).toEqual([]);
  });

  it('leaves the database layer, which names every table, alone', async () => {
    const messages = await lint(
      'packages/shared/src/db/planted.ts',
      "import type { SeatsTable } from '../inventory/inventory.table.js';\nexport type Planted = SeatsTable;",
    );
    expect(messages).toEqual([]);
  });
});

describe('SQL only in repositories', () => {
  const query = [
    "import { sql } from 'kysely';",
    "import type { Db } from '../db/connect.js';",
    'export async function planted(db: Db, id: string) {',
    "  const row = await db.selectFrom('events').select('id').where('id', '=', id).executeTakeFirst();",
    "  await db.updateTable('events').set({ name: 'x' }).where('id', '=', id).execute();",
    '  const { rows } = await sql<{ n: number }>`SELECT 1 AS n`.execute(db);',
    '  return [row, rows, sql.raw(id)];',
    '}',
  ].join('\n');

  it('refuses a query (kysely builders, the sql tag, sql.raw) outside a repository, naming the repository to move it to', async () => {
    const messages = await lint('packages/shared/src/inventory/planted.ts', query);
    expect(messages.map((m) => [m.rule, m.line])).toEqual([
      ['onsale/sql-in-repositories', 4],
      ['onsale/sql-in-repositories', 5],
      ['onsale/sql-in-repositories', 6],
      ['onsale/sql-in-repositories', 7],
    ]);
    expect(messages[0]!.message).toContain('packages/shared/src/inventory/planted.repository.ts');
  });

  it("refuses one in an app's source too", async () => {
    const messages = await lint('apps/bff/src/planted.ts', query.replace("'../db/connect.js'", "'@onsale/shared/db'"));
    expect(messages.filter((m) => m.rule === 'onsale/sql-in-repositories')).toHaveLength(4);
  });

  it('accepts the same query in a repository, a migration, and code that calls the repository', async () => {
    expect(await lint('packages/shared/src/inventory/planted.repository.ts', query)).toEqual([]);
    expect(await lint('packages/shared/src/db/migrations/2026_12_06_3250_planted.ts', query)).toEqual([]);
    const caller = [
      "import type { Db } from '../db/connect.js';",
      "import { findPlanted } from './planted.repository.js';",
      'export const planted = (db: Db, id: string) => findPlanted(db, id);',
    ].join('\n');
    expect(await lint('packages/shared/src/inventory/planted.ts', caller)).toEqual([]);
  });
});
