import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TRPCError } from '@trpc/server';
import { assignEventOrganisation, type ConsoleUser } from '@onsale/shared/users';
import { createTestDatabase, type TestDatabase } from '@onsale/shared/testing';
import { appRouter } from '../src/root.js';
import { callerAs, contextFor, seedEvent, seedUser } from './fixtures.js';

// Every role boundary of the router, through createCaller against real PostgreSQL.

let tdb: TestDatabase;
let admin: ConsoleUser & { password: string };
let operator: ConsoleUser;
let viewer: ConsoleUser;
let acmePromoter: ConsoleUser;
let betaPromoter: ConsoleUser;
let acmeEvent: string;
let betaEvent: string;
let houseEvent: string;

beforeAll(async () => {
  tdb = await createTestDatabase(inject('templateDatabaseUrl'), { max: 6 });
  [admin, operator, viewer, acmePromoter, betaPromoter] = await Promise.all([
    seedUser(tdb.db, 'admin@roles.test', 'admin'),
    seedUser(tdb.db, 'operator@roles.test', 'operator'),
    seedUser(tdb.db, 'viewer@roles.test', 'viewer'),
    seedUser(tdb.db, 'promoter@acme.test', 'promoter', 'Acme Live'),
    seedUser(tdb.db, 'promoter@beta.test', 'promoter', 'Beta Presents'),
  ]);
  ({ eventId: acmeEvent } = await seedEvent(tdb.db, 'Acme Night'));
  ({ eventId: betaEvent } = await seedEvent(tdb.db, 'Beta Night'));
  ({ eventId: houseEvent } = await seedEvent(tdb.db, 'House Night'));
  await tdb.db.transaction().execute(async (trx) => {
    await assignEventOrganisation(trx, acmeEvent, 'Acme Live', 'test');
    await assignEventOrganisation(trx, betaEvent, 'Beta Presents', 'test');
  });
});

afterAll(async () => {
  await tdb?.drop();
});

/** The tRPC code and the data the console reads (domain code, field) of a refused call. */
async function refusal(
  p: Promise<unknown>,
): Promise<{ code: string; domainCode: string | undefined; field: string | undefined; message: string }> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(TRPCError);
    const e = err as TRPCError;
    const cause = e.cause as { code?: string; details?: { field?: string } } | undefined;
    return { code: e.code, domainCode: cause?.code, field: cause?.details?.field, message: e.message };
  }
  throw new Error('expected the call to be refused');
}

const newUser = { email: 'new@roles.test', role: 'viewer' as const, password: 'a long enough password' };

describe('signed out', () => {
  it('every event and user procedure answers UNAUTHORIZED (SIGN_IN_REQUIRED); auth.me answers null', async () => {
    const anon = callerAs(tdb.db, null);
    for (const call of [anon.events.list(), anon.events.byId({ id: acmeEvent }), anon.users.list(), anon.users.create(newUser)])
      expect(await refusal(call)).toMatchObject({ code: 'UNAUTHORIZED', domainCode: 'SIGN_IN_REQUIRED' });
    expect(await anon.auth.me()).toBeNull();
  });
});

describe('auth', () => {
  it('signIn with a wrong password is UNAUTHORIZED INVALID_CREDENTIALS at the password field, and sets no cookie', async () => {
    const ctx = contextFor(tdb.db, null);
    const r = await refusal(appRouter.createCaller(ctx).auth.signIn({ email: admin.email, password: 'wrong password' }));
    expect(r).toEqual({
      code: 'UNAUTHORIZED',
      domainCode: 'INVALID_CREDENTIALS',
      field: 'password',
      message: 'wrong e-mail address or password',
    });
    expect(ctx.cookieWrites).toEqual([]);
    expect(await tdb.db.selectFrom('console_sessions').selectAll().where('user_id', '=', admin.id).execute()).toEqual([]);
  });

  it('signIn sets the session cookie and answers who is signed in, with what the role allows', async () => {
    const ctx = contextFor(tdb.db, null);
    const me = await appRouter.createCaller(ctx).auth.signIn({ email: 'ADMIN@roles.test ', password: admin.password });
    expect(me).toMatchObject({ email: 'admin@roles.test', role: 'admin', organisationName: null });
    expect(me.permissions).toEqual([
      'users.manage',
      'events.read',
      'events.configure',
      'warroom.control',
      'tiers.roll',
      'tiers.codes',
      'lottery.draw',
      'support.read',
      'support.act',
      'orders.cancel',
      'inventory.add',
      'review.read',
      'review.cancel',
      'webhooks.manage',
      'tickets.read',
      'tickets.support',
      'tickets.scan',
    ]);
    expect(ctx.cookieWrites).toEqual([{ set: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), expiresAt: expect.any(Date) }]);
    expect((await callerAs(tdb.db, viewer).auth.me())?.permissions).toEqual(['events.read', 'tickets.read']);
  });

  it('a mutation without the CSRF header is refused before it runs, sign-in included', async () => {
    const ctx = contextFor(tdb.db, null, { csrf: false });
    const r = await refusal(appRouter.createCaller(ctx).auth.signIn({ email: admin.email, password: admin.password }));
    expect(r).toMatchObject({ code: 'FORBIDDEN', domainCode: 'CSRF_HEADER_MISSING', field: 'x-csrf' });
    expect(ctx.cookieWrites).toEqual([]);
    const before = (await callerAs(tdb.db, admin).users.list()).length;
    expect(await refusal(callerAs(tdb.db, admin, { csrf: false }).users.create(newUser))).toMatchObject({
      code: 'FORBIDDEN',
      domainCode: 'CSRF_HEADER_MISSING',
    });
    expect((await callerAs(tdb.db, admin).users.list()).length).toBe(before);
    // Queries change nothing and need no header.
    expect(await callerAs(tdb.db, admin, { csrf: false }).events.list()).toHaveLength(3);
  });
});

