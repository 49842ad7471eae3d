import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TRPCError } from '@trpc/server';
import { ZodError } from 'zod';
import { sql } from '@onsale/shared/db';
import { checkAccessCode } from '@onsale/shared/allocations';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { createNodeTokenKey, type TokenKey } from '@onsale/shared/queue';
import { testSecrets, createTestDatabase, type TestDatabase } from '@onsale/shared/testing';
import { assignEventOrganisation, fieldErrors, type ConsoleUser } from '@onsale/shared/users';
import { callerAs, seedUser, smallEventFile } from './fixtures.js';

// Presale tiers through the BFF: the event page's and the war room's per-tier figures, rolling a tier forward now
// (admin, operator, the event's own promoter) and issuing access codes (admin, the event's own promoter), each
// audited with the user's e-mail, every role boundary checked.

let tdb: TestDatabase;
let key: TokenKey;
/** Acme Live's tiered event: the fan club (codes) and card partner presales selling now, the general sale tomorrow. */
let eventId: string;
/** A house event without tiers. */
let plainId: string;
let admin: ConsoleUser;
let operator: ConsoleUser;
let viewer: ConsoleUser;
let promoter: ConsoleUser;
let otherPromoter: ConsoleUser;

const at = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();

beforeAll(async () => {
  tdb = await createTestDatabase(inject('templateDatabaseUrl'));
  key = await createNodeTokenKey(testSecrets().queueTokenSecret);
  const file = {
    ...smallEventFile('Tiered Night'),
    onsaleAt: at(24 * 60),
    startsAt: at(7 * 24 * 60),
    allocations: [
      { code: 'FANCLUB', name: 'Fan club', share: 0.5, access: 'ACCESS_CODE', opensAt: at(-30), closesAt: at(120), fairnessMode: 'FIFO' },
      {
        code: 'CARD',
        name: 'Card partner',
        share: 0.25,
        access: 'CARD_BIN',
        binRanges: [{ from: '411100', to: '411199' }],
        opensAt: at(180),
        closesAt: at(240),
      },
      { code: 'GENERAL', name: 'General sale' },
    ],
  };
  ({ eventId } = await tdb.db.transaction().execute((trx) => createEvent(trx, parseEventFile(file), 'test', { signOff: true })));
  ({ eventId: plainId } = await tdb.db
    .transaction()
    .execute((trx) => createEvent(trx, parseEventFile(smallEventFile('Plain Night')), 'test', { signOff: true })));
  admin = await seedUser(tdb.db, 'admin@tiers.test', 'admin');
  operator = await seedUser(tdb.db, 'operator@tiers.test', 'operator');
  viewer = await seedUser(tdb.db, 'viewer@tiers.test', 'viewer');
  promoter = await seedUser(tdb.db, 'promoter@acme.test', 'promoter', 'Acme Live');
  otherPromoter = await seedUser(tdb.db, 'promoter@other.test', 'promoter', 'Other Presents');
  await tdb.db.transaction().execute((trx) => assignEventOrganisation(trx, eventId, 'Acme Live', 'test'));
});

afterAll(async () => {
  await tdb?.drop();
});

/** The refusal: tRPC code, domain code, and the fields named (by zod, or by the domain error). */
async function refusal(p: Promise<unknown>): Promise<{ code: string; domainCode: string | undefined; fields: string[] }> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(TRPCError);
    const e = err as TRPCError;
    const cause = e.cause as { code?: string; details?: { field?: string } } | undefined;
    const fields = e.cause instanceof ZodError ? Object.keys(fieldErrors(e.cause)) : cause?.details?.field ? [cause.details.field] : [];
    return { code: e.code, domainCode: e.cause instanceof ZodError ? undefined : cause?.code, fields };
  }
  throw new Error('expected the call to fail');
}

const audits = (action: string) =>
  tdb.db
    .selectFrom('audit_log')
    .select(['actor', 'details'])
    .where('event_id', '=', eventId)
    .where('action', '=', action)
    .orderBy('id')
    .execute();

