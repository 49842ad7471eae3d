import { sql } from 'kysely';
import type { Db, Trx } from '../db/connect.js';

// SQL only for sign-in throttling. Rules are in sign-in-throttle.service.ts. Every time is passed in (the caller's
// clock), never read with now(), so tests drive the clock instead of waiting out a window.

/**
 * Takes transaction-scoped advisory locks on throttle keys (`email:<address>`, `ip:<address>`), in one order for
 * every caller, so two attempts for the same e-mail or address count one after the other and never deadlock.
 */
export async function lockThrottleKeys(trx: Trx, keys: string[]): Promise<void> {
  for (const key of [...keys].sort()) await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`sign-in:${key}`}, 0))`.execute(trx);
}

export function findLockouts(db: Db | Trx, scopes: { scope: 'email' | 'ip'; key: string }[]) {
  if (scopes.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('sign_in_lockouts')
    .selectAll()
    .where((eb) => eb.or(scopes.map((s) => eb.and([eb('scope', '=', s.scope), eb('key', '=', s.key)]))))
    .execute();
}

/** Failures of one e-mail address, or from one client address, at or after `since`. */
export async function countFailures(db: Db | Trx, by: { email: string } | { ip: string }, since: Date): Promise<number> {
  let q = db
    .selectFrom('sign_in_failures')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('failed_at', '>=', since);
  q = 'email' in by ? q.where('email', '=', by.email) : q.where('ip', '=', by.ip);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

export async function insertFailure(db: Db | Trx, row: { email: string; ip: string | null; at: Date }): Promise<string> {
  const r = await db
    .insertInto('sign_in_failures')
    .values({ email: row.email, ip: row.ip, failed_at: row.at })
    .returning('id')
    .executeTakeFirstOrThrow();
  return String(r.id);
}

export async function upsertLockout(
  db: Db | Trx,
  row: { scope: 'email' | 'ip'; key: string; lockedAt: Date; lockedUntil: Date; lockouts: number },
): Promise<void> {
  await db
    .insertInto('sign_in_lockouts')
    .values({ scope: row.scope, key: row.key, locked_at: row.lockedAt, locked_until: row.lockedUntil, lockouts: row.lockouts })
    .onConflict((oc) =>
      oc.columns(['scope', 'key']).doUpdateSet({ locked_at: row.lockedAt, locked_until: row.lockedUntil, lockouts: row.lockouts }),
    )
    .execute();
}

/** Forgets an e-mail address's failures and lockouts (its password was right, or an admin set a new one). */
export async function clearEmail(db: Db | Trx, email: string): Promise<void> {
  await db.deleteFrom('sign_in_failures').where('email', '=', email).execute();
  await db.deleteFrom('sign_in_lockouts').where('scope', '=', 'email').where('key', '=', email).execute();
}

/** Deletes up to `limit` failures from before `failedBefore` and lockouts that ended before `endedBefore`. */
export async function purgeOld(db: Db | Trx, failedBefore: Date, endedBefore: Date, limit = 200): Promise<void> {
  await sql`DELETE FROM sign_in_failures WHERE id IN (SELECT id FROM sign_in_failures WHERE failed_at < ${failedBefore} LIMIT ${limit})`.execute(
    db,
  );
  await sql`DELETE FROM sign_in_lockouts WHERE (scope, key) IN (SELECT scope, key FROM sign_in_lockouts WHERE locked_until < ${endedBefore} LIMIT ${limit})`.execute(
    db,
  );
}