describe('users (admin only)', () => {
  it('an admin lists and creates users; the answer never carries a password hash', async () => {
    const created = await callerAs(tdb.db, admin).users.create({
      email: 'Promoter2@Acme.test',
      role: 'promoter',
      organisation: 'acme live',
    });
    expect(created.user).toMatchObject({
      email: 'promoter2@acme.test',
      role: 'promoter',
      organisationName: 'Acme Live',
      createdBy: 'console:admin@roles.test',
    });
    expect(created.generatedPassword).toMatch(/^[A-Za-z0-9_-]{20}$/);
    const list = await callerAs(tdb.db, admin).users.list();
    expect(list.map((u) => u.email)).toContain('promoter2@acme.test');
    expect(JSON.stringify(list)).not.toMatch(/scrypt|password/i);
  });

  it('operators, promoters and viewers are refused both, with ROLE_FORBIDDEN', async () => {
    for (const user of [operator, viewer, acmePromoter]) {
      expect(await refusal(callerAs(tdb.db, user).users.list())).toMatchObject({
        code: 'FORBIDDEN',
        domainCode: 'ROLE_FORBIDDEN',
        field: 'role',
      });
      expect(await refusal(callerAs(tdb.db, user).users.create(newUser))).toMatchObject({
        code: 'FORBIDDEN',
        domainCode: 'ROLE_FORBIDDEN',
      });
    }
    expect(await tdb.db.selectFrom('console_users').select('id').where('email', '=', newUser.email).execute()).toEqual([]);
  });

  it('bad input is BAD_REQUEST naming the field; a taken e-mail is CONFLICT at the email field', async () => {
    const bad = await refusal(
      callerAs(tdb.db, admin).users.create({ email: 'x@roles.test', role: 'promoter', password: 'a long enough password' }),
    );
    expect(bad).toMatchObject({ code: 'BAD_REQUEST' });
    const taken = await refusal(
      callerAs(tdb.db, admin).users.create({ email: 'viewer@roles.test', role: 'viewer', password: 'a long enough password' }),
    );
    expect(taken).toMatchObject({ code: 'CONFLICT', domainCode: 'EMAIL_TAKEN', field: 'email' });
  });
});

describe('events by role', () => {
  it('admins, operators and viewers see every event, house events included', async () => {
    for (const user of [admin, operator, viewer]) {
      const names = (await callerAs(tdb.db, user).events.list()).map((e) => e.name).sort();
      expect(names).toEqual(['Acme Night', 'Beta Night', 'House Night']);
      expect((await callerAs(tdb.db, user).events.byId({ id: houseEvent })).name).toBe('House Night');
    }
  });

  it("a promoter lists only their organisation's events and is FORBIDDEN another organisation's or a house event", async () => {
    expect((await callerAs(tdb.db, acmePromoter).events.list()).map((e) => e.name)).toEqual(['Acme Night']);
    expect((await callerAs(tdb.db, betaPromoter).events.list()).map((e) => e.name)).toEqual(['Beta Night']);
    expect((await callerAs(tdb.db, acmePromoter).events.byId({ id: acmeEvent })).name).toBe('Acme Night');
    for (const id of [betaEvent, houseEvent])
      expect(await refusal(callerAs(tdb.db, acmePromoter).events.byId({ id }))).toMatchObject({
        code: 'FORBIDDEN',
        domainCode: 'EVENT_FORBIDDEN',
        field: 'id',
      });
    // An unknown event is still NOT_FOUND, for a promoter too.
    expect((await refusal(callerAs(tdb.db, acmePromoter).events.byId({ id: '00000000-0000-4000-8000-000000000000' }))).code).toBe(
      'NOT_FOUND',
    );
  });
});
