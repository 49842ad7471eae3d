import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql, type KyselyPlugin } from 'kysely';
import { createOpenEvent, createTestDatabase, testSecrets, type TestDatabase } from '../testing/index.js';
import { EventCache } from '../allocations/index.js';
import { HoldService, SeatmapCache } from '../inventory/index.js';
import { CheckoutService } from './checkout.service.js';
import { CardFingerprints } from './card-fingerprint.js';
import { SimulatedPaymentGateway } from './payment.js';

// What a paid checkout of a seated hold costs the database in statements (round trips): each one is a socket write
// and a parse in the store process and a protocol round in a backend, which the stadium rehearsal's profile found
// the store's largest cost (docs/benchmarks.md, "The store processes profiled in the whole run").

let t: TestDatabase;
let eventId: string;
let holds: HoldService;
let statements = 0;
let checkout: CheckoutService;

/** Counts every statement the checkout sends (BEGIN and COMMIT are not statements of kysely's and are not counted). */
const counter: KyselyPlugin = {
  transformQuery: (args) => {
    statements++;
    return args.node;
  },
  transformResult: (args) => Promise.resolve(args.result),
};

/** Checkouts measured, after WARM unmeasured ones (the code's first runs compile). */
const N = 150;
const WARM = 20;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
  ({ eventId } = await createOpenEvent(t.db, {
    name: 'Round trips',
    priceLevels: [{ code: 'P', name: 'All', priceCents: 2500 }],
    sections: [
      { code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: 20, seatsPerRow: 20 },
      { code: 'G', priceLevel: 'P', qualityRank: 1, rowCount: 20, seatsPerRow: 20 },
    ],
  }));
  holds = new HoldService({ db: t.db, events: new EventCache(t.db), seatmap: new SeatmapCache(t.db) });
  checkout = new CheckoutService({
    db: t.db.withPlugin(counter),
    cards: new CardFingerprints(testSecrets().cardFingerprintSecret),
    payments: new SimulatedPaymentGateway({ tps: 100_000, latencyMs: 0, failureRate: 0 }),
  });
});
afterAll(() => t.drop());

