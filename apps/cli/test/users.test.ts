import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOpenEvent, createTestDatabase, type TestDatabase } from '@onsale/shared/testing';
import { signIn } from '@onsale/shared/users';

import { onsale, onsaleWith, type Run } from './run.js';

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 4 });
});
afterAll(() => t?.drop());

/** Runs the CLI with ONSALE_PASSWORD set (the child copies the environment when it starts, synchronously). */
function onsaleWithPassword(password: string, ...args: string[]): Promise<Run> {
  return onsaleWith({ DATABASE_URL: t.url, ONSALE_PASSWORD: password }, ...args);
}

const userCount = async () =>
  Number(
    (
      await t.db
        .selectFrom('console_users')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('onsale user:create and user:list', () => {
  it('without a password, generates one, prints it once, and it signs in', async () => {
    const r = await onsale(t.url, 'user:create', '--email', 'First.Admin@Example.com', '--role', 'admin');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { email: string; role: string; organisation: string | null; password: string; createdBy: string };
    expect(out).toMatchObject({
      email: 'first.admin@example.com',
      role: 'admin',
      organisation: null,
      createdBy: expect.stringMatching(/^cli:/),
    });
    expect(out.password).toMatch(/^[A-Za-z0-9_-]{20}$/);
    expect(r.stderr).toContain('shown only this once');
    const session = await signIn(t.db, { email: 'first.admin@example.com', password: out.password });
    expect(session.user.role).toBe('admin');
    const row = await t.db.selectFrom('console_users').select('password_hash').where('email', '=', out.email).executeTakeFirstOrThrow();
    expect(row.password_hash).not.toContain(out.password);
  });

  it('takes the password from ONSALE_PASSWORD or --password, and prints none', async () => {
    const [fromEnv, fromFlag] = await Promise.all([
      onsaleWithPassword('operator password from env', 'user:create', '--email', 'ops@example.com', '--role', 'operator'),
      onsale(
        t.url,
        'user:create',
        '--email',
        'promoter@acme.test',
        '--role',
        'promoter',
        '--organisation',
        'Acme Live',
        '--password',
        'promoter password flag',
      ),
    ]);
    for (const r of [fromEnv, fromFlag]) {
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).not.toHaveProperty('password');
    }
    expect(JSON.parse(fromFlag.stdout)).toMatchObject({ role: 'promoter', organisation: 'Acme Live' });
    expect((await signIn(t.db, { email: 'ops@example.com', password: 'operator password from env' })).user.role).toBe('operator');
    expect((await signIn(t.db, { email: 'promoter@acme.test', password: 'promoter password flag' })).user.organisationName).toBe(
      'Acme Live',
    );
  });

  it("a password too easy to guess exits 1 with zxcvbn's feedback and writes nothing; a passphrase is taken", async () => {
    const before = await userCount();
    const email = 'casey.jones@ops.example.com';
    const create = (p: string) => onsaleWithPassword(p, 'user:create', '--email', email, '--role', 'viewer');
    const [repeated, ownEmail, famous] = await Promise.all([create('aaaaaaaaaaaa'), create(email), create('Tr0ub4dor&3xx')]);
    for (const r of [repeated, ownEmail, famous]) {
      expect(r).toMatchObject({ code: 1, stdout: '' });
      expect(r.stderr).toMatch(/error INVALID_USER: password: too easy to guess \(strength \d of 4, 3 needed\)/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    expect(repeated.stderr).toContain('Repeated characters');
    expect(ownEmail.stderr).toContain('personal');
    expect(famous.stderr).toContain('published as an example');
    expect(await userCount()).toBe(before);
    const strong = await onsaleWithPassword('velvet otter drums quietly', 'user:create', '--email', email, '--role', 'viewer');
    expect(strong.code).toBe(0);
    expect(await userCount()).toBe(before + 1);
    // Gone again: user:list below lists the users of the other tests only.
    await t.db.deleteFrom('console_users').where('email', '=', email).execute();
  });

  it('bad input exits 1 naming the field and writes nothing; a bad command line exits 2', async () => {
    const before = await userCount();
    const [noOrg, badEmail, shortPassword, taken, noRole] = await Promise.all([
      onsale(t.url, 'user:create', '--email', 'p2@acme.test', '--role', 'promoter'),
      onsale(t.url, 'user:create', '--email', 'not-an-email', '--role', 'viewer'),
      onsaleWithPassword('short', 'user:create', '--email', 'v@example.com', '--role', 'viewer'),
      onsale(t.url, 'user:create', '--email', 'FIRST.ADMIN@example.com', '--role', 'viewer'),
      onsale(t.url, 'user:create', '--email', 'v@example.com'),
    ]);
    expect(noOrg).toMatchObject({ code: 1, stdout: '' });
    expect(noOrg.stderr).toContain('error INVALID_USER');
    expect(noOrg.stderr).toContain('organisation: a promoter needs an organisation');
    expect(badEmail.stderr).toContain('email: not an e-mail address');
    expect(shortPassword.stderr).toContain('password: at least 12 characters');
    expect(taken).toMatchObject({ code: 1 });
    expect(taken.stderr).toContain('error EMAIL_TAKEN');
    expect(noRole.code).toBe(2);
    expect(noRole.stderr).toContain('user:create needs --email <e-mail> and --role');
    for (const r of [noOrg, badEmail, shortPassword, taken]) expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(await userCount()).toBe(before);
  });

  it('user:list prints every user with role and organisation, never a password or hash', async () => {
    const r = await onsale(t.url, 'user:list');
    expect(r.code).toBe(0);
    const users = JSON.parse(r.stdout) as { email: string; role: string; organisation: string | null }[];
    expect(users.map((u) => [u.email, u.role, u.organisation]).sort()).toEqual([
      ['first.admin@example.com', 'admin', null],
      ['ops@example.com', 'operator', null],
      ['promoter@acme.test', 'promoter', 'Acme Live'],
    ]);
    expect(r.stdout).not.toMatch(/scrypt|password/i);
  });

  it('event:organisation gives an event to an organisation and back to the house; audited', async () => {
    const { eventId } = await createOpenEvent(t.db, { name: 'CLI org night' });
    const given = await onsale(t.url, 'event:organisation', eventId, '--organisation', 'acme live');
    expect(given.code).toBe(0);
    expect(JSON.parse(given.stdout)).toEqual({ eventId, organisation: 'Acme Live' });
    const org = await t.db
      .selectFrom('events')
      .innerJoin('organisations', 'organisations.id', 'events.organisation_id')
      .select('organisations.name')
      .where('events.id', '=', eventId)
      .executeTakeFirstOrThrow();
    expect(org.name).toBe('Acme Live');

    const [house, both, missing] = await Promise.all([
      onsale(t.url, 'event:organisation', eventId, '--house'),
      onsale(t.url, 'event:organisation', eventId, '--house', '--organisation', 'X'),
      onsale(t.url, 'event:organisation', '00000000-0000-4000-8000-000000000000', '--house'),
    ]);
    expect(JSON.parse(house.stdout)).toEqual({ eventId, organisation: null });
    expect(both.code).toBe(2);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('EVENT_NOT_FOUND');
    const audit = await t.db
      .selectFrom('audit_log')
      .select('details')
      .where('event_id', '=', eventId)
      .where('action', '=', 'event.organisation_assigned')
      .orderBy('id')
      .execute();
    expect(audit.map((a) => a.details)).toEqual([{ organisation: 'Acme Live' }, { organisation: null }]);
  });

  it('help lists the user commands', async () => {
    const r = await onsale(t.url, 'help');
    expect(r.stdout).toContain('user:create --email <e-mail> --role <admin|operator|promoter|viewer>');
    expect(r.stdout).toContain('user:list');
  });
});
