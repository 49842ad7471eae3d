import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDb, migrateToLatest, sql, startEmbeddedPostgres, StatsKeeper, type Db } from '@onsale/shared/db';
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
  // BENCH_PG_STAT_STATEMENTS=1: an embedded server of the bench's own with pg_stat_statements loaded (a shared server
  // cannot load it without a restart), and the statements that took the most time printed at the end.
  const statements = process.env.BENCH_PG_STAT_STATEMENTS === '1';
  let url: string;
  let where: string;
  let cleanup = async () => {};
  if (given && !statements) {
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
      if (statements) throw new Error('pg_stat_statements wanted: an embedded server');
      await withAdminClient(local, (c) => c.query('select 1'));
      base = local;
      where = local.includes('host=') ? `local PostgreSQL (Unix socket ${socketDir})` : 'local PostgreSQL 127.0.0.1:5432';
    } catch {
      const dir = mkdtempSync(join(tmpdir(), 'onsale-bench-pg-'));
      chmodSync(dir, 0o755); // as root the server runs as the postgres user
      const server = await startEmbeddedPostgres(dir, {
        port: await freePort(),
        password: randomBytes(18).toString('base64url'),
        settings: statements ? { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all' } : {},
      });
      base = withDatabase(server.url, 'postgres');
      where = statements ? 'embedded PostgreSQL with pg_stat_statements' : 'embedded PostgreSQL';
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
  if (statements) {
    await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`.execute(db);
    await sql`SELECT pg_stat_statements_reset()`.execute(db);
  }
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
      if (statements) await printStatements(db);
      await db.destroy();
      await cleanup();
    },
  };
}

/** The statements that took the most time in the run, with their calls and rows (what each request cost the database). */
async function printStatements(db: Db) {
  const { rows } = await sql<{ calls: string; total_ms: string; ms_per_call: string; rows: string; query: string }>`
    SELECT calls::text, round(total_exec_time::numeric, 1)::text AS total_ms,
           round((total_exec_time / greatest(calls, 1))::numeric, 3)::text AS ms_per_call, rows::text,
           left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 160) AS query
    FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
    ORDER BY total_exec_time DESC LIMIT 25`.execute(db);
  console.log('\npg_stat_statements, by total time (calls, total ms, ms a call, rows, statement):');
  for (const r of rows)
    console.log(`${r.calls.padStart(8)} ${r.total_ms.padStart(10)} ${r.ms_per_call.padStart(9)} ${r.rows.padStart(8)}  ${r.query}`);
}
