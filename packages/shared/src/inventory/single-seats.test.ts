import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import { createOpenEvent, createTestDatabase, domainError, type TestDatabase } from '../testing/index.js';
import { EventCache } from '../allocations/index.js';
import type { EventFile } from '../events/events.schema.js';
import { DomainError } from '../errors.js';
import { HoldService } from './holds.service.js';
import { SeatmapCache } from './seatmap.js';
import { SectionAvailabilityCache } from './availability-cache.js';
import { findAvailableSeats, type AvailableSeat } from './holds.repository.js';
import { rankBlocks } from './best-available.js';

// "No single seats" against real PostgreSQL: best-available and exact-seat holds through the hold service, the
// event's setting off, and the split a party that cannot sit together is offered.

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 20 });
});
afterAll(() => t.drop());

const service = (random?: () => number) =>
  new HoldService({ db: t.db, events: new EventCache(t.db), seatmap: new SeatmapCache(t.db), ...(random ? { random } : {}) });

/**
 * A service whose views are not refreshed in the background during the sale: a refresh that read the seats before a
 * hold committed replaces the view with one a moment behind (how-it-works: what the rule does not promise), and a
 * whole sale on a loaded machine can outlast the 5 s TTL. The rule is judged here on the views it is given.
 */
const steadyService = () =>
  new HoldService({
    db: t.db,
    events: new EventCache(t.db),
    seatmap: new SeatmapCache(t.db),
    availability: new SectionAvailabilityCache(600_000),
  });

const event = (over: Partial<EventFile> = {}) =>
  createOpenEvent(t.db, {
    seatPickingOpensAfterMinutes: 0,
    limits: { perAccountSeats: 8, perInstrumentSeats: 8 },
    ...over,
  });

const section = (code: string, rows: { label: string; seats: number }[]) => ({ code, priceLevel: 'P', qualityRank: 1, rows });

/** Seats of a section by row label and number, with their ids. */
async function seatsOf(eventId: string, code = 'S') {
  const { rows } = await sql<{ id: number; row: string; number: number; status: string }>`
    SELECT id, row_label AS row, seat_number AS number, status FROM seats
    WHERE event_id = ${eventId} AND section_code = ${code} ORDER BY row_index, seat_number`.execute(t.db);
  return rows;
}
const idOf = (seats: { id: number; row: string; number: number }[], row: string, n: number) =>
  seats.find((s) => s.row === row && s.number === n)!.id;

/** Seats a block leaves alone in `view`: free seats beside it whose other side is taken or the row's end. */
function leftAloneBy(view: readonly AvailableSeat[], block: readonly { rowIndex: number; seatNumber: number }[]): number {
  const free = new Set(view.map((s) => `${s.rowIndex}:${s.seatNumber}`));
  const row = block[0]!.rowIndex;
  const numbers = block.map((s) => s.seatNumber).sort((a, b) => a - b);
  const lo = numbers[0]!;
  const hi = numbers[numbers.length - 1]!;
  return (
    (free.has(`${row}:${lo - 1}`) && !free.has(`${row}:${lo - 2}`) ? 1 : 0) +
    (free.has(`${row}:${hi + 1}`) && !free.has(`${row}:${hi + 2}`) ? 1 : 0)
  );
}

