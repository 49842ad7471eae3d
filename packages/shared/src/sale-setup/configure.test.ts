import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import { fairnessDescription } from '../queue/fairness.js';
import { createOpenEvent, createTestDatabase, type TestDatabase } from '../testing/index.js';
import { createUser } from '../users/users.service.js';
import { listAuditLog } from '../audit/audit-log.service.js';
import {
  createConfiguredEvent,
  getEventConfiguration,
  listListings,
  requireListingInScope,
  setListingWaitlist,
  signOffFairness,
  updateEventConfiguration,
} from './configure.service.js';
import { eventFileSchema, type EventFile } from '../events/events.schema.js';
import { tierInventory } from '../allocations/allocations.service.js';
import { drawLottery, registerForLottery } from '../lottery/lottery.service.js';
import { domainError } from '../testing/errors.js';

let t: TestDatabase;
let acmeId: string;
let otherOrgId: string;

const ACTOR = 'promoter@acme.test';

function eventFile(name: string, over: Partial<EventFile> = {}): EventFile {
  return {
    name,
    venueName: 'Config Hall',
    startsAt: '2030-06-01T19:00:00Z',
    onsaleAt: '2030-03-01T10:00:00Z',
    priceLevels: [
      { code: 'P1', name: 'Front', priceCents: 12_000 },
      { code: 'P2', name: 'Back', priceCents: 6_000 },
    ],
    sections: [
      { code: 'A', name: 'Stalls', priceLevel: 'P1', qualityRank: 1, rowCount: 3, seatsPerRow: 4 },
      {
        code: 'B',
        name: 'Balcony',
        priceLevel: 'P2',
        qualityRank: 2,
        rows: [
          { label: 'AA', seats: 5 },
          { label: 'BB', seats: 6 },
        ],
      },
    ],
    ...over,
  };
}

const create = (name: string, over: Partial<EventFile> = {}, organisationId: string | null = acmeId, waitlist?: unknown) =>
  t.db
    .transaction()
    .execute((trx) =>
      createConfiguredEvent(trx, { event: eventFile(name, over), ...(waitlist ? { waitlist } : {}) }, { actor: ACTOR, organisationId }),
    );

const update = (eventId: string, expectedVersion: number, event: unknown, now?: Date) =>
  t.db.transaction().execute((trx) => updateEventConfiguration(trx, { eventId, expectedVersion, event }, ACTOR, now));

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
  const acme = await t.db
    .transaction()
    .execute((trx) =>
      createUser(trx, { email: ACTOR, role: 'promoter', organisation: 'Acme Live', password: 'a long password here' }, 'test'),
    );
  acmeId = acme.user.organisationId!;
  const other = await t.db
    .transaction()
    .execute((trx) =>
      createUser(trx, { email: 'p@other.test', role: 'promoter', organisation: 'Other Co', password: 'a long password here' }, 'test'),
    );
  otherOrgId = other.user.organisationId!;
});
afterAll(() => t.drop());

describe('createConfiguredEvent', () => {
  it("creates the event through createEvent, in the creator's organisation, with the listing's waitlist settings; audited by e-mail", async () => {
    const created = await create('Created Night', {}, acmeId, { mode: 'BROADCAST', ttlDays: 14, offerTtlMinutes: 10 });
    expect(created).toMatchObject({ capacity: 23, version: 1 });
    const row = await t.db.selectFrom('events').selectAll().where('id', '=', created.eventId).executeTakeFirstOrThrow();
    expect(row.organisation_id).toBe(acmeId);
    const listing = await t.db.selectFrom('listings').selectAll().where('id', '=', created.listingId).executeTakeFirstOrThrow();
    expect(listing).toMatchObject({
      name: 'Created Night',
      waitlist_mode: 'BROADCAST',
      waitlist_ttl_seconds: 14 * 86_400,
      offer_ttl_seconds: 600,
    });
    const audit = await t.db
      .selectFrom('audit_log')
      .select(['actor', 'action'])
      .where('event_id', '=', created.eventId)
      .orderBy('id')
      .execute();
    expect(audit).toEqual([
      { actor: ACTOR, action: 'event.created' },
      { actor: ACTOR, action: 'event.organisation_assigned' },
    ]);
    const { count } = await t.db
      .selectFrom('seats')
      .select((e) => e.fn.countAll<number>().as('count'))
      .where('event_id', '=', created.eventId)
      .executeTakeFirstOrThrow();
    expect(Number(count)).toBe(23);
  });

  it('refuses an invalid file with every issue at its path, and writes nothing', async () => {
    const before = await t.db.selectFrom('events').select('id').execute();
    const err = await domainError(
      create('Bad', { sections: [{ code: 'A B', priceLevel: 'NOPE', qualityRank: 1, rowCount: 1, seatsPerRow: 1 }] }),
    );
    expect(err.code).toBe('INVALID_EVENT_FILE');
    expect(err.details.issues).toEqual([
      { path: 'sections.0.code', message: 'use letters, digits, "-" and "_" only (no spaces)' },
      { path: 'sections.0.priceLevel', message: 'there is no price level NOPE; choose one of the price levels above' },
    ]);
    expect(await t.db.selectFrom('events').select('id').execute()).toHaveLength(before.length);
  });

  it("lets a promoter add an event to their own listing, not to one with another organisation's events", async () => {
    const mine = await create('Mine 1');
    const second = await create('Mine 2', { listing: { id: mine.listingId } });
    expect(second.listingId).toBe(mine.listingId);
    const theirs = await create('Theirs', {}, otherOrgId);
    const err = await domainError(create('Sneaky', { listing: { id: theirs.listingId } }));
    expect([err.kind, err.code, err.details.field]).toEqual(['forbidden', 'LISTING_FORBIDDEN', 'listing.id']);
    // The house may use any listing.
    await expect(create('House', { listing: { id: theirs.listingId } }, null)).resolves.toMatchObject({ listingId: theirs.listingId });
    await expect(requireListingInScope(t.db, theirs.listingId, otherOrgId)).rejects.toMatchObject({ code: 'LISTING_FORBIDDEN' });
  });
});

