import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TRPCError } from '@trpc/server';
import { ZodError } from 'zod';
import { signIn, verifySession, type ConsoleUser } from '@onsale/shared/users';
import { createTestDatabase, type TestDatabase } from '@onsale/shared/testing';
import { appRouter } from '../src/root.js';
import { callerAs, contextFor, seedUser } from './fixtures.js';

// Users from the console: disable and enable, change a role, reset a password, sign a user out
// everywhere, change one's own password; through createCaller against real PostgreSQL.

let tdb: TestDatabase;
let admin: ConsoleUser & { password: string };
let operator: ConsoleUser & { password: string };
let viewer: ConsoleUser & { password: string };

beforeAll(async () => {
  tdb = await createTestDatabase(inject('templateDatabaseUrl'), { max: 6 });
  admin = await seedUser(tdb.db, 'admin@users.test', 'admin');
  operator = await seedUser(tdb.db, 'operator@users.test', 'operator');
  viewer = await seedUser(tdb.db, 'viewer@users.test', 'viewer');
});
afterAll(() => tdb?.drop());

async function refusal(p: Promise<unknown>): Promise<{ code: string; domainCode: string | undefined; field: string | undefined }> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(TRPCError);
    const e = err as TRPCError;
    // Input the procedure's schema refused: the field is the first issue's path (as the BFF's error shape says).
    if (e.cause instanceof ZodError) return { code: e.code, domainCode: 'INVALID_INPUT', field: e.cause.issues[0]?.path.join('.') };
    const cause = e.cause as { code?: string; details?: { field?: string } } | undefined;
    return { code: e.code, domainCode: cause?.code, field: cause?.details?.field };
  }
  throw new Error('expected the call to be refused');
}

const sessionOf = async (u: { email: string; password: string }) => (await signIn(tdb.db, { email: u.email, password: u.password })).token;
const auditActions = async () =>
  (await tdb.db.selectFrom('audit_log').select(['action', 'actor']).orderBy('id').execute()).map((r) => `${r.action} ${r.actor}`);

