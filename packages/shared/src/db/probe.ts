import { sql } from 'kysely';
import type { Db } from './connect.js';

// The database's own state, not any domain's rows: what health checks and the rehearsal's resource sampler ask.

/** One round trip: resolves when the database answers, rejects when it does not (health checks). */
export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}

/** Transactions committed in every database of the server so far (pg_stat_database): a rate over two samples. */
export async function committedTransactions(db: Db): Promise<number> {
  const r = await sql<{ n: string | null }>`SELECT sum(xact_commit)::text AS n FROM pg_stat_database`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}
