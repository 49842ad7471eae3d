import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startEmbeddedPostgres } from '@onsale/shared/db';

/** The repository root: apps/cli/src/ is three levels down. */
export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** Where the embedded server keeps its data, and the port it listens on. Shared by `npm start` and the CLI. */
export const EMBEDDED_DATA_DIR = join(repoRoot, '.data');
export const EMBEDDED_PORT = 54320;
export const EMBEDDED_URL = `postgres://postgres:postgres@127.0.0.1:${EMBEDDED_PORT}/onsale`;

export interface ResolvedDatabase {
  url: string;
  /** `env`: DATABASE_URL; `embedded-running`: an embedded server someone else started; `embedded`: started here. */
  source: 'env' | 'embedded-running' | 'embedded';
  /** Stops the embedded server if this process started it; a no-op otherwise. */
  release(): Promise<void>;
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1500 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Picks the database: DATABASE_URL when set; else the embedded server under ./.data/. Only one server can
 * run on a data directory, so when one already answers on the embedded port (a running `npm start`),
 * connect to it instead of starting a second.
 */
export async function resolveDatabase(databaseUrl: string | undefined): Promise<ResolvedDatabase> {
  const none = async () => {};
  if (databaseUrl) return { url: databaseUrl, source: 'env', release: none };
  if (await answers(EMBEDDED_URL)) return { url: EMBEDDED_URL, source: 'embedded-running', release: none };
  const server = await startEmbeddedPostgres(EMBEDDED_DATA_DIR, EMBEDDED_PORT);
  let stopped = false;
  return {
    url: server.url,
    source: 'embedded',
    async release() {
      if (stopped) return;
      stopped = true;
      await server.stop();
    },
  };
}
