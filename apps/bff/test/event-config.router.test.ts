import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TRPCError } from '@trpc/server';
import { DomainError } from '@onsale/shared';
import { createOpenEvent, createTestDatabase, type TestDatabase } from '@onsale/shared/testing';
import { eventFileSchema, formatIssues, type EventFile } from '@onsale/shared/sale-setup/schema';
import { fieldErrors } from '@onsale/shared/users/schema';
import { assignEventOrganisation, type ConsoleUser } from '@onsale/shared/users';
import { buildBff } from '../src/app.js';
import { callerAs, seedUser, smallEventFile } from './fixtures.js';

// Event configuration through createCaller against real PostgreSQL: every role boundary, the stale edit, the
// change rules, the sign-off, and invalid input refused by the server exactly as the console's form refuses it.

let tdb: TestDatabase;
let admin: ConsoleUser;
let operator: ConsoleUser;
let viewer: ConsoleUser;
let acme: ConsoleUser;
let beta: ConsoleUser;
let acmeEventId: string;
let acmeListingId: string;
let betaEventId: string;
let betaListingId: string;

/** A file for the form's own future: on sale in a year, show a month later. */
function futureFile(name: string, over: Partial<EventFile> = {}): EventFile {
  const onsale = new Date(Date.now() + 365 * 86_400_000);
  return {
    ...smallEventFile(name),
    onsaleAt: onsale.toISOString(),
    startsAt: new Date(onsale.getTime() + 30 * 86_400_000).toISOString(),
    ...over,
  };
}

async function refusal(p: Promise<unknown>): Promise<{ code: string; domainCode: string | undefined; field: unknown; issues: unknown }> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(TRPCError);
    const cause = (err as TRPCError).cause;
    const domain = cause instanceof DomainError ? cause : undefined;
    return { code: (err as TRPCError).code, domainCode: domain?.code, field: domain?.details.field, issues: domain?.details.issues };
  }
  throw new Error('expected the call to be refused');
}

beforeAll(async () => {
  tdb = await createTestDatabase(inject('templateDatabaseUrl'));
  [admin, operator, viewer, acme, beta] = await Promise.all([
    seedUser(tdb.db, 'admin@config.test', 'admin'),
    seedUser(tdb.db, 'operator@config.test', 'operator'),
    seedUser(tdb.db, 'viewer@config.test', 'viewer'),
    seedUser(tdb.db, 'promoter@acme.test', 'promoter', 'Acme Live'),
    seedUser(tdb.db, 'promoter@beta.test', 'promoter', 'Beta Presents'),
  ]);
  ({ eventId: acmeEventId, listingId: acmeListingId } = await callerAs(tdb.db, acme).eventConfig.create({
    event: futureFile('Acme Night'),
  }));
  ({ eventId: betaEventId, listingId: betaListingId } = await callerAs(tdb.db, beta).eventConfig.create({
    event: futureFile('Beta Night'),
  }));
});

afterAll(async () => {
  await tdb?.drop();
});

