import type { Db, Trx } from '../db/connect.js';
import { DomainError, invalid, notFound, type ErrorCode } from '../errors.js';
import { isUuid } from '../ids.js';
import { getEvent } from '../events/events.service.js';
import { insertAudit } from '../audit/index.js';
import { generatePassword, hashPassword, hashSessionToken, newSessionToken, verifyNothing, verifyPassword } from './password.js';
import * as repo from './users.repository.js';
import { judgePassword } from './password-strength.js';
import {
  DEFAULT_SIGN_IN_THROTTLE,
  clientAddressKey,
  reserveSignInAttempt,
  signInSucceeded,
  type SignInThrottleConfig,
} from './sign-in-throttle.service.js';
import { clearEmail as clearSignInThrottle } from './sign-in-throttle.repository.js';
import {
  can,
  canSeeEvent,
  fieldErrors,
  organisationNameSchema,
  ownPasswordChangeSchema,
  passwordResetSchema,
  signInSchema,
  userCreateSchema,
  userIdSchema,
  userRoleChangeSchema,
  type Permission,
  type Role,
  type UserCreate,
} from './users.schema.js';

/** A console user as the rest of the system sees one: never with the password hash. */
export interface ConsoleUser {
  id: string;
  email: string;
  role: Role;
  /** Promoters only: the organisation whose events they configure and read. */
  organisationId: string | null;
  organisationName: string | null;
  createdAt: Date;
  createdBy: string;
  /** When an admin disabled the user (null: they may sign in), and who did. */
  disabledAt: Date | null;
  disabledBy: string | null;
}

/** A signed-in user and when their session ends. */
export interface SessionUser extends ConsoleUser {
  sessionExpiresAt: Date;
}

/** How long a console session lives unless set: a war-room shift. */
export const DEFAULT_SESSION_TTL_SECONDS = 12 * 3600;

type UserRow = NonNullable<Awaited<ReturnType<typeof repo.findUserById>>>;

function toConsoleUser(r: UserRow): ConsoleUser {
  return {
    id: r.id,
    email: r.email,
    role: r.role,
    organisationId: r.organisation_id,
    organisationName: r.organisation_name,
    createdAt: r.created_at,
    createdBy: r.created_by,
    disabledAt: r.disabled_at,
    disabledBy: r.disabled_by,
  };
}

