import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { assignEventOrganisation } from '@onsale/shared/users';
import { createTestDatabase, type TestDatabase } from '@onsale/shared/testing';
import { buildBff } from '../src/app.js';
import { SESSION_COOKIE } from '../src/context.js';
import { seedEvent, seedUser } from './fixtures.js';

// Sign-in, the session cookie, CSRF and sign-out over real HTTP (app.inject), as the console's browser sees them.

let tdb: TestDatabase;
let app: FastifyInstance;
let acmeEvent: string;
let betaEvent: string;

beforeAll(async () => {
  tdb = await createTestDatabase(inject('templateDatabaseUrl'));
  await Promise.all([
    seedUser(tdb.db, 'admin@http.test', 'admin'),
    seedUser(tdb.db, 'viewer@http.test', 'viewer'),
    seedUser(tdb.db, 'promoter@acme.test', 'promoter', 'Acme Live'),
  ]);
  ({ eventId: acmeEvent } = await seedEvent(tdb.db, 'Acme Night'));
  ({ eventId: betaEvent } = await seedEvent(tdb.db, 'Beta Night'));
  await tdb.db.transaction().execute(async (trx) => {
    await assignEventOrganisation(trx, acmeEvent, 'Acme Live', 'test');
    await assignEventOrganisation(trx, betaEvent, 'Beta Presents', 'test');
  });
  app = await buildBff({ db: tdb.db, auth: { sessionTtlSeconds: 3600 } });
});

afterAll(async () => {
  await app?.close();
  await tdb?.drop();
});

const CSRF = { 'x-csrf': '1' };

function mutate(path: string, body: unknown, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: `/trpc/${path}`,
    headers: { 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(body ?? {}),
  });
}

