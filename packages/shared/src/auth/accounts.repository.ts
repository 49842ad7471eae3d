import type { Db, Trx } from '../db/connect.js';

/** Records an account the first time it is seen (idempotent). */
export async function ensureAccount(db: Db | Trx, accountId: string): Promise<void> {
  await db
    .insertInto('accounts')
    .values({ id: accountId })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}