function parseOrThrow<T>(
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: import('zod').ZodError } },
  input: unknown,
  code: ErrorCode,
  what: string,
): T {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const errors = fieldErrors(parsed.error);
  const issues = Object.entries(errors).map(([path, message]) => ({ path, message }));
  throw invalid(code, `${what}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues[0]?.path ?? '(root)', { issues });
}

/**
 * Refuses a password that is too easy to guess (judgePassword: zxcvbn below REQUIRED_PASSWORD_SCORE with the user's
 * e-mail and names as user inputs, or on the common-password list): `code` at `field`, with zxcvbn's feedback in
 * the message and in `details.strength`. The length rule is the schema's; this one needs the dictionaries, which
 * the console's bundle does not carry, so it is checked here.
 */
async function refuseWeakPassword(
  password: string | undefined,
  user: { email: string; names?: ReadonlyArray<string | null | undefined> },
  code: ErrorCode,
  field: string,
): Promise<void> {
  if (password === undefined) return;
  const strength = await judgePassword(password, user);
  if (strength.ok) return;
  const { score, required, warning, suggestions } = strength;
  throw invalid(code, `${field}: ${strength.message}`, field, {
    issues: [{ path: field, message: strength.message }],
    strength: { score, required, warning, suggestions },
  });
}

/** Validates a new user (the schema the console's form uses); throws INVALID_USER naming the first bad field. */
export function parseUserCreate(input: unknown): UserCreate {
  return parseOrThrow(userCreateSchema, input, 'INVALID_USER', 'invalid user');
}

/**
 * Creates a console user (and the promoter's organisation, by name, if new). Without a password one is
 * generated and returned once, here only: the database keeps its scrypt hash. Runs in the caller's transaction.
 * Throws INVALID_USER (field named) or EMAIL_TAKEN (field `email`).
 */
export async function createUser(
  trx: Trx,
  input: unknown,
  actor: string,
): Promise<{ user: ConsoleUser; generatedPassword: string | null }> {
  const spec = parseUserCreate(input);
  await refuseWeakPassword(spec.password, { email: spec.email, names: [spec.organisation] }, 'INVALID_USER', 'password');
  const generatedPassword = spec.password === undefined ? generatePassword() : null;
  const passwordHash = await hashPassword(spec.password ?? generatedPassword!);
  const organisation = spec.organisation === undefined ? null : await repo.upsertOrganisation(trx, spec.organisation);
  // A unique violation would abort the caller's transaction; ask first (the constraint still guards a race).
  if (await repo.findUserByEmail(trx, spec.email)) throw emailTaken(spec.email);
  let created;
  try {
    created = await repo.insertUser(trx, {
      email: spec.email,
      password_hash: passwordHash,
      role: spec.role,
      organisation_id: organisation?.id ?? null,
      created_by: actor,
    });
  } catch (e) {
    if ((e as { code?: string }).code === '23505') throw emailTaken(spec.email);
    throw e;
  }
  await insertAudit(trx, {
    actor,
    action: 'console_user.created',
    details: { email: spec.email, role: spec.role, organisation: organisation?.name ?? null },
  });
  return {
    user: {
      id: created.id,
      email: spec.email,
      role: spec.role,
      organisationId: organisation?.id ?? null,
      organisationName: organisation?.name ?? null,
      createdAt: created.created_at,
      createdBy: actor,
      disabledAt: null,
      disabledBy: null,
    },
    generatedPassword,
  };
}

const emailTaken = (email: string) =>
  new DomainError('conflict', 'EMAIL_TAKEN', `a console user with e-mail ${email} already exists`, { field: 'email' });

/** Every console user, oldest first. */
export async function listUsers(db: Db | Trx): Promise<ConsoleUser[]> {
  return (await repo.listUsers(db)).map(toConsoleUser);
}

/** How many console users exist (none: the first admin has yet to be created). */
export function countUsers(db: Db | Trx): Promise<number> {
  return repo.countUsers(db);
}

/** Runs scrypt on a sign-in's password: against the user's hash, or (no such user) `verifyNothing`'s, taking as long. */
export type CheckPassword = (password: string, storedHash: string | null) => Promise<boolean>;

/** Sign-in's scrypt; `signIn`'s `checkPassword` option replaces it (a test counts the calls that reach scrypt). */
export const checkPassword: CheckPassword = (password, storedHash) =>
  storedHash === null ? verifyNothing(password) : verifyPassword(password, storedHash);

/**
 * Checks an e-mail and password and opens a session. Returns the session token, which only the caller's
 * cookie keeps. A wrong e-mail and a wrong password are the same INVALID_CREDENTIALS (field `password`) and
 * take the same time, so sign-in does not tell which addresses have an account.
 *
 * Throttled (see sign-in-throttle.service.ts): the attempt is counted against the e-mail and the client address
 * (`ip`) before the password is checked; while either is locked out this throws SIGN_IN_THROTTLED (kind
 * `throttled`, `details.retryAfterSeconds`) without running scrypt. A right password clears the e-mail's count.
 * `now` is the throttle's clock and the session's start.
 */
export async function signIn(
  db: Db,
  input: unknown,
  opts: {
    ttlSeconds?: number;
    userAgent?: string | null;
    now?: Date;
    ip?: string | null;
    throttle?: SignInThrottleConfig;
    checkPassword?: CheckPassword;
  } = {},
): Promise<{ user: SessionUser; token: string; expiresAt: Date }> {
  const { email, password } = parseOrThrow(signInSchema, input, 'INVALID_SIGN_IN', 'invalid sign-in');
  const now = opts.now ?? new Date();
  await reserveSignInAttempt(db, { email, ip: clientAddressKey(opts.ip) }, now, opts.throttle ?? DEFAULT_SIGN_IN_THROTTLE);
  const row = await repo.findUserByEmail(db, email);
  const ok = await (opts.checkPassword ?? checkPassword)(password, row?.password_hash ?? null);
  if (!row || !ok)
    throw new DomainError('unauthenticated', 'INVALID_CREDENTIALS', 'wrong e-mail address or password', { field: 'password' });
  await signInSucceeded(db, email);
  // Said only to someone who knows the password: it tells them whom to ask, and tells a stranger nothing.
  if (row.disabled_at)
    throw new DomainError('forbidden', 'USER_DISABLED', 'this console user is disabled; ask an admin to enable it', { field: 'email' });
  const expiresAt = new Date(now.getTime() + (opts.ttlSeconds ?? DEFAULT_SESSION_TTL_SECONDS) * 1000);
  const { token, tokenHash } = newSessionToken();
  await repo.deleteExpiredSessions(db, row.id);
  await repo.insertSession(db, { tokenHash, userId: row.id, expiresAt, userAgent: opts.userAgent?.slice(0, 300) ?? null });
  return { user: { ...toConsoleUser(row), sessionExpiresAt: expiresAt }, token, expiresAt };
}

/** The user of a live session, or null for a missing, unknown, expired or revoked token. */
export async function verifySession(db: Db | Trx, token: string | undefined | null): Promise<SessionUser | null> {
  // Tokens are 43 URL-safe characters; anything else cannot be one (and is not worth a query).
  if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const row = await repo.findLiveSession(db, hashSessionToken(token));
  return row ? { ...toConsoleUser(row), sessionExpiresAt: row.expires_at } : null;
}

/** Ends a session: its row is deleted, so no BFF instance accepts the token again. True if there was one. */
export async function revokeSession(db: Db | Trx, token: string | undefined | null): Promise<boolean> {
  if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) return false;
  return repo.deleteSession(db, hashSessionToken(token));
}

/** Throws ROLE_FORBIDDEN (field `role`) unless the user's role may do `permission`. */
export function requirePermission(user: { role: Role }, permission: Permission): void {
  if (!can(user.role, permission))
    throw new DomainError('forbidden', 'ROLE_FORBIDDEN', `a ${user.role} may not do ${permission}`, { field: 'role', permission });
}

/** Throws ROLE_FORBIDDEN (field `role`) unless the user has one of `roles`. */
export function requireRole(user: { role: Role }, roles: readonly Role[]): void {
  if (!roles.includes(user.role))
    throw new DomainError('forbidden', 'ROLE_FORBIDDEN', `this needs the role ${roles.join(' or ')}; you are a ${user.role}`, {
      field: 'role',
      roles,
    });
}

/** Throws EVENT_FORBIDDEN (field `id`) when a promoter asks for an event that is not their organisation's. */
export function requireEventAccess(
  user: { role: Role; organisationId: string | null },
  event: { id: string; organisationId: string | null },
): void {
  if (!canSeeEvent(user, event))
    throw new DomainError('forbidden', 'EVENT_FORBIDDEN', `event ${event.id} belongs to another organisation`, { field: 'id' });
}

/** Which events a user may list: every event (null), or one organisation's. */
export function eventScope(user: { role: Role; organisationId: string | null }): { organisationId: string } | null {
  if (user.role !== 'promoter') return null;
  // A promoter always has an organisation (a check constraint); a nil id matches no event if one somehow has none.
  return { organisationId: user.organisationId ?? '00000000-0000-0000-0000-000000000000' };
}

/**
 * Gives an event to an organisation (by name; created if new), or back to the house with null. Audited.
 * Runs in the caller's transaction. Throws EVENT_NOT_FOUND or INVALID_ORGANISATION (field `organisation`).
 */
export async function assignEventOrganisation(
  trx: Trx,
  eventId: string,
  organisationName: string | null,
  actor: string,
): Promise<{ eventId: string; organisation: { id: string; name: string } | null }> {
  if (!isUuid(eventId)) throw notFound('EVENT_NOT_FOUND', `no event ${eventId}`, 'eventId');
  const event = await getEvent(trx, eventId);
  let organisation: { id: string; name: string } | null = null;
  if (organisationName !== null) {
    const name = parseOrThrow(organisationNameSchema, organisationName, 'INVALID_ORGANISATION', 'invalid organisation');
    organisation = await repo.upsertOrganisation(trx, name);
  }
  await repo.setEventOrganisation(trx, event.id, organisation?.id ?? null);
  await insertAudit(trx, {
    actor,
    action: 'event.organisation_assigned',
    eventId: event.id,
    details: { organisation: organisation?.name ?? null },
  });
  return { eventId: event.id, organisation };
}

/** Who does an admin's user operation: their id (to refuse acting on themselves where that locks them out) and e-mail. */
export interface UserActor {
  id: string;
  email: string;
}

const auditActor = (a: UserActor) => `console:${a.email}`;

async function lockedUser(trx: Trx, userId: string) {
  const row = isUuid(userId) ? await repo.lockUser(trx, userId) : undefined;
  if (!row) throw notFound('USER_NOT_FOUND', `no console user ${userId}`, 'userId');
  return row;
}

/** Refuses a change that would leave no admin who can sign in (LAST_ADMIN, conflict at `field`). */
async function keepAnAdmin(trx: Trx, userId: string, field: string, what: string): Promise<void> {
  const admins = await repo.lockEnabledAdmins(trx);
  if (admins.length === 1 && admins[0] === userId)
    throw new DomainError('conflict', 'LAST_ADMIN', `${what} would leave no admin who can sign in; make another user an admin first`, {
      field,
    });
}

/**
 * Disables (or enables) a console user: a disabled user cannot sign in and every session of theirs ends at once.
 * An admin cannot disable themselves (SELF_DISABLE) nor the last enabled admin (LAST_ADMIN). Audited
 * `console_user.disabled` / `console_user.enabled`. Doing what is already done changes nothing and audits nothing.
 */
export async function setUserEnabled(
  trx: Trx,
  input: unknown,
  enabled: boolean,
  by: UserActor,
): Promise<{ user: ConsoleUser; sessionsEnded: number }> {
  const { userId } = parseOrThrow(userIdSchema, input, 'INVALID_USER', 'invalid user');
  const row = await lockedUser(trx, userId);
  let sessionsEnded = 0;
  if (!enabled && row.disabled_at === null) {
    if (row.id === by.id)
      throw new DomainError('conflict', 'SELF_DISABLE', 'you cannot disable yourself; another admin can', { field: 'userId' });
    if (row.role === 'admin') await keepAnAdmin(trx, row.id, 'userId', 'disabling this admin');
    await repo.setUserDisabled(trx, row.id, auditActor(by));
    sessionsEnded = await repo.deleteUserSessions(trx, row.id);
    await insertAudit(trx, { actor: auditActor(by), action: 'console_user.disabled', details: { email: row.email, sessionsEnded } });
  } else if (enabled && row.disabled_at !== null) {
    await repo.setUserDisabled(trx, row.id, null);
    await insertAudit(trx, { actor: auditActor(by), action: 'console_user.enabled', details: { email: row.email } });
  }
  return { user: toConsoleUser((await repo.findUserById(trx, row.id))!), sessionsEnded };
}

/**
 * Gives a console user another role (a promoter with their organisation, created if new). It applies to their next
 * request: the role is read with the session each time. An admin cannot change their own role (SELF_ROLE_CHANGE)
 * nor demote the last enabled admin (LAST_ADMIN). Audited `console_user.role_changed` with before and after.
 */
export async function changeUserRole(trx: Trx, input: unknown, by: UserActor): Promise<ConsoleUser> {
  const spec = parseOrThrow(userRoleChangeSchema, input, 'INVALID_USER', 'invalid role change');
  const row = await lockedUser(trx, spec.userId);
  const before = toConsoleUser((await repo.findUserById(trx, row.id))!);
  if (row.id === by.id)
    throw new DomainError('conflict', 'SELF_ROLE_CHANGE', 'you cannot change your own role; another admin can', { field: 'role' });
  if (row.role === 'admin' && spec.role !== 'admin' && row.disabled_at === null)
    await keepAnAdmin(trx, row.id, 'role', 'changing the role of this admin');
  const organisation = spec.organisation === undefined ? null : await repo.upsertOrganisation(trx, spec.organisation);
  if (before.role === spec.role && before.organisationId === (organisation?.id ?? null)) return before;
  await repo.setUserRole(trx, row.id, spec.role, organisation?.id ?? null);
  await insertAudit(trx, {
    actor: auditActor(by),
    action: 'console_user.role_changed',
    details: {
      email: row.email,
      from: before.role,
      to: spec.role,
      fromOrganisation: before.organisationName,
      organisation: organisation?.name ?? null,
    },
  });
  return toConsoleUser((await repo.findUserById(trx, row.id))!);
}

/**
 * An admin sets a user's password: the one given, or a generated one returned here once. Every session of the
 * user ends (whoever had the old password is out). Audited `console_user.password_reset`, never the password.
 */
export async function resetUserPassword(
  trx: Trx,
  input: unknown,
  by: UserActor,
): Promise<{ user: ConsoleUser; generatedPassword: string | null; sessionsEnded: number }> {
  const spec = parseOrThrow(passwordResetSchema, input, 'INVALID_PASSWORD', 'invalid password');
  const row = await lockedUser(trx, spec.userId);
  await refuseWeakPassword(spec.password, { email: row.email }, 'INVALID_PASSWORD', 'password');
  const generatedPassword = spec.password === undefined ? generatePassword() : null;
  await repo.setUserPassword(trx, row.id, await hashPassword(spec.password ?? generatedPassword!));
  const sessionsEnded = await repo.deleteUserSessions(trx, row.id);
  // The new password is the admin's answer to a locked-out user: their e-mail may sign in again at once.
  await clearSignInThrottle(trx, row.email);
  await insertAudit(trx, {
    actor: auditActor(by),
    action: 'console_user.password_reset',
    details: { email: row.email, generated: generatedPassword !== null, sessionsEnded },
  });
  return { user: toConsoleUser((await repo.findUserById(trx, row.id))!), generatedPassword, sessionsEnded };
}

/** Ends every session of a user, on every device and BFF instance (a lost laptop). Audited `console_user.signed_out_everywhere`. */
export async function signOutEverywhere(trx: Trx, input: unknown, by: UserActor): Promise<{ sessionsEnded: number }> {
  const { userId } = parseOrThrow(userIdSchema, input, 'INVALID_USER', 'invalid user');
  const row = await lockedUser(trx, userId);
  const sessionsEnded = await repo.deleteUserSessions(trx, row.id);
  await insertAudit(trx, {
    actor: auditActor(by),
    action: 'console_user.signed_out_everywhere',
    details: { email: row.email, sessionsEnded },
  });
  return { sessionsEnded };
}

/**
 * A signed-in user changes their own password. The current password must match (INVALID_CREDENTIALS at
 * `currentPassword`); every other session of theirs ends, the one they used stays. Audited `console_user.password_changed`.
 */
export async function changeOwnPassword(
  trx: Trx,
  userId: string,
  input: unknown,
  currentSessionToken: string | null,
): Promise<{ otherSessionsEnded: number }> {
  const spec = parseOrThrow(ownPasswordChangeSchema, input, 'INVALID_PASSWORD', 'invalid password change');
  const row = await lockedUser(trx, userId);
  await refuseWeakPassword(spec.newPassword, { email: row.email }, 'INVALID_PASSWORD', 'newPassword');
  if (!(await verifyPassword(spec.currentPassword, row.password_hash)))
    throw new DomainError('invalid', 'INVALID_CREDENTIALS', 'that is not your current password', { field: 'currentPassword' });
  await repo.setUserPassword(trx, row.id, await hashPassword(spec.newPassword));
  const keep = currentSessionToken && /^[A-Za-z0-9_-]{43}$/.test(currentSessionToken) ? hashSessionToken(currentSessionToken) : undefined;
  const otherSessionsEnded = await repo.deleteUserSessions(trx, row.id, keep);
  await insertAudit(trx, {
    actor: `console:${row.email}`,
    action: 'console_user.password_changed',
    details: { email: row.email, otherSessionsEnded },
  });
  return { otherSessionsEnded };
}

/** Live console sessions per user id (for the users page). */
export function liveSessionCounts(db: Db | Trx): Promise<Map<string, number>> {
  return repo.countLiveSessions(db);
}