describe('eventConfig.create', () => {
  it("a promoter's new event is their organisation's, audited with their e-mail, with the listing's waitlist settings", async () => {
    const created = await callerAs(tdb.db, acme).eventConfig.create({
      event: futureFile('Acme Matinee'),
      waitlist: { mode: 'BROADCAST', ttlDays: 10, offerTtlMinutes: 20 },
    });
    expect(created).toMatchObject({ capacity: 22, version: 1 });
    const row = await tdb.db.selectFrom('events').select(['organisation_id']).where('id', '=', created.eventId).executeTakeFirstOrThrow();
    expect(row.organisation_id).toBe(acme.organisationId);
    const config = await callerAs(tdb.db, acme).eventConfig.get({ id: created.eventId });
    expect(config.listing.waitlist).toEqual({ mode: 'BROADCAST', ttlDays: 10, offerTtlMinutes: 20 });
    const audit = await tdb.db
      .selectFrom('audit_log')
      .select(['actor', 'action'])
      .where('event_id', '=', created.eventId)
      .orderBy('id')
      .execute();
    expect(audit[0]).toEqual({ actor: 'promoter@acme.test', action: 'event.created' });
    // Beta's promoter does not see it; Acme's does.
    expect((await callerAs(tdb.db, beta).events.list()).map((e) => e.id)).not.toContain(created.eventId);
    expect((await callerAs(tdb.db, acme).events.list()).map((e) => e.id)).toContain(created.eventId);
  });

  it('an admin creates a house event (no organisation)', async () => {
    const created = await callerAs(tdb.db, admin).eventConfig.create({ event: futureFile('House Night') });
    const row = await tdb.db.selectFrom('events').select(['organisation_id']).where('id', '=', created.eventId).executeTakeFirstOrThrow();
    expect(row.organisation_id).toBeNull();
  });

  it('refuses viewers and operators (FORBIDDEN), the signed-out (UNAUTHORIZED) and a request without x-csrf (FORBIDDEN); writes nothing', async () => {
    const before = (await tdb.db.selectFrom('events').select('id').execute()).length;
    expect(await refusal(callerAs(tdb.db, viewer).eventConfig.create({ event: futureFile('Viewer Night') }))).toMatchObject({
      code: 'FORBIDDEN',
      domainCode: 'ROLE_FORBIDDEN',
    });
    expect(await refusal(callerAs(tdb.db, operator).eventConfig.create({ event: futureFile('Operator Night') }))).toMatchObject({
      code: 'FORBIDDEN',
      domainCode: 'ROLE_FORBIDDEN',
    });
    expect(await refusal(callerAs(tdb.db, null).eventConfig.create({ event: futureFile('Nobody Night') }))).toMatchObject({
      code: 'UNAUTHORIZED',
    });
    expect(await refusal(callerAs(tdb.db, acme, { csrf: false }).eventConfig.create({ event: futureFile('No CSRF') }))).toMatchObject({
      code: 'FORBIDDEN',
      domainCode: 'CSRF_HEADER_MISSING',
    });
    expect((await tdb.db.selectFrom('events').select('id').execute()).length).toBe(before);
  });

  it("refuses a promoter's event on another organisation's listing", async () => {
    expect(
      await refusal(callerAs(tdb.db, acme).eventConfig.create({ event: futureFile('Sneaky', { listing: { id: betaListingId } }) })),
    ).toMatchObject({
      code: 'FORBIDDEN',
      domainCode: 'LISTING_FORBIDDEN',
      field: 'listing.id',
    });
  });

  it('refuses invalid input exactly as the form does: the same schema, the same paths, the same words', async () => {
    const bad: unknown[] = [
      { ...futureFile('Bad 1'), onsaleAt: '2040-01-01T00:00:00Z', startsAt: '2039-01-01T00:00:00Z' },
      { ...futureFile('Bad 2'), sections: [{ code: 'A B', priceLevel: 'P9', qualityRank: 0, rowCount: 1 }] },
      { ...futureFile('Bad 3'), name: '', limits: { perAccountSeats: 0 }, holds: { ttlSeconds: 5 }, pacing: { overbookFactor: 9 } },
      { ...futureFile('Bad 4'), priceLevels: [] },
      { name: 'Bad 5' },
    ];
    for (const event of bad) {
      const form = eventFileSchema.safeParse(event);
      expect(form.success).toBe(false);
      const r = await refusal(callerAs(tdb.db, acme).eventConfig.create({ event: event as EventFile }));
      expect(r).toMatchObject({ code: 'BAD_REQUEST', domainCode: 'INVALID_EVENT_FILE' });
      expect(r.issues).toEqual(formatIssues(form.error!));
      expect(r.field).toBe(formatIssues(form.error!)[0]!.path);
    }
    expect(
      await refusal(
        callerAs(tdb.db, acme).eventConfig.create({
          event: futureFile('Bad waitlist'),
          waitlist: { mode: 'OFFER', ttlDays: 0, offerTtlMinutes: 1 },
        }),
      ),
    ).toMatchObject({
      code: 'BAD_REQUEST',
    });
  });
});

