import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import fc from 'fast-check';
import { createOpenEvent, createTestDatabase, domainError, type TestDatabase } from '../testing/index.js';
import { criteriaMatch, type Criteria } from './criteria.js';
import { emitAvailability, type ReturnedSeat } from './availability.js';
import { runFanout } from './fanout.js';
import { maintainWaitlist } from './maintenance.js';
import { WaitlistService } from './waitlist.service.js';

let t: TestDatabase;
let listingId: string;
let eventId: string;
let waitlist: WaitlistService;

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
  const sections = [
    { code: 'FLOOR', priceLevel: 'A', qualityRank: 1, rowCount: 2, seatsPerRow: 10 },
    { code: 'UPPER', priceLevel: 'B', qualityRank: 2, rowCount: 2, seatsPerRow: 10 },
  ];
  const priceLevels = [
    { code: 'A', name: 'Floor', priceCents: 9000 },
    { code: 'B', name: 'Upper', priceCents: 4000 },
  ];
  ({ eventId } = await createOpenEvent(t.db, {
    name: 'Night one',
    sections,
    priceLevels,
    limits: { perAccountSeats: 6, perInstrumentSeats: 6 },
  }));
  const ev = await t.db.selectFrom('events').select('listing_id').where('id', '=', eventId).executeTakeFirstOrThrow();
  listingId = ev.listing_id;
  // A second night on the same listing: the waitlist spans the listing's events.
  await createOpenEvent(t.db, {
    name: 'Night two',
    sections,
    priceLevels,
    listing: { id: listingId },
    startsAt: new Date(Date.now() + 10 * 86_400_000).toISOString(),
  });
  waitlist = new WaitlistService(t.db);
});
afterAll(() => t.drop());

