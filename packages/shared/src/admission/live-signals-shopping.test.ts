import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Trx } from '../db/connect.js';
import { createOpenEvent, createTestDatabase, type TestDatabase } from '../testing/index.js';
import { liveSignals, type LiveSignalsRow } from './controller.repository.js';

// The controller's once-a-second `shopping` count anti-joins the fans who claimed within the leaver time against the
// event's holds and confirmed orders. Migration 2026_12_12_7000 lets the orders' anti-join read the event's confirmed
// orders from a partial index alone. The answers must be the ones the rule gives and the ones the query gave without
// the index, whichever plan PostgreSQL picks.

let t: TestDatabase;
let eventId: string;
let otherEventId: string;
const T = new Date('2026-12-07T12:00:00Z');
const FANS = 900;

interface Hold {
  account: string;
  event: string;
  status: 'HELD' | 'PAYING' | 'PURCHASED' | 'RELEASED' | 'EXPIRED' | 'WAITLIST';
  allocation: string | null;
  createdAt: Date;
  expiresAt: Date;
}
interface Order {
  account: string;
  event: string;
  status: 'CONFIRMED' | 'CANCELLED';
}
const claims = new Map<string, Date>();
const holds: Hold[] = [];
const orders: Order[] = [];

/** A seeded generator: the same state on every run. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
const at = (secondsFromT: number) => new Date(T.getTime() + secondsFromT * 1000);

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
  const sections = [{ code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: 2, seatsPerRow: 10 }];
  const priceLevels = [{ code: 'P', name: 'All', priceCents: 2500 }];
  ({ eventId } = await createOpenEvent(t.db, { name: 'Shopping count', priceLevels, sections }));
  ({ eventId: otherEventId } = await createOpenEvent(t.db, { name: 'Shopping count, another event', priceLevels, sections }));

  const r = rng(2027);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const statuses = ['HELD', 'PAYING', 'PURCHASED', 'RELEASED', 'EXPIRED', 'WAITLIST'] as const;
  for (let i = 0; i < FANS; i++) {
    const account = `shop-${i}`;
    // Claimed over the last 15 minutes (some not at all), so every leaver window below cuts through them.
    const claimed = r() < 0.1 ? null : at(-Math.floor(r() * 900));
    if (claimed) claims.set(account, claimed);
    const base = claimed ?? at(-600);
    const n = Math.floor(r() * 4);
    for (let k = 0; k < n; k++) {
      // Holds from before the claim (some within its 5 s grace), after it, live, lapsed and ended; of either tier.
      const createdAt = new Date(base.getTime() + pick([-120, -6, -5, -4, 0, 3, 30, 200]) * 1000);
      const expiresAt = pick([at(-300), at(-1), at(0), at(1), at(240)]);
      holds.push({
        account,
        event: r() < 0.85 ? eventId : otherEventId,
        status: pick(statuses),
        allocation: pick(['GA', 'P1', null]),
        createdAt,
        expiresAt,
      });
    }
    if (r() < 0.35) orders.push({ account, event: r() < 0.8 ? eventId : otherEventId, status: r() < 0.8 ? 'CONFIRMED' : 'CANCELLED' });
  }

  await sql`INSERT INTO accounts (id) SELECT 'shop-' || i FROM generate_series(0, ${FANS - 1}) i`.execute(t.db);
  const accounts = [...Array(FANS).keys()].map((i) => `shop-${i}`);
  await sql`
    INSERT INTO queue_entries (event_id, account_id, device_hash, join_index, cohort, claimed_at)
    SELECT ${eventId}::uuid, a, 'dev-' || a, (row_number() OVER ()) - 1, 'FIFO', c
    FROM unnest(${accounts}::text[], ${accounts.map((a) => claims.get(a) ?? null)}::timestamptz[]) AS x(a, c)`.execute(t.db);
  const { rows: holdIds } = await sql<{ id: string; account_id: string; event_id: string }>`
    INSERT INTO holds (event_id, account_id, quantity, status, allocation, created_at, updated_at, expires_at)
    SELECT e, a, 1, s, al, c, c, x FROM unnest(${holds.map((h) => h.event)}::uuid[], ${holds.map((h) => h.account)}::text[],
      ${holds.map((h) => h.status)}::text[], ${holds.map((h) => h.allocation)}::text[], ${holds.map((h) => h.createdAt)}::timestamptz[],
      ${holds.map((h) => h.expiresAt)}::timestamptz[]) AS h(e, a, s, al, c, x)
    RETURNING id, account_id, event_id`.execute(t.db);
  // Each order takes a hold of its fan and event (made for it, PURCHASED, when the fan has none there).
  for (const o of orders) {
    let hold = holdIds.find((h) => h.account_id === o.account && h.event_id === o.event)?.id;
    if (!hold) {
      const { rows } = await sql<{ id: string }>`
        INSERT INTO holds (event_id, account_id, quantity, status, created_at, updated_at, expires_at)
        VALUES (${o.event}, ${o.account}, 1, 'PURCHASED', ${at(-900)}, ${at(-900)}, ${at(-600)}) RETURNING id`.execute(t.db);
      hold = rows[0]!.id;
      holds.push({ account: o.account, event: o.event, status: 'PURCHASED', allocation: null, createdAt: at(-900), expiresAt: at(-600) });
    }
    await sql`
      INSERT INTO orders (hold_id, event_id, account_id, idempotency_key, seat_count, amount_cents, instrument_fingerprint, payment_reference, status)
      VALUES (${hold}, ${o.event}, ${o.account}, ${'order-' + o.account + o.event}, 1, 2500, 'fp', 'ref', ${o.status})`.execute(t.db);
  }
  await sql`VACUUM ANALYZE holds`.execute(t.db);
  await sql`VACUUM ANALYZE orders`.execute(t.db);
  await sql`VACUUM ANALYZE queue_entries`.execute(t.db);
});
afterAll(() => t.drop());

/** The rule, the long way: claimed within the window, no live hold, no hold let end since the claim, no confirmed order. */
function expectedShopping(windowSeconds: number, allocation: string | null): number {
  let n = 0;
  for (const [account, claimed] of claims) {
    if (claimed.getTime() <= T.getTime() - windowSeconds * 1000) continue;
    const mine = holds.filter((h) => h.account === account && h.event === eventId && (allocation === null || h.allocation === allocation));
    const live = (h: Hold) => (h.status === 'HELD' || h.status === 'PAYING') && h.expiresAt > T;
    const letEnd = (h: Hold) =>
      h.createdAt.getTime() >= claimed.getTime() - 5000 &&
      (h.status === 'RELEASED' || h.status === 'EXPIRED' || ((h.status === 'HELD' || h.status === 'PAYING') && h.expiresAt <= T));
    if (mine.some((h) => live(h) || letEnd(h))) continue;
    if (orders.some((o) => o.account === account && o.event === eventId && o.status === 'CONFIRMED')) continue;
    n++;
  }
  return n;
}

