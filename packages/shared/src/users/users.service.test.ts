import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DomainError } from '../errors.js';
import { getEvent, listEvents } from '../events/events.service.js';
import { createOpenEvent, createTestDatabase, type TestDatabase } from '../testing/index.js';
import {
  assignEventOrganisation,
  createUser,
  eventScope,
  listUsers,
  requireEventAccess,
  requirePermission,
  revokeSession,
  signIn,
  verifySession,
} from './users.service.js';

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 4 });
});
afterAll(() => t?.drop());

const create = (input: unknown, actor = 'test') => t.db.transaction().execute((trx) => createUser(trx, input, actor));

async function refusal(p: Promise<unknown>): Promise<DomainError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(DomainError);
  return e as DomainError;
}

describe('console users', () => {
  it('creates a user with a scrypt hash; without a password one is generated and returned once', async () => {
    const { user, generatedPassword } = await create({ email: 'Admin@Example.com', role: 'admin', password: 'a long enough password' });
    expect(generatedPassword).toBeNull();
    expect(user).toMatchObject({ email: 'admin@example.com', role: 'admin', organisationId: null, createdBy: 'test' });
    const row = await t.db.selectFrom('console_users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^scrypt\$/);
    expect(row.password_hash).not.toContain('a long enough password');

    const gen = await create({ email: 'viewer@example.com', role: 'viewer' });
    expect(gen.generatedPassword).toMatch(/^[A-Za-z0-9_-]{20}$/);
    const signed = await signIn(t.db, { email: 'viewer@example.com', password: gen.generatedPassword });
    expect(signed.user.role).toBe('viewer');
  });

  it('creates a promoter with their organisation (found again by name, any case)', async () => {
    const a = await create({ email: 'p1@acme.test', role: 'promoter', organisation: 'Acme Live', password: 'promoter password 1' });
    const b = await create({ email: 'p2@acme.test', role: 'promoter', organisation: 'ACME LIVE', password: 'promoter password 2' });
    expect(a.user.organisationId).not.toBeNull();
    expect(b.user.organisationId).toBe(a.user.organisationId);
    expect(b.user.organisationName).toBe('Acme Live');
  });

  it('refuses bad input naming the field, and a taken e-mail, writing nothing', async () => {
    const before = (await listUsers(t.db)).length;
    const bad = await refusal(create({ email: 'x', role: 'admin', password: 'a long enough password' }));
    expect(bad).toMatchObject({ code: 'INVALID_USER', kind: 'invalid', details: { field: 'email' } });
    const promoter = await refusal(create({ email: 'p3@acme.test', role: 'promoter', password: 'a long enough password' }));
    expect(promoter.details.field).toBe('organisation');
    const short = await refusal(create({ email: 'ok@example.com', role: 'viewer', password: 'short' }));
    expect(short.details.field).toBe('password');
    const taken = await refusal(create({ email: 'ADMIN@example.com', role: 'viewer', password: 'a long enough password' }));
    expect(taken).toMatchObject({ code: 'EMAIL_TAKEN', kind: 'conflict', details: { field: 'email' } });
    expect((await listUsers(t.db)).length).toBe(before);
  });
});

describe('sessions', () => {
  it('a wrong password or an unknown e-mail is the same INVALID_CREDENTIALS and opens no session', async () => {
    const sessions = async () =>
      Number(
        (
          await t.db
            .selectFrom('console_sessions')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await sessions();
    const wrong = await refusal(signIn(t.db, { email: 'admin@example.com', password: 'not the password' }));
    const unknown = await refusal(signIn(t.db, { email: 'nobody@example.com', password: 'not the password' }));
    for (const e of [wrong, unknown])
      expect(e).toMatchObject({
        kind: 'unauthenticated',
        code: 'INVALID_CREDENTIALS',
        message: 'wrong e-mail address or password',
        details: { field: 'password' },
      });
    expect(await sessions()).toBe(before);
    expect((await refusal(signIn(t.db, { email: '', password: '' }))).details.field).toBe('email');
  });

  it('signs in, verifies by token (stored hashed), expires, and revokes', async () => {
    const { token, user, expiresAt } = await signIn(
      t.db,
      { email: ' ADMIN@example.com', password: 'a long enough password' },
      { ttlSeconds: 3600 },
    );
    expect(user.email).toBe('admin@example.com');
    expect(expiresAt.getTime()).toBeGreaterThan(Date.now() + 3500_000);
    const stored = await t.db.selectFrom('console_sessions').select('token_hash').where('user_id', '=', user.id).execute();
    expect(stored.some((s) => s.token_hash.toString('base64url') === token)).toBe(false);

    expect(await verifySession(t.db, token)).toMatchObject({ id: user.id, role: 'admin' });
    expect(await verifySession(t.db, token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A'))).toBeNull();
    expect(await verifySession(t.db, "'; drop table console_sessions; --")).toBeNull();
    expect(await verifySession(t.db, undefined)).toBeNull();

    expect(await revokeSession(t.db, token)).toBe(true);
    expect(await verifySession(t.db, token)).toBeNull();
    expect(await revokeSession(t.db, token)).toBe(false);

    const old = await signIn(
      t.db,
      { email: 'admin@example.com', password: 'a long enough password' },
      { now: new Date(Date.now() - 7200_000), ttlSeconds: 3600 },
    );
    expect(await verifySession(t.db, old.token)).toBeNull();
  });
});

describe('roles and organisation scope', () => {
  it("a promoter lists and reads only their organisation's events", async () => {
    const { user: promoter } = await create({
      email: 'scope@beta.test',
      role: 'promoter',
      organisation: 'Beta Presents',
      password: 'promoter password 3',
    });
    const ours = await createOpenEvent(t.db, { name: 'Beta night' });
    const house = await createOpenEvent(t.db, { name: 'House night' });
    const theirs = await createOpenEvent(t.db, { name: 'Acme night' });
    await t.db.transaction().execute(async (trx) => {
      await assignEventOrganisation(trx, ours.eventId, 'beta presents', 'test');
      await assignEventOrganisation(trx, theirs.eventId, 'Acme Live', 'test');
    });

    expect((await listEvents(t.db, eventScope(promoter))).map((e) => e.name)).toEqual(['Beta night']);
    expect((await listEvents(t.db, eventScope({ role: 'viewer', organisationId: null }))).map((e) => e.name).sort()).toEqual([
      'Acme night',
      'Beta night',
      'House night',
    ]);

    expect(() => requireEventAccess(promoter, { id: ours.eventId, organisationId: promoter.organisationId })).not.toThrow();
    for (const id of [theirs.eventId, house.eventId]) {
      const event = await getEvent(t.db, id);
      try {
        requireEventAccess(promoter, event);
        expect.unreachable();
      } catch (e) {
        expect(e).toMatchObject({ kind: 'forbidden', code: 'EVENT_FORBIDDEN', details: { field: 'id' } });
      }
    }
    const audit = await t.db
      .selectFrom('audit_log')
      .select(['actor', 'details'])
      .where('event_id', '=', ours.eventId)
      .where('action', '=', 'event.organisation_assigned')
      .execute();
    expect(audit).toEqual([{ actor: 'test', details: { organisation: 'Beta Presents' } }]);
  });

  it('requirePermission refuses with ROLE_FORBIDDEN naming the role', () => {
    expect(() => requirePermission({ role: 'admin' }, 'users.manage')).not.toThrow();
    expect(() => requirePermission({ role: 'viewer' }, 'users.manage')).toThrow(
      expect.objectContaining({ code: 'ROLE_FORBIDDEN', details: expect.objectContaining({ field: 'role' }) }),
    );
  });
});
