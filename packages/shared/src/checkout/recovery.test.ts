import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { sql, type KyselyPlugin } from 'kysely';
import { createOpenEvent, createTestDatabase, testSecrets, type TestDatabase } from '../testing/index.js';
import { EventCache } from '../allocations/index.js';
import { HoldService, SeatmapCache } from '../inventory/index.js';
import { checkoutRequestHash, CheckoutService } from './checkout.service.js';
import { CardFingerprints } from './card-fingerprint.js';
import { ProcessLease } from './process-lease.js';
import { databaseFaultOf } from '../db/faults.js';
import { SimulatedPaymentGateway, TEST_CARDS, type ChargeRequest, type PaymentProvider } from './payment.js';

let t: TestDatabase;
let eventId: string;
let holds: HoldService;
let payments: SimulatedPaymentGateway;
let checkout: CheckoutService;

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
  ({ eventId } = await createOpenEvent(t.db, {
    name: 'Recovery',
    priceLevels: [{ code: 'P', name: 'All', priceCents: 2500 }],
    sections: [{ code: 'S', priceLevel: 'P', qualityRank: 1, rowCount: 4, seatsPerRow: 10 }],
  }));
  holds = new HoldService({ db: t.db, events: new EventCache(t.db), seatmap: new SeatmapCache(t.db) });
  payments = new SimulatedPaymentGateway({ tps: 1000, latencyMs: 0, failureRate: 0 });
  checkout = new CheckoutService({ db: t.db, cards: new CardFingerprints(testSecrets().cardFingerprintSecret), payments });
});
afterAll(() => t.drop());

/** What a process that died after "payment started" leaves behind: the attempt PENDING, the hold PAYING. */
async function diedMidPayment(account: string, key: string, charged: boolean) {
  const hold = await holds.create(account, eventId, { section: 'S', quantity: 2 });
  const fingerprint = new CardFingerprints(testSecrets().cardFingerprintSecret).of(TEST_CARDS.success);
  const requestHash = checkoutRequestHash(hold.holdId, fingerprint, {
    payment: { instrument: { type: 'card', number: TEST_CARDS.success } },
  });
  await sql`INSERT INTO checkout_attempts (account_id, idempotency_key, hold_id, request_hash, instrument_fingerprint, seat_count, created_at)
            VALUES (${account}, ${key}, ${hold.holdId}, ${requestHash}, ${fingerprint}, 2, now() - interval '10 minutes')`.execute(t.db);
  await sql`UPDATE holds SET status = 'PAYING' WHERE id = ${hold.holdId}`.execute(t.db);
  if (charged)
    await payments.charge({
      idempotencyKey: `${account}:${key}`,
      amountCents: 5000,
      currency: 'USD',
      instrument: { type: 'card', number: TEST_CARDS.success },
    });
  return hold.holdId;
}

describe('checkouts interrupted by a crash', () => {
  it('are settled: charged -> the order is written; never charged -> the hold is given back, nothing sold', async () => {
    const charged = await diedMidPayment('crash-1', 'key-crash-0001', true);
    const notCharged = await diedMidPayment('crash-2', 'key-crash-0002', false);
    const r = await checkout.recoverStalePayments(60);
    expect(r).toEqual({ settled: 2, confirmed: 1 });

    const order = await t.db.selectFrom('orders').selectAll().where('hold_id', '=', charged).executeTakeFirstOrThrow();
    expect(order).toMatchObject({ seat_count: 2, amount_cents: 5000 });
    const sold = await sql<{ n: number }>`SELECT count(*)::int AS n FROM seats WHERE hold_id = ${charged} AND status = 'SOLD'`.execute(
      t.db,
    );
    expect(sold.rows[0]!.n).toBe(2);

    const back = await t.db.selectFrom('holds').select('status').where('id', '=', notCharged).executeTakeFirstOrThrow();
    expect(back.status).toBe('HELD');
    const attempt = await t.db
      .selectFrom('checkout_attempts')
      .select(['status', 'error_code'])
      .where('idempotency_key', '=', 'key-crash-0002')
      .executeTakeFirstOrThrow();
    expect(attempt).toEqual({ status: 'FAILED', error_code: 'PAYMENT_NOT_COMPLETED' });

    // A replay of the interrupted request gets the settled answer; a second pass settles nothing more.
    const replay = await checkout.checkout('crash-1', charged, 'key-crash-0001', {
      payment: { instrument: { type: 'card', number: TEST_CARDS.success } },
    });
    expect(replay).toMatchObject({ orderId: order.id, replayed: true });
    await expect(
      checkout.checkout('crash-2', notCharged, 'key-crash-0002', { payment: { instrument: { type: 'card', number: TEST_CARDS.success } } }),
    ).rejects.toMatchObject({ code: 'PAYMENT_NOT_COMPLETED' });
    expect(await checkout.recoverStalePayments(60)).toEqual({ settled: 0, confirmed: 0 });
    expect(payments.charges).toBe(1);
  });
});

