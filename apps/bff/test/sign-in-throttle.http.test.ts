import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@onsale/shared/testing';
import { COMMON_PASSWORD_MESSAGE } from '@onsale/shared/users';
import { buildBff } from '../src/app.js';
import { seedUser } from './fixtures.js';

// Console sign-in throttling over real HTTP: 429 with Retry-After from the BFF, counted in
// PostgreSQL so two BFF instances share it, per client address behind a trusted proxy; and common passwords refused
// where a password is set. The clock is the test's: lockouts end when the test moves it, not after a wait.

let tdb: TestDatabase;
let ms = Date.parse('2030-02-01T09:00:00Z');
const clock = () => new Date(ms);
const advance = (seconds: number) => void (ms += seconds * 1000);
let one: FastifyInstance;
let two: FastifyInstance;
let admin: Awaited<ReturnType<typeof seedUser>>;

beforeAll(async () => {
  tdb = await createTestDatabase(inject('templateDatabaseUrl'), { max: 6 });
  admin = await seedUser(tdb.db, 'admin@throttle.http.test', 'admin');
  await seedUser(tdb.db, 'viewer@throttle.http.test', 'viewer');
  // Two instances on one database, both behind a proxy on loopback whose X-Forwarded-For they believe.
  one = await buildBff({ db: tdb.db, clock, trustProxy: ['127.0.0.1'] });
  two = await buildBff({ db: tdb.db, clock, trustProxy: ['127.0.0.1'] });
});

afterAll(async () => {
  await Promise.all([one?.close(), two?.close()]);
  await tdb?.drop();
});

function signIn(app: FastifyInstance, email: string, password: string, clientIp: string) {
  return app.inject({
    method: 'POST',
    url: '/trpc/auth.signIn',
    remoteAddress: '127.0.0.1',
    headers: { 'content-type': 'application/json', 'x-csrf': '1', 'x-forwarded-for': clientIp },
    payload: JSON.stringify({ email, password }),
  });
}

describe('console sign-in throttling over HTTP', () => {
  it('five failures spread over two instances lock the e-mail: 429 SIGN_IN_THROTTLED with Retry-After, even for the right password', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await signIn(i % 2 ? two : one, 'viewer@throttle.http.test', 'not my password', '192.0.2.10');
      expect(res.statusCode).toBe(401);
      expect(res.headers['retry-after']).toBeUndefined();
    }
    for (const app of [one, two]) {
      const res = await signIn(app, 'viewer@throttle.http.test', 'password of viewer@throttle.http.test', '192.0.2.10');
      expect(res.statusCode).toBe(429);
      expect(res.headers['retry-after']).toBe('900');
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(res.json().error).toMatchObject({
        message: 'too many failed sign-ins for this e-mail address; try again in 15 minutes',
        data: { code: 'TOO_MANY_REQUESTS', httpStatus: 429, domainCode: 'SIGN_IN_THROTTLED', field: 'email' },
      });
    }
    // The lockout is the e-mail's: another user at the same address signs in.
    expect((await signIn(one, admin.email, admin.password, '192.0.2.10')).statusCode).toBe(200);

    advance(600);
    expect((await signIn(two, 'viewer@throttle.http.test', 'not my password', '192.0.2.11')).headers['retry-after']).toBe('300');
    advance(301);
    expect((await signIn(two, 'viewer@throttle.http.test', 'password of viewer@throttle.http.test', '192.0.2.11')).statusCode).toBe(200);

    const audit = await tdb.db
      .selectFrom('audit_log')
      .select(['actor', 'details'])
      .where('action', '=', 'console_user.sign_in_locked')
      .execute();
    expect(audit).toEqual([
      expect.objectContaining({
        actor: 'sign-in:192.0.2.10',
        details: expect.objectContaining({ scope: 'email', email: 'viewer@throttle.http.test' }),
      }),
    ]);
  });

  it('the client address comes from X-Forwarded-For behind a trusted proxy, and not from one anyone can send', async () => {
    const direct = await buildBff({ db: tdb.db, clock });
    try {
      const res = await direct.inject({
        method: 'POST',
        url: '/trpc/auth.signIn',
        remoteAddress: '192.0.2.99',
        headers: { 'content-type': 'application/json', 'x-csrf': '1', 'x-forwarded-for': '10.9.9.9' },
        payload: JSON.stringify({ email: 'someone@throttle.http.test', password: 'not my password' }),
      });
      expect(res.statusCode).toBe(401);
    } finally {
      await direct.close();
    }
    await signIn(one, 'someone-else@throttle.http.test', 'not my password', '198.51.100.23');
    const ips = (
      await tdb.db.selectFrom('sign_in_failures').select(['email', 'ip']).where('email', 'like', 'someone%').orderBy('email').execute()
    ).map((r) => `${r.email} ${r.ip}`);
    expect(ips).toEqual(['someone-else@throttle.http.test 198.51.100.23', 'someone@throttle.http.test 192.0.2.99']);
  });
});

