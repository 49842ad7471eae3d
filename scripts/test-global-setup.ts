import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { createDb, migrateToLatest, startEmbeddedPostgres, type EmbeddedServer } from '@onsale/shared/db';
import {
  consoleBuildDir,
  fanBuildDir,
  freePort,
  testDatabasePrefix,
  testSecrets,
  withAdminClient,
  withDatabase,
} from '@onsale/shared/testing';
import '@onsale/shared/testing';

async function reachable(url: string): Promise<boolean> {
  try {
    await withAdminClient(url, (c) => c.query('select 1'));
    return true;
  } catch {
    return false;
  }
}

/** The projects whose files never open a database (see `unitTestFiles` in vitest.config.ts). */
const DATABASE_FREE_PROJECTS: ReadonlySet<string> = new Set(['unit']);

export default async function setup(project: TestProject) {
  // Vitest runs a global setup for the root project and again for every project that inherits it (`extends: true`);
  // the root's provided values reach every project, so the template is made once, by the root. A run of database-free
  // projects only (`npm run test:unit`) makes none.
  if (!project.isRootProject()) return;
  if (project.vitest.projects.every((p) => DATABASE_FREE_PROJECTS.has(p.name))) return;
  let embedded: EmbeddedServer | undefined;
  let embeddedDir: string | undefined;
  let base = process.env.TEST_DATABASE_URL;
  if (!base) {
    const local = 'postgres://postgres@127.0.0.1:5432/test';
    if (await reachable(local)) base = local;
  }
  if (!base) {
    embeddedDir = mkdtempSync(join(tmpdir(), 'onsale-test-pg-'));
    // As root the server runs as the postgres user, which must reach its data directory.
    chmodSync(embeddedDir, 0o755);
    embedded = await startEmbeddedPostgres(embeddedDir, { port: await freePort(), password: randomBytes(18).toString('base64url') });
    base = embedded.url;
  }
  // The install's own secrets (./.data/secrets/), made once here before test files start in parallel: the apps the
  // tests build, the CLI and `npm start` they spawn, and the tokens tests sign all use them.
  testSecrets();
  const template = `onsale_tpl_${process.pid}`;
  await withAdminClient(withDatabase(base, 'postgres'), async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
    await c.query(`CREATE DATABASE ${template}`);
  });
  const templateUrl = withDatabase(base, template);
  const db = createDb(templateUrl, { max: 1 });
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
  project.provide('templateDatabaseUrl', templateUrl);

  return async () => {
    await withAdminClient(withDatabase(base, 'postgres'), async (c) => {
      const { rows } = await c.query<{ datname: string }>(
        `SELECT datname FROM pg_database WHERE starts_with(datname, $2) OR datname = $1`,
        [template, testDatabasePrefix(template)],
      );
      for (const r of rows) await c.query(`DROP DATABASE IF EXISTS ${r.datname} WITH (FORCE)`);
    });
    // The console and fans' page builds the browser tests shared (builtConsole in apps/console/test/browser-helpers.ts,
    // builtFanPage in apps/fan/test/harness.ts).
    for (const build of [consoleBuildDir(templateUrl), fanBuildDir(templateUrl)])
      for (const dir of [build, `${build}.lock`]) rmSync(dir, { recursive: true, force: true });
    if (embedded) await embedded.stop();
    if (embeddedDir) rmSync(embeddedDir, { recursive: true, force: true });
  };
}
