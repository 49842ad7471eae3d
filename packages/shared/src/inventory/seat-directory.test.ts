import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import { createOpenEvent, createTestDatabase, type TestDatabase } from '../testing/index.js';
import { bySeat } from './best-available.js';
import { findAvailableSeats, findAvailableSeatsOfEvent, type AvailableSeat } from './holds.repository.js';
import { SeatDirectory } from './seat-directory.js';

// A section view's refresh through SeatDirectory (the available seats' ids, what each seat is kept per process)
// against the full read it replaces (findAvailableSeats), at every step of seats held, lapsed, released and sold.

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 4 });
});
afterAll(() => t.drop());

const sorted = (seats: readonly AvailableSeat[]) => [...seats].sort(bySeat);

describe('SeatDirectory', () => {
  it('reads exactly the seats the full read does, seats held, lapsed, released and sold in between', async () => {
    const { eventId } = await createOpenEvent(t.db, {
      sections: [
        { code: 'A', priceLevel: 'P', qualityRank: 1, rowCount: 4, seatsPerRow: 10 },
        { code: 'B', priceLevel: 'P', qualityRank: 2, rowCount: 3, seatsPerRow: 8 },
      ],
    });
    const directory = new SeatDirectory();
    const same = async () => {
      for (const code of ['A', 'B']) {
        const full = await findAvailableSeats(t.db, eventId, code);
        expect(sorted(await directory.available(t.db, eventId, code, null))).toEqual(sorted(full));
      }
    };
    // Nothing known yet: every id is read by id once.
    await same();
    // Seats held (one lapsed at once), then some released and some sold: the views follow each step.
    await sql`UPDATE seats SET status = 'HELD', hold_id = gen_random_uuid(), expires_at = now() + interval '1 hour'
              WHERE event_id = ${eventId} AND seat_number <= 3`.execute(t.db);
    await same();
    await sql`UPDATE seats SET expires_at = now() - interval '1 second'
              WHERE event_id = ${eventId} AND status = 'HELD' AND seat_number = 1`.execute(t.db);
    await same();
    await sql`UPDATE seats SET status = 'AVAILABLE', hold_id = NULL, expires_at = NULL
              WHERE event_id = ${eventId} AND status = 'HELD' AND seat_number = 2`.execute(t.db);
    await same();
    await sql`UPDATE seats SET status = 'SOLD', expires_at = NULL WHERE event_id = ${eventId} AND status = 'HELD'`.execute(t.db);
    await same();
  });

  it('learns the event-wide read, and reads by id only the seats it has not seen (held then, available since)', async () => {
    const { eventId } = await createOpenEvent(t.db, {
      sections: [{ code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: 2, seatsPerRow: 5 }],
    });
    await sql`UPDATE seats SET status = 'HELD', hold_id = gen_random_uuid(), expires_at = now() + interval '1 hour'
              WHERE event_id = ${eventId} AND seat_number = 5`.execute(t.db);
    const directory = new SeatDirectory();
    directory.learn(
      eventId,
      (await findAvailableSeatsOfEvent(t.db, eventId)).map(({ sectionCode: _s, allocation: _a, ...seat }) => seat),
    );
    const statements: string[] = [];
    const counted = t.db.withPlugin({
      transformQuery: (args) => {
        statements.push(args.node.kind);
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    expect(await directory.available(counted, eventId, 'S', null)).toHaveLength(8);
    expect(statements).toHaveLength(1);
    await sql`UPDATE seats SET status = 'AVAILABLE', hold_id = NULL, expires_at = NULL WHERE event_id = ${eventId}`.execute(t.db);
    statements.length = 0;
    const all = await directory.available(counted, eventId, 'S', null);
    expect(sorted(all)).toEqual(sorted(await findAvailableSeats(t.db, eventId, 'S')));
    expect(statements).toHaveLength(2); // the ids, then the two seats not seen before
    statements.length = 0;
    await directory.available(counted, eventId, 'S', null);
    expect(statements).toHaveLength(1);
  });
});