describe('common passwords', () => {
  it('are refused with a field error where a password is set: a new user, a reset, your own change', async () => {
    const session = await signIn(one, admin.email, admin.password, '192.0.2.20');
    expect(session.statusCode).toBe(200);
    const cookie = String(session.headers['set-cookie']).split(';')[0]!;
    const mutate = (path: string, body: unknown) =>
      one.inject({
        method: 'POST',
        url: `/trpc/${path}`,
        headers: { 'content-type': 'application/json', 'x-csrf': '1', cookie },
        payload: JSON.stringify(body),
      });
    const users = async () =>
      Number(
        (
          await tdb.db
            .selectFrom('console_users')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await users();

    const created = await mutate('users.create', { email: 'weak@throttle.http.test', role: 'viewer', password: 'Password1234' });
    expect(created.statusCode).toBe(400);
    expect(created.json().error.data).toMatchObject({
      domainCode: 'INVALID_USER',
      field: 'password',
      fieldErrors: { password: COMMON_PASSWORD_MESSAGE },
    });
    expect(await users()).toBe(before);

    const viewer = await tdb.db
      .selectFrom('console_users')
      .select(['id', 'password_hash'])
      .where('email', '=', 'viewer@throttle.http.test')
      .executeTakeFirstOrThrow();
    const reset = await mutate('users.resetPassword', { userId: viewer.id, password: 'qwerty123456' });
    expect(reset.statusCode).toBe(400);
    expect(reset.json().error.data).toMatchObject({
      domainCode: 'INVALID_PASSWORD',
      field: 'password',
      fieldErrors: { password: COMMON_PASSWORD_MESSAGE },
    });

    const own = await mutate('users.changeOwnPassword', { currentPassword: admin.password, newPassword: 'sunshine2024!' });
    expect(own.statusCode).toBe(400);
    expect(own.json().error.data).toMatchObject({
      domainCode: 'INVALID_PASSWORD',
      field: 'newPassword',
      fieldErrors: { newPassword: COMMON_PASSWORD_MESSAGE },
    });

    // Too easy to guess for zxcvbn (the user's e-mail as a user input): refused with its feedback at the field.
    for (const password of ['aaaaaaaaaaaa', 'weak@throttle.http.test', 'Tr0ub4dor&3xx']) {
      const weak = await mutate('users.create', { email: 'weak@throttle.http.test', role: 'viewer', password });
      expect(weak.statusCode, password).toBe(400);
      expect(weak.json().error.data, password).toMatchObject({
        domainCode: 'INVALID_USER',
        field: 'password',
        fieldErrors: { password: expect.stringMatching(/^too easy to guess \(strength \d of 4, 3 needed\): .+/) },
      });
    }
    const ownWeak = await mutate('users.changeOwnPassword', { currentPassword: admin.password, newPassword: admin.email });
    expect(ownWeak.json().error.data).toMatchObject({
      field: 'newPassword',
      fieldErrors: { newPassword: expect.stringMatching(/personal/) },
    });
    expect(await users()).toBe(before);

    // Nothing changed: both old passwords still work.
    const after = await tdb.db.selectFrom('console_users').select('password_hash').where('id', '=', viewer.id).executeTakeFirstOrThrow();
    expect(after.password_hash).toBe(viewer.password_hash);
    expect((await signIn(two, admin.email, admin.password, '192.0.2.20')).statusCode).toBe(200);

    // A passphrase passes.
    expect(
      (await mutate('users.create', { email: 'strong@throttle.http.test', role: 'viewer', password: 'tram lantern oboe seventeen' }))
        .statusCode,
    ).toBe(200);
  });
});