/** Holds `count` seats of a tier (no holds row needed: seats.hold_id has no FK). */
async function holdTierSeats(tier: string, count: number): Promise<void> {
  await sql`
    UPDATE seats SET status = 'HELD', hold_id = gen_random_uuid(), expires_at = now() + interval '5 min'
    WHERE event_id = ${eventId} AND id IN (
      SELECT id FROM seats WHERE event_id = ${eventId} AND allocation = ${tier} AND status = 'AVAILABLE' ORDER BY id LIMIT ${count})`.execute(
    tdb.db,
  );
}

describe('tiers on the event page and in the war room', () => {
  it('events.byId lists each tier with its rule, window, phase and live counts; an event without tiers has none', async () => {
    await holdTierSeats('FANCLUB', 2);
    const event = await callerAs(tdb.db, viewer).events.byId({ id: eventId });
    // Sections A (12) and B (10): half, a quarter and the rest of each (B: 5, round(7.5) - 5 = 3, 2).
    expect(event.tiers.map((t) => [t.code, t.phase, t.access, t.capacity, t.available, t.held, t.sold, t.drift])).toEqual([
      ['FANCLUB', 'SELLING', 'ACCESS_CODE', 11, 9, 2, 0, 0],
      ['CARD', 'UPCOMING', 'CARD_BIN', 6, 6, 0, 0, 0],
      ['GENERAL', 'UPCOMING', 'OPEN', 5, 5, 0, 0, 0],
    ]);
    expect(event.tiers[0]).toMatchObject({
      share: 0.5,
      fairnessMode: 'FIFO',
      rollsInto: 'CARD',
      rolledAt: null,
      general: false,
      binRanges: null,
    });
    expect(event.tiers[1]!.binRanges).toEqual([{ from: '411100', to: '411199' }]);
    expect(event.tiers[2]).toMatchObject({ general: true, closesAt: null, rollsForwardAt: null, opensAt: event.onsaleAt });
    // The tiers add up to the event's totals.
    expect(event.tiers.reduce((n, t) => n + t.capacity, 0)).toBe(event.counts.capacity);
    expect((await callerAs(tdb.db, viewer).events.byId({ id: plainId })).tiers).toEqual([]);
  });

  it('the war-room snapshot carries the same tiers', async () => {
    const s = await callerAs(tdb.db, operator).warRoom.snapshot({ eventId });
    expect(s.tiers.map((t) => [t.code, t.phase, t.available, t.held])).toEqual([
      ['FANCLUB', 'SELLING', 9, 2],
      ['CARD', 'UPCOMING', 6, 0],
      ['GENERAL', 'UPCOMING', 5, 0],
    ]);
    expect((await callerAs(tdb.db, operator).warRoom.snapshot({ eventId: plainId })).tiers).toEqual([]);
  });
});

