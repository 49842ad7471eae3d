import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TRPCError } from '@trpc/server';
import { createTestDatabase, type TestDatabase } from '@onsale/shared/testing';
import type { ConsoleUser } from '@onsale/shared/users';
import { callerAs, countsFromDb, holdSeats, seedEvent, seedUser, sellSeats } from './fixtures.js';

let tdb: TestDatabase;
let eventId: string;
let otherEventId: string;
let viewer: ConsoleUser;

beforeAll(async () => {
  tdb = await createTestDatabase(inject('templateDatabaseUrl'));
  ({ eventId } = await seedEvent(tdb.db, 'Router Test Night'));
  ({ eventId: otherEventId } = await seedEvent(tdb.db, 'Untouched Matinee'));
  await holdSeats(tdb.db, eventId, 'A', 3);
  await sellSeats(tdb.db, eventId, 'B', 2);
  viewer = await seedUser(tdb.db, 'viewer@router.test', 'viewer');
});

afterAll(async () => {
  await tdb?.drop();
});

const caller = () => callerAs(tdb.db, viewer);

async function trpcCodeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(TRPCError);
    return (err as TRPCError).code;
  }
  throw new Error('expected the call to fail');
}

describe('events.list', () => {
  it('returns every event with capacity and live counts', async () => {
    const list = await caller().events.list();
    expect(list.map((e) => e.name).sort()).toEqual(['Router Test Night', 'Untouched Matinee']);

    const ev = list.find((e) => e.id === eventId)!;
    expect(ev.capacity).toBe(22);
    expect(ev.counts).toEqual({ available: 17, held: 3, sold: 2, drift: 0 });
    expect(ev.counts).toMatchObject(await countsFromDb(tdb.db, eventId));
    expect(ev.venueName).toBe('Test Hall');
    expect(ev.onsaleAt).toBe('2030-03-01T10:00:00.000Z');

    const other = list.find((e) => e.id === otherEventId)!;
    expect(other.counts).toEqual({ available: 22, held: 0, sold: 0, drift: 0 });
  });
});

describe('events.byId', () => {
  it('returns the event, its sections and inventory counts', async () => {
    const ev = await caller().events.byId({ id: eventId });
    expect(ev.name).toBe('Router Test Night');
    expect(ev.counts).toEqual({ capacity: 22, available: 17, held: 3, sold: 2, drift: 0 });
    expect(ev.sections).toEqual([
      expect.objectContaining({ code: 'A', name: 'Stalls', capacity: 12, available: 9, held: 3, sold: 0, priceCents: 12_000 }),
      expect.objectContaining({ code: 'B', name: 'Balcony', capacity: 10, available: 8, held: 0, sold: 2, priceCents: 6_000 }),
    ]);
  });

  it('counts an expired hold as available (read-time expiry)', async () => {
    const fresh = await seedEvent(tdb.db, 'Expiry Check');
    await holdSeats(tdb.db, fresh.eventId, 'A', 2);
    await tdb.db
      .updateTable('seats')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('event_id', '=', fresh.eventId)
      .where('status', '=', 'HELD')
      .execute();
    const ev = await caller().events.byId({ id: fresh.eventId });
    expect(ev.counts).toMatchObject({ available: 22, held: 0, sold: 0, drift: 0 });
  });

  it('answers NOT_FOUND for an unknown id', async () => {
    expect(await trpcCodeOf(caller().events.byId({ id: '00000000-0000-4000-8000-000000000000' }))).toBe('NOT_FOUND');
  });

  it('answers NOT_FOUND or BAD_REQUEST for a malformed id, never a 500', async () => {
    for (const id of ['not-a-uuid', "'; drop table events; --", '', 'x'.repeat(500)]) {
      expect(['NOT_FOUND', 'BAD_REQUEST']).toContain(await trpcCodeOf(caller().events.byId({ id })));
    }
  });
});
