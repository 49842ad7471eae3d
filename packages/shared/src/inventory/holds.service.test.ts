import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from '../testing/index.js';
import { parseEventFile } from '../events/index.js';
import { createEvent } from '../sale-setup/index.js';
import { EventCache } from '../allocations/index.js';
import { DomainError } from '../errors.js';
import { HoldService } from './holds.service.js';
import { SeatmapCache } from './seatmap.js';

let t: TestDatabase;
let eventId: string;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 30 });
  const spec = parseEventFile({
    name: 'Two processes',
    venueName: 'Hall',
    startsAt: new Date(Date.now() + 86400_000).toISOString(),
    onsaleAt: new Date(Date.now() - 3600_000).toISOString(),
    limits: { perAccountSeats: 8, perInstrumentSeats: 8 },
    priceLevels: [{ code: 'P', name: 'All', priceCents: 1000 }],
    sections: [{ code: 'HOT', priceLevel: 'P', qualityRank: 1, rowCount: 6, seatsPerRow: 10 }],
  });
  ({ eventId } = await t.db.transaction().execute((trx) => createEvent(trx, spec, 'test', { signOff: true })));
});
afterAll(() => t.drop());

describe('holds from several store-API processes at once', () => {
  it('never hold a seat twice, even when their cached views disagree (partial takes retried with savepoints)', async () => {
    // Each service has its own availability cache and in-process claims, as separate processes would.
    const services = [0, 1, 2].map(() => new HoldService({ db: t.db, events: new EventCache(t.db), seatmap: new SeatmapCache(t.db) }));
    const outcomes = await Promise.allSettled(
      Array.from({ length: 90 }, (_, i) => services[i % 3]!.create(`fan-${i}`, eventId, { section: 'HOT', quantity: 1 + (i % 3) })),
    );
    const held = outcomes.flatMap((o) => (o.status === 'fulfilled' ? o.value.seats.map((s) => s.id) : []));
    for (const o of outcomes)
      if (o.status === 'rejected') expect((o.reason as DomainError).code).toMatch(/^SECTION_(NEARLY_FULL|SOLD_OUT)$/);
    expect(new Set(held).size).toBe(held.length);
    expect(held.length).toBeLessThanOrEqual(60);
    expect(held.length).toBeGreaterThanOrEqual(50);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM seats WHERE event_id = ${eventId} AND status = 'HELD'`.execute(
      t.db,
    );
    expect(rows[0]!.n).toBe(held.length);
  });
});
