import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';

/** Records an account the first time it is seen (idempotent). */
export async function ensureAccount(db: Db | Trx, accountId: string): Promise<void> {
  await db
    .insertInto('accounts')
    .values({ id: accountId })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

/**
 * Records many accounts in one statement (idempotent). In id order, so that two such statements never wait for each
 * other's rows in opposite orders.
 */
export async function ensureAccounts(db: Db, accountIds: readonly string[]): Promise<void> {
  const ids = [...new Set(accountIds)].sort();
  await sql`INSERT INTO accounts (id) SELECT unnest(${ids}::text[]) ON CONFLICT (id) DO NOTHING`.execute(db);
}
