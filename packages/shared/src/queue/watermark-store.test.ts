import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOpenEvent, createTestDatabase, type TestDatabase } from '../testing/index.js';
import { WatermarkStore } from './watermark-store.js';

// The store API's watermarks in memory against real PostgreSQL: near the end of a sale (LAST_CHANCE) an event's row
// is reloaded on a beat of its own, so its sell-out reaches the status polls within a tenth of a second of the
// controller writing it (issue 28), while every other event waits for the usual refresh.

let t: TestDatabase;
const stores: WatermarkStore[] = [];

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
});
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.stop()));
});
afterAll(() => t.drop());

const setState = (eventId: string, state: 'AVAILABLE' | 'LAST_CHANCE' | 'SOLD_OUT') =>
  sql`UPDATE queue_state SET inventory_state = ${state} WHERE event_id = ${eventId}`.execute(t.db);

describe('the watermarks near the end of a sale', () => {
  it("reloads an event in LAST_CHANCE on its own beat: its sell-out is read long before the full refresh, another event's change is not", async () => {
    const nearEnd = await createOpenEvent(t.db);
    const open = await createOpenEvent(t.db);
    await setState(nearEnd.eventId, 'LAST_CHANCE');
    // The full refresh (claims, loads and every event's row) once an hour here; the near-end beat every 50 ms.
    const store = new WatermarkStore(t.db, 3_600_000, undefined, 'test', 50);
    stores.push(store);
    await store.start();
    expect(store.peek(nearEnd.eventId)?.watermark.state).toBe('LAST_CHANCE');
    expect(store.peek(open.eventId)?.watermark.state).toBe('OPEN');

    // The controller's verdict on both, in one statement: the event near its end is read again, the other is not.
    await sql`UPDATE queue_state SET inventory_state = 'SOLD_OUT', sold_out_at = now() WHERE event_id IN (${nearEnd.eventId}, ${open.eventId})`.execute(
      t.db,
    );
    await expect.poll(() => store.peek(nearEnd.eventId)?.watermark.state, { timeout: 30_000, interval: 20 }).toBe('SOLD_OUT');
    expect(store.peek(nearEnd.eventId)?.soldOutAt).not.toBeNull();
    expect(store.peek(open.eventId)?.watermark.state).toBe('OPEN');
    // The full refresh reads every event.
    await store.refresh();
    expect(store.peek(open.eventId)?.watermark.state).toBe('SOLD_OUT');
  });
});