describe('eventConfig.create: times that have passed', () => {
  it('refuses a show time in the past and an on-sale more than 5 minutes ago at their fields (EVENT_TIME_PASSED); nothing is written', async () => {
    const before = await tdb.db.selectFrom('events').select('id').execute();
    const r = await refusal(
      callerAs(tdb.db, acme).eventConfig.create({
        event: { ...futureFile('Past'), startsAt: '2025-01-01T20:00:00Z', onsaleAt: '2025-01-01T10:00:00Z' },
      }),
    );
    expect(r).toMatchObject({ code: 'BAD_REQUEST', domainCode: 'EVENT_TIME_PASSED', field: 'startsAt' });
    expect(r.issues).toEqual([
      { path: 'startsAt', message: 'this time has passed: enter when the show starts, later than now' },
      { path: 'onsaleAt', message: 'this time has passed: choose when the sale opens, later than now, or open the sale now' },
    ]);
    const late = await refusal(
      callerAs(tdb.db, acme).eventConfig.create({
        event: futureFile('Late', { onsaleAt: new Date(Date.now() - 6 * 60_000).toISOString() }),
      }),
    );
    expect(late).toMatchObject({ domainCode: 'EVENT_TIME_PASSED', field: 'onsaleAt' });
    // With a schema problem too, every issue comes back together under INVALID_EVENT_FILE.
    const both = await refusal(
      callerAs(tdb.db, acme).eventConfig.create({ event: { ...futureFile(''), startsAt: '2025-01-01T20:00:00Z' } }),
    );
    expect(both.domainCode).toBe('INVALID_EVENT_FILE');
    expect((both.issues as { path: string }[]).map((i) => i.path)).toEqual(expect.arrayContaining(['startsAt', 'name']));
    expect(await tdb.db.selectFrom('events').select('id').execute()).toEqual(before);
  });

  it('an on-sale within 5 minutes means "open now": the event is created open', async () => {
    const onsaleAt = new Date(Date.now() - 2 * 60_000).toISOString();
    const { eventId } = await callerAs(tdb.db, acme).eventConfig.create({ event: futureFile('Open now', { onsaleAt }) });
    const row = await tdb.db.selectFrom('events').select('onsale_at').where('id', '=', eventId).executeTakeFirstOrThrow();
    expect(row.onsale_at.toISOString()).toBe(onsaleAt);
  });
});

