import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import { createOpenEvent, createTestDatabase, type TestDatabase } from '../testing/index.js';
import { DomainError } from '../errors.js';
import { EventCache } from './event-cache.js';

// EventCache against real PostgreSQL: a lapsed entry is checked with one statement and kept when nothing changed;
// any change to what it caches (the event, a section's price, a tier, a blocked account) is read at the next lapse.

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 4 });
});
afterAll(() => t.drop());

function counted() {
  const statements: string[] = [];
  const db = t.db.withPlugin({
    transformQuery: (args) => {
      statements.push(args.node.kind);
      return args.node;
    },
    transformResult: async (args) => args.result,
  });
  return { db, statements };
}

describe('EventCache', () => {
  it('keeps a lapsed entry whose event did not change (one statement), and reads every change at the next lapse', async () => {
    const { eventId } = await createOpenEvent(t.db, {
      sections: [
        { code: 'A', priceLevel: 'P', qualityRank: 1, rowCount: 2, seatsPerRow: 4 },
        { code: 'B', priceLevel: 'P', qualityRank: 2, rowCount: 2, seatsPerRow: 4 },
      ],
    });
    let clock = 1_000_000;
    const { db, statements } = counted();
    const cache = new EventCache(db, 1000, () => clock);
    const first = await cache.get(eventId);
    expect(statements).toHaveLength(4); // a first load, as before
    expect(await cache.get(eventId)).toBe(first); // within the TTL: nothing read
    expect(statements).toHaveLength(4);
    clock += 1000;
    statements.length = 0;
    const second = await cache.get(eventId);
    expect(statements).toHaveLength(5); // the fingerprint, then a load (none known yet)
    expect(second).toEqual(first);
    for (let i = 0; i < 3; i++) {
      clock += 1000;
      statements.length = 0;
      expect(await cache.get(eventId)).toBe(second); // unchanged: kept
      expect(statements).toHaveLength(1);
    }

    const lapse = async () => {
      clock += 1000;
      return cache.get(eventId);
    };
    await sql`UPDATE price_levels SET price_cents = 2500 WHERE event_id = ${eventId}`.execute(t.db);
    expect((await lapse()).sections.get('A')!.priceCents).toBe(2500);
    await sql`UPDATE sections SET name = 'Upper' WHERE event_id = ${eventId} AND code = 'B'`.execute(t.db);
    expect((await lapse()).sections.get('B')!.name).toBe('Upper');
    await sql`INSERT INTO account_blocks (event_id, account_id, reason, blocked_by) VALUES (${eventId}, 'fan-1', 'test', 'op')`.execute(
      t.db,
    );
    expect((await lapse()).blockedAccounts.has('fan-1')).toBe(true);
    await sql`DELETE FROM account_blocks WHERE event_id = ${eventId}`.execute(t.db);
    expect((await lapse()).blockedAccounts.has('fan-1')).toBe(false);
    await sql`UPDATE events SET name = 'Renamed' WHERE id = ${eventId}`.execute(t.db);
    expect((await lapse()).event.name).toBe('Renamed');
    // Each change read once: the lapse after it keeps the entry again.
    const kept = await lapse();
    statements.length = 0;
    expect(await lapse()).toBe(kept);
    expect(statements).toHaveLength(1);
    // A deleted event answers as before.
    await sql`DELETE FROM events WHERE id = ${eventId}`.execute(t.db);
    await expect(lapse()).rejects.toSatisfy((e) => e instanceof DomainError && e.code === 'EVENT_NOT_FOUND');
  });

  it('answers an id that is not one as before, with no statement', async () => {
    const { db, statements } = counted();
    const cache = new EventCache(db, 0);
    await expect(cache.get('nope')).rejects.toSatisfy((e) => e instanceof DomainError && e.code === 'EVENT_NOT_FOUND');
    await expect(cache.get('nope')).rejects.toSatisfy((e) => e instanceof DomainError && e.code === 'EVENT_NOT_FOUND');
    expect(statements).toHaveLength(0);
  });
});
