import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installDataDir, openInstallDatabase, type InstallDatabase } from '@onsale/shared/install';

/** The repository root: apps/cli/src/ is three levels down. */
export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export type ResolvedDatabase = InstallDatabase;

/**
 * Picks the database: DATABASE_URL when set; else this install's own embedded server under ./.data/ (the running
 * one of `npm start` when it is up, checked to serve this install's data directory; else started for the command).
 */
export function resolveDatabase(databaseUrl: string | undefined): Promise<ResolvedDatabase> {
  return openInstallDatabase(installDataDir(), databaseUrl);
}