describe('getEventConfiguration', () => {
  it('reads the event back as the file it was made from; an edit of that file changes nothing', async () => {
    const { eventId } = await create('Round Trip', {
      queueCopy: { PAUSED: 'Back soon' },
      limits: { perAccountSeats: 6, perInstrumentSeats: 5, perDeviceSeats: 6 },
    });
    const config = await getEventConfiguration(t.db, eventId, new Date('2030-01-01T00:00:00Z'));
    const original = eventFileSchema.parse(
      eventFile('Round Trip', {
        queueCopy: { PAUSED: 'Back soon' },
        limits: { perAccountSeats: 6, perInstrumentSeats: 5, perDeviceSeats: 6 },
      }),
    );
    expect(config.file).toEqual({ ...original, startsAt: '2030-06-01T19:00:00.000Z', onsaleAt: '2030-03-01T10:00:00.000Z' });
    expect(config).toMatchObject({ version: 1, phase: 'BEFORE_OPEN', locked: {}, capacity: 23, queueHasFans: false, seatsInUse: false });
    expect(config.listing.waitlist).toEqual({ mode: 'OFFER', ttlDays: 28, offerTtlMinutes: 15 });
    expect(config.fairness).toMatchObject({ mode: 'RANDOMIZED_PREOPEN_THEN_FIFO', signOff: null, history: [] });

    const result = await update(eventId, 1, config.file, new Date('2030-01-01T00:00:00Z'));
    expect(result).toEqual({ eventId, version: 1, changes: [], signOffRequired: true });
  });

  it('reads a general-admission section back with its capacity and shards', async () => {
    const { eventId } = await create('GA Night', {
      sections: [
        { kind: 'GA', code: 'FLOOR', priceLevel: 'P2', qualityRank: 1, capacity: 500, shards: 4 },
        { code: 'A', priceLevel: 'P1', qualityRank: 2, rowCount: 1, seatsPerRow: 2 },
      ],
    });
    const config = await getEventConfiguration(t.db, eventId);
    expect(config.capacity).toBe(502);
    expect(config.file.sections[0]).toEqual({
      kind: 'GA',
      code: 'FLOOR',
      name: 'Section FLOOR',
      priceLevel: 'P2',
      qualityRank: 1,
      capacity: 500,
      shards: 4,
    });
  });
});