describe('best-available under the single-seat rule', () => {
  it('never leaves a seat alone that another block of the same size would not have, hold after hold, to the end of the sale (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 3, max: 12 }), { minLength: 1, maxLength: 3 }),
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 4, maxLength: 30 }),
        async (rowSizes, parties) => {
          const rows = rowSizes.map((seats, i) => ({ label: String.fromCharCode(65 + i), seats }));
          const { eventId } = await event({ sections: [section('S', rows)] });
          const holds = steadyService();
          for (const [i, quantity] of parties.entries()) {
            const before = await findAvailableSeats(t.db, eventId, 'S');
            try {
              const hold = await holds.create(`fan-${i}`, eventId, { section: 'S', quantity });
              const ids = new Set(hold.seats.map((s) => s.id));
              const block = before.filter((s) => ids.has(s.id));
              expect(block).toHaveLength(quantity);
              // As few seats left alone as any block of this size in the section could leave (none, when one can).
              const fewest = Math.min(...rankBlocks(before, quantity).map((b) => leftAloneBy(before, b.seats)));
              expect(leftAloneBy(before, block)).toBe(fewest);
            } catch (e) {
              if (!(e instanceof DomainError)) throw e;
              expect(e.code).toMatch(/^SECTION_(NEARLY_FULL|SOLD_OUT)$/);
              // Refused only when the party could not sit together.
              expect(rankBlocks(before, quantity)).toHaveLength(0);
            }
          }
        },
      ),
      { numRuns: 12 },
    );
  });

  it('sells every seat of a 300-seat event where everyone wants two, with the requests arriving together', async () => {
    const { eventId } = await event({ sections: [{ code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: 15, seatsPerRow: 20 }] });
    const holds = steadyService();
    let fan = 0;
    let refused = 0;
    // Waves of 25 concurrent requests until a whole wave is refused.
    while (refused < 25) {
      const wave = await Promise.allSettled(
        Array.from({ length: 25 }, () => holds.create(`pair-${fan++}`, eventId, { section: 'S', quantity: 2 })),
      );
      refused = wave.filter((o) => o.status === 'rejected').length;
      for (const o of wave) if (o.status === 'rejected') expect((o.reason as DomainError).code).toMatch(/^SECTION_(NEARLY_FULL|SOLD_OUT)$/);
    }
    const seats = await seatsOf(eventId);
    expect(seats.filter((s) => s.status === 'HELD')).toHaveLength(300);
  });

  it('sells all 300 seats of the club example to fans who all want two, section by section as the seat map shows seats left', async () => {
    const club = JSON.parse(readFileSync(new URL('../../../../examples/club.json', import.meta.url), 'utf8')) as EventFile;
    const { eventId } = await event({ sections: club.sections, priceLevels: club.priceLevels });
    const holds = steadyService();
    let fan = 0;
    for (const { code } of club.sections) {
      // Concurrent pairs in waves until the section refuses a whole wave.
      for (let refused = 0; refused < 10;) {
        const wave = await Promise.allSettled(
          Array.from({ length: 10 }, () => holds.create(`club-${fan++}`, eventId, { section: code, quantity: 2 })),
        );
        refused = wave.filter((o) => o.status === 'rejected').length;
      }
    }
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM seats WHERE event_id = ${eventId} AND status = 'HELD'`.execute(
      t.db,
    );
    expect(rows[0]!.n).toBe(300);
  });

  it('with the setting off, holds as before the rule: the centre seat of three, leaving two seats alone', async () => {
    const rows = [{ label: 'A', seats: 3 }];
    const off = await event({ noSingleSeats: false, sections: [section('S', rows)] });
    const on = await event({ sections: [section('S', rows)] });
    const zero = () => 0;
    expect((await service(zero).create('fan-off', off.eventId, { section: 'S', quantity: 1 })).seats[0]!.number).toBe(2);
    expect([1, 3]).toContain((await service(zero).create('fan-on', on.eventId, { section: 'S', quantity: 1 })).seats[0]!.number);
  });

  it('leaves GA sections alone: a GA hold is counted as before', async () => {
    const { eventId } = await event({
      sections: [section('S', [{ label: 'A', seats: 3 }]), { kind: 'GA', code: 'FLOOR', priceLevel: 'P', capacity: 3, shards: 1 }],
    });
    const hold = await service().create('ga-fan', eventId, { section: 'FLOOR', quantity: 2 });
    expect(hold.units).toEqual([{ section: 'FLOOR', quantity: 2, priceCents: 1000 }]);
  });
});

describe('exact seats under the single-seat rule', () => {
  it('refuses a pick that leaves a seat alone when as many seats beside it would not, says which seats instead, and allows what cannot be helped', async () => {
    const { eventId } = await event({ sections: [section('S', [{ label: 'A', seats: 6 }])] });
    const seats = await seatsOf(eventId);
    const a = (n: number) => idOf(seats, 'A', n);
    const holds = service();
    const refused = await domainError(holds.create('picker-1', eventId, { seatIds: [a(2), a(3)] }));
    expect(refused.code).toBe('SINGLE_SEAT_LEFT');
    expect(refused.details).toMatchObject({ field: 'seatIds', seats: [a(1)], instead: [a(1), a(2)] });
    expect(refused.message).toContain('A1');
    expect(refused.message).toContain('row A seats 1-2');
    // Nothing was held by the refusal.
    expect((await seatsOf(eventId)).every((s) => s.status === 'AVAILABLE')).toBe(true);
    // The seats it offered instead, then the next two beside them: fine.
    await holds.create('picker-1', eventId, { seatIds: [a(1), a(2)] });
    // 3-6 free: 4-5 would leave 3 and 6 alone; 3-4 leaves 5-6.
    expect((await domainError(holds.create('picker-2', eventId, { seatIds: [a(4), a(5)] }))).code).toBe('SINGLE_SEAT_LEFT');
    await holds.create('picker-2', eventId, { seatIds: [a(3), a(4)] });
    // 5-6 free: one of them leaves the other alone whichever it is: it cannot be helped.
    await holds.create('picker-3', eventId, { seatIds: [a(5)] });
  });

  it('allows a seat left between two seats of the pick (the fan asks for exactly the seats around it), and anything with the setting off', async () => {
    const on = await event({ sections: [section('S', [{ label: 'A', seats: 6 }])] });
    const onSeats = await seatsOf(on.eventId);
    await service().create('around', on.eventId, { seatIds: [idOf(onSeats, 'A', 1), idOf(onSeats, 'A', 3)] });
    const off = await event({ noSingleSeats: false, sections: [section('S', [{ label: 'A', seats: 6 }])] });
    const offSeats = await seatsOf(off.eventId);
    const hold = await service().create('anywhere', off.eventId, { seatIds: [idOf(offSeats, 'A', 2), idOf(offSeats, 'A', 3)] });
    expect(hold.seats.map((s) => s.number)).toEqual([2, 3]);
  });

  it('no exact-seat hold ever leaves an avoidable seat alone, pick after pick to the end of the sale; a refusal offers seats that leave none, and they can be held (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 3, max: 12 }), { minLength: 1, maxLength: 3 }),
        // Each pick: a row (modulo the rows), where in the row's free seats it starts (modulo them), how many seats.
        fc.array(fc.record({ row: fc.nat(2), at: fc.nat(11), quantity: fc.integer({ min: 1, max: 4 }) }), { minLength: 4, maxLength: 30 }),
        async (rowSizes, picks) => {
          const rows = rowSizes.map((seats, i) => ({ label: String.fromCharCode(65 + i), seats }));
          const { eventId } = await event({ sections: [section('S', rows)] });
          const holds = service();
          for (const [i, p] of picks.entries()) {
            const before = await findAvailableSeats(t.db, eventId, 'S');
            const rowIndexes = [...new Set(before.map((s) => s.rowIndex))].sort((a, b) => a - b);
            if (rowIndexes.length === 0) break;
            const rowIndex = rowIndexes[p.row % rowIndexes.length]!;
            const inRow = before.filter((s) => s.rowIndex === rowIndex).sort((a, b) => a.seatNumber - b.seatNumber);
            // The run of free seats the pick starts in, and up to `quantity` adjacent seats of it from there.
            const first = inRow[p.at % inRow.length]!;
            const free = new Set(inRow.map((s) => s.seatNumber));
            let lo = first.seatNumber;
            let hi = first.seatNumber;
            while (free.has(lo - 1)) lo--;
            while (free.has(hi + 1)) hi++;
            const start = Math.min(first.seatNumber, Math.max(lo, hi - p.quantity + 1));
            const picked = inRow.filter((s) => s.seatNumber >= start && s.seatNumber < start + p.quantity && s.seatNumber <= hi);
            const k = picked.length;
            const len = hi - lo + 1;
            // The oracle, in seat numbers: the seats of the run this pick leaves alone (a free seat with a taken seat or
            // the row's end on each side, not one between two picked seats: the pick is adjacent), and whether some
            // placement of k adjacent seats in the run leaves none.
            const from = picked[0]!.seatNumber - lo;
            const leavesAlone = (o: number) => o === 1 || len - o - k === 1;
            const canAvoid = Array.from({ length: len - k + 1 }, (_, o) => o).some((o) => !leavesAlone(o));
            try {
              const hold = await holds.create(`picker-${i}`, eventId, { seatIds: picked.map((s) => s.id) });
              expect(hold.seats).toHaveLength(k);
              // Held: it leaves nobody alone, or nothing else in the run would have.
              if (leavesAlone(from)) expect(canAvoid).toBe(false);
            } catch (e) {
              if (!(e instanceof DomainError)) throw e;
              expect(e.code).toBe('SINGLE_SEAT_LEFT');
              // Refused only when the pick leaves a seat alone and another placement would not.
              expect(leavesAlone(from)).toBe(true);
              expect(canAvoid).toBe(true);
              const details = e.details as { instead: number[] };
              const instead = before.filter((s) => details.instead.includes(s.id)).sort((a, b) => a.seatNumber - b.seatNumber);
              // The seats offered instead: as many, adjacent, in the same run, leaving nobody alone; and they can be held.
              expect(instead).toHaveLength(k);
              expect(instead.every((s) => s.rowIndex === rowIndex && s.seatNumber >= lo && s.seatNumber <= hi)).toBe(true);
              expect(instead[k - 1]!.seatNumber - instead[0]!.seatNumber).toBe(k - 1);
              expect(leavesAlone(instead[0]!.seatNumber - lo)).toBe(false);
              await holds.create(`picker-${i}`, eventId, { seatIds: details.instead });
            }
          }
        },
      ),
      { numRuns: 12 },
    );
  });

  it('a pick of a seat that is taken is SEATS_UNAVAILABLE, as before', async () => {
    const { eventId } = await event({ sections: [section('S', [{ label: 'A', seats: 6 }])] });
    const seats = await seatsOf(eventId);
    const holds = service();
    await holds.create('first', eventId, { seatIds: [idOf(seats, 'A', 1), idOf(seats, 'A', 2)] });
    expect((await domainError(holds.create('second', eventId, { seatIds: [idOf(seats, 'A', 2), idOf(seats, 'A', 3)] }))).code).toBe(
      'SEATS_UNAVAILABLE',
    );
  });
});

describe('a party that cannot sit together', () => {
  it('is offered the best split and the most seats together, in words and fields; split: true takes the split in one hold', async () => {
    // Two rows of six; seats 3-4 of each taken: pairs only.
    const { eventId } = await event({
      sections: [
        section('S', [
          { label: 'A', seats: 6 },
          { label: 'B', seats: 6 },
        ]),
      ],
    });
    const seats = await seatsOf(eventId);
    const holds = service();
    await holds.create('middle', eventId, {
      seatIds: [idOf(seats, 'A', 3), idOf(seats, 'A', 4), idOf(seats, 'B', 3), idOf(seats, 'B', 4)],
    });
    const refused = await domainError(holds.create('four', eventId, { section: 'S', quantity: 4 }));
    expect(refused.code).toBe('SECTION_NEARLY_FULL');
    expect(refused.details).toMatchObject({ field: 'section', alternatives: [], together: 2 });
    const split = refused.details.split as { row: string; seats: number[] }[];
    expect(split).toHaveLength(2);
    for (const b of split) expect(b.seats).toHaveLength(2);
    expect(refused.message).toMatch(
      /no 4 seats together; you can have 4 seats as 2 \+ 2 \(row [AB] seats \d-\d; row [AB] seats \d-\d\) or 2 seats together/,
    );
    const hold = await holds.create('four', eventId, { section: 'S', quantity: 4, split: true });
    expect(hold.seats).toHaveLength(4);
    expect(hold.quantity).toBe(4);
    // Two pairs of adjacent seats.
    const byRow = new Map<string, number[]>();
    for (const s of hold.seats) byRow.set(s.row, [...(byRow.get(s.row) ?? []), s.number]);
    for (const [, numbers] of byRow) {
      numbers.sort((x, y) => x - y);
      expect(numbers.length % 2).toBe(0);
    }
    // Seats together still come first: with a block of four free, split: true holds it together.
    const together = await event({ sections: [section('S', [{ label: 'A', seats: 6 }])] });
    const whole = await holds.create('four', together.eventId, { section: 'S', quantity: 4, split: true });
    const numbers = whole.seats.map((s) => s.number);
    expect(Math.max(...numbers) - Math.min(...numbers)).toBe(3);
  });

  it("offers as alternatives only the sections where the party can sit together, as far as this process's views tell", async () => {
    const rows = [
      { label: 'A', seats: 6 },
      { label: 'B', seats: 6 },
    ];
    const { eventId } = await event({
      sections: [
        { code: 'S', priceLevel: 'P', qualityRank: 1, rows },
        { code: 'T', priceLevel: 'P', qualityRank: 2, rows },
        { code: 'U', priceLevel: 'P', qualityRank: 3, rows },
      ],
    });
    const seats = await sql<{ id: number; section: string; row: string; number: number }>`
      SELECT id, section_code AS section, row_label AS row, seat_number AS number FROM seats WHERE event_id = ${eventId}`.execute(t.db);
    const id = (section: string, row: string, n: number) =>
      seats.rows.find((r) => r.section === section && r.row === row && r.number === n)!.id;
    // S and T keep only pairs (seats 3-4 of each row taken), U is untouched: set up by another process.
    const other = service();
    for (const code of ['S', 'T'])
      await other.create(`middle-${code}`, eventId, { seatIds: [id(code, 'A', 3), id(code, 'A', 4), id(code, 'B', 3), id(code, 'B', 4)] });
    const refused = await domainError(service().create('four', eventId, { section: 'S', quantity: 4 }));
    expect(refused.code).toBe('SECTION_NEARLY_FULL');
    // T has 8 seats free but only in pairs: not offered; U seats four together.
    expect((refused.details.alternatives as { section: string }[]).map((a) => a.section)).toEqual(['U']);
  });

  it('a split request is refused when the section has fewer seats than the party, with the most together', async () => {
    const { eventId } = await event({ sections: [section('S', [{ label: 'A', seats: 3 }])] });
    const refused = await domainError(service().create('five', eventId, { section: 'S', quantity: 5, split: true }));
    expect(refused.code).toBe('SECTION_NEARLY_FULL');
    expect(refused.details).toMatchObject({ together: 3 });
    expect(refused.details.split).toBeUndefined();
  });
});
