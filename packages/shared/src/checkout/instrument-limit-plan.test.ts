import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOpenEvent, createTestDatabase, type TestDatabase } from '../testing/index.js';

// A checkout's card limit counts the card's seats in pending attempts (`onsale_lock_instrument_seats`). Without an
// index on the pending attempts' card, that count read every pending attempt of every event on each checkout: its
// cost grew with the fans paying at once, and its generic plan was no cheaper than a custom one, so it was planned
// again on most calls (docs/benchmarks.md, "The database's work per checkout, and what the statements report counts").

let t: TestDatabase;
let eventId: string;
let otherEventId: string;
/** Pending attempts made: one per hold, cards fp-0 .. fp-(CARDS-1), a seat or two each. */
const PENDING = 3000;
const CARDS = 1000;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
  const sections = [{ code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: 2, seatsPerRow: 10 }];
  const priceLevels = [{ code: 'P', name: 'All', priceCents: 2500 }];
  ({ eventId } = await createOpenEvent(t.db, { name: 'Card limit', priceLevels, sections }));
  ({ eventId: otherEventId } = await createOpenEvent(t.db, { name: 'Card limit, another event', priceLevels, sections }));
  // Fans paying at once for holds of both events (every fourth of the other), and confirmed orders on some cards.
  await sql`INSERT INTO accounts (id) SELECT 'pay-' || i FROM generate_series(1, ${PENDING}) i`.execute(t.db);
  await sql`
    WITH h AS (
      INSERT INTO holds (event_id, account_id, quantity, status, expires_at)
      SELECT CASE WHEN i % 4 = 0 THEN ${otherEventId}::uuid ELSE ${eventId}::uuid END, 'pay-' || i, 1 + i % 2, 'PAYING', now() + interval '5 minutes'
      FROM generate_series(1, ${PENDING}) i
      RETURNING id, account_id, quantity)
    INSERT INTO checkout_attempts (account_id, idempotency_key, hold_id, request_hash, instrument_fingerprint, seat_count)
    SELECT account_id, 'key-' || account_id, id, 'hash', 'fp-' || (substr(account_id, 5)::int % ${CARDS}), quantity FROM h`.execute(t.db);
  await sql`ANALYZE checkout_attempts`.execute(t.db);
  await sql`ANALYZE holds`.execute(t.db);
});
afterAll(() => t.drop());

/** What the function counts, the long way: pending attempts of the event's holds on the card (or its legacy mark). */
async function expected(event: string, card: string, legacy: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT coalesce(sum(a.seat_count), 0)::int AS n FROM checkout_attempts a, holds h
    WHERE h.id = a.hold_id AND h.event_id = ${event} AND a.status = 'PENDING' AND a.instrument_fingerprint IN (${card}, ${legacy})`.execute(
    t.db,
  );
  return rows[0]!.n;
}

describe("a checkout's card limit", () => {
  it("counts the card's seats in the event's pending attempts, on generic plans as on custom ones", async () => {
    for (const mode of ['force_custom_plan', 'force_generic_plan']) {
      await t.db.connection().execute(async (c) => {
        await sql.raw(`SET plan_cache_mode = ${mode}`).execute(c);
        for (const [event, card] of [
          [eventId, 'fp-1'],
          [eventId, 'fp-4'],
          [otherEventId, 'fp-4'],
          [eventId, 'fp-none'],
        ] as const) {
          const { rows } = await sql<{ n: number }>`SELECT onsale_lock_instrument_seats(${event}, ${card}, 'legacy:none') AS n`.execute(c);
          expect(rows[0]!.n).toBe(await expected(event, card, 'legacy:none'));
        }
        await sql`RESET plan_cache_mode`.execute(c);
      });
    }
    expect(await expected(eventId, 'fp-1', 'legacy:none')).toBeGreaterThan(0);
  });

  it("probes the card's pending attempts by index on a generic plan, not every pending attempt", async () => {
    const plan = await t.db.connection().execute(async (c) => {
      await sql`SET plan_cache_mode = force_generic_plan`.execute(c);
      await sql`
        PREPARE pending_of_card(uuid, text, text) AS
        SELECT sum(a.seat_count) FROM checkout_attempts a JOIN holds h ON h.id = a.hold_id
        WHERE h.event_id = $1 AND a.instrument_fingerprint IN ($2, $3) AND a.status = 'PENDING'`.execute(c);
      const { rows } = await sql<{ 'QUERY PLAN': string }>`
        EXPLAIN (FORMAT JSON) EXECUTE pending_of_card(${sql.lit(eventId)}, 'fp-1', 'legacy:none')`.execute(c);
      await sql`DEALLOCATE pending_of_card`.execute(c);
      await sql`RESET plan_cache_mode`.execute(c);
      return JSON.stringify(rows[0]!['QUERY PLAN']);
    });
    expect(plan).toContain('checkout_attempts_pending_instrument_idx');
    expect(plan).not.toContain('checkout_attempts_one_pending');
  });
});