describe('updateEventConfiguration', () => {
  const early = new Date('2030-01-01T00:00:00Z');

  it('refuses a stale version with STALE_EVENT_VERSION and overwrites nothing', async () => {
    const { eventId } = await create('Stale');
    const first = await update(eventId, 1, eventFile('Stale', { venueName: 'First edit' }), early);
    expect(first.version).toBe(2);
    const err = await domainError(update(eventId, 1, eventFile('Stale', { venueName: 'Second edit from an old page' }), early));
    expect([err.kind, err.code, err.details.field, err.details.currentVersion]).toEqual(['conflict', 'STALE_EVENT_VERSION', 'version', 2]);
    const config = await getEventConfiguration(t.db, eventId);
    expect([config.file.venueName, config.version]).toEqual(['First edit', 2]);
  });

  it('before the open, rebuilds the layout and prices, bumps the version once and audits every change', async () => {
    const { eventId } = await create('Relayout');
    const result = await update(
      eventId,
      1,
      eventFile('Relayout', {
        priceLevels: [{ code: 'ONE', name: 'One price', priceCents: 5_000 }],
        sections: [{ code: 'MAIN', name: 'Main floor', priceLevel: 'ONE', qualityRank: 1, rowCount: 10, seatsPerRow: 10 }],
        holds: { ttlSeconds: 300, extensionSeconds: 120 },
      }),
      early,
    );
    expect(result.version).toBe(2);
    expect(result.changes.map((c) => c.setting)).toEqual(['holds.ttlSeconds', 'holds.extensionSeconds', 'priceLevels', 'sections']);
    const config = await getEventConfiguration(t.db, eventId);
    expect(config.capacity).toBe(100);
    expect(config.file.sections).toEqual([
      { code: 'MAIN', name: 'Main floor', priceLevel: 'ONE', qualityRank: 1, rowCount: 10, seatsPerRow: 10 },
    ]);
    const seats = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM seats WHERE event_id = ${eventId} AND section_code = 'MAIN'`.execute(t.db);
    expect(seats.rows[0]!.n).toBe(100);
    const audit = await t.db
      .selectFrom('audit_log')
      .selectAll()
      .where('event_id', '=', eventId)
      .where('action', '=', 'event.updated')
      .execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      actor: ACTOR,
      details: {
        fromVersion: 1,
        version: 2,
        changes: expect.arrayContaining([{ setting: 'sections', from: '2 section(s), 23 seats', to: '1 section(s), 100 seats' }]),
      },
    });
  });

  it('after the open, refuses layout, price, time and mode changes at their fields; allows safe ones', async () => {
    const { eventId } = await createOpenEvent(t.db, { name: 'Opened' });
    const config = await getEventConfiguration(t.db, eventId);
    expect(config.phase).toBe('OPEN');
    expect(Object.keys(config.locked)).toEqual(expect.arrayContaining(['sections', 'priceLevels', 'fairnessMode', 'onsaleAt']));

    const unsafe = {
      ...config.file,
      fairnessMode: 'FIFO' as const,
      sections: [{ code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: 3, seatsPerRow: 10 }],
    };
    const err = await domainError(update(eventId, config.version, unsafe));
    expect([err.kind, err.code, err.details.field]).toEqual(['conflict', 'LOCKED_AFTER_OPEN', 'fairnessMode']);
    expect((err.details.issues as { path: string }[]).map((i) => i.path)).toEqual(['fairnessMode', 'sections']);

    const raised = await domainError(
      update(eventId, config.version, { ...config.file, limits: { perAccountSeats: 8, perInstrumentSeats: 4 } }),
    );
    expect([raised.code, raised.details.field]).toEqual(['LIMIT_RAISED_AFTER_OPEN', 'limits.perAccountSeats']);

    const safe = await update(eventId, config.version, {
      ...config.file,
      name: 'Opened (late show)',
      limits: { perAccountSeats: 2, perInstrumentSeats: 2 },
      holds: { ttlSeconds: 240, extensionSeconds: 60 },
    });
    expect(safe.version).toBe(config.version + 1);
    const after = await getEventConfiguration(t.db, eventId);
    expect(after.file).toMatchObject({
      name: 'Opened (late show)',
      limits: { perAccountSeats: 2, perInstrumentSeats: 2 },
      holds: { ttlSeconds: 240, extensionSeconds: 60 },
    });
    expect(after.capacity).toBe(20);

    // "No single seats" may be turned off after the open (holds made from then on), and the change is recorded.
    expect(after.file.noSingleSeats).toBe(true);
    expect(after.locked.noSingleSeats).toBeUndefined();
    const off = await update(eventId, after.version, { ...after.file, noSingleSeats: false });
    expect(off.changes).toEqual([{ setting: 'noSingleSeats', from: true, to: false }]);
    expect((await getEventConfiguration(t.db, eventId)).file.noSingleSeats).toBe(false);
  });

  it('refuses moving an event to another listing', async () => {
    const a = await create('Listing A');
    const b = await create('Listing B');
    const err = await domainError(update(a.eventId, 1, eventFile('Listing A', { listing: { id: b.listingId } }), early));
    expect(err.code).toBe('LISTING_FIXED');
  });
});

describe('presale tiers in the edit path', () => {
  const early = new Date('2030-01-01T00:00:00Z');
  /** Fan club 25% by code (rolling a day after it closes), card partner 25% by card range, the general sale the rest. */
  const tiers = (): NonNullable<EventFile['allocations']> => [
    {
      code: 'FANS',
      name: 'Fan club',
      share: 0.25,
      access: 'ACCESS_CODE',
      opensAt: '2030-02-20T10:00:00Z',
      closesAt: '2030-02-21T10:00:00Z',
      rollsForwardAt: '2030-02-22T10:00:00Z',
      fairnessMode: 'FIFO',
    },
    {
      code: 'CARD',
      name: 'Card partner',
      share: 0.25,
      access: 'CARD_BIN',
      binRanges: [{ from: '411100', to: '411199' }],
      opensAt: '2030-02-25T10:00:00Z',
      closesAt: '2030-02-26T10:00:00Z',
    },
    { code: 'GEN', name: 'General sale' },
  ];
  const tiered = (name: string, over: Partial<EventFile> = {}) => create(name, { allocations: tiers(), ...over });

  /** Seats per tier straight from the seats table. */
  async function seatTiers(eventId: string): Promise<Record<string, number>> {
    const { rows } = await sql<{ allocation: string | null; n: number }>`
      SELECT allocation, count(*)::int AS n FROM seats WHERE event_id = ${eventId} GROUP BY allocation ORDER BY allocation`.execute(t.db);
    return Object.fromEntries(rows.map((r) => [r.allocation ?? 'none', r.n]));
  }
  const tierRows = (eventId: string) =>
    t.db.selectFrom('allocations').selectAll().where('event_id', '=', eventId).orderBy('position').execute();
  const queues = async (ids: string[]) =>
    ids.length === 0
      ? []
      : (await t.db.selectFrom('queue_state').select('event_id').where('event_id', 'in', ids).execute()).map((r) => r.event_id).sort();
  async function rollJobs(eventId: string): Promise<Record<string, string>> {
    const { rows } = await sql<{
      key: string;
      run_at: Date;
    }>`SELECT key, run_at FROM graphile_worker.jobs WHERE key LIKE ${`allocation_roll:${eventId}:%`}`.execute(t.db);
    return Object.fromEntries(rows.map((r) => [r.key.split(':').pop()!, r.run_at.toISOString()]));
  }
  async function sequences(queueIds: string[]): Promise<number> {
    const names = queueIds.map((id) => `queue_join_${id.replaceAll('-', '')}`);
    const { rows } = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM pg_class WHERE relkind = 'S' AND relname = ANY(${names}::text[])`.execute(t.db);
    return rows[0]!.n;
  }

  it('reads the tiers back as the file wrote them; saving that file changes nothing', async () => {
    const { eventId } = await tiered('Tier Round Trip');
    const config = await getEventConfiguration(t.db, eventId, early);
    const original = eventFileSchema.parse(eventFile('Tier Round Trip', { allocations: tiers() }));
    expect(config.file.allocations).toEqual(
      original.allocations!.map((a) => ({
        ...a,
        ...(a.opensAt ? { opensAt: new Date(a.opensAt).toISOString() } : {}),
        ...(a.closesAt ? { closesAt: new Date(a.closesAt).toISOString() } : {}),
        ...(a.rollsForwardAt ? { rollsForwardAt: new Date(a.rollsForwardAt).toISOString() } : {}),
      })),
    );
    expect(config.locked).toEqual({});
    expect(await update(eventId, 1, config.file, early)).toMatchObject({ version: 1, changes: [] });
    // Sections A (12) and B (11): a quarter, a quarter and the rest of each.
    expect(await seatTiers(eventId)).toEqual({ FANS: 6, CARD: 6, GEN: 11 });
  });

  it('rewrites the split, the tier rows, the presale queues and the roll jobs in the edit, audited', async () => {
    const { eventId } = await tiered('Tier Edit');
    const before = await tierRows(eventId);
    const oldPresaleQueues = before.filter((r) => !r.general).map((r) => r.queue_id);
    expect(await queues(oldPresaleQueues)).toEqual([...oldPresaleQueues].sort());
    expect(Object.keys(await rollJobs(eventId)).sort()).toEqual(['CARD', 'FANS']);

    // The fan club grows to half the house, the card partner goes, a members' tier is added after it.
    const next: EventFile['allocations'] = [
      { ...tiers()[0]!, share: 0.5 },
      {
        code: 'MEMBERS',
        name: 'Members',
        share: 0.2,
        access: 'OPEN',
        opensAt: '2030-02-27T10:00:00Z',
        closesAt: '2030-02-28T10:00:00Z',
        fairnessMode: 'RANDOMIZED_PREOPEN_THEN_FIFO',
      },
      { code: 'GEN', name: 'General sale' },
    ];
    const result = await update(eventId, 1, eventFile('Tier Edit', { allocations: next }), early);
    expect(result).toMatchObject({ version: 2, changes: [{ setting: 'allocations' }] });

    // A: 12 seats -> 6 / 2 (round(12 x 0.7) = 8) / 4; B: 11 seats -> 6 (round(5.5)) / 2 (round(7.7) = 8) / 3.
    expect(await seatTiers(eventId)).toEqual({ FANS: 12, GEN: 7, MEMBERS: 4 });
    const after = await tierRows(eventId);
    expect(after.map((r) => [r.code, r.position, r.general, r.capacity, r.rolls_into])).toEqual([
      ['FANS', 0, false, 12, 'MEMBERS'],
      ['MEMBERS', 1, false, 4, 'GEN'],
      ['GEN', 2, true, 7, null],
    ]);
    expect(after[2]!.queue_id).toBe(eventId);
    const inventory = await tierInventory(t.db, eventId);
    expect(inventory.map((i) => [i.code, i.available, i.drift])).toEqual([
      ['FANS', 12, 0],
      ['MEMBERS', 4, 0],
      ['GEN', 7, 0],
    ]);
    // The old presales' queues (state and join sequence) are gone; each new presale has a queue of its own.
    expect(await queues(oldPresaleQueues)).toEqual([]);
    expect(await sequences(oldPresaleQueues)).toBe(0);
    const newPresaleQueues = after.filter((r) => !r.general).map((r) => r.queue_id);
    expect(await queues(newPresaleQueues)).toEqual([...newPresaleQueues].sort());
    expect(await sequences(newPresaleQueues)).toBe(2);
    expect(await rollJobs(eventId)).toEqual({ FANS: '2030-02-22T10:00:00.000Z', MEMBERS: '2030-02-28T10:00:00.000Z' });

    const audit = await t.db
      .selectFrom('audit_log')
      .selectAll()
      .where('event_id', '=', eventId)
      .where('action', '=', 'event.updated')
      .execute();
    expect(audit).toHaveLength(1);
    const change = (audit[0]!.details as { changes: { setting: string; from: string[]; to: string[] }[] }).changes[0]!;
    expect(change.from.map((l) => l.split(' ')[0])).toEqual(['FANS', 'CARD', 'GEN']);
    expect(change.to.map((l) => l.split(' ')[0])).toEqual(['FANS', 'MEMBERS', 'GEN']);

    const config = await getEventConfiguration(t.db, eventId, early);
    expect(config.file.allocations!.map((a) => [a.code, a.share])).toEqual([
      ['FANS', 0.5],
      ['MEMBERS', 0.2],
      ['GEN', undefined],
    ]);
    expect(await update(eventId, 2, config.file, early)).toMatchObject({ version: 2, changes: [] });
  });

  it('adds tiers to an event without them, and takes them away again', async () => {
    const { eventId } = await create('Tiers Come And Go');
    expect(await seatTiers(eventId)).toEqual({ none: 23 });
    await update(eventId, 1, eventFile('Tiers Come And Go', { allocations: tiers() }), early);
    expect(await seatTiers(eventId)).toEqual({ FANS: 6, CARD: 6, GEN: 11 });
    const presales = (await tierRows(eventId)).filter((r) => !r.general).map((r) => r.queue_id);
    const removed = await update(eventId, 2, eventFile('Tiers Come And Go'), early);
    expect(removed.changes.map((c) => c.setting)).toEqual(['allocations']);
    expect(await seatTiers(eventId)).toEqual({ none: 23 });
    expect(await tierRows(eventId)).toEqual([]);
    expect(await queues(presales)).toEqual([]);
    expect(await rollJobs(eventId)).toEqual({});
    // The event's own queue stays.
    expect(await queues([eventId])).toEqual([eventId]);
  });

  it('keeps unchanged tiers with the event: a new layout re-splits the seats, a new on-sale and mode move the general sale', async () => {
    const { eventId } = await tiered('Tier Relayout');
    const before = await tierRows(eventId);
    const result = await update(
      eventId,
      1,
      eventFile('Tier Relayout', {
        allocations: tiers(),
        fairnessMode: 'FIFO',
        onsaleAt: '2030-03-02T10:00:00Z',
        sections: [
          { code: 'MAIN', priceLevel: 'P1', qualityRank: 1, rowCount: 10, seatsPerRow: 10 },
          { kind: 'GA', code: 'FLOOR', priceLevel: 'P2', qualityRank: 2, capacity: 50 },
        ],
      }),
      early,
    );
    expect(result.changes.map((c) => c.setting)).toEqual(['onsaleAt', 'fairnessMode', 'sections']);
    expect(await seatTiers(eventId)).toEqual({ FANS: 25, CARD: 25, GEN: 50 });
    const after = await tierRows(eventId);
    // Same rows and queues (the presales' seed commitments stand); capacities follow the split, GA in the general sale.
    expect(after.map((r) => [r.id, r.queue_id])).toEqual(before.map((r) => [r.id, r.queue_id]));
    // Each tier's share of the GA counter too: round(50 x 0.25) = 13 units each, the general sale the other 24.
    expect(after.map((r) => r.capacity)).toEqual([25 + 13, 25 + 13, 50 + 24]);
    expect(after[2]).toMatchObject({ opens_at: new Date('2030-03-02T10:00:00Z'), fairness_mode: 'FIFO' });
    expect((await tierInventory(t.db, eventId)).map((i) => [i.code, i.available, i.drift])).toEqual([
      ['FANS', 38, 0],
      ['CARD', 38, 0],
      ['GEN', 74, 0],
    ]);

    // New tiers re-split the GA counter as well as the seats.
    const current = (await getEventConfiguration(t.db, eventId, early)).file;
    await update(eventId, 2, { ...current, allocations: [{ ...tiers()[0]!, share: 0.5 }, tiers()[2]!] }, early);
    expect((await tierInventory(t.db, eventId)).map((i) => [i.code, i.capacity, i.available, i.drift])).toEqual([
      ['FANS', 50 + 25, 75, 0],
      ['GEN', 50 + 25, 75, 0],
    ]);
    const { rows: shards } = await sql<{ allocation: string; units: number }>`
      SELECT allocation, sum(capacity)::int AS units FROM ga_shards WHERE event_id = ${eventId} GROUP BY allocation ORDER BY allocation`.execute(
      t.db,
    );
    expect(shards).toEqual([
      { allocation: 'FANS', units: 25 },
      { allocation: 'GEN', units: 25 },
    ]);
  });

  it('refuses new tiers once a seat is in use, once a tier has opened, or once a fan is in a presale queue: at the field, nothing written', async () => {
    const changed = (name: string) => eventFile(name, { allocations: [{ ...tiers()[0]!, share: 0.4 }, tiers()[2]!] });
    const unchanged = async (eventId: string) => {
      expect((await getEventConfiguration(t.db, eventId, early)).version).toBe(1);
      expect((await tierRows(eventId)).map((r) => r.code)).toEqual(['FANS', 'CARD', 'GEN']);
      expect(await seatTiers(eventId)).toEqual({ FANS: 6, CARD: 6, GEN: 11 });
    };

    const held = await tiered('Tier Held');
    await sql`
      UPDATE seats SET status = 'HELD', hold_id = gen_random_uuid(), expires_at = now() + interval '5 min'
      WHERE event_id = ${held.eventId} AND id = (SELECT min(id) FROM seats WHERE event_id = ${held.eventId})`.execute(t.db);
    const inUse = await domainError(update(held.eventId, 1, changed('Tier Held'), early));
    expect([inUse.kind, inUse.code, inUse.details.field]).toEqual(['conflict', 'SEATS_IN_USE', 'allocations']);
    expect((await getEventConfiguration(t.db, held.eventId, early)).locked.allocations).toContain('held or sold');
    await sql`UPDATE seats SET status = 'AVAILABLE', hold_id = NULL, expires_at = NULL WHERE event_id = ${held.eventId}`.execute(t.db);
    await unchanged(held.eventId);

    const opened = await tiered('Tier Opened');
    const duringFanClub = new Date('2030-02-20T12:00:00Z');
    const tooLate = await domainError(update(opened.eventId, 1, changed('Tier Opened'), duringFanClub));
    expect([tooLate.code, tooLate.details.field]).toEqual(['PRESALE_OPENED', 'allocations']);
    expect(tooLate.message).toContain('2030-02-20T10:00:00.000Z');
    // The layout the tiers split is fixed too, and the form locks all three.
    const relayout = await domainError(
      update(opened.eventId, 1, eventFile('Tier Opened', { allocations: tiers(), sections: [eventFile('x').sections[0]!] }), duringFanClub),
    );
    expect([relayout.code, relayout.details.field]).toEqual(['PRESALE_OPENED', 'sections']);
    expect(Object.keys((await getEventConfiguration(t.db, opened.eventId, duringFanClub)).locked).sort()).toEqual([
      'allocations',
      'priceLevels',
      'sections',
    ]);
    // Settings the tiers do not depend on still change.
    await expect(
      update(opened.eventId, 1, eventFile('Tier Opened (renamed)', { allocations: tiers() }), duringFanClub),
    ).resolves.toMatchObject({ version: 2 });

    const queued = await tiered('Tier Queued');
    const fanClub = (await tierRows(queued.eventId)).find((r) => r.code === 'FANS')!;
    await sql`INSERT INTO accounts (id) VALUES ('presale-fan') ON CONFLICT DO NOTHING`.execute(t.db);
    await sql`INSERT INTO queue_entries (event_id, account_id, device_hash, join_index, cohort) VALUES (${fanClub.queue_id}, 'presale-fan', 'd', 0, 'PREOPEN')`.execute(
      t.db,
    );
    const hasFans = await domainError(update(queued.eventId, 1, changed('Tier Queued'), early));
    expect([hasFans.code, hasFans.details.field]).toEqual(['QUEUE_HAS_FANS', 'allocations']);
    expect((await getEventConfiguration(t.db, queued.eventId, early)).locked).toEqual({
      allocations: 'fixed: fans have already joined a presale queue',
    });
    await unchanged(queued.eventId);
  });

  it('refuses an invalid tier at its path', async () => {
    const { eventId } = await tiered('Tier Invalid');
    const err = await domainError(
      update(
        eventId,
        1,
        eventFile('Tier Invalid', { allocations: [{ ...tiers()[0]!, closesAt: '2030-02-19T10:00:00Z' }, tiers()[2]!] }),
        early,
      ),
    );
    expect([err.code, err.details.field]).toEqual(['INVALID_EVENT_FILE', 'allocations.0.closesAt']);
  });
});

describe('registration lottery in the edit path', () => {
  const early = new Date('2030-01-01T00:00:00Z');
  const during = new Date('2030-02-05T12:00:00Z');
  const afterClose = new Date('2030-02-21T12:00:00Z');
  const settings = (over: Partial<NonNullable<EventFile['lottery']>> = {}): NonNullable<EventFile['lottery']> => ({
    registrationOpensAt: '2030-02-01T10:00:00Z',
    registrationClosesAt: '2030-02-20T10:00:00Z',
    expectedConversion: 0.8,
    cohorts: 3,
    cohortMinutes: 45,
    ...over,
  });
  const lotteryFile = (name: string, over: Partial<NonNullable<EventFile['lottery']>> = {}, extra: Partial<EventFile> = {}) =>
    eventFile(name, { fairnessMode: 'REGISTRATION_LOTTERY', lottery: settings(over), ...extra });
  const lotteryRow = (eventId: string) => t.db.selectFrom('lotteries').selectAll().where('event_id', '=', eventId).executeTakeFirst();
  const register = (eventId: string, accountId: string, now = during) =>
    t.db.transaction().execute((trx) => registerForLottery(trx, { eventId, accountId, quantity: 2, now }));
  const auditActions = async (eventId: string) =>
    (await t.db.selectFrom('audit_log').select('action').where('event_id', '=', eventId).orderBy('id').execute()).map((a) => a.action);

  it('reads the lottery settings back as the file wrote them; saving that file changes nothing', async () => {
    const { eventId } = await create('Lottery Round Trip', { fairnessMode: 'REGISTRATION_LOTTERY', lottery: settings() });
    const config = await getEventConfiguration(t.db, eventId, early);
    expect(config.file.lottery).toEqual({
      ...settings(),
      registrationOpensAt: '2030-02-01T10:00:00.000Z',
      registrationClosesAt: '2030-02-20T10:00:00.000Z',
    });
    expect(eventFileSchema.safeParse(config.file).success).toBe(true);
    expect(config.locked).toEqual({});
    expect(await update(eventId, 1, config.file, early)).toMatchObject({ version: 1, changes: [] });
    // The defaults a file leaves out read back filled in, and are no change either.
    const { eventId: defaults } = await create('Lottery Defaults', {
      fairnessMode: 'REGISTRATION_LOTTERY',
      lottery: { registrationOpensAt: '2030-02-01T10:00:00Z', registrationClosesAt: '2030-02-20T10:00:00Z' },
    });
    const read = await getEventConfiguration(t.db, defaults, early);
    expect(read.file.lottery).toMatchObject({ expectedConversion: 0.8, cohorts: 4, cohortMinutes: 60 });
    expect((await update(defaults, 1, read.file, early)).changes).toEqual([]);
  });

  it('changes the settings before registration opens: the same seed and commitment, audited with the change', async () => {
    const { eventId } = await create('Lottery Edit', { fairnessMode: 'REGISTRATION_LOTTERY', lottery: settings() });
    const before = (await lotteryRow(eventId))!;
    const result = await update(
      eventId,
      1,
      lotteryFile('Lottery Edit', { registrationClosesAt: '2030-02-25T10:00:00+01:00', cohorts: 5 }),
      early,
    );
    expect(result).toMatchObject({ version: 2, changes: [{ setting: 'lottery' }] });
    const after = (await lotteryRow(eventId))!;
    expect(after).toMatchObject({
      registration_closes_at: new Date('2030-02-25T09:00:00Z'),
      cohorts: 5,
      cohort_minutes: 45,
      expected_conversion: 0.8,
    });
    expect([after.seed_hex, after.seed_commitment]).toEqual([before.seed_hex, before.seed_commitment]);
    const audit = await t.db
      .selectFrom('audit_log')
      .selectAll()
      .where('event_id', '=', eventId)
      .where('action', '=', 'event.updated')
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({
      actor: ACTOR,
      details: {
        changes: [
          {
            setting: 'lottery',
            from: expect.objectContaining({ registrationClosesAt: '2030-02-20T10:00:00.000Z', cohorts: 3 }),
            to: expect.objectContaining({ registrationClosesAt: '2030-02-25T09:00:00.000Z', cohorts: 5 }),
          },
        ],
      },
    });
    expect((await getEventConfiguration(t.db, eventId, early)).file.lottery).toMatchObject({
      registrationClosesAt: '2030-02-25T09:00:00.000Z',
      cohorts: 5,
    });
  });

  it("switching to REGISTRATION_LOTTERY creates the lottery on the event's own commitment, switching back removes it; fans can register once it is there", async () => {
    const { eventId } = await create('Becomes A Lottery');
    const plain = await getEventConfiguration(t.db, eventId, early);
    expect(plain.file.lottery).toBeUndefined();
    const toLottery = { ...plain.file, fairnessMode: 'REGISTRATION_LOTTERY' as const, lottery: settings() };
    const switched = await update(eventId, 1, toLottery, early);
    expect(switched.changes.map((c) => c.setting)).toEqual(['fairnessMode', 'lottery']);
    expect(switched.changes[1]).toMatchObject({ from: null, to: expect.objectContaining({ cohorts: 3, cohortMinutes: 45 }) });
    const row = (await lotteryRow(eventId))!;
    const queue = await t.db.selectFrom('queue_state').select('seed_commitment').where('event_id', '=', eventId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ seed_commitment: queue.seed_commitment, cohorts: 3, registration_count: 0, drawn_at: null });
    expect(await auditActions(eventId)).toEqual([
      'event.created',
      'event.organisation_assigned',
      'lottery.seed_committed',
      'event.updated',
    ]);

    const read = await getEventConfiguration(t.db, eventId, early);
    expect(read.file).toMatchObject({ fairnessMode: 'REGISTRATION_LOTTERY', lottery: { cohorts: 3 } });
    const { lottery: _dropped, ...withoutLottery } = read.file;
    const back = await update(eventId, 2, { ...withoutLottery, fairnessMode: 'FIFO' }, early);
    expect(back.changes.map((c) => c.setting)).toEqual(['fairnessMode', 'lottery']);
    expect(back.changes[1]).toMatchObject({ from: expect.objectContaining({ cohorts: 3 }), to: null });
    expect(await lotteryRow(eventId)).toBeUndefined();
    expect((await getEventConfiguration(t.db, eventId, early)).file.lottery).toBeUndefined();
    await expect(register(eventId, 'early-fan')).rejects.toMatchObject({ code: 'NOT_A_LOTTERY_EVENT' });

    // Back to a lottery: registration answers (it said LOTTERY_NOT_CONFIGURED before edits wrote the lottery).
    await update(eventId, 3, toLottery, early);
    expect((await lotteryRow(eventId))!.seed_commitment).toBe(queue.seed_commitment);
    await expect(register(eventId, 'switched-fan')).resolves.toMatchObject({ created: true, registration: { sequence: 0 } });
  });

  it('refuses a lottery change once registration has opened, at the field; other settings still change', async () => {
    const { eventId } = await create('Lottery Registering', { fairnessMode: 'REGISTRATION_LOTTERY', lottery: settings() });
    // Opened by the clock alone, nobody registered yet.
    const opened = await domainError(update(eventId, 1, lotteryFile('Lottery Registering', { cohorts: 2 }), during));
    expect([opened.kind, opened.code, opened.details.field]).toEqual(['conflict', 'REGISTRATION_OPENED', 'lottery']);
    expect(opened.message).toContain('2030-02-01T10:00:00.000Z');
    await register(eventId, 'registered-fan');
    const config = await getEventConfiguration(t.db, eventId, during);
    expect(Object.keys(config.locked).sort()).toEqual(['fairnessMode', 'lottery']);
    expect(config.locked.lottery).toContain('registration opened');
    // Leaving the lottery is a lottery change too: refused at `lottery`, the registration kept.
    const { lottery: _l, ...plainFile } = config.file;
    const leave = await domainError(update(eventId, 1, { ...plainFile, fairnessMode: 'FIFO' }, during));
    expect([leave.code, leave.details.field]).toEqual(['REGISTRATION_OPENED', 'lottery']);
    expect(await lotteryRow(eventId)).toMatchObject({ registration_count: 1, cohorts: 3 });
    expect((await getEventConfiguration(t.db, eventId, during)).version).toBe(1);
    await expect(update(eventId, 1, { ...config.file, venueName: 'Bigger Hall' }, during)).resolves.toMatchObject({
      version: 2,
      changes: [{ setting: 'venueName' }],
    });
  });

  it("after the draw refuses every lottery change and a new on-sale (the winners' windows count from it), at their fields", async () => {
    const { eventId } = await create('Lottery Drawn', { fairnessMode: 'REGISTRATION_LOTTERY', lottery: settings() });
    await register(eventId, 'drawn-fan');
    // An unsigned lottery is not drawn: sign its mode off first.
    await t.db.transaction().execute((trx) => signOffFairness(trx, { eventId, fairnessMode: 'REGISTRATION_LOTTERY' }, ACTOR));
    await t.db.transaction().execute((trx) => drawLottery(trx, eventId, { actor: ACTOR, now: afterClose }));
    const config = await getEventConfiguration(t.db, eventId, afterClose);
    expect(Object.keys(config.locked).sort()).toEqual(['fairnessMode', 'lottery', 'onsaleAt']);
    const lottery = await domainError(update(eventId, 1, { ...config.file, lottery: { ...config.file.lottery!, cohorts: 1 } }, afterClose));
    expect([lottery.code, lottery.details.field]).toEqual(['LOTTERY_DRAWN', 'lottery']);
    const onsale = await domainError(update(eventId, 1, { ...config.file, onsaleAt: '2030-03-02T10:00:00Z' }, afterClose));
    expect([onsale.code, onsale.details.field]).toEqual(['LOTTERY_DRAWN', 'onsaleAt']);
    expect(await update(eventId, 1, config.file, afterClose)).toMatchObject({ version: 1, changes: [] });
    await expect(update(eventId, 1, { ...config.file, name: 'Lottery Drawn (sold out)' }, afterClose)).resolves.toMatchObject({
      version: 2,
    });
  });

  it('refuses bad lottery settings at their paths, writing nothing', async () => {
    const { eventId } = await create('Lottery Invalid', { fairnessMode: 'REGISTRATION_LOTTERY', lottery: settings() });
    const late = await domainError(
      update(eventId, 1, lotteryFile('Lottery Invalid', { registrationClosesAt: '2030-03-05T10:00:00Z' }), early),
    );
    expect([late.code, late.details.field]).toEqual(['INVALID_EVENT_FILE', 'lottery.registrationClosesAt']);
    const missing = await domainError(update(eventId, 1, eventFile('Lottery Invalid', { fairnessMode: 'REGISTRATION_LOTTERY' }), early));
    expect([missing.code, missing.details.field]).toEqual(['INVALID_EVENT_FILE', 'lottery']);
    const conversion = await domainError(update(eventId, 1, lotteryFile('Lottery Invalid', { expectedConversion: 0 }), early));
    expect([conversion.code, conversion.details.field]).toEqual(['INVALID_EVENT_FILE', 'lottery.expectedConversion']);
    expect(await lotteryRow(eventId)).toMatchObject({ cohorts: 3, expected_conversion: 0.8 });
  });
});

