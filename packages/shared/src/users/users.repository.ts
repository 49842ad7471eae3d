import { sql, type Insertable } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import type { ConsoleUsersTable } from './users.table.js';

// SQL only: plain functions over `db` or a transaction. Rules are in users.service.ts.

/** The organisation with this name (any case), created if new; its id and stored name. */
export async function upsertOrganisation(db: Db | Trx, name: string): Promise<{ id: string; name: string }> {
  // DO UPDATE (a no-op) rather than DO NOTHING, so RETURNING gives the existing row too.
  const { rows } = await sql<{ id: string; name: string }>`
    INSERT INTO organisations (name) VALUES (${name})
    ON CONFLICT ((lower(name))) DO UPDATE SET name = organisations.name
    RETURNING id, name`.execute(db);
  return rows[0]!;
}

export function findOrganisationByName(db: Db | Trx, name: string) {
  return db
    .selectFrom('organisations')
    .select(['id', 'name'])
    .where(sql<string>`lower(name)`, '=', name.toLowerCase())
    .executeTakeFirst();
}

export function insertUser(trx: Db | Trx, row: Insertable<ConsoleUsersTable>) {
  return trx.insertInto('console_users').values(row).returning(['id', 'created_at']).executeTakeFirstOrThrow();
}

function usersWithOrganisation(db: Db | Trx) {
  return db
    .selectFrom('console_users as u')
    .leftJoin('organisations as o', 'o.id', 'u.organisation_id')
    .select([
      'u.id',
      'u.email',
      'u.role',
      'u.organisation_id',
      'o.name as organisation_name',
      'u.created_at',
      'u.created_by',
      'u.disabled_at',
      'u.disabled_by',
    ]);
}

export function findUserByEmail(db: Db | Trx, email: string) {
  return usersWithOrganisation(db).select('u.password_hash').where('u.email', '=', email).executeTakeFirst();
}

export function findUserById(db: Db | Trx, id: string) {
  return usersWithOrganisation(db).where('u.id', '=', id).executeTakeFirst();
}

export function listUsers(db: Db | Trx) {
  return usersWithOrganisation(db).orderBy('u.created_at').orderBy('u.email').execute();
}

export async function countUsers(db: Db | Trx): Promise<number> {
  const r = await db
    .selectFrom('console_users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function insertSession(
  db: Db | Trx,
  row: { tokenHash: Buffer; userId: string; expiresAt: Date; userAgent: string | null },
): Promise<void> {
  await db
    .insertInto('console_sessions')
    .values({ token_hash: row.tokenHash, user_id: row.userId, expires_at: row.expiresAt, user_agent: row.userAgent })
    .execute();
}

/** The live session with this token hash and its user; expiry is a predicate here, not a sweeper's job. */
export function findLiveSession(db: Db | Trx, tokenHash: Buffer) {
  return (
    usersWithOrganisation(db)
      .innerJoin('console_sessions as s', 's.user_id', 'u.id')
      .select('s.expires_at')
      .where('s.token_hash', '=', tokenHash)
      .where('s.expires_at', '>', sql<Date>`now()`)
      // Disabling deletes the sessions too; this keeps a disabled user out even if one were left.
      .where('u.disabled_at', 'is', null)
      .executeTakeFirst()
  );
}

export async function deleteSession(db: Db | Trx, tokenHash: Buffer): Promise<boolean> {
  const r = await db.deleteFrom('console_sessions').where('token_hash', '=', tokenHash).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export async function deleteExpiredSessions(db: Db | Trx, userId: string): Promise<void> {
  await db
    .deleteFrom('console_sessions')
    .where('user_id', '=', userId)
    .where('expires_at', '<=', sql<Date>`now()`)
    .execute();
}

export async function setEventOrganisation(trx: Db | Trx, eventId: string, organisationId: string | null): Promise<boolean> {
  const r = await trx.updateTable('events').set({ organisation_id: organisationId }).where('id', '=', eventId).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** The user's row with its password hash, locked until the caller's transaction ends. */
export function lockUser(trx: Trx, id: string) {
  return trx
    .selectFrom('console_users')
    .select(['id', 'email', 'role', 'organisation_id', 'password_hash', 'disabled_at'])
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

/** The ids of the admins who may sign in, locked (so two admins demoting each other cannot leave none). */
export async function lockEnabledAdmins(trx: Trx): Promise<string[]> {
  const rows = await trx
    .selectFrom('console_users')
    .select('id')
    .where('role', '=', 'admin')
    .where('disabled_at', 'is', null)
    .orderBy('id')
    .forUpdate()
    .execute();
  return rows.map((r) => r.id);
}

export async function setUserDisabled(trx: Db | Trx, id: string, disabledBy: string | null): Promise<void> {
  await trx
    .updateTable('console_users')
    .set(disabledBy === null ? { disabled_at: null, disabled_by: null } : { disabled_at: sql<Date>`now()`, disabled_by: disabledBy })
    .where('id', '=', id)
    .execute();
}

export async function setUserRole(
  trx: Db | Trx,
  id: string,
  role: ConsoleUsersTable['role'],
  organisationId: string | null,
): Promise<void> {
  await trx.updateTable('console_users').set({ role, organisation_id: organisationId }).where('id', '=', id).execute();
}

export async function setUserPassword(trx: Db | Trx, id: string, passwordHash: string): Promise<void> {
  await trx.updateTable('console_users').set({ password_hash: passwordHash }).where('id', '=', id).execute();
}

/** Deletes every session of a user but the one with `keepTokenHash`; returns how many ended. */
export async function deleteUserSessions(db: Db | Trx, userId: string, keepTokenHash?: Buffer): Promise<number> {
  let q = db.deleteFrom('console_sessions').where('user_id', '=', userId);
  if (keepTokenHash) q = q.where('token_hash', '!=', keepTokenHash);
  const r = await q.executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Live sessions per user, for the users page. */
export async function countLiveSessions(db: Db | Trx): Promise<Map<string, number>> {
  const { rows } = await sql<{ user_id: string; n: number }>`
    SELECT user_id, count(*)::int AS n FROM console_sessions WHERE expires_at > now() GROUP BY user_id`.execute(db);
  return new Map(rows.map((r) => [r.user_id, r.n]));
}