describe('tiers.roll', () => {
  const reason = 'fan club demand is spent; give the seats to the card partner';
  let roll: { eventId: string; tier: string; reason: string };
  beforeAll(() => {
    roll = { eventId, tier: 'FANCLUB', reason };
  });

  it("is refused to a viewer, to another organisation's promoter, without a reason and without the CSRF header", async () => {
    expect(await refusal(callerAs(tdb.db, viewer).tiers.roll(roll))).toMatchObject({ code: 'FORBIDDEN', domainCode: 'ROLE_FORBIDDEN' });
    expect(await refusal(callerAs(tdb.db, otherPromoter).tiers.roll(roll))).toMatchObject({
      code: 'FORBIDDEN',
      domainCode: 'EVENT_FORBIDDEN',
    });
    expect(await refusal(callerAs(tdb.db, operator).tiers.roll({ ...roll, reason: '  ' }))).toMatchObject({
      code: 'BAD_REQUEST',
      fields: ['reason'],
    });
    expect(await refusal(callerAs(tdb.db, operator, { csrf: false }).tiers.roll(roll))).toMatchObject({
      code: 'FORBIDDEN',
      domainCode: 'CSRF_HEADER_MISSING',
    });
    expect(await refusal(callerAs(tdb.db, operator).tiers.roll({ ...roll, tier: 'NOPE' }))).toMatchObject({
      code: 'NOT_FOUND',
      domainCode: 'TIER_NOT_FOUND',
      fields: ['tier'],
    });
    expect(await refusal(callerAs(tdb.db, operator).tiers.roll({ ...roll, tier: 'GENERAL' }))).toMatchObject({
      code: 'BAD_REQUEST',
      domainCode: 'TIER_DOES_NOT_ROLL',
      fields: ['tier'],
    });
    expect(await refusal(callerAs(tdb.db, operator).tiers.roll({ ...roll, eventId: plainId }))).toMatchObject({
      code: 'NOT_FOUND',
      domainCode: 'TIER_NOT_FOUND',
    });
    expect(await audits('allocation.rolled')).toEqual([]);
    const fanClub = (await callerAs(tdb.db, viewer).events.byId({ id: eventId })).tiers[0]!;
    expect([fanClub.capacity, fanClub.rolledAt]).toEqual([11, null]);
  });

  it('an operator rolls the unsold seats forward now, audited with the e-mail and the reason; seats held stay', async () => {
    expect(await callerAs(tdb.db, operator).tiers.roll(roll)).toEqual({ eventId, from: 'FANCLUB', into: 'CARD', moved: 9 });
    const tiers = (await callerAs(tdb.db, viewer).events.byId({ id: eventId })).tiers;
    expect(tiers.map((t) => [t.code, t.phase, t.capacity, t.available, t.held, t.drift])).toEqual([
      ['FANCLUB', 'ROLLED', 2, 0, 2, 0],
      ['CARD', 'UPCOMING', 15, 15, 0, 0],
      ['GENERAL', 'UPCOMING', 5, 5, 0, 0],
    ]);
    expect(tiers[0]!.rolledAt).not.toBeNull();
    expect(await audits('allocation.rolled')).toEqual([
      { actor: operator.email, details: { from: 'FANCLUB', into: 'CARD', seats: 9, early: true, reason: roll.reason } },
    ]);
  });

  it("the event's own promoter and an admin may roll too", async () => {
    expect(await callerAs(tdb.db, promoter).tiers.roll({ eventId, tier: 'CARD', reason: 'partner presale cancelled' })).toMatchObject({
      from: 'CARD',
      into: 'GENERAL',
      moved: 15,
    });
    // Nothing left to move: a second roll moves nothing and writes no audit entry.
    expect(await callerAs(tdb.db, admin).tiers.roll({ eventId, tier: 'CARD', reason: 'again' })).toMatchObject({ moved: 0 });
    expect((await audits('allocation.rolled')).map((a) => a.actor)).toEqual([operator.email, promoter.email]);
    const general = (await callerAs(tdb.db, viewer).events.byId({ id: eventId })).tiers[2]!;
    expect([general.capacity, general.available, general.drift]).toEqual([20, 20, 0]);
  });
});