describe('joining a waitlist', () => {
  it('is idempotent per (account, listing): a repeat keeps the place, new criteria update it in place', async () => {
    const first = await waitlist.join('fan-a', listingId, { quantity: 2 });
    expect(first.created).toBe(true);
    const again = await waitlist.join('fan-a', listingId, { quantity: 2 });
    expect(again.created).toBe(false);
    expect(again.entry.entryId).toBe(first.entry.entryId);
    expect(again.entry.joinedAt.getTime()).toBe(first.entry.joinedAt.getTime());
    const changed = await waitlist.join('fan-a', listingId, { quantity: 3, maxPriceCents: 5000, sections: ['UPPER'] });
    expect(changed.entry.entryId).toBe(first.entry.entryId);
    expect(changed.entry.criteria).toMatchObject({ quantity: 3, maxPriceCents: 5000, sections: ['UPPER'] });
    const rows = await t.db.selectFrom('waitlist_entries').selectAll().where('account_id', '=', 'fan-a').execute();
    expect(rows).toHaveLength(1);
  });

  it('concurrent identical joins from two processes make one row', async () => {
    const other = new WaitlistService(t.db);
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => (i % 2 ? waitlist : other).join('fan-burst', listingId, { quantity: 1 })),
    );
    expect(new Set(results.map((r) => r.entry.entryId)).size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    const rows = await t.db.selectFrom('waitlist_entries').select('id').where('account_id', '=', 'fan-burst').execute();
    expect(rows).toHaveLength(1);
  });

  it('refuses bad criteria with the field at fault and writes nothing', async () => {
    const cases: [unknown, string, string][] = [
      [{ dateFrom: day(5), dateTo: day(1) }, 'INVALID_CRITERIA', 'criteria.dateTo'],
      [{ dateFrom: day(40), dateTo: day(50) }, 'DATE_RANGE_OUTSIDE_LISTING', 'criteria.dateFrom'],
      [{ maxPriceCents: -1 }, 'INVALID_CRITERIA', 'criteria.maxPriceCents'],
      [{ quantity: 1.5 }, 'INVALID_CRITERIA', 'criteria.quantity'],
      [{ quantity: 0 }, 'INVALID_CRITERIA', 'criteria.quantity'],
      [{ quantity: 7 }, 'QUANTITY_ABOVE_LIMIT', 'criteria.quantity'],
      [{ sections: ['BALCONY'] }, 'SECTION_NOT_FOUND', 'criteria.sections'],
      [{ priceLevels: ['Z'] }, 'PRICE_LEVEL_NOT_FOUND', 'criteria.priceLevels'],
      [{ dateFrom: '2026-02-30' }, 'INVALID_CRITERIA', 'criteria.dateFrom'],
      [{ colour: 'red' }, 'INVALID_CRITERIA', 'criteria'],
    ];
    for (const [criteria, code, field] of cases) {
      const e = await domainError(waitlist.join('fan-bad', listingId, criteria));
      expect([e.code, e.details.field], JSON.stringify(criteria)).toEqual([code, field]);
    }
    expect((await domainError(waitlist.join('fan-bad', '00000000-0000-4000-8000-000000000000', {}))).code).toBe('LISTING_NOT_FOUND');
    expect((await domainError(waitlist.join('fan-bad', 'nope', {}))).code).toBe('LISTING_NOT_FOUND');
    const rows = await t.db.selectFrom('waitlist_entries').select('id').where('account_id', '=', 'fan-bad').execute();
    expect(rows).toHaveLength(0);
  });

  it('lists mine with the place among competing entries; leave removes it; expired entries disappear', async () => {
    await waitlist.join('fan-m1', listingId, { sections: ['FLOOR'] });
    await waitlist.join('fan-m2', listingId, { sections: ['UPPER'] });
    await waitlist.join('fan-m3', listingId, { sections: ['FLOOR', 'UPPER'] });
    const [m3] = await waitlist.mine('fan-m3');
    const [m2] = await waitlist.mine('fan-m2');
    // Everyone ahead of m3 competes with it; m2 does not compete with fan-m1 (FLOOR only).
    const ahead = await t.db.selectFrom('waitlist_entries').select('id').where('listing_id', '=', listingId).execute();
    expect(m3!.place).toBe(ahead.length);
    expect(m2!.place).toBe(ahead.length - 2);
    expect(await waitlist.leave('fan-m2', listingId)).toEqual({ left: true });
    expect(await waitlist.leave('fan-m2', listingId)).toEqual({ left: false });
    expect(await waitlist.mine('fan-m2')).toEqual([]);

    await sql`UPDATE waitlist_entries SET expires_at = now() - interval '1 second' WHERE account_id = 'fan-m1'`.execute(t.db);
    expect(await waitlist.mine('fan-m1')).toEqual([]);
    const r = await maintainWaitlist(t.db);
    expect(r.entriesDeleted).toBe(1);
    expect(await t.db.selectFrom('waitlist_entries').select('id').where('account_id', '=', 'fan-m1').execute()).toHaveLength(0);
    // A fan whose entry expired starts again at the back.
    const back = await waitlist.join('fan-m1', listingId, {});
    expect(back.created).toBe(true);
  });
});

/** Returns seats of an event to AVAILABLE (as a release would) and emits the availability event. */
async function release(event: string, where: { section: string; count: number; row?: number }) {
  return t.db.transaction().execute(async (trx) => {
    const { rows } = await sql<ReturnedSeat>`
      SELECT id, section_code AS "sectionCode", row_index AS "rowIndex", seat_number AS "seatNumber" FROM seats
      WHERE event_id = ${event} AND section_code = ${where.section} AND status = 'AVAILABLE' AND (${where.row ?? null}::int IS NULL OR row_index = ${where.row ?? null}::int)
      ORDER BY row_index, seat_number LIMIT ${where.count}`.execute(trx);
    return (await emitAvailability(
      trx,
      event,
      'HOLD_RELEASED',
      rows.map((r) => ({ ...r, id: Number(r.id) })),
    ))!;
  });
}