describe('fairness sign-off', () => {
  it('records who signed off, when and the published description; a new mode supersedes it and needs its own', async () => {
    const { eventId } = await create('Signed');
    const signed = await t.db
      .transaction()
      .execute((trx) => signOffFairness(trx, { eventId, fairnessMode: 'RANDOMIZED_PREOPEN_THEN_FIFO' }, ACTOR));
    expect(signed.alreadySignedOff).toBe(false);
    expect(signed.signOff).toMatchObject({
      fairnessMode: 'RANDOMIZED_PREOPEN_THEN_FIFO',
      signedOffBy: ACTOR,
      description: fairnessDescription('RANDOMIZED_PREOPEN_THEN_FIFO'),
      eventVersion: 1,
      supersededAt: null,
    });
    const again = await t.db
      .transaction()
      .execute((trx) => signOffFairness(trx, { eventId, fairnessMode: 'RANDOMIZED_PREOPEN_THEN_FIFO' }, 'someone@else.test'));
    expect(again).toMatchObject({ alreadySignedOff: true, signOff: { id: signed.signOff.id, signedOffBy: ACTOR } });

    const changed = await update(eventId, 1, eventFile('Signed', { fairnessMode: 'FIFO' }), new Date('2030-01-01T00:00:00Z'));
    expect(changed.signOffRequired).toBe(true);
    let config = await getEventConfiguration(t.db, eventId);
    expect(config.fairness.signOff).toBeNull();
    expect(config.fairness.history[0]).toMatchObject({
      fairnessMode: 'RANDOMIZED_PREOPEN_THEN_FIFO',
      supersededBy: ACTOR,
      supersededReason: 'fairness mode changed from RANDOMIZED_PREOPEN_THEN_FIFO to FIFO',
    });

    // Signing the mode the page showed before the change is refused: the promoter must read the new one.
    const stale = await domainError(
      t.db.transaction().execute((trx) => signOffFairness(trx, { eventId, fairnessMode: 'RANDOMIZED_PREOPEN_THEN_FIFO' }, ACTOR)),
    );
    expect([stale.code, stale.details.field]).toEqual(['FAIRNESS_MODE_CHANGED', 'fairnessMode']);

    await t.db.transaction().execute((trx) => signOffFairness(trx, { eventId, fairnessMode: 'FIFO' }, ACTOR));
    config = await getEventConfiguration(t.db, eventId);
    expect(config.fairness.signOff).toMatchObject({ fairnessMode: 'FIFO', description: fairnessDescription('FIFO'), eventVersion: 2 });
    expect(config.fairness.history).toHaveLength(2);
    const actions = await t.db.selectFrom('audit_log').select('action').where('event_id', '=', eventId).orderBy('id').execute();
    expect(actions.map((a) => a.action)).toEqual([
      'event.created',
      'event.organisation_assigned',
      'event.fairness_signed_off',
      'event.fairness_signoff_superseded',
      'event.updated',
      'event.fairness_signed_off',
    ]);
  });

  it('fixes the mode once a fan has joined the queue', async () => {
    const { eventId } = await create('Queued');
    await sql`INSERT INTO accounts (id) VALUES ('fan-1') ON CONFLICT DO NOTHING`.execute(t.db);
    await sql`INSERT INTO queue_entries (event_id, account_id, device_hash, join_index, cohort) VALUES (${eventId}, 'fan-1', 'd', 0, 'PREOPEN')`.execute(
      t.db,
    );
    const config = await getEventConfiguration(t.db, eventId, new Date('2030-01-01T00:00:00Z'));
    expect(config.locked.fairnessMode).toContain('fans have already joined');
    const err = await domainError(update(eventId, 1, eventFile('Queued', { fairnessMode: 'FIFO' }), new Date('2030-01-01T00:00:00Z')));
    expect([err.code, err.details.field]).toEqual(['QUEUE_HAS_FANS', 'fairnessMode']);
  });
});

