import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql, type KyselyPlugin } from 'kysely';
import { createOpenEvent, createTestDatabase, type TestDatabase } from '../testing/index.js';
import { EventCache } from '../allocations/index.js';
import { DomainError } from '../errors.js';
import { HoldService } from './holds.service.js';
import { SectionAvailabilityCache } from './availability-cache.js';
import { SeatmapCache } from './seatmap.js';

// What a fan's hold request with an Idempotency-Key costs the database in statements: the hold's own statement
// reads the key under the account's lock, so no read of the key goes before it (docs/benchmarks.md). A retry is
// still answered with the hold its key made, whatever would refuse a new hold now.

let t: TestDatabase;
let eventId: string;
let statements = 0;
let holds: HoldService;

/** Counts every statement the hold service sends. */
const counter: KyselyPlugin = {
  transformQuery: (args) => {
    statements++;
    return args.node;
  },
  transformResult: (args) => Promise.resolve(args.result),
};

async function counted<T>(work: () => Promise<T>): Promise<{ value: T; statements: number }> {
  statements = 0;
  const value = await work();
  return { value, statements };
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('not refused');
    },
    (e: unknown) => {
      if (!(e instanceof DomainError)) throw e;
      return e.code;
    },
  );

/** CPU ticks (1/100 s) of this database's backends, when the server runs on this machine (else null). */
async function backendTicks(): Promise<number | null> {
  const { rows } = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`.execute(t.db);
  let ticks = 0;
  for (const { pid } of rows) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(rest[11]) + Number(rest[12]);
    } catch {
      return null;
    }
  }
  return ticks;
}

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
  ({ eventId } = await createOpenEvent(t.db, {
    name: 'Hold round trips',
    limits: { perAccountSeats: 4, perInstrumentSeats: 4 },
    // Seat picking open from the start: exact-seat holds too.
    seatPickingOpensAfterMinutes: 0,
    priceLevels: [{ code: 'P', name: 'All', priceCents: 1000 }],
    sections: [
      { code: 'A', priceLevel: 'P', qualityRank: 1, rowCount: 2, seatsPerRow: 10 },
      { code: 'B', priceLevel: 'P', qualityRank: 2, rowCount: 1, seatsPerRow: 4 },
      { code: 'C', priceLevel: 'P', qualityRank: 3, rowCount: 20, seatsPerRow: 20 },
    ],
  }));
  const db = t.db.withPlugin(counter);
  // The event's settings kept for the file (a store process reads them once a second, not per request).
  // The views of the sections likewise: a view's refresh every 5 s is per section and second, not per hold.
  holds = new HoldService({
    db,
    events: new EventCache(db, 600_000),
    seatmap: new SeatmapCache(db),
    availability: new SectionAvailabilityCache(600_000),
  });
  // The process's views and the event's settings read once, as a warm store process has them.
  await holds.hold('warm-up', eventId, { section: 'A', quantity: 1 }, {}, 'warm-up-key');
});
afterAll(() => t.drop());

describe('a hold with an Idempotency-Key', () => {
  it('is one statement (no read of the key before it), and a refusal its statement made is answered without another', async () => {
    const made = await counted(() => holds.hold('one-trip', eventId, { section: 'A', quantity: 2 }, {}, 'one-trip-1'));
    expect(made.value.replayed).toBe(false);
    expect(made.value.hold.seats).toHaveLength(2);
    expect(made.statements).toBe(1);
    // The account's limit, judged by the hold's statement (which read the key under the lock and found none): refused
    // in that one statement.
    const over = await counted(() => refusal(holds.hold('one-trip', eventId, { section: 'A', quantity: 3 }, {}, 'one-trip-2')));
    expect(over.value).toBe('ACCOUNT_LIMIT_EXCEEDED');
    expect(over.statements).toBe(1);
  });

  it('retried, gets the hold its key made (one statement and the hold read back), never a second', async () => {
    const first = await holds.hold('retry', eventId, { section: 'A', quantity: 2 }, {}, 'retry-1');
    const again = await counted(() => holds.hold('retry', eventId, { section: 'A', quantity: 2 }, {}, 'retry-1'));
    expect(again.value).toMatchObject({ replayed: true, hold: { holdId: first.hold.holdId, status: 'HELD' } });
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM holds WHERE account_id = 'retry'`.execute(t.db);
    expect(rows[0]!.n).toBe(1);
    // The key with another request is refused, as before.
    expect(await refusal(holds.hold('retry', eventId, { section: 'A', quantity: 1 }, {}, 'retry-1'))).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('retried once nothing is left to hold, or its seats are taken, still gets its hold (the key is read after the refusal)', async () => {
    // Section B's four seats: two held under a key, then the other two by another fan. The section is sold out.
    const mine = await holds.hold('sold-out', eventId, { section: 'B', quantity: 2 }, {}, 'sold-out-1');
    await holds.hold('other', eventId, { section: 'B', quantity: 2 }, {}, 'other-1');
    expect(await refusal(holds.hold('third', eventId, { section: 'B', quantity: 1 }, {}, 'third-1'))).toMatch(
      /^SECTION_(SOLD_OUT|NEARLY_FULL)$/,
    );
    const retry = await holds.hold('sold-out', eventId, { section: 'B', quantity: 2 }, {}, 'sold-out-1');
    expect(retry).toMatchObject({ replayed: true, hold: { holdId: mine.hold.holdId, status: 'HELD' } });
    // Exact seats: the retry's seats are its own hold's, taken.
    const seatIds = mine.hold.seats.map((s) => s.id);
    const picked = await holds.hold('pick', eventId, { seatIds: [seatIds[0]! + 100_000] }, {}, 'pick-1').catch((e: unknown) => e);
    expect(picked).toBeInstanceOf(DomainError);
    const { rows } = await sql<{ id: number }>`
      SELECT id FROM seats WHERE event_id = ${eventId} AND section_code = 'A' AND status = 'AVAILABLE' ORDER BY id LIMIT 2`.execute(t.db);
    const exact = rows.map((r) => Number(r.id));
    const pick = await holds.hold('pick', eventId, { seatIds: exact }, {}, 'pick-2');
    expect(pick.replayed).toBe(false);
    const pickRetry = await holds.hold('pick', eventId, { seatIds: exact }, {}, 'pick-2');
    expect(pickRetry).toMatchObject({ replayed: true, hold: { holdId: pick.hold.holdId } });
    // A released hold's key still names it.
    await t.db.transaction().execute((trx) => holds.release(trx, 'sold-out', mine.hold.holdId));
    const afterRelease = await holds.hold('sold-out', eventId, { section: 'B', quantity: 2 }, {}, 'sold-out-1');
    expect(afterRelease).toMatchObject({ replayed: true, hold: { holdId: mine.hold.holdId, status: 'RELEASED' } });
  });

  it('a refusal before any statement (an exact seat held by another) with a new key is that refusal', async () => {
    const { rows } = await sql<{ id: number }>`
      SELECT id FROM seats WHERE event_id = ${eventId} AND status = 'HELD' ORDER BY id LIMIT 1`.execute(t.db);
    const code = await refusal(holds.hold('late', eventId, { seatIds: [Number(rows[0]!.id)] }, {}, 'late-1'));
    expect(code).toMatch(/SEAT/);
    const { rows: none } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM holds WHERE account_id = 'late'`.execute(t.db);
    expect(none[0]!.n).toBe(0);
  });

  it('150 keyed holds one after another: one statement each, every seat held once (prints the CPU a hold costs)', async () => {
    const N = 150;
    const cpu0 = process.cpuUsage();
    const pg0 = await backendTicks();
    const t0 = performance.now();
    statements = 0;
    const made = [];
    for (let i = 0; i < N; i++) made.push(await holds.hold(`cpu-${i}`, eventId, { section: 'C', quantity: 2 }, {}, `cpu-key-${i}`));
    const perHold = statements / N;
    const wall = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const pg1 = await backendTicks();
    console.log(
      `hold round trips: ${perHold} statements a keyed hold; ${((cpu.user + cpu.system) / 1000 / N).toFixed(2)} ms of this process's CPU, ` +
        `${pg0 !== null && pg1 !== null ? (((pg1 - pg0) * 10) / N).toFixed(2) : '?'} ms of the backends', ${(wall / N).toFixed(2)} ms wall a hold`,
    );
    expect(perHold).toBe(1);
    const seats = made.flatMap((m) => m.hold.seats.map((x) => x.id));
    expect(new Set(seats).size).toBe(2 * N);
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM seats WHERE event_id = ${eventId} AND section_code = 'C' AND status = 'HELD'`.execute(t.db);
    expect(rows[0]!.n).toBe(2 * N);
  });
});
