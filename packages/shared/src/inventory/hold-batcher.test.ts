import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import { createOpenEvent, createTestDatabase, type TestDatabase } from '../testing/index.js';
import { runBatch } from './hold-batcher.js';

let t: TestDatabase;
let eventId: string;
let ids: number[];

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
  ({ eventId } = await createOpenEvent(t.db, { name: 'Batch' }));
  ids = (await sql<{ id: number }>`SELECT id FROM seats WHERE event_id = ${eventId} ORDER BY id`.execute(t.db)).rows.map((r) =>
    Number(r.id),
  );
});
afterAll(() => t.drop());

const attempt = (accountId: string, seatIds: number[], limit = 4) => ({
  eventId,
  holdId: randomUUID(),
  accountId,
  sectionCode: 'S',
  seatIds,
  ttlSeconds: 360,
  limit,
});

describe('a batch of hold attempts in one statement', () => {
  it('takes each attempt whole or not at all, and applies each account limit', async () => {
    // Seat ids[0] is already held by someone else: the attempt that wants it gets nothing, not a partial hold.
    await sql`UPDATE seats SET status = 'HELD', hold_id = gen_random_uuid(), expires_at = now() + interval '5 minutes' WHERE id = ${ids[0]}`.execute(
      t.db,
    );
    // acct-full already has 3 seats: 3 + 2 > 4.
    const [prior] = await runBatch(t.db, [attempt('acct-full', [ids[10]!, ids[11]!, ids[12]!])], 'async');
    expect(prior!.expiresAt).not.toBeNull();

    const batch = [
      attempt('a1', [ids[0]!, ids[1]!]),
      attempt('a2', [ids[2]!, ids[3]!]),
      attempt('acct-full', [ids[4]!, ids[5]!]),
      attempt('a3', [ids[6]!]),
    ];
    const results = await runBatch(t.db, batch, 'async');
    expect(results[0]).toMatchObject({ taken: [], expiresAt: null }); // lost a seat: nothing taken
    expect(results[1]!.taken.sort()).toEqual([ids[2], ids[3]].sort());
    expect(results[1]!.expiresAt).not.toBeNull();
    expect(results[2]).toMatchObject({ used: 3, taken: [], expiresAt: null }); // over the limit
    expect(results[3]!.taken).toEqual([ids[6]]);

    const held = await sql<{
      id: number;
      hold_id: string;
    }>`SELECT id, hold_id FROM seats WHERE event_id = ${eventId} AND status = 'HELD' ORDER BY id`.execute(t.db);
    expect(held.rows.map((r) => Number(r.id))).toEqual([ids[0], ids[2], ids[3], ids[6], ids[10], ids[11], ids[12]]);
    const priorHold = (await sql<{ id: string }>`SELECT hold_id AS id FROM seats WHERE id = ${ids[10]}`.execute(t.db)).rows[0]!.id;
    const holds = await sql<{ id: string }>`SELECT id FROM holds WHERE event_id = ${eventId}`.execute(t.db);
    expect(holds.rows.map((r) => r.id).sort()).toEqual([priorHold, batch[1]!.holdId, batch[3]!.holdId].sort());
  });

  it("sets synchronous_commit off for the attempt's own transaction under 'async' (the session keeps the server's), the server's under 'sync'", async () => {
    const { rows } = await sql<{ s: string }>`SELECT current_setting('synchronous_commit') AS s`.execute(t.db);
    const serverSetting = rows[0]!.s;
    expect(serverSetting).not.toBe('off');
    for (const [mode, expected] of [
      ['async', 'off'],
      ['sync', serverSetting],
    ] as const) {
      // A batch of two and an attempt alone (the single statement) report the setting their transaction committed with.
      const two = await runBatch(
        t.db,
        [attempt(`m-${mode}-1`, [ids[13 + (mode === 'sync' ? 3 : 0)]!]), attempt(`m-${mode}-2`, [ids[14 + (mode === 'sync' ? 3 : 0)]!])],
        mode,
      );
      const one = await runBatch(t.db, [attempt(`m-${mode}-3`, [ids[15 + (mode === 'sync' ? 3 : 0)]!])], mode);
      expect([...two, ...one].map((r) => [r.commitMode, r.expiresAt !== null])).toEqual([
        [expected, true],
        [expected, true],
        [expected, true],
      ]);
    }
    // Local to the transaction: the pool's sessions keep the server's setting.
    const after = await sql<{ s: string }>`SELECT current_setting('synchronous_commit') AS s`.execute(t.db);
    expect(after.rows[0]!.s).toBe(serverSetting);
  });
});