describe('matching and fan-out', () => {
  it('notifies exactly the matching entries, in FIFO order', async () => {
    const { eventId: ev } = await createOpenEvent(t.db, {
      name: 'Fifo',
      sections: [
        { code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: 2, seatsPerRow: 10 },
        { code: 'T', priceLevel: 'P', qualityRank: 2, rowCount: 1, seatsPerRow: 10 },
      ],
    });
    const { listing_id: lid } = await t.db.selectFrom('events').select('listing_id').where('id', '=', ev).executeTakeFirstOrThrow();
    const accounts: string[] = [];
    for (let i = 0; i < 40; i++) {
      const account = `fifo-${String(i).padStart(2, '0')}`;
      accounts.push(account);
      await waitlist.join(account, lid, {
        quantity: 1 + (i % 4),
        ...(i % 5 === 0 ? { sections: ['T'] } : {}),
        ...(i % 7 === 0 ? { maxPriceCents: 500 } : {}),
      });
    }
    // Three adjacent seats in S come back.
    const av = await release(ev, { section: 'S', count: 3, row: 1 });
    expect(av.mode).toBe('ON_SALE');
    await runFanout({ db: t.db }, av.availabilityId);
    const notified = await sql<{ account_id: string }>`
      SELECT account_id FROM notifications WHERE availability_id = ${av.availabilityId} ORDER BY id`.execute(t.db);
    const expected = accounts.filter((_, i) => 1 + (i % 4) <= 3 && i % 5 !== 0 && i % 7 !== 0);
    expect(notified.rows.map((r) => r.account_id)).toEqual(expected);
    const done = await t.db
      .selectFrom('availability_events')
      .selectAll()
      .where('id', '=', av.availabilityId as never)
      .executeTakeFirstOrThrow();
    expect(done).toMatchObject({ status: 'DONE', matched: expected.length, notified: expected.length });
    // Running it again sends nothing twice.
    await sql`UPDATE availability_events SET status = 'FANNING_OUT', cursor_created_at = NULL, cursor_id = NULL WHERE id = ${av.availabilityId}`.execute(
      t.db,
    );
    await runFanout({ db: t.db }, av.availabilityId);
    const again = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM notifications WHERE availability_id = ${av.availabilityId}`.execute(t.db);
    expect(again.rows[0]!.n).toBe(expected.length);
  });

  it('pages through a large match set by keyset above the inline threshold, without a duplicate or a gap', async () => {
    const { eventId: ev } = await createOpenEvent(t.db, { name: 'Batch' });
    const { listing_id: lid } = await t.db.selectFrom('events').select('listing_id').where('id', '=', ev).executeTakeFirstOrThrow();
    await sql`UPDATE listings SET fanout_inline_threshold = 25 WHERE id = ${lid}`.execute(t.db);
    await Promise.all(Array.from({ length: 230 }, (_, i) => waitlist.join(`batch-${i}`, lid, {})));
    const av = await release(ev, { section: 'S', count: 1 });
    const chunks: number[][] = [];
    const r = await runFanout(
      { db: t.db, pageSize: 40, chunkSize: 16, onNotified: async (_trx, c) => void chunks.push(c.notificationIds) },
      av.availabilityId,
    );
    expect(r).toEqual({ done: true, pages: 6 });
    const ids = chunks.flat();
    expect(ids).toHaveLength(230);
    expect(new Set(ids).size).toBe(230);
    expect(Math.max(...chunks.map((c) => c.length))).toBe(16);
    const order = await sql<{ ok: boolean }>`
      SELECT bool_and(w.created_at < w2.created_at OR (w.created_at = w2.created_at AND w.id < w2.id)) AS ok
      FROM notifications n JOIN notifications n2 ON n2.availability_id = n.availability_id AND n2.id = (
        SELECT min(id) FROM notifications WHERE availability_id = n.availability_id AND id > n.id)
      JOIN waitlist_entries w ON w.listing_id = n.listing_id AND w.id = n.entry_id
      JOIN waitlist_entries w2 ON w2.listing_id = n2.listing_id AND w2.id = n2.entry_id
      WHERE n.availability_id = ${av.availabilityId}`.execute(t.db);
    expect(order.rows[0]!.ok).toBe(true);
  });

  it('matches in SQL exactly as the reference rule does (property test)', async () => {
    const { eventId: ev } = await createOpenEvent(t.db, {
      name: 'Property',
      startsAt: new Date(Date.now() + 5 * 86_400_000).toISOString(),
      priceLevels: [
        { code: 'A', name: 'A', priceCents: 9000 },
        { code: 'B', name: 'B', priceCents: 4000 },
        { code: 'C', name: 'C', priceCents: 1500 },
      ],
      sections: [
        { code: 'S1', priceLevel: 'A', qualityRank: 1, rowCount: 2, seatsPerRow: 8 },
        { code: 'S2', priceLevel: 'B', qualityRank: 2, rowCount: 2, seatsPerRow: 8 },
        { code: 'S3', priceLevel: 'C', qualityRank: 3, rowCount: 2, seatsPerRow: 8 },
      ],
      limits: { perAccountSeats: 8, perInstrumentSeats: 8 },
    });
    const { listing_id: lid } = await t.db.selectFrom('events').select('listing_id').where('id', '=', ev).executeTakeFirstOrThrow();
    const perf = day(5);
    const seatsBySection = new Map<string, ReturnedSeat[]>();
    const { rows: all } = await sql<ReturnedSeat>`
      SELECT id, section_code AS "sectionCode", row_index AS "rowIndex", seat_number AS "seatNumber" FROM seats WHERE event_id = ${ev}`.execute(
      t.db,
    );
    for (const s of all) seatsBySection.set(s.sectionCode, [...(seatsBySection.get(s.sectionCode) ?? []), { ...s, id: Number(s.id) }]);

    const criteriaArb: fc.Arbitrary<Criteria> = fc.record({
      dateFrom: fc.option(fc.integer({ min: 3, max: 7 }).map(day), { nil: null }),
      dateTo: fc.option(fc.integer({ min: 3, max: 7 }).map(day), { nil: null }),
      maxPriceCents: fc.option(fc.constantFrom(1000, 1500, 3999, 4000, 9000, 20000), { nil: null }),
      quantity: fc.integer({ min: 1, max: 5 }),
      sections: fc.option(
        fc.uniqueArray(fc.constantFrom('S1', 'S2', 'S3'), { minLength: 1 }).map((x) => x.sort()),
        { nil: null },
      ),
      priceLevels: fc.option(
        fc.uniqueArray(fc.constantFrom('A', 'B', 'C'), { minLength: 1 }).map((x) => x.sort()),
        { nil: null },
      ),
    });
    const releaseArb = fc.array(
      fc.tuple(fc.constantFrom('S1', 'S2', 'S3'), fc.uniqueArray(fc.integer({ min: 0, max: 15 }), { minLength: 1, maxLength: 8 })),
      {
        minLength: 1,
        maxLength: 3,
      },
    );

    let round = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(criteriaArb, { minLength: 1, maxLength: 25 }), releaseArb, async (entries, picked) => {
        round++;
        await sql`DELETE FROM waitlist_entries WHERE listing_id = ${lid}`.execute(t.db);
        const accounts = entries.map((_, i) => `prop-${round}-${i}`);
        for (const [i, c] of entries.entries()) {
          const valid = c.dateFrom === null || c.dateTo === null || c.dateFrom <= c.dateTo;
          await sql`INSERT INTO waitlist_entries (listing_id, account_id, expires_at, date_from, date_to, max_price_cents, quantity, sections, price_levels)
                    VALUES (${lid}, ${accounts[i]}, now() + interval '1 day', ${c.dateFrom}, ${valid ? c.dateTo : c.dateFrom}, ${c.maxPriceCents}, ${c.quantity}, ${c.sections}, ${c.priceLevels})`.execute(
            t.db,
          );
          if (!valid) c.dateTo = c.dateFrom;
        }
        const seats = new Map<number, ReturnedSeat>();
        for (const [section, idx] of picked)
          for (const k of idx) {
            const s = seatsBySection.get(section)![k]!;
            seats.set(s.id, s);
          }
        const av = await t.db.transaction().execute(async (trx) => {
          const e = (await emitAvailability(trx, ev, 'HOLD_RELEASED', [...seats.values()]))!;
          return e;
        });
        await runFanout({ db: t.db }, av.availabilityId);
        const { rows: sent } = await sql<{
          account_id: string;
        }>`SELECT account_id FROM notifications WHERE availability_id = ${av.availabilityId} ORDER BY id`.execute(t.db);
        const stored = await t.db
          .selectFrom('availability_events')
          .select('sections')
          .where('id', '=', av.availabilityId as never)
          .executeTakeFirstOrThrow();
        const summary = { performanceDate: perf, sections: stored.sections };
        const expected = accounts.filter((_, i) => criteriaMatch(entries[i]!, summary));
        expect(sent.map((r) => r.account_id)).toEqual(expected);
      }),
      { numRuns: 40 },
    );
  });
});
