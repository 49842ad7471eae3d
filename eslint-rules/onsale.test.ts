import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { afterAll, describe, expect, it } from 'vitest';
import onsale from './onsale.js';

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

describe('domain layers', () => {
  it('refuses an import that closes a loop between domain folders, naming the loop', async () => {
    const messages = await lint('packages/shared/src/events/planted.ts', "export { createEvent } from '../sale-setup/index.js';");
    expect(messages.map((m) => [m.rule, m.line])).toEqual([['onsale/domain-layers', 1]]);
    expect(messages[0]!.message).toContain('events/ may not import ../sale-setup/index.js');
    expect(messages[0]!.message).toContain('(events/ -> sale-setup/ -> events/)');
  });

  it('finds a loop through other folders too', async () => {
    // claims/ imports inventory/ (a claim becomes a hold): inventory/ importing claims/ closes the loop.
    const messages = await lint(
      'packages/shared/src/inventory/planted.ts',
      "import { claimOffer } from '../claims/offers.js';\nexport const planted = claimOffer;",
    );
    expect(messages.map((m) => m.rule)).toEqual(['onsale/domain-layers']);
    expect(messages[0]!.message).toMatch(/\(inventory\/ -> claims\/ -> .*inventory\/\)/);
  });

  it('refuses allocations/ importing queue/ (the last loop, broken: the token primitives are in tokens/ below both)', async () => {
    // queue/queue.service.ts reads the tiers (queue/ -> allocations/); allocations/ opens a tier's queue through the
    // steps sale-setup/tier-queues.ts hands it, and signs access codes with tokens/signing.ts.
    const messages = await lint(
      'packages/shared/src/allocations/planted.ts',
      "import { initQueue } from '../queue/queue-init.js';\nimport { signPayload } from '../tokens/signing.js';\nexport const planted = [initQueue, signPayload];",
    );
    expect(messages.map((m) => [m.rule, m.line])).toEqual([['onsale/domain-layers', 1]]);
    expect(messages[0]!.message).toContain('(allocations/ -> queue/ -> allocations/)');
  });

  it('accepts imports down the layers, and leaves tests and the database layer alone', async () => {
    const down =
      "import { getEvent } from '../events/index.js';\nimport { HoldService } from '../inventory/index.js';\nexport const planted = [getEvent, HoldService];";
    expect(await lint('packages/shared/src/sale-setup/planted.ts', down)).toEqual([]);
    const up = "import { createEvent } from '../sale-setup/index.js';\nexport const planted = createEvent;";
    expect(await lint('packages/shared/src/events/planted.test.ts', up)).toEqual([]);
    expect(await lint('packages/shared/src/db/planted.ts', up)).toEqual([]);
  });

  describe('on a planted tree', () => {
    // src/a imports src/b, src/b imports src/c; src/c imports nothing.
    const root = mkdtempSync(join(tmpdir(), 'domain-layers-'));
    const files: Record<string, string> = {
      'src/a/a.ts': "import { b } from '../b/b.js';\nexport const a = b;",
      'src/b/b.ts': "import { c } from '../c/c.js';\nexport const b = c;",
      'src/c/c.ts': 'export const c = 1;',
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(root, dirname(path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    afterAll(() => rmSync(root, { recursive: true, force: true }));
    const planted = (options: object) =>
      new ESLint({
        cwd: root,
        overrideConfigFile: true,
        overrideConfig: [
          {
            files: ['**/*.ts'],
            languageOptions: { parser: tseslint.parser },
            plugins: { onsale },
            rules: { 'onsale/domain-layers': ['error', { root: 'src', ...options }] },
          },
        ],
      });
    const lintIn = async (eslint: ESLint, path: string, code: string) =>
      (await eslint.lintText(code, { filePath: join(root, path) }))[0]!.messages.map((m) => m.message);

    it('reads the loop from the text being linted, the other folders from disk', async () => {
      const eslint = planted({});
      expect(await lintIn(eslint, 'src/a/a.ts', files['src/a/a.ts']!)).toEqual([]);
      const closing = "import { a } from '../a/a.js';\nexport const c = a;";
      const [message] = await lintIn(eslint, 'src/c/c.ts', closing);
      expect(message).toContain('(c/ -> a/ -> b/ -> c/)');
    });

    it('follows no edge the configuration allows (a known loop still to break)', async () => {
      const closing = "import { a } from '../a/a.js';\nexport const c = a;";
      expect(await lintIn(planted({ allow: ['c -> a'] }), 'src/c/c.ts', closing)).toEqual([]);
      expect(await lintIn(planted({ allow: ['b -> c'] }), 'src/c/c.ts', closing)).toEqual([]);
    });
  });
});