const scopes = [600, 300, 120, 20, 5].flatMap((checkoutSeconds) =>
  [null, 'GA', 'P1'].map((allocation) => ({ queueId: '', allocation, checkoutSeconds, arrivalSeconds: 35, claimWindowSeconds: 300 })),
);

/** Runs `fn` in a transaction that is rolled back, with `setup` (index swaps, planner settings) applied first. */
async function rolledBack<R>(setup: string[], fn: (trx: Trx) => Promise<R>): Promise<R> {
  let out: R | undefined;
  await t.db
    .transaction()
    .execute(async (trx) => {
      for (const s of setup) await sql.raw(s).execute(trx);
      out = await fn(trx);
      throw new Error('rolled back');
    })
    .catch((err: Error) => {
      if (err.message !== 'rolled back') throw err;
    });
  return out!;
}

const OLD_INDEXES = ['DROP INDEX orders_confirmed_account_idx'];
/** Probes or index-only reads, not a hash of the tables' scans: the plans the indexes make possible on a small table. */
const INDEX_PLANS = ['SET LOCAL enable_seqscan = off', 'SET LOCAL enable_bitmapscan = off'];

async function allSignals(trx: Trx): Promise<LiveSignalsRow[]> {
  const out: LiveSignalsRow[] = [];
  for (const s of scopes) out.push(await liveSignals(trx, eventId, { ...s, queueId: eventId }, T));
  return out;
}

describe("the live signals' shopping count on the confirmed orders' index", () => {
  it('gives the rule’s answer and the answers without the index, for every window and tier scope, whichever plan', async () => {
    const now = await rolledBack([], allSignals);
    const old = await rolledBack(OLD_INDEXES, allSignals);
    const nowIndexed = await rolledBack(INDEX_PLANS, allSignals);
    const oldIndexed = await rolledBack([...OLD_INDEXES, ...INDEX_PLANS], allSignals);
    expect(old).toEqual(now);
    expect(nowIndexed).toEqual(now);
    expect(oldIndexed).toEqual(now);
    scopes.forEach((s, i) =>
      expect({ ...s, shopping: now[i]!.shopping }).toEqual({ ...s, shopping: expectedShopping(s.checkoutSeconds, s.allocation) }),
    );
    // The state has every case: fans shopping, and fans left out by each rule.
    expect(now[0]!.shopping).toBeGreaterThan(20);
    expect(now[0]!.shopping).toBeLessThan([...claims.values()].filter((c) => c > at(-600)).length / 2);
    expect(new Set(now.map((s) => s.shopping)).size).toBeGreaterThan(5);
  });

  it('reads the event’s confirmed orders from the index alone', async () => {
    const plan = await rolledBack(INDEX_PLANS, async (trx) => {
      const { rows } = await sql<{ 'QUERY PLAN': string }>`
        EXPLAIN (FORMAT JSON) SELECT count(*) FROM queue_entries e
        WHERE e.event_id = ${eventId} AND e.claimed_at > ${T}::timestamptz - interval '600 seconds'
          AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.event_id = ${eventId} AND h.account_id = e.account_id
                            AND ((h.status IN ('HELD', 'PAYING') AND h.expires_at > ${T}::timestamptz)
                                 OR (h.created_at >= e.claimed_at - interval '5 seconds'
                                     AND (h.status IN ('RELEASED', 'EXPIRED') OR (h.status IN ('HELD', 'PAYING') AND h.expires_at <= ${T}::timestamptz)))))
          AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.event_id = ${eventId} AND o.account_id = e.account_id AND o.status = 'CONFIRMED')`.execute(
        trx,
      );
      return JSON.stringify(rows[0]!['QUERY PLAN']);
    });
    expect(plan).toMatch(/"Node Type":"Index Only Scan"[^}]*"Index Name":"orders_confirmed_account_idx"/);
  });
});