describe('listings', () => {
  it("sets waitlist settings within the scope, audited with the listing id; lists only listings all of whose events are the organisation's", async () => {
    const mine = await create('Waitlisted');
    const view = await t.db
      .transaction()
      .execute((trx) =>
        setListingWaitlist(
          trx,
          { listingId: mine.listingId, mode: 'BROADCAST', ttlDays: 7, offerTtlMinutes: 5 },
          { actor: ACTOR, organisationId: acmeId },
        ),
      );
    expect(view).toEqual({ mode: 'BROADCAST', ttlDays: 7, offerTtlMinutes: 5 });
    const refused = await domainError(
      t.db
        .transaction()
        .execute((trx) =>
          setListingWaitlist(
            trx,
            { listingId: mine.listingId, mode: 'OFFER', ttlDays: 7, offerTtlMinutes: 5 },
            { actor: 'x', organisationId: otherOrgId },
          ),
        ),
    );
    expect(refused.code).toBe('LISTING_FORBIDDEN');
    const invalidInput = await domainError(
      t.db
        .transaction()
        .execute((trx) =>
          setListingWaitlist(
            trx,
            { listingId: mine.listingId, mode: 'OFFER', ttlDays: 0, offerTtlMinutes: 5 },
            { actor: ACTOR, organisationId: acmeId },
          ),
        ),
    );
    expect([invalidInput.code, invalidInput.details.field]).toEqual(['INVALID_WAITLIST_SETTINGS', 'waitlist.ttlDays']);

    const acmeListings = await listListings(t.db, { organisationId: acmeId });
    expect(acmeListings.map((l) => l.id)).toContain(mine.listingId);
    expect((await listListings(t.db, { organisationId: otherOrgId })).map((l) => l.id)).not.toContain(mine.listingId);

    // The promoter sees their listing's settings change in their part of the audit log.
    const page = await listAuditLog(t.db, { action: 'listing.waitlist' }, { organisationId: acmeId });
    expect(page.entries.map((e) => e.details.listingId)).toContain(mine.listingId);
    const theirs = await listAuditLog(t.db, { action: 'listing.waitlist' }, { organisationId: otherOrgId });
    expect(theirs.entries.map((e) => e.details.listingId)).not.toContain(mine.listingId);
  });
});

