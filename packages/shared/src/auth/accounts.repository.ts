import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';

/** Records an account the first time it is seen (idempotent). */
export async function ensureAccount(db: Db | Trx, accountId: string, displayName: string | null = null): Promise<void> {
  await ensureAccounts(db, [{ id: accountId, displayName }]);
}

/**
 * Records many accounts in one statement (idempotent), with the display name their token carried when it carried
 * one (a later name replaces an earlier one; a token without a name leaves it as it was). In id order, so that two
 * such statements never wait for each other's rows in opposite orders; an account given twice is written once, with
 * the last name given.
 */
export async function ensureAccounts(db: Db | Trx, accounts: readonly { id: string; displayName: string | null }[]): Promise<void> {
  const byId = new Map<string, string | null>();
  for (const a of accounts) byId.set(a.id, a.displayName ?? byId.get(a.id) ?? null);
  const ids = [...byId.keys()].sort();
  const names = ids.map((id) => byId.get(id) ?? null);
  await sql`
    INSERT INTO accounts (id, display_name)
    SELECT * FROM unnest(${ids}::text[], ${names}::text[])
    ON CONFLICT (id) DO UPDATE SET display_name = EXCLUDED.display_name
    WHERE EXCLUDED.display_name IS NOT NULL AND accounts.display_name IS DISTINCT FROM EXCLUDED.display_name`.execute(db);
}