describe('tiers.issueCodes', () => {
  // The fan club keeps its access rule after rolling forward: codes can still be issued for it.
  let issue: { eventId: string; tier: string; count: number };
  beforeAll(() => {
    issue = { eventId, tier: 'FANCLUB', count: 3 };
  });

  it("is refused to an operator, a viewer and another organisation's promoter; bad input at its field", async () => {
    const as = (u: ConsoleUser) => callerAs(tdb.db, u, { accessCodeKey: key });
    expect(await refusal(as(operator).tiers.issueCodes(issue))).toMatchObject({ code: 'FORBIDDEN', domainCode: 'ROLE_FORBIDDEN' });
    expect(await refusal(as(viewer).tiers.issueCodes(issue))).toMatchObject({ code: 'FORBIDDEN', domainCode: 'ROLE_FORBIDDEN' });
    expect(await refusal(as(otherPromoter).tiers.issueCodes(issue))).toMatchObject({ code: 'FORBIDDEN', domainCode: 'EVENT_FORBIDDEN' });
    expect(await refusal(as(promoter).tiers.issueCodes({ ...issue, count: 0 }))).toMatchObject({ code: 'BAD_REQUEST', fields: ['count'] });
    expect(await refusal(as(promoter).tiers.issueCodes({ ...issue, count: 5001 }))).toMatchObject({
      code: 'BAD_REQUEST',
      fields: ['count'],
    });
    expect(await refusal(as(promoter).tiers.issueCodes({ ...issue, accountId: 'fan-1' }))).toMatchObject({
      code: 'BAD_REQUEST',
      fields: ['count'],
    });
    expect(await refusal(as(promoter).tiers.issueCodes({ ...issue, validUntil: 'tomorrow' }))).toMatchObject({
      code: 'BAD_REQUEST',
      fields: ['validUntil'],
    });
    expect(await refusal(as(promoter).tiers.issueCodes({ ...issue, validUntil: at(-1) }))).toMatchObject({
      code: 'BAD_REQUEST',
      domainCode: 'INVALID_VALID_UNTIL',
      fields: ['validUntil'],
    });
    expect(await refusal(as(promoter).tiers.issueCodes({ ...issue, tier: 'CARD' }))).toMatchObject({
      code: 'BAD_REQUEST',
      domainCode: 'TIER_TAKES_NO_CODES',
      fields: ['tier'],
    });
    // A console without the token secret cannot sign codes, and says so.
    expect(await refusal(callerAs(tdb.db, promoter).tiers.issueCodes(issue))).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      domainCode: 'ACCESS_CODES_UNAVAILABLE',
    });
    expect(await audits('allocation.codes_issued')).toEqual([]);
  });

  it('the promoter gets codes the store API accepts for this event and tier, audited without the codes', async () => {
    const issued = await callerAs(tdb.db, promoter, { accessCodeKey: key }).tiers.issueCodes(issue);
    expect(issued.codes).toHaveLength(3);
    expect(new Set(issued.codes).size).toBe(3);
    const fanClub = (await callerAs(tdb.db, viewer).events.byId({ id: eventId })).tiers[0]!;
    // Valid until the tier closes, by default.
    expect(issued).toMatchObject({ tier: 'FANCLUB', expiresAt: fanClub.closesAt });
    for (const code of issued.codes) {
      const checked = await checkAccessCode(key, code, { eventId, tier: 'FANCLUB', accountId: 'any-fan', now: Date.now() });
      expect(checked.ok).toBe(true);
    }
    expect((await checkAccessCode(key, issued.codes[0]!, { eventId, tier: 'CARD', accountId: 'any-fan', now: Date.now() })).ok).toBe(false);

    const bound = await callerAs(tdb.db, admin, { accessCodeKey: key }).tiers.issueCodes({
      eventId,
      tier: 'FANCLUB',
      count: 1,
      accountId: 'fan-42',
      validUntil: at(60),
    });
    expect(await checkAccessCode(key, bound.codes[0]!, { eventId, tier: 'FANCLUB', accountId: 'fan-7', now: Date.now() })).toEqual({
      ok: false,
      problem: 'ACCESS_CODE_WRONG_ACCOUNT',
    });
    expect((await checkAccessCode(key, bound.codes[0]!, { eventId, tier: 'FANCLUB', accountId: 'fan-42', now: Date.now() })).ok).toBe(true);

    const entries = await audits('allocation.codes_issued');
    expect(entries).toEqual([
      { actor: promoter.email, details: { tier: 'FANCLUB', count: 3, accountId: null, expiresAt: fanClub.closesAt } },
      { actor: admin.email, details: { tier: 'FANCLUB', count: 1, accountId: 'fan-42', expiresAt: bound.expiresAt } },
    ]);
    expect(JSON.stringify(entries)).not.toContain(issued.codes[0]!);
  });
});
