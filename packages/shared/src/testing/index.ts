import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createDb, type Db } from '../db/connect.js';

/** Replaces the database name in a connection string. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function admin<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Test databases copied from `template` are named with this prefix. */
export const testDatabasePrefix = (template: string) => `${template.replace('onsale_tpl_', 'onsale_t')}_`;

export interface TestDatabase {
  url: string;
  db: Db;
  /** Closes the pool; the DROP DATABASE runs on without being waited for unless `wait` (a role to drop after it). */
  drop(opts?: { wait?: boolean }): Promise<void>;
}

/**
 * A fresh database for one test file, copied from the migrated template made by the global setup,
 * so every file is isolated and migrations run once per run. Its pool holds 12 connections unless `max` says
 * otherwise: two test runs at once on one server run four files side by side, each with its app's pool and often
 * a worker's, and 40 a pool exhausted PostgreSQL's 100 connections ("sorry, too many clients already").
 */
export async function createTestDatabase(templateUrl: string, opts: { max?: number } = {}): Promise<TestDatabase> {
  const template = new URL(templateUrl).pathname.slice(1);
  // Named after the template (one per test run), so a run's teardown drops only its own databases.
  const name = `${testDatabasePrefix(template)}${randomBytes(6).toString('hex')}`;
  await admin(withDatabase(templateUrl, 'postgres'), (c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${template}`));
  const url = withDatabase(templateUrl, name);
  const db = createDb(url, { max: opts.max ?? 12, applicationName: 'onsale-test' });
  return {
    url,
    db,
    // The file's pool is closed before drop() returns; the DROP itself is not waited for. On PostgreSQL 15 a DROP
    // DATABASE forces a checkpoint of the whole server and waits for every backend to close the database's files:
    // 0.2-1.4 s a file under load, which the worker's next file need not wait for. A drop still running when the
    // worker ends, or one that fails, leaves the database to the global teardown, which drops every database of the
    // run (scripts/test-global-setup.ts).
    // A file that drops something the database depends on (a role with grants in it) waits: `drop({ wait: true })`.
    async drop(opts = {}) {
      await db.destroy();
      const dropping = admin(withDatabase(templateUrl, 'postgres'), (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
      if (opts.wait) await dropping;
      // Ignored on purpose: the global teardown drops what is left (above).
      else void dropping.catch(() => {});
    },
  };
}

export { admin as withAdminClient };
export { createOpenEvent } from './events.js';
export { domainError } from './errors.js';

// Vitest's `inject('templateDatabaseUrl')` is typed by this augmentation. The type-only import loads 'vitest' into
// every program that reaches this file: an augmentation alone does not, and then fails where nothing else imports it.
import type {} from 'vitest';
declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabaseUrl: string;
  }
}
export { freePort } from './ports.js';
export { userEnv as userShellEnv, waitForOutput } from './user-shell.js';
export { DatabaseProxy, type ProxyMode } from './db-proxy.js';
export { testSecrets } from './secrets.js';
export { manualClock, type ManualClock } from './clock.js';
export { docsScreenshotDir } from './screenshots.js';
export { PAGE_WAIT_MS, pollUntil, waitUntil } from './poll.js';

/** Where one test run (named by its template database) keeps its shared console build (see the console's builtConsole). */
export const consoleBuildDir = (templateUrl: string) => join(tmpdir(), `onsale-console-build-${new URL(templateUrl).pathname.slice(1)}`);
/** Where one test run keeps its shared build of the fans' page (see the fan tests' builtFanPage). */
export const fanBuildDir = (templateUrl: string) => join(tmpdir(), `onsale-fan-build-${new URL(templateUrl).pathname.slice(1)}`);