/** CPU ticks (1/100 s) of this database's backends, when the server runs on this machine (else null). */
async function backendTicks(): Promise<number | null> {
  const { rows } = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`.execute(t.db);
  let ticks = 0;
  for (const { pid } of rows) {
    try {
      const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const rest = s.slice(s.lastIndexOf(')') + 2).split(' ');
      ticks += Number(rest[11]) + Number(rest[12]);
    } catch {
      return null;
    }
  }
  return ticks;
}

describe('a paid checkout of a seated hold', () => {
  it("takes at most 7 statements (8 with the hold and its event read apart from the first step's lock, 9 with the revoke of each slot’s old ticket before its insert, 13 with the replay read, the hold lock, the attempt read, the card lock, its count, the price and the last step lock apart; 22 before), sells every seat once with one order and its tickets", async () => {
    const made = [];
    for (let i = 0; i < N + WARM; i++)
      made.push({ account: `rt-${i}`, hold: await holds.create(`rt-${i}`, eventId, { section: 'S', quantity: 2 }) });
    let cpu0 = process.cpuUsage();
    let pg0 = await backendTicks();
    let t0 = performance.now();
    for (const [i, m] of made.entries()) {
      if (i === WARM) {
        statements = 0;
        cpu0 = process.cpuUsage();
        pg0 = await backendTicks();
        t0 = performance.now();
      }
      // A card of its own for each (the per-card seat limit is 4).
      const number = `4${String(100_000_000_000_000 + i)}`;
      const r = await checkout.checkout(m.account, m.hold.holdId, `key-rt-${String(i).padStart(6, '0')}`, {
        payment: { instrument: { type: 'card', number } },
      });
      expect(r).toMatchObject({ status: 'CONFIRMED', seatCount: 2, amountCents: 5000, replayed: false });
    }
    const wall = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const pg1 = await backendTicks();
    const perCheckout = statements / N;
    // For docs/benchmarks.md: the figures of this run (not asserted: the machine is shared).
    console.log(
      `checkout round trips: ${perCheckout} statements a checkout; ${((cpu.user + cpu.system) / 1000 / N).toFixed(2)} ms of this process's CPU, ` +
        `${pg0 !== null && pg1 !== null ? ((pg1 - pg0) * 10) / N : '?'} ms of the backends', ${(wall / N).toFixed(2)} ms wall a checkout`,
    );
    expect(perCheckout).toBeLessThanOrEqual(7);

    const { rows } = await sql<{ orders: number; sold: number; tickets: number; purchased: number; succeeded: number }>`
      SELECT (SELECT count(*)::int FROM orders WHERE event_id = ${eventId}) AS orders,
             (SELECT count(*)::int FROM seats WHERE event_id = ${eventId} AND status = 'SOLD') AS sold,
             (SELECT count(*)::int FROM tickets WHERE event_id = ${eventId} AND status = 'ACTIVE') AS tickets,
             (SELECT count(*)::int FROM holds WHERE event_id = ${eventId} AND status = 'PURCHASED') AS purchased,
             (SELECT count(*)::int FROM checkout_attempts a JOIN holds h ON h.id = a.hold_id
              WHERE h.event_id = ${eventId} AND a.status = 'SUCCEEDED' AND a.order_id IS NOT NULL) AS succeeded`.execute(t.db);
    const all = N + WARM;
    expect(rows[0]).toEqual({ orders: all, sold: 2 * all, tickets: 2 * all, purchased: all, succeeded: all });
  });

  it('with the simulated gateway keeping its ledger (as the store runs it), takes one ledger statement a checkout (two before: a read of the key, then the insert)', async () => {
    let ledgerStatements = 0;
    const ledgerCounter: KyselyPlugin = {
      transformQuery: (args) => {
        ledgerStatements++;
        return args.node;
      },
      transformResult: (args) => Promise.resolve(args.result),
    };
    const withLedger = new CheckoutService({
      db: t.db.withPlugin(counter),
      cards: new CardFingerprints(testSecrets().cardFingerprintSecret),
      // The event's condition (a rehearsal's slow-payments fault) is read once a second by default: once in this test.
      payments: new SimulatedPaymentGateway({
        tps: 100_000,
        latencyMs: 0,
        failureRate: 0,
        db: t.db.withPlugin(ledgerCounter),
        conditionCacheMs: 3_600_000,
      }),
    });
    const made = [];
    for (let i = 0; i < N + WARM; i++)
      made.push({ account: `gw-${i}`, hold: await holds.create(`gw-${i}`, eventId, { section: 'G', quantity: 2 }) });
    let cpu0 = process.cpuUsage();
    let pg0 = await backendTicks();
    for (const [i, m] of made.entries()) {
      if (i === WARM) {
        statements = 0;
        ledgerStatements = 0;
        cpu0 = process.cpuUsage();
        pg0 = await backendTicks();
      }
      const r = await withLedger.checkout(m.account, m.hold.holdId, `key-gw-${String(i).padStart(6, '0')}`, {
        payment: { instrument: { type: 'card', number: `5${String(100_000_000_000_000 + i)}` } },
      });
      expect(r).toMatchObject({ status: 'CONFIRMED', seatCount: 2, replayed: false });
    }
    const cpu = process.cpuUsage(cpu0);
    const pg1 = await backendTicks();
    console.log(
      `checkout round trips with the ledger: ${(statements + ledgerStatements) / N} statements a checkout (${ledgerStatements / N} the ledger's); ` +
        `${((cpu.user + cpu.system) / 1000 / N).toFixed(2)} ms of this process's CPU, ${pg0 !== null && pg1 !== null ? ((pg1 - pg0) * 10) / N : '?'} ms of the backends'`,
    );
    expect(ledgerStatements / N).toBe(1);
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM simulated_gateway_charges WHERE idempotency_key LIKE 'gw-%' AND status = 'succeeded'`.execute(t.db);
    expect(rows[0]!.n).toBe(N + WARM);
  });
});
