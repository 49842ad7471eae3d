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
  /** Execution and planning time together. */
  totalMs: number;
  meanMs: number;
  /** Planning time (pg_stat_statements.track_planning) and how many times it was planned: a prepared statement
   *  run on a cached plan is planned once per connection, one re-planned on every call shows plans = calls. */
  planMs: number;
  plans: number;
  rows: number;
  query: string;
}

/**
 * Every statement counted: calls, execution and planning time in all (the run's statements per request). Execution
 * time counts a top-level statement's nested ones too (and its lock waits), so the times are not a sum of CPU.
 */
export interface StatementTotals {
  /** Every call a client sent, BEGIN and COMMIT included (each a round trip). */
  calls: number;
  /** The calls a client sent that were not BEGIN, COMMIT or ROLLBACK. */
  statements: number;
  /** Statements run inside others (functions' statements, foreign-key checks, triggers' statements). */
  nested: number;
  /** The client's statements' execution (their nested statements' planning and execution inside it) and planning. */
  execMs: number;
  planMs: number;
  /** Every plan made, nested statements' included. */
  plans: number;
}

export async function statementTotals(db: Db): Promise<StatementTotals> {
  const r = await sql<{ calls: string; statements: string; nested: string; exec: number; plan: number; plans: string }>`
    select coalesce(sum(calls) filter (where toplevel), 0) as calls,
           coalesce(sum(calls) filter (where toplevel and lower(trim(query)) not in ('begin', 'commit', 'rollback')), 0) as statements,
           coalesce(sum(calls) filter (where not toplevel), 0) as nested,
           coalesce(sum(total_exec_time) filter (where toplevel), 0) as exec,
           coalesce(sum(total_plan_time) filter (where toplevel), 0) as plan, coalesce(sum(plans), 0) as plans
    from pg_stat_statements`.execute(db);
  const x = r.rows[0]!;
  return {
    calls: Number(x.calls),
    statements: Number(x.statements),
    nested: Number(x.nested),
    execMs: Math.round(x.exec),
    planMs: Math.round(x.plan),
    plans: Number(x.plans),
  };
}

/** The statements that took the most time in all (or, `by: 'calls'`, were called the most), most first. */
export async function topStatements(db: Db, limit: number, by: 'time' | 'calls' = 'time'): Promise<StatementStat[]> {
  const order = by === 'calls' ? sql`calls desc` : sql`total_exec_time + total_plan_time desc`;
  const r = await sql<{ calls: string; total: number; mean: number; plan: number; plans: string; rows: string; query: string }>`
    select calls, total_exec_time + total_plan_time as total, mean_exec_time as mean, total_plan_time as plan, plans, rows, query
    from pg_stat_statements order by ${order} limit ${limit}`.execute(db);
  return r.rows.map((x) => ({
    calls: Number(x.calls),
    totalMs: Math.round(x.total),
    meanMs: Number(x.mean.toFixed(3)),
    planMs: Math.round(x.plan),
    plans: Number(x.plans),
    rows: Number(x.rows),
    query: x.query.replace(/\s+/g, ' ').slice(0, 600),
  }));
}