describe('users from the console', () => {
  it('only admins manage users; every role changes its own password', async () => {
    for (const who of [operator, viewer]) {
      const c = callerAs(tdb.db, who);
      for (const call of [
        c.users.list(),
        c.users.disable({ userId: admin.id }),
        c.users.enable({ userId: admin.id }),
        c.users.changeRole({ userId: admin.id, role: 'viewer' }),
        c.users.resetPassword({ userId: admin.id }),
        c.users.signOutEverywhere({ userId: admin.id }),
      ])
        expect(await refusal(call)).toMatchObject({ code: 'FORBIDDEN', domainCode: 'ROLE_FORBIDDEN' });
    }
    expect(
      await refusal(callerAs(tdb.db, null).users.changeOwnPassword({ currentPassword: 'x', newPassword: 'a long enough password' })),
    ).toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('disabling ends every session at once and refuses sign-in with USER_DISABLED; enabling lets them back', async () => {
    const token = await sessionOf(operator);
    expect(await verifySession(tdb.db, token)).not.toBeNull();
    const r = await callerAs(tdb.db, admin).users.disable({ userId: operator.id });
    expect(r.sessionsEnded).toBe(1);
    expect(r.user.disabledAt).not.toBeNull();
    expect(r.user.disabledBy).toBe('console:admin@users.test');
    expect(await verifySession(tdb.db, token)).toBeNull();
    await expect(signIn(tdb.db, { email: operator.email, password: operator.password })).rejects.toMatchObject({ code: 'USER_DISABLED' });
    // A wrong password still reads as wrong credentials: "disabled" is only said to who knows the password.
    await expect(signIn(tdb.db, { email: operator.email, password: 'not the password' })).rejects.toMatchObject({
      code: 'INVALID_CREDENTIALS',
    });
    const listed = (await callerAs(tdb.db, admin).users.list()).find((u) => u.id === operator.id)!;
    expect(listed.disabledAt).not.toBeNull();

    await callerAs(tdb.db, admin).users.enable({ userId: operator.id });
    expect(await sessionOf(operator)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await auditActions()).toEqual(
      expect.arrayContaining(['console_user.disabled console:admin@users.test', 'console_user.enabled console:admin@users.test']),
    );
  });

  it('an admin cannot disable or demote themselves, nor leave the console without an admin', async () => {
    const c = callerAs(tdb.db, admin);
    expect(await refusal(c.users.disable({ userId: admin.id }))).toMatchObject({
      code: 'CONFLICT',
      domainCode: 'SELF_DISABLE',
      field: 'userId',
    });
    expect(await refusal(c.users.changeRole({ userId: admin.id, role: 'viewer' }))).toMatchObject({
      code: 'CONFLICT',
      domainCode: 'SELF_ROLE_CHANGE',
      field: 'role',
    });
    // A second admin demoting the only other one would leave nobody: refused.
    const second = await seedUser(tdb.db, 'second@users.test', 'admin');
    await callerAs(tdb.db, admin).users.disable({ userId: second.id });
    const seconds = callerAs(tdb.db, { ...second, disabledAt: null });
    expect(await refusal(seconds.users.changeRole({ userId: admin.id, role: 'operator' }))).toMatchObject({
      domainCode: 'LAST_ADMIN',
      field: 'role',
    });
    await callerAs(tdb.db, admin).users.enable({ userId: second.id });
    expect(await refusal(c.users.disable({ userId: '00000000-0000-0000-0000-000000000000' }))).toMatchObject({
      code: 'NOT_FOUND',
      domainCode: 'USER_NOT_FOUND',
    });
  });

  it('a role change applies to the next request; a promoter needs an organisation', async () => {
    const token = await sessionOf(viewer);
    const c = callerAs(tdb.db, admin);
    expect(await refusal(c.users.changeRole({ userId: viewer.id, role: 'promoter' }))).toMatchObject({
      code: 'BAD_REQUEST',
      field: 'organisation',
    });
    const changed = await c.users.changeRole({ userId: viewer.id, role: 'promoter', organisation: 'Acme Live' });
    expect(changed).toMatchObject({ role: 'promoter', organisationName: 'Acme Live' });
    expect(await verifySession(tdb.db, token)).toMatchObject({ role: 'promoter', organisationName: 'Acme Live' });
    await c.users.changeRole({ userId: viewer.id, role: 'viewer' });
    expect(await verifySession(tdb.db, token)).toMatchObject({ role: 'viewer', organisationId: null });
    const audit = await tdb.db
      .selectFrom('audit_log')
      .select('details')
      .where('action', '=', 'console_user.role_changed')
      .orderBy('id')
      .execute();
    expect(audit[0]!.details).toMatchObject({ email: viewer.email, from: 'viewer', to: 'promoter', organisation: 'Acme Live' });
  });

  it('a password reset ends the sessions; a generated password is returned once and works; the old one does not', async () => {
    const token = await sessionOf(viewer);
    const r = await callerAs(tdb.db, admin).users.resetPassword({ userId: viewer.id, password: '' });
    expect(r.generatedPassword).toEqual(expect.any(String));
    expect(r.sessionsEnded).toBeGreaterThanOrEqual(1);
    expect(await verifySession(tdb.db, token)).toBeNull();
    await expect(signIn(tdb.db, { email: viewer.email, password: viewer.password })).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    await signIn(tdb.db, { email: viewer.email, password: r.generatedPassword! });
    expect(await refusal(callerAs(tdb.db, admin).users.resetPassword({ userId: viewer.id, password: 'short' }))).toMatchObject({
      code: 'BAD_REQUEST',
      field: 'password',
    });
    const audit = await tdb.db
      .selectFrom('audit_log')
      .select('details')
      .where('action', '=', 'console_user.password_reset')
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(audit.details)).not.toContain(r.generatedPassword!);
    viewer = { ...viewer, password: r.generatedPassword! };
  });

  it('sign out everywhere ends every session of the user', async () => {
    const [a, b] = [await sessionOf(viewer), await sessionOf(viewer)];
    const r = await callerAs(tdb.db, admin).users.signOutEverywhere({ userId: viewer.id });
    expect(r.sessionsEnded).toBeGreaterThanOrEqual(2);
    expect(await verifySession(tdb.db, a)).toBeNull();
    expect(await verifySession(tdb.db, b)).toBeNull();
  });

  it('changing your own password needs the current one; the session in use stays, the others end', async () => {
    const [here, elsewhere] = [await sessionOf(viewer), await sessionOf(viewer)];
    const me = (await verifySession(tdb.db, here))!;
    const caller = appRouter.createCaller({ ...contextFor(tdb.db, me), sessionToken: here });
    expect(
      await refusal(caller.users.changeOwnPassword({ currentPassword: 'wrong password', newPassword: 'my brand new passphrase' })),
    ).toMatchObject({
      code: 'BAD_REQUEST',
      domainCode: 'INVALID_CREDENTIALS',
      field: 'currentPassword',
    });
    expect(await refusal(caller.users.changeOwnPassword({ currentPassword: viewer.password, newPassword: viewer.password }))).toMatchObject(
      { field: 'newPassword' },
    );
    expect(await caller.users.changeOwnPassword({ currentPassword: viewer.password, newPassword: 'my brand new passphrase' })).toEqual({
      otherSessionsEnded: 1,
    });
    expect(await verifySession(tdb.db, here)).not.toBeNull();
    expect(await verifySession(tdb.db, elsewhere)).toBeNull();
    await signIn(tdb.db, { email: viewer.email, password: 'my brand new passphrase' });
  });
});
