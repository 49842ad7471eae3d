import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDb, migrateToLatest, startEmbeddedPostgres, StatsKeeper, type Db } from '@onsale/shared/db';
import { freePort, withAdminClient, withDatabase } from '@onsale/shared/testing';

export interface BenchDatabase {
  url: string;
  db: Db;
  where: string;
  close(): Promise<void>;
}

/**
 * A scratch database for a benchmark, with the worker's StatsKeeper running on it: BENCH_DATABASE_URL as given, else a fresh database on the local
 * PostgreSQL at 127.0.0.1:5432 (dropped afterwards), else an embedded server in a temporary directory.
 */
export async function benchDatabase(): Promise<BenchDatabase> {
  const given = process.env.BENCH_DATABASE_URL;
  let url: string;
  let where: string;
  let cleanup = async () => {};
  if (given) {
    url = given;
    where = 'BENCH_DATABASE_URL';
  } else {
    // The local server through its Unix socket when there is one (as a co-located deployment would), else TCP.
    const socketDir = '/var/run/postgresql';
    const local = existsSync(`${socketDir}/.s.PGSQL.5432`)
      ? `postgres://postgres@localhost/postgres?host=${encodeURIComponent(socketDir)}`
      : 'postgres://postgres@127.0.0.1:5432/postgres';
    const name = `onsale_bench_${process.pid}`;
    let base: string | undefined;
    try {
      await withAdminClient(local, (c) => c.query('select 1'));
      base = local;
      where = local.includes('host=') ? `local PostgreSQL (Unix socket ${socketDir})` : 'local PostgreSQL 127.0.0.1:5432';
    } catch {
      const dir = mkdtempSync(join(tmpdir(), 'onsale-bench-pg-'));
      chmodSync(dir, 0o755); // as root the server runs as the postgres user
      const server = await startEmbeddedPostgres(dir, { port: await freePort(), password: randomBytes(18).toString('base64url') });
      base = withDatabase(server.url, 'postgres');
      where = 'embedded PostgreSQL';
      cleanup = async () => {
        await server.stop();
        rmSync(dir, { recursive: true, force: true });
      };
    }
    await withAdminClient(base, (c) => c.query(`CREATE DATABASE ${name}`));
    url = withDatabase(base, name);
    const inner = cleanup;
    cleanup = async () => {
      await withAdminClient(base, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
      await inner();
    };
  }
  // Idle connections closed within a second: the server's connections are shared (the product the bench starts needs its own).
  const db = createDb(url, { max: 40, applicationName: 'bench', idleTimeoutMillis: 1000 });
  await migrateToLatest(db);
  // What the product's worker runs beside the store API: the hot tables' statistics kept current as they fill
  // (without it, plans cached while a table was empty scan it whole for the rest of the run).
  const stats = new StatsKeeper(db);
  stats.start();
  return {
    url,
    db,
    where,
    async close() {
      await stats.stop();
      await db.destroy();
      await cleanup();
    },
  };
}
