import { sql } from 'kysely';
import type { Db } from '@onsale/shared/db';

// A profiling run's reads of the spawned database's pg_stat_statements (spawn.ts, REHEARSAL_PG_STATEMENTS): where the
// database's time went, statement by statement.

/** Creates the extension in the product's database (the server must have it in shared_preload_libraries). */
export async function enableStatementStats(db: Db): Promise<void> {
  await sql`create extension if not exists pg_stat_statements`.execute(db);
}

export interface StatementStat {
  calls: number;
  totalMs: number;
  meanMs: number;
  rows: number;
  query: string;
}

/** The statements that took the most time in all, most first. */
export async function topStatements(db: Db, limit: number): Promise<StatementStat[]> {
  const r = await sql<{ calls: string; total: number; mean: number; rows: string; query: string }>`
    select calls, total_exec_time + total_plan_time as total, mean_exec_time as mean, rows, query
    from pg_stat_statements order by total_exec_time + total_plan_time desc limit ${limit}`.execute(db);
  return r.rows.map((x) => ({
    calls: Number(x.calls),
    totalMs: Math.round(x.total),
    meanMs: Number(x.mean.toFixed(3)),
    rows: Number(x.rows),
    query: x.query.replace(/\s+/g, ' ').slice(0, 600),
  }));
}