describe('a simulated gateway that remembers', () => {
  it('records each charge in its own table when it is made: another instance (a restarted process) finds it, and a retry gets the first answer', async () => {
    const first = new SimulatedPaymentGateway({ tps: 1000, latencyMs: 0, failureRate: 0, db: t.db });
    const card = { type: 'card' as const, number: TEST_CARDS.success };
    const charged = await first.charge({ idempotencyKey: 'acct:remember-1', amountCents: 1200, currency: 'USD', instrument: card });
    expect(charged.status).toBe('succeeded');
    const declined = await first.charge({
      idempotencyKey: 'acct:remember-2',
      amountCents: 1200,
      currency: 'USD',
      instrument: { type: 'card', number: TEST_CARDS.declined },
    });
    expect(declined).toEqual({ status: 'declined', reason: 'card_declined' });

    const restarted = new SimulatedPaymentGateway({ tps: 1000, latencyMs: 0, failureRate: 0, db: t.db });
    expect(await restarted.lookup('acct:remember-1')).toEqual(charged);
    expect(await restarted.lookup('acct:remember-2')).toEqual(declined);
    expect(await restarted.lookup('acct:never')).toBeNull();
    // The same key again: the first answer, no second charge; another request under it is refused.
    expect(await restarted.charge({ idempotencyKey: 'acct:remember-1', amountCents: 1200, currency: 'USD', instrument: card })).toEqual(
      charged,
    );
    expect(
      await restarted.charge({ idempotencyKey: 'acct:remember-1', amountCents: 999, currency: 'USD', instrument: card }),
    ).toMatchObject({ status: 'declined', reason: 'idempotency_key_reused' });
    expect(first.charges + restarted.charges).toBe(2);
    await restarted.refund((charged as { reference: string }).reference);
    const row = await t.db
      .selectFrom('simulated_gateway_charges')
      .selectAll()
      .where('idempotency_key', '=', 'acct:remember-1')
      .executeTakeFirstOrThrow();
    expect(row.refunded_at).not.toBeNull();
  });
});