describe('listAuditLog', () => {
  it('filters by event, actor, action (exact or prefix) and time, newest first, paged', async () => {
    const { eventId } = await create('Audited');
    for (let i = 0; i < 5; i++)
      await update(eventId, i + 1, eventFile('Audited', { venueName: `Venue ${i}` }), new Date('2030-01-01T00:00:00Z'));
    const all = await listAuditLog(t.db, { eventId }, null);
    expect(all.entries.map((e) => e.action)).toEqual([...Array(5).fill('event.updated'), 'event.organisation_assigned', 'event.created']);
    expect(all.entries.every((e) => e.eventName === 'Audited' && e.actor === ACTOR)).toBe(true);

    const page1 = await listAuditLog(t.db, { eventId, limit: 3 }, null);
    expect(page1.entries).toHaveLength(3);
    const page2 = await listAuditLog(t.db, { eventId, limit: 3, before: page1.nextBefore! }, null);
    const page3 = await listAuditLog(t.db, { eventId, limit: 3, before: page2.nextBefore! }, null);
    expect([...page1.entries, ...page2.entries, ...page3.entries].map((e) => e.id)).toEqual(all.entries.map((e) => e.id));
    expect(page3.nextBefore).toBeNull();

    expect((await listAuditLog(t.db, { eventId, action: 'event.created' }, null)).entries).toHaveLength(1);
    expect((await listAuditLog(t.db, { eventId, action: 'event.' }, null)).entries).toHaveLength(7);
    expect((await listAuditLog(t.db, { eventId, actor: 'ACME.TEST' }, null)).entries).toHaveLength(7);
    expect((await listAuditLog(t.db, { eventId, actor: '%' }, null)).entries).toHaveLength(0);
    expect((await listAuditLog(t.db, { eventId, to: '2000-01-01T00:00:00Z' }, null)).entries).toHaveLength(0);
    expect((await listAuditLog(t.db, { eventId, from: new Date(Date.now() - 60_000).toISOString() }, null)).entries).toHaveLength(7);

    // A promoter of another organisation sees none of it, even asking by event id.
    expect((await listAuditLog(t.db, { eventId }, { organisationId: otherOrgId })).entries).toEqual([]);
    // Entries without an event (console users) are not a promoter's.
    expect((await listAuditLog(t.db, { action: 'console_user.created' }, { organisationId: acmeId })).entries).toEqual([]);
    expect((await listAuditLog(t.db, { action: 'console_user.created' }, null)).entries.length).toBeGreaterThan(0);
  });

  it('refuses a bad query naming the field', async () => {
    const err = await domainError(listAuditLog(t.db, { eventId: 'nope' }, null));
    expect([err.code, err.details.field]).toEqual(['INVALID_AUDIT_QUERY', 'eventId']);
    const order = await domainError(listAuditLog(t.db, { from: '2030-01-02T00:00:00Z', to: '2030-01-01T00:00:00Z' }, null));
    expect(order.details.field).toBe('to');
  });
});