describe('eventConfig.get', () => {
  it("gives a promoter their event's file and version; another organisation's is FORBIDDEN; every role reads", async () => {
    const config = await callerAs(tdb.db, acme).eventConfig.get({ id: acmeEventId });
    expect(config).toMatchObject({ eventId: acmeEventId, version: 1, phase: 'BEFORE_OPEN', canConfigure: true, capacity: 22 });
    expect(config.file.name).toBe('Acme Night');
    expect(await refusal(callerAs(tdb.db, acme).eventConfig.get({ id: betaEventId }))).toMatchObject({
      code: 'FORBIDDEN',
      domainCode: 'EVENT_FORBIDDEN',
    });
    expect((await callerAs(tdb.db, viewer).eventConfig.get({ id: betaEventId })).canConfigure).toBe(false);
    expect((await callerAs(tdb.db, operator).eventConfig.get({ id: betaEventId })).canConfigure).toBe(false);
    expect((await callerAs(tdb.db, admin).eventConfig.get({ id: betaEventId })).canConfigure).toBe(true);
    expect(await refusal(callerAs(tdb.db, viewer).eventConfig.get({ id: '00000000-0000-4000-8000-000000000000' }))).toMatchObject({
      code: 'NOT_FOUND',
    });
    expect(await refusal(callerAs(tdb.db, viewer).eventConfig.get({ id: 'not-an-id' }))).toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('eventConfig.update', () => {
  it('applies an edit from the current version and bumps it; the same edit from the old version is a CONFLICT that overwrites nothing', async () => {
    const { eventId } = await callerAs(tdb.db, acme).eventConfig.create({ event: futureFile('Edit Night') });
    const config = await callerAs(tdb.db, acme).eventConfig.get({ id: eventId });
    const mine = await callerAs(tdb.db, acme).eventConfig.update({
      eventId,
      expectedVersion: config.version,
      event: { ...config.file, venueName: 'Mine' },
    });
    expect(mine).toMatchObject({ version: config.version + 1, changes: [{ setting: 'venueName', from: 'Test Hall', to: 'Mine' }] });

    // A second tab still on the old version.
    const stale = await refusal(
      callerAs(tdb.db, admin).eventConfig.update({
        eventId,
        expectedVersion: config.version,
        event: { ...config.file, venueName: 'Theirs' },
      }),
    );
    expect(stale).toMatchObject({ code: 'CONFLICT', domainCode: 'STALE_EVENT_VERSION', field: 'version' });
    expect((await callerAs(tdb.db, acme).eventConfig.get({ id: eventId })).file.venueName).toBe('Mine');

    const audit = await tdb.db
      .selectFrom('audit_log')
      .select(['actor', 'details'])
      .where('event_id', '=', eventId)
      .where('action', '=', 'event.updated')
      .execute();
    expect(audit).toEqual([
      {
        actor: 'promoter@acme.test',
        details: { fromVersion: 1, version: 2, changes: [{ setting: 'venueName', from: 'Test Hall', to: 'Mine' }] },
      },
    ]);
  });

  it("refuses another organisation's event (FORBIDDEN), viewers and operators (FORBIDDEN), and changes nothing", async () => {
    const config = await callerAs(tdb.db, beta).eventConfig.get({ id: betaEventId });
    const edit = { eventId: betaEventId, expectedVersion: config.version, event: { ...config.file, name: 'Hijacked' } };
    expect(await refusal(callerAs(tdb.db, acme).eventConfig.update(edit))).toMatchObject({
      code: 'FORBIDDEN',
      domainCode: 'EVENT_FORBIDDEN',
    });
    expect(await refusal(callerAs(tdb.db, viewer).eventConfig.update(edit))).toMatchObject({
      code: 'FORBIDDEN',
      domainCode: 'ROLE_FORBIDDEN',
    });
    expect(await refusal(callerAs(tdb.db, operator).eventConfig.update(edit))).toMatchObject({
      code: 'FORBIDDEN',
      domainCode: 'ROLE_FORBIDDEN',
    });
    expect((await callerAs(tdb.db, beta).eventConfig.get({ id: betaEventId })).file.name).toBe('Beta Night');
  });

  it('after the open refuses the unsafe changes at their fields (CONFLICT), allows a lower limit', async () => {
    const { eventId } = await createOpenEvent(tdb.db, { name: 'Open Night' });
    await tdb.db.transaction().execute((trx) => assignEventOrganisation(trx, eventId, 'Acme Live', 'test'));
    const config = await callerAs(tdb.db, acme).eventConfig.get({ id: eventId });
    expect(config.phase).toBe('OPEN');
    expect(config.locked.sections).toMatch(/fixed since the on-sale opened/);
    const refused = await refusal(
      callerAs(tdb.db, acme).eventConfig.update({
        eventId,
        expectedVersion: config.version,
        event: { ...config.file, fairnessMode: 'FIFO', limits: { perAccountSeats: 9, perInstrumentSeats: 4 } },
      }),
    );
    expect(refused).toMatchObject({ code: 'CONFLICT', domainCode: 'LOCKED_AFTER_OPEN', field: 'fairnessMode' });
    expect((refused.issues as { path: string }[]).map((i) => i.path)).toEqual([
      'fairnessMode',
      'limits.perAccountSeats',
      'limits.perDeviceSeats',
    ]);
    const lowered = await callerAs(tdb.db, acme).eventConfig.update({
      eventId,
      expectedVersion: config.version,
      event: { ...config.file, limits: { perAccountSeats: 2, perInstrumentSeats: 2 } },
    });
    expect(lowered.version).toBe(config.version + 1);
  });
});

describe('eventConfig.signOffFairness', () => {
  it('records the sign-off of the mode the promoter read; a mode change needs a new one; viewers and other organisations are refused', async () => {
    const { eventId } = await callerAs(tdb.db, acme).eventConfig.create({ event: futureFile('Fair Night') });
    expect(
      await refusal(callerAs(tdb.db, viewer).eventConfig.signOffFairness({ eventId, fairnessMode: 'RANDOMIZED_PREOPEN_THEN_FIFO' })),
    ).toMatchObject({ code: 'FORBIDDEN' });
    expect(
      await refusal(callerAs(tdb.db, beta).eventConfig.signOffFairness({ eventId, fairnessMode: 'RANDOMIZED_PREOPEN_THEN_FIFO' })),
    ).toMatchObject({ code: 'FORBIDDEN', domainCode: 'EVENT_FORBIDDEN' });

    const { signOff } = await callerAs(tdb.db, acme).eventConfig.signOffFairness({ eventId, fairnessMode: 'RANDOMIZED_PREOPEN_THEN_FIFO' });
    expect(signOff).toMatchObject({ signedOffBy: 'promoter@acme.test', fairnessMode: 'RANDOMIZED_PREOPEN_THEN_FIFO', supersededAt: null });
    expect(signOff.description).toMatch(/placed in a random order when it opens/);

    const config = await callerAs(tdb.db, acme).eventConfig.get({ id: eventId });
    expect(config.fairness.signOff?.id).toBe(signOff.id);
    const changed = await callerAs(tdb.db, acme).eventConfig.update({
      eventId,
      expectedVersion: config.version,
      event: { ...config.file, fairnessMode: 'FIFO' },
    });
    expect(changed.signOffRequired).toBe(true);
    const after = await callerAs(tdb.db, acme).eventConfig.get({ id: eventId });
    expect(after.fairness).toMatchObject({ mode: 'FIFO', signOff: null });
    expect(after.fairness.history[0]).toMatchObject({ supersededBy: 'promoter@acme.test' });
    expect(
      await refusal(callerAs(tdb.db, acme).eventConfig.signOffFairness({ eventId, fairnessMode: 'RANDOMIZED_PREOPEN_THEN_FIFO' })),
    ).toMatchObject({
      code: 'CONFLICT',
      domainCode: 'FAIRNESS_MODE_CHANGED',
      field: 'fairnessMode',
    });
  });
});

describe('eventConfig.setWaitlist and listings', () => {
  it("sets a listing's waitlist mode for its own promoter only; lists each promoter's own listings", async () => {
    const set = await callerAs(tdb.db, acme).eventConfig.setWaitlist({
      listingId: acmeListingId,
      mode: 'BROADCAST',
      ttlDays: 3,
      offerTtlMinutes: 30,
    });
    expect(set).toEqual({ mode: 'BROADCAST', ttlDays: 3, offerTtlMinutes: 30 });
    expect(
      await refusal(
        callerAs(tdb.db, acme).eventConfig.setWaitlist({ listingId: betaListingId, mode: 'OFFER', ttlDays: 3, offerTtlMinutes: 30 }),
      ),
    ).toMatchObject({
      code: 'FORBIDDEN',
      domainCode: 'LISTING_FORBIDDEN',
    });
    expect(
      await refusal(
        callerAs(tdb.db, viewer).eventConfig.setWaitlist({ listingId: acmeListingId, mode: 'OFFER', ttlDays: 3, offerTtlMinutes: 30 }),
      ),
    ).toMatchObject({ code: 'FORBIDDEN' });
    expect(
      await refusal(
        callerAs(tdb.db, acme).eventConfig.setWaitlist({ listingId: acmeListingId, mode: 'OFFER', ttlDays: 3.5, offerTtlMinutes: 30 }),
      ),
    ).toMatchObject({ code: 'BAD_REQUEST' });

    const acmeListings = (await callerAs(tdb.db, acme).eventConfig.listings()).map((l) => l.id);
    expect(acmeListings).toContain(acmeListingId);
    expect(acmeListings).not.toContain(betaListingId);
    const all = (await callerAs(tdb.db, viewer).eventConfig.listings()).map((l) => l.id);
    expect(all).toEqual(expect.arrayContaining([acmeListingId, betaListingId]));
  });
});

describe('over HTTP', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await buildBff({ db: tdb.db });
  });
  afterAll(async () => {
    await app?.close();
  });

  it("answers a bad event file with 400 and the form's own messages per field in data.fieldErrors", async () => {
    const signIn = await app.inject({
      method: 'POST',
      url: '/trpc/auth.signIn',
      headers: { 'content-type': 'application/json', 'x-csrf': '1' },
      payload: JSON.stringify({ email: acme.email, password: `password of ${acme.email}` }),
    });
    const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
    const event = { ...futureFile('HTTP Bad'), sections: [{ code: 'A', priceLevel: 'NOPE', qualityRank: 1, rowCount: 2, seatsPerRow: 0 }] };
    const res = await app.inject({
      method: 'POST',
      url: '/trpc/eventConfig.create',
      headers: { 'content-type': 'application/json', 'x-csrf': '1', cookie },
      payload: JSON.stringify({ event }),
    });
    expect(res.statusCode).toBe(400);
    const form = eventFileSchema.safeParse(event);
    expect(res.json().error.data).toMatchObject({ domainCode: 'INVALID_EVENT_FILE', fieldErrors: fieldErrors(form.error!) });
  });
});