function query(path: string, cookie: string | undefined, input?: unknown) {
  const qs = input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`;
  return app.inject({ method: 'GET', url: `/trpc/${path}${qs}`, headers: cookie ? { cookie } : {} });
}

/** Signs in over HTTP; the `cookie` header value to send back, and the raw Set-Cookie line. */
async function signIn(email: string, password = `password of ${email}`): Promise<{ cookie: string; setCookie: string }> {
  const res = await mutate('auth.signIn', { email, password }, CSRF);
  expect(res.statusCode).toBe(200);
  const setCookie = String(res.headers['set-cookie']);
  return { cookie: setCookie.split(';')[0]!, setCookie };
}

const sessionCount = async () =>
  Number(
    (
      await tdb.db
        .selectFrom('console_sessions')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('sign-in over HTTP', () => {
  it('a wrong password is 401 INVALID_CREDENTIALS at the password field, with no cookie and no session', async () => {
    const before = await sessionCount();
    for (const email of ['admin@http.test', 'nobody@http.test']) {
      const res = await mutate('auth.signIn', { email, password: 'not my password' }, CSRF);
      expect(res.statusCode).toBe(401);
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(res.json().error).toMatchObject({
        message: 'wrong e-mail address or password',
        data: { code: 'UNAUTHORIZED', domainCode: 'INVALID_CREDENTIALS', field: 'password' },
      });
    }
    expect(await sessionCount()).toBe(before);
  });

  it('the session cookie is httpOnly, SameSite=Strict, path /, expiring with the session; it signs the user in', async () => {
    const { cookie, setCookie } = await signIn('admin@http.test');
    expect(cookie).toMatch(new RegExp(`^${SESSION_COOKIE}=[A-Za-z0-9_-]{43}$`));
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).toContain('Path=/');
    const expires = Date.parse(/Expires=([^;]+)/.exec(setCookie)![1]!);
    expect(expires).toBeGreaterThan(Date.now() + 3500_000);
    expect(expires).toBeLessThan(Date.now() + 3700_000);
    // Not Secure by default (http://127.0.0.1 in development); BFF_SECURE_COOKIES / production turn it on.
    expect(setCookie).not.toContain('Secure');

    const me = await query('auth.me', cookie);
    expect(me.json().result.data).toMatchObject({ email: 'admin@http.test', role: 'admin' });
    expect((await query('events.list', cookie)).statusCode).toBe(200);
    expect((await query('events.list', undefined)).statusCode).toBe(401);
  });

  it('a Secure cookie when asked for', async () => {
    const secure = await buildBff({ db: tdb.db, auth: { secureCookies: true } });
    try {
      const res = await secure.inject({
        method: 'POST',
        url: '/trpc/auth.signIn',
        headers: { 'content-type': 'application/json', ...CSRF },
        payload: JSON.stringify({ email: 'viewer@http.test', password: 'password of viewer@http.test' }),
      });
      expect(String(res.headers['set-cookie'])).toContain('Secure');
    } finally {
      await secure.close();
    }
  });
});

describe('CSRF', () => {
  it('a mutation without the x-csrf header is 403 and changes nothing, even with a valid session cookie', async () => {
    const { cookie } = await signIn('admin@http.test');
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
    const res = await mutate('users.create', { email: 'csrf@http.test', role: 'viewer', password: 'a long enough password' }, { cookie });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.data).toMatchObject({ code: 'FORBIDDEN', domainCode: 'CSRF_HEADER_MISSING', field: 'x-csrf' });
    expect(await users()).toBe(before);

    const signInWithout = await mutate('auth.signIn', { email: 'admin@http.test', password: 'password of admin@http.test' });
    expect(signInWithout.statusCode).toBe(403);
    expect(signInWithout.headers['set-cookie']).toBeUndefined();

    // Sign-out without the header does not sign out.
    expect((await mutate('auth.signOut', {}, { cookie })).statusCode).toBe(403);
    expect((await query('auth.me', cookie)).json().result.data).not.toBeNull();

    const ok = await mutate(
      'users.create',
      { email: 'csrf@http.test', role: 'viewer', password: 'a long enough password' },
      { cookie, ...CSRF },
    );
    expect(ok.statusCode).toBe(200);
    expect(await users()).toBe(before + 1);
  });
});

describe('roles over HTTP', () => {
  it('a viewer cannot create users (403 ROLE_FORBIDDEN)', async () => {
    const { cookie } = await signIn('viewer@http.test');
    const res = await mutate(
      'users.create',
      { email: 'sneaky@http.test', role: 'admin', password: 'a long enough password' },
      { cookie, ...CSRF },
    );
    expect(res.statusCode).toBe(403);
    expect(res.json().error.data).toMatchObject({ domainCode: 'ROLE_FORBIDDEN', field: 'role' });
    expect(await tdb.db.selectFrom('console_users').select('id').where('email', '=', 'sneaky@http.test').execute()).toEqual([]);
    expect((await query('users.list', cookie)).statusCode).toBe(403);
  });

  it("a promoter cannot read another organisation's event (403 EVENT_FORBIDDEN)", async () => {
    const { cookie } = await signIn('promoter@acme.test');
    expect((await query('events.byId', cookie, { id: acmeEvent })).statusCode).toBe(200);
    const res = await query('events.byId', cookie, { id: betaEvent });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.data).toMatchObject({ domainCode: 'EVENT_FORBIDDEN', field: 'id' });
    expect((await query('events.list', cookie)).json().result.data.map((e: { name: string }) => e.name)).toEqual(['Acme Night']);
  });

  it('invalid user input is 400 naming each field, as the console shows it', async () => {
    const { cookie } = await signIn('admin@http.test');
    const res = await mutate('users.create', { email: 'not-an-email', role: 'promoter', password: 'short' }, { cookie, ...CSRF });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.data).toMatchObject({
      domainCode: 'INVALID_INPUT',
      field: 'email',
      fieldErrors: { email: 'not an e-mail address', password: 'at least 12 characters', organisation: 'a promoter needs an organisation' },
    });
  });
});

describe('sign-out', () => {
  it('revokes the session: the old cookie stops working, on this and any other BFF instance', async () => {
    const { cookie } = await signIn('admin@http.test');
    const other = await buildBff({ db: tdb.db });
    try {
      expect((await other.inject({ method: 'GET', url: '/trpc/events.list', headers: { cookie } })).statusCode).toBe(200);

      const out = await mutate('auth.signOut', {}, { cookie, ...CSRF });
      expect(out.statusCode).toBe(200);
      expect(out.json().result.data).toEqual({ signedOut: true });
      const cleared = String(out.headers['set-cookie']);
      expect(cleared).toMatch(new RegExp(`^${SESSION_COOKIE}=;`));
      expect(cleared).toMatch(/Expires=Thu, 01 Jan 1970/);

      // A browser that kept the cookie anyway (or a copy of it) is signed out everywhere.
      expect((await query('events.list', cookie)).statusCode).toBe(401);
      expect((await query('auth.me', cookie)).json().result.data).toBeNull();
      expect((await other.inject({ method: 'GET', url: '/trpc/events.list', headers: { cookie } })).statusCode).toBe(401);
    } finally {
      await other.close();
    }
  });
});
