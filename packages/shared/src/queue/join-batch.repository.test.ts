import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Db } from '../db/connect.js';
import { createOpenEvent, createTestDatabase, type TestDatabase } from '../testing/index.js';
import { insertBatch, type PendingJoin } from './join-batch.repository.js';
import { JoinBatcher } from './join-batcher.js';

// The join batcher's statement against real PostgreSQL: a batch of new fans is one statement (its rows come back from
// the insert itself); only joins it did not create are read back, and with several processes joining the same
// accounts at once each account still has one place, which every join of it is answered with.

let t: TestDatabase;
const pools: Db[] = [];

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
});
afterAll(async () => {
  await Promise.all(pools.splice(0).map((p) => p.destroy()));
  await t.drop();
});

/** The database through a plugin that counts the statements run on it. */
function counted(db: Db) {
  const seen = { statements: 0 };
  const wrapped = db.withPlugin({
    transformQuery: (a) => {
      seen.statements++;
      return a.node;
    },
    transformResult: (a) => Promise.resolve(a.result),
  });
  return { db: wrapped, seen };
}

const pending = (eventId: string, accountId: string, deviceHash = `dh-${accountId}`): PendingJoin => ({
  eventId,
  accountId,
  deviceHash,
  randomizedPreopen: false,
});

const rowsOf = async (eventId: string) =>
  (
    await sql<{
      account_id: string;
      join_index: number;
      cohort: string;
      device_hash: string;
      joined_at: Date;
      device_moves: number;
    }>`SELECT account_id, join_index, cohort, device_hash, joined_at, device_moves FROM queue_entries WHERE event_id = ${eventId}`.execute(
      t.db,
    )
  ).rows;

describe('insertBatch (the join batcher statement)', () => {
  it('writes a batch of new fans in one statement, each answered with the row the database holds', async () => {
    const { eventId } = await createOpenEvent(t.db);
    const { db, seen } = counted(t.db);
    const batch = Array.from({ length: 40 }, (_, i) => pending(eventId, `new-${i}`));
    const out = await insertBatch(db, batch);
    expect(seen.statements).toBe(1);
    const stored = new Map((await rowsOf(eventId)).map((r) => [r.account_id, r]));
    expect(stored.size).toBe(40);
    for (const p of batch) {
      const r = out.get(`${eventId}\u0000${p.accountId}`)!;
      const s = stored.get(p.accountId)!;
      expect(r).toEqual({
        join_index: s.join_index,
        cohort: s.cohort,
        device_hash: s.device_hash,
        joined_at: s.joined_at,
        device_moves: s.device_moves,
        created: true,
      });
    }
    // In arrival order, from the event's sequence.
    expect(batch.map((p) => out.get(`${eventId}\u0000${p.accountId}`)!.join_index)).toEqual(
      [...batch.map((p) => out.get(`${eventId}\u0000${p.accountId}`)!.join_index)].sort((a, b) => a - b),
    );
  });

  it('reads back only the joins it did not create: fans already in line (their place as it is), and a fan twice in one batch', async () => {
    const { eventId } = await createOpenEvent(t.db);
    await insertBatch(t.db, [pending(eventId, 'old-1', 'first-device'), pending(eventId, 'old-2')]);
    await sql`UPDATE queue_entries SET device_hash = 'moved-device', device_moves = 1 WHERE event_id = ${eventId} AND account_id = 'old-1'`.execute(
      t.db,
    );
    const before = new Map((await rowsOf(eventId)).map((r) => [r.account_id, r]));
    const { db, seen } = counted(t.db);
    const out = await insertBatch(db, [
      pending(eventId, 'old-1', 'another-device'),
      pending(eventId, 'fresh-1'),
      pending(eventId, 'old-2'),
      pending(eventId, 'fresh-1', 'again'),
      pending(eventId, 'fresh-2'),
    ]);
    expect(seen.statements).toBe(2);
    const old1 = out.get(`${eventId}\u0000old-1`)!;
    expect(old1).toMatchObject({
      join_index: before.get('old-1')!.join_index,
      device_hash: 'moved-device',
      device_moves: 1,
      created: false,
    });
    expect(out.get(`${eventId}\u0000old-2`)).toMatchObject({ join_index: before.get('old-2')!.join_index, created: false });
    // A fan twice in one batch: one row (the first's device), both joins answered with it, as before.
    expect(out.get(`${eventId}\u0000fresh-1`)).toMatchObject({ device_hash: 'dh-fresh-1', created: true });
    expect(out.get(`${eventId}\u0000fresh-2`)).toMatchObject({ created: true });
    expect((await rowsOf(eventId)).length).toBe(4);
  });

  it('gives each account one place when several processes join the same fans at once (each its own pool and batcher)', async () => {
    const { eventId } = await createOpenEvent(t.db);
    const processes = Array.from({ length: 4 }, () => {
      const pool = createDb(t.url, { max: 3, applicationName: 'join-batch-test' });
      pools.push(pool);
      return new JoinBatcher(pool, { maxWaitMs: 1 });
    });
    const accounts = Array.from({ length: 60 }, (_, i) => `race-${i}`);
    // Every process joins every account (each from its own device), in its own order, all at once, three rounds.
    for (let round = 0; round < 3; round++) {
      const joins = processes.flatMap((b, p) =>
        (p % 2 ? [...accounts].reverse() : accounts).map(async (a) => ({ a, row: await b.join(eventId, a, `dev-${p}-${a}`, false) })),
      );
      const answered = await Promise.all(joins);
      const stored = new Map((await rowsOf(eventId)).map((r) => [r.account_id, r]));
      expect(stored.size).toBe(accounts.length);
      for (const { a, row } of answered) {
        expect(row).toBeDefined();
        expect(row!.join_index).toBe(stored.get(a)!.join_index);
        expect(row!.device_hash).toBe(stored.get(a)!.device_hash);
      }
      // Exactly one join of each account created its place, in the first round only.
      const created = answered.filter((x) => x.row!.created).map((x) => x.a);
      expect(created.sort()).toEqual(round === 0 ? [...accounts].sort() : []);
    }
    expect(new Set((await rowsOf(eventId)).map((r) => r.join_index)).size).toBe(accounts.length);
  });
});
