import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { EventCache } from '../allocations/index.js';
import { parseEventFile } from '../events/index.js';
import { createEvent } from '../sale-setup/index.js';
import { AdmissionController } from '../admission/controller.js';
import { WatermarkStore } from '../queue/watermark-store.js';
import { createTestDatabase, manualClock, type TestDatabase } from '../testing/index.js';
import { getInventoryCounts } from './inventory.service.js';
import { SeatmapCache } from './seatmap.js';

// The seat map served from the admission controller's count of each tick (kept on the queue's row, read by every
// store process with its watermarks) instead of each store process counting every seat again: as fresh as the
// cache's own read was, and read from the database whenever the count is older than that.

let t: TestDatabase;
const controllers: AdmissionController[] = [];

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
});
afterAll(async () => {
  await Promise.all(controllers.map((c) => c.stop()));
  await t.drop();
});

async function makeEvent(): Promise<string> {
  const spec = parseEventFile({
    name: 'Seat map from the count',
    venueName: 'Hall',
    startsAt: new Date(Date.now() + 86_400_000).toISOString(),
    onsaleAt: new Date(Date.now() - 3_600_000).toISOString(),
    priceLevels: [{ code: 'P', name: 'All', priceCents: 1000 }],
    sections: [
      { code: 'A', priceLevel: 'P', qualityRank: 1, rowCount: 2, seatsPerRow: 5 },
      { code: 'B', priceLevel: 'P', qualityRank: 2, rowCount: 1, seatsPerRow: 4 },
    ],
  });
  const { eventId } = await t.db.transaction().execute((trx) => createEvent(trx, spec, 'test', { signOff: true }));
  return eventId;
}

/** Sells `n` seats of a section behind every cache's back (a hold id of its own, as the seats' shape asks). */
async function sell(eventId: string, section: string, n: number) {
  await sql`
    UPDATE seats SET status = 'SOLD', hold_id = gen_random_uuid()
    WHERE id IN (SELECT id FROM seats WHERE event_id = ${eventId} AND section_code = ${section} AND status = 'AVAILABLE' ORDER BY id LIMIT ${n})`.execute(
    t.db,
  );
}

describe('the seat map from the controller count', () => {
  it('is the count of the last tick while it is young, and the database read once it is older than the cache would serve', async () => {
    const eventId = await makeEvent();
    const clock = manualClock(Date.now());
    const c = new AdmissionController({ db: t.db, connectionString: t.url, tickMs: 1000, clock: clock.now });
    controllers.push(c);
    await sell(eventId, 'A', 3);
    const o = (await c.tickOnce()).events.find((e) => e.eventId === eventId);
    expect(o?.status).toBe('ticked');

    // The tick kept the same count getInventoryCounts gives, stamped with the tick's time.
    const q = await t.db
      .selectFrom('queue_state')
      .select(['section_counts', 'counted_at'])
      .where('event_id', '=', eventId)
      .executeTakeFirstOrThrow();
    const live = await getInventoryCounts(t.db, eventId, 14);
    expect(q.counted_at?.getTime()).toBe(clock.now());
    expect(q.section_counts).toEqual(live.sections.map((s) => [s.code, s.available, s.held, s.sold]));
    expect(q.section_counts).toEqual([
      ['A', 7, 0, 3],
      ['B', 4, 0, 0],
    ]);

    const watermarks = new WatermarkStore(t.db, 60_000, clock.now);
    await watermarks.refresh();
    expect(watermarks.peek(eventId)?.sectionCounts).toEqual({ at: clock.now(), rows: q.section_counts });
    const events = new EventCache(t.db);
    const { sections } = await events.get(eventId);
    const seatmap = new SeatmapCache(t.db, 1500, clock.now, (id) => watermarks.peek(id)?.sectionCounts);

    // Sold since the tick: the map still shows the tick's count (no read), as a cached read would have.
    await sell(eventId, 'B', 1);
    clock.advance(1_000);
    const fromCount = await seatmap.get(eventId, sections);
    expect(fromCount.generatedAt.getTime()).toBe(q.counted_at!.getTime());
    expect(fromCount.sections.map((s) => [s.code, s.available, s.sold])).toEqual([
      ['A', 7, 3],
      ['B', 4, 0],
    ]);
    expect(await seatmap.get(eventId, sections)).toBe(fromCount);

    // Past the cache's TTL and the read's allowance (no newer tick): read from the database, as before.
    clock.advance(1_000);
    const read = await seatmap.get(eventId, sections);
    expect(read.generatedAt.getTime()).toBe(clock.now());
    expect(read.sections.map((s) => [s.code, s.available, s.sold])).toEqual([
      ['A', 7, 3],
      ['B', 3, 1],
    ]);

    // A newer tick's count is served again at once.
    await c.tickOnce();
    await watermarks.refresh();
    const again = await seatmap.get(eventId, sections);
    expect(again.generatedAt.getTime()).toBe(clock.now());
    expect(again.sections.find((s) => s.code === 'B')?.sold).toBe(1);
  });

  it('is not taken from a count stamped ahead of the store clock, nor for a presale tier view', async () => {
    const eventId = await makeEvent();
    const events = new EventCache(t.db);
    const { sections } = await events.get(eventId);
    const now = Date.now();
    const ahead = { at: now + 5_000, rows: [['A', 0, 0, 10] as const, ['B', 0, 0, 4] as const] };
    const seatmap = new SeatmapCache(
      t.db,
      1500,
      () => now,
      () => ahead,
    );
    const map = await seatmap.get(eventId, sections);
    expect(map.sections.map((s) => s.available)).toEqual([10, 4]);
    const tierMap = await new SeatmapCache(
      t.db,
      1500,
      () => now,
      () => ({ at: now, rows: ahead.rows }),
    ).get(eventId, sections, {
      code: 'NONE',
      general: false,
    });
    expect(tierMap.tier).toBe('NONE');
    expect(tierMap.sections.every((s) => s.available === 0)).toBe(true);
  });
});