describe("the simulated gateway's ledger", () => {
  it('takes one statement for a new charge and one for a retry of it (the insert, else the row that stopped it), with the answers of before', async () => {
    let statements = 0;
    const counter: KyselyPlugin = {
      transformQuery: (args) => {
        statements++;
        return args.node;
      },
      transformResult: (args) => Promise.resolve(args.result),
    };
    const gateway = new SimulatedPaymentGateway({ tps: 1000, latencyMs: 0, failureRate: 0, db: t.db.withPlugin(counter) });
    const card = { type: 'card' as const, number: TEST_CARDS.success };
    const charge = (key: string, amountCents = 1500, instrument: ChargeRequest['instrument'] = card) =>
      gateway.charge({ idempotencyKey: key, amountCents, currency: 'USD', instrument });
    const charged = await charge('acct:one-statement-1');
    expect(charged.status).toBe('succeeded');
    expect(statements).toBe(1);
    // Another process (a fresh instance: nothing in memory) retries the same key: the first answer, one statement.
    const other = new SimulatedPaymentGateway({ tps: 1000, latencyMs: 0, failureRate: 0, db: t.db.withPlugin(counter) });
    statements = 0;
    expect(await other.charge({ idempotencyKey: 'acct:one-statement-1', amountCents: 1500, currency: 'USD', instrument: card })).toEqual(
      charged,
    );
    expect(statements).toBe(1);
    expect(other.charges).toBe(0);
    // Another request under the key (another amount): refused, nothing charged.
    statements = 0;
    expect(await other.charge({ idempotencyKey: 'acct:one-statement-1', amountCents: 1, currency: 'USD', instrument: card })).toEqual({
      status: 'declined',
      reason: 'idempotency_key_reused',
    });
    expect(statements).toBe(1);
    // A declined card is recorded as declined, and a retry of it gets that decline.
    statements = 0;
    const declined = await charge('acct:one-statement-2', 1500, { type: 'card', number: TEST_CARDS.declined });
    expect(declined).toEqual({ status: 'declined', reason: 'card_declined' });
    expect(
      await other.charge({
        idempotencyKey: 'acct:one-statement-2',
        amountCents: 1500,
        currency: 'USD',
        instrument: { type: 'card', number: TEST_CARDS.declined },
      }),
    ).toEqual(declined);
    expect(statements).toBe(2);
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM simulated_gateway_charges WHERE idempotency_key LIKE 'acct:one-statement-%'`.execute(t.db);
    expect(rows[0]!.n).toBe(2);
    expect(gateway.charges).toBe(2);
  });

  it('answers each of many concurrent charges under one key from the one row recorded', async () => {
    const card = { type: 'card' as const, number: TEST_CARDS.success };
    const gateways = Array.from({ length: 8 }, () => new SimulatedPaymentGateway({ tps: 1000, latencyMs: 0, failureRate: 0, db: t.db }));
    const answers = await Promise.all(
      gateways.map((g) => g.charge({ idempotencyKey: 'acct:one-statement-race', amountCents: 700, currency: 'USD', instrument: card })),
    );
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0]!.status).toBe('succeeded');
    expect(gateways.reduce((n, g) => n + g.charges, 0)).toBe(1);
  });
});

describe('checkouts orphaned by a process that is gone', () => {
  it("are settled by another process as soon as the owner's lease ended, or went silent once its own lease is steady; a live owner's are left alone", async () => {
    const ledger = new SimulatedPaymentGateway({ tps: 1000, latencyMs: 0, failureRate: 0, db: t.db });
    let now = Date.now();
    const survivorLease = new ProcessLease(t.db, { id: 'survivor', now: () => now });
    const survivor = new CheckoutService({
      db: t.db,
      cards: new CardFingerprints(testSecrets().cardFingerprintSecret),
      payments: ledger,
      lease: survivorLease,
    });
    const orphan = async (account: string, key: string, owner: string, charged: boolean) => {
      const holdId = await diedMidPayment(account, key, false);
      await sql`UPDATE checkout_attempts SET owner = ${owner}, created_at = now() WHERE account_id = ${account} AND idempotency_key = ${key}`.execute(
        t.db,
      );
      if (charged)
        await ledger.charge({
          idempotencyKey: `${account}:${key}`,
          amountCents: 5000,
          currency: 'USD',
          instrument: { type: 'card', number: TEST_CARDS.success },
        });
      return holdId;
    };
    await sql`INSERT INTO store_processes (id, seen_at) VALUES ('killed', now() - interval '8 seconds'), ('stopped', now()), ('alive', now())`.execute(
      t.db,
    );
    await sql`UPDATE store_processes SET stopped_at = now() WHERE id = 'stopped'`.execute(t.db);
    const killedHold = await orphan('orphan-1', 'key-orphan-0001', 'killed', true);
    const stoppedHold = await orphan('orphan-2', 'key-orphan-0002', 'stopped', false);
    const aliveHold = await orphan('orphan-3', 'key-orphan-0003', 'alive', true);

    // Just started (or just back from a database outage): not steady yet, so it settles only what a clean stop left
    // (that process said it is gone), not the silent one's.
    await survivorLease.beat();
    expect(await survivor.recoverOrphanedPayments()).toEqual({ settled: 1, confirmed: 0 });
    for (let i = 0; i < 6; i++) {
      now += 1000;
      await survivorLease.beat();
    }
    await sql`UPDATE store_processes SET seen_at = now() WHERE id = 'alive'`.execute(t.db);
    expect(await survivor.recoverOrphanedPayments()).toEqual({ settled: 1, confirmed: 1 });
    const status = async (holdId: string) =>
      (await t.db.selectFrom('holds').select('status').where('id', '=', holdId).executeTakeFirstOrThrow()).status;
    expect(await status(killedHold)).toBe('PURCHASED'); // charged: the order is written
    expect(await status(stoppedHold)).toBe('HELD'); // never charged: the hold is the fan's again
    expect(await status(aliveHold)).toBe('PAYING'); // its owner is alive and will finish it
  });

  it("are settled as soon as the owner's lease connection is gone and it has not renewed since, without waiting for its lease to go silent; a live owner whose connection dropped, or that is slow but connected, is left alone", async () => {
    const ledger = new SimulatedPaymentGateway({ tps: 1000, latencyMs: 0, failureRate: 0, db: t.db });
    // A survivor just started: its lease is not steady (the silence rule is not in use), its connection is.
    const survivorLease = new ProcessLease(t.db, { id: 'survivor-2' });
    const survivor = new CheckoutService({
      db: t.db,
      cards: new CardFingerprints(testSecrets().cardFingerprintSecret),
      payments: ledger,
      lease: survivorLease,
    });
    const orphan = async (account: string, key: string, owner: string) => {
      const holdId = await diedMidPayment(account, key, false);
      await sql`UPDATE checkout_attempts SET owner = ${owner}, created_at = now() WHERE account_id = ${account} AND idempotency_key = ${key}`.execute(
        t.db,
      );
      await ledger.charge({
        idempotencyKey: `${account}:${key}`,
        amountCents: 5000,
        currency: 'USD',
        instrument: { type: 'card', number: TEST_CARDS.success },
      });
      return holdId;
    };
    // 'killed': its connection's backend is gone (no backend has that pid), last renewed 2 s ago. 'reconnecting': its
    // backend is gone too but it renewed just now (over a new connection, about to be named). 'slow': renewed 2 s
    // ago, its connection still there (a backend of this test's own).
    await sql`
      INSERT INTO store_processes (id, seen_at, backend_pid, backend_start)
      VALUES ('conn-killed', now() - interval '2 seconds', 2147483647, now() - interval '1 minute'),
             ('conn-reconnecting', now(), 2147483646, now() - interval '1 minute')`.execute(t.db);
    await sql`
      INSERT INTO store_processes (id, seen_at, backend_pid, backend_start)
      SELECT 'conn-slow', now() - interval '2 seconds', pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()`.execute(
      t.db,
    );
    const killedHold = await orphan('conn-1', 'key-conn-0001', 'conn-killed');
    const reconnectingHold = await orphan('conn-2', 'key-conn-0002', 'conn-reconnecting');
    const slowHold = await orphan('conn-3', 'key-conn-0003', 'conn-slow');

    // The survivor's own lease connection just opened: the connection rule waits until it has been up 2 s (after a
    // database restart every connection is new, and every live process must have had the time to renew).
    await survivorLease.beat();
    expect(await survivor.recoverOrphanedPayments()).toEqual({ settled: 0, confirmed: 0 });
    // Up for 3 s now (its start moved back, as the database's clock cannot be).
    await sql`UPDATE store_processes SET backend_start = backend_start - interval '3 seconds' WHERE id = 'survivor-2'`.execute(t.db);
    expect(await survivor.recoverOrphanedPayments()).toEqual({ settled: 1, confirmed: 1 });
    const status = async (holdId: string) =>
      (await t.db.selectFrom('holds').select('status').where('id', '=', holdId).executeTakeFirstOrThrow()).status;
    expect(await status(killedHold)).toBe('PURCHASED');
    expect(await status(reconnectingHold)).toBe('PAYING');
    expect(await status(slowHold)).toBe('PAYING');
    await survivorLease.stop();
  });

  it('a process taken for dead whose charge lands after another settled its attempt refunds the charge: never money without the seats', async () => {
    const ledger = new SimulatedPaymentGateway({ tps: 1000, latencyMs: 0, failureRate: 0, db: t.db });
    // A provider whose charge is still on its way (a real one may not find it by its key until it is made).
    let landCharge!: () => void;
    const landed = new Promise<void>((r) => (landCharge = r));
    let charging!: () => void;
    const inFlight = new Promise<void>((r) => (charging = r));
    const slow: PaymentProvider = {
      charge: async (req: ChargeRequest) => {
        charging();
        await landed;
        return ledger.charge(req);
      },
      refund: (reference) => ledger.refund(reference),
      lookup: (key) => ledger.lookup(key),
    };
    const cards = new CardFingerprints(testSecrets().cardFingerprintSecret);
    const owner = new CheckoutService({ db: t.db, cards, payments: slow, lease: new ProcessLease(t.db, { id: 'taken-for-dead' }) });
    const survivor = new CheckoutService({ db: t.db, cards, payments: ledger, lease: new ProcessLease(t.db, { id: 'fence-survivor' }) });
    const hold = await holds.create('fence-1', eventId, { section: 'S', quantity: 2 });
    const paying = owner
      // A card of its own: the per-card limit of the event is the other tests' to use up.
      .checkout('fence-1', hold.holdId, 'key-fence-0001', { payment: { instrument: { type: 'card', number: '4000056655665556' } } })
      .catch((e: unknown) => e);
    expect(await Promise.race([inFlight.then(() => 'charging'), paying])).toBe('charging');
    // The owner is taken for dead (its lease ended here; a dropped lease connection does the same) while its charge
    // is in flight: the survivor asks the provider, finds nothing charged, and gives the hold back.
    await sql`INSERT INTO store_processes (id, stopped_at) VALUES ('taken-for-dead', now())`.execute(t.db);
    expect(await survivor.recoverOrphanedPayments()).toEqual({ settled: 1, confirmed: 0 });
    // Then the charge lands: the owner finds its attempt settled, refunds, and answers what the settlement said.
    landCharge();
    expect(await paying).toMatchObject({ code: 'PAYMENT_NOT_COMPLETED' });
    const charge = await t.db
      .selectFrom('simulated_gateway_charges')
      .selectAll()
      .where('idempotency_key', '=', 'fence-1:key-fence-0001')
      .executeTakeFirstOrThrow();
    expect(charge).toMatchObject({ status: 'succeeded' });
    expect(charge.refunded_at).not.toBeNull();
    expect((await t.db.selectFrom('holds').select('status').where('id', '=', hold.holdId).executeTakeFirstOrThrow()).status).toBe('HELD');
    expect(await t.db.selectFrom('orders').select('id').where('hold_id', '=', hold.holdId).execute()).toEqual([]);
  });

  it("a retry of a checkout whose process was killed is answered CHECKOUT_IN_PROGRESS at once, without the in-progress wait; a live owner's retry waits for it", async () => {
    // The in-progress wait is ten minutes here: a retry that waited on the dead owner would not be answered in this test.
    const lease = new ProcessLease(t.db, { id: 'restarted' });
    await lease.beat();
    const retrying = new CheckoutService({
      db: t.db,
      cards: new CardFingerprints(testSecrets().cardFingerprintSecret),
      payments,
      lease,
      inProgressWaitMs: 600_000,
    });
    const request = { payment: { instrument: { type: 'card' as const, number: TEST_CARDS.success } } };
    await sql`INSERT INTO store_processes (id, seen_at) VALUES ('killed-mid-payment', now() - interval '3 seconds'), ('paying-now', now())`.execute(
      t.db,
    );
    const orphaned = await diedMidPayment('retry-1', 'key-retry-0001', true);
    await sql`UPDATE checkout_attempts SET owner = 'killed-mid-payment', created_at = now() WHERE account_id = 'retry-1'`.execute(t.db);
    const answer = await retrying.checkout('retry-1', orphaned, 'key-retry-0001', request).catch((e: unknown) => e);
    expect(answer).toMatchObject({ code: 'CHECKOUT_IN_PROGRESS', details: { retryAfterSeconds: 2 } });

    // An owner renewing its lease is waited on: its retry gets the owner's answer when it comes (here the owner
    // finds nothing was charged), not CHECKOUT_IN_PROGRESS at once.
    const live = await diedMidPayment('retry-2', 'key-retry-0002', false);
    await sql`UPDATE checkout_attempts SET owner = 'paying-now', created_at = now() WHERE account_id = 'retry-2'`.execute(t.db);
    const pending = retrying.checkout('retry-2', live, 'key-retry-0002', request).catch((e: unknown) => e);
    await sql`UPDATE checkout_attempts SET status = 'FAILED', error_code = 'PAYMENT_NOT_COMPLETED' WHERE account_id = 'retry-2'`.execute(
      t.db,
    );
    expect(await pending).toMatchObject({ code: 'PAYMENT_NOT_COMPLETED' });
  });

  it('a checkout whose last step met a database outage is finished by its own process when the database is back', async () => {
    const { DatabaseProxy } = await import('../testing/index.js');
    const { createDb } = await import('../db/connect.js');
    const proxy = await DatabaseProxy.start(t.url);
    const db = createDb(proxy.url(t.url), { max: 4, connectionTimeoutMillis: 1000 });
    // The gateway is another company's system: it keeps answering (and recording) while our database is away.
    const gateway = new SimulatedPaymentGateway({ tps: 1000, latencyMs: 400, failureRate: 0, db: t.db, random: () => 0.5 });
    const service = new CheckoutService({
      db,
      cards: new CardFingerprints(testSecrets().cardFingerprintSecret),
      payments: gateway,
      lease: new ProcessLease(db, { id: 'owner-of-outage' }),
    });
    try {
      const hold = await holds.create('outage-payer', eventId, { section: 'S', quantity: 2 });
      const failedLater = service
        .checkout('outage-payer', hold.holdId, 'key-outage-0001', { payment: { instrument: { type: 'card', number: '4111111111111111' } } })
        .then(
          () => null,
          (err: unknown) => err,
        );
      // The database goes away while the gateway is answering: the charge is made, the order cannot be written.
      await vi.waitFor(async () => {
        const charged = await t.db
          .selectFrom('simulated_gateway_charges')
          .select('status')
          .where('idempotency_key', '=', 'outage-payer:key-outage-0001')
          .executeTakeFirst();
        expect(charged?.status).toBe('succeeded');
      }, 30_000); // a condition, not a pace: under load the first step alone can take more than vitest's 1 s default
      proxy.cut();
      await proxy.setMode('refuse');
      const failed = await failedLater;
      expect(databaseFaultOf(failed)).toBe('unavailable'); // the store API answers it 503 + Retry-After
      expect(service.unfinishedCount).toBe(1);
      expect(await service.recoverOrphanedPayments()).toEqual({ settled: 0, confirmed: 0 }); // still down: kept
      await proxy.setMode('pass');
      expect(await service.recoverOrphanedPayments()).toEqual({ settled: 1, confirmed: 1 });
      expect(service.unfinishedCount).toBe(0);
      const order = await t.db.selectFrom('orders').selectAll().where('hold_id', '=', hold.holdId).executeTakeFirstOrThrow();
      const charge = await t.db
        .selectFrom('simulated_gateway_charges')
        .selectAll()
        .where('idempotency_key', '=', 'outage-payer:key-outage-0001')
        .executeTakeFirstOrThrow();
      expect(order.payment_reference).toBe(charge.reference);
      // The fan's retry with the same key gets the order.
      const replay = await service.checkout('outage-payer', hold.holdId, 'key-outage-0001', {
        payment: { instrument: { type: 'card', number: '4111111111111111' } },
      });
      expect(replay).toMatchObject({ orderId: order.id, replayed: true });
    } finally {
      await db.destroy();
      await proxy.close();
    }
  });
});
