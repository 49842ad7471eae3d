import { Logger, runMigrations } from 'graphile-worker';
import { Migrator, type MigrationResultSet } from 'kysely';
import { poolOf, type Db } from './connect.js';
import { migrations } from './migrations/index.js';

export class MigrationError extends Error {
  readonly code = 'MIGRATION_FAILED';
}

/**
 * Migrates to the latest schema, then installs the job queue's own schema (graphile-worker's migrations), so
 * a transaction can enqueue a job (`graphile_worker.add_job`) before any worker has started. Throws (never
 * logs-and-continues) when a migration fails.
 */
export async function migrateToLatest(db: Db): Promise<MigrationResultSet> {
  // Unordered: migrations written side by side on branches land in any order; each is applied once by name, and
  // an install that already ran a later one still gets an earlier one that landed after it.
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, allowUnorderedMigrations: true });
  const result = await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error');
    throw new MigrationError(
      `migration ${failed?.migrationName ?? '?'} failed: ${result.error instanceof Error ? result.error.message : JSON.stringify(result.error)}`,
      { cause: result.error },
    );
  }
  await runMigrations({ pgPool: poolOf(db), logger: quietLogger });
  return result;
}

const quietLogger = new Logger(() => () => {});
