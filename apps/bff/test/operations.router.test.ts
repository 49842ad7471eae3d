import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TRPCError } from '@trpc/server';
import { sql } from '@onsale/shared/db';
import { assignEventOrganisation, type ConsoleUser } from '@onsale/shared/users';
import { createTestDatabase, type TestDatabase } from '@onsale/shared/testing';
import { callerAs, seedEvent, seedUser } from './fixtures.js';

// Every operation in the browser, through the BFF: fan support (lookup, hold release, block),
// order cancel, inventory add, the post-sale review with cluster cancel, webhook endpoints; refusals by role; audit.

let tdb: TestDatabase;
let admin: ConsoleUser;
let operator: ConsoleUser;
let viewer: ConsoleUser;
let promoter: ConsoleUser;
let eventId: string;

beforeAll(async () => {
  tdb = await createTestDatabase(inject('templateDatabaseUrl'), { max: 6 });
  [admin, operator, viewer, promoter] = await Promise.all([
    seedUser(tdb.db, 'admin@ops.test', 'admin'),
    seedUser(tdb.db, 'operator@ops.test', 'operator'),
    seedUser(tdb.db, 'viewer@ops.test', 'viewer'),
    seedUser(tdb.db, 'promoter@acme.test', 'promoter', 'Acme Live'),
  ]);
  ({ eventId } = await seedEvent(tdb.db, 'Ops Night'));
});
afterAll(() => tdb?.drop());

async function refusal(p: Promise<unknown>) {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(TRPCError);
    const e = err as TRPCError;
    return { code: e.code, domainCode: (e.cause as { code?: string } | undefined)?.code };
  }
  throw new Error('expected the call to be refused');
}

/** A fan with a live hold of `n` seats and, if `paid`, a confirmed order of them (the checkout's rows, written directly). */
async function fanWith(
  accountId: string,
  n: number,
  paid: boolean,
  card = `card-of-${accountId}`,
): Promise<{ holdId: string; orderId: string | null }> {
  await sql`INSERT INTO accounts (id) VALUES (${accountId}) ON CONFLICT DO NOTHING`.execute(tdb.db);
  const { rows } = await sql<{ id: string }>`
    INSERT INTO holds (event_id, account_id, section_code, quantity, status, expires_at)
    VALUES (${eventId}, ${accountId}, 'A', ${n}, ${paid ? 'PURCHASED' : 'HELD'}, now() + interval '5 min') RETURNING id`.execute(tdb.db);
  const holdId = rows[0]!.id;
  await sql`UPDATE seats SET status = ${paid ? 'SOLD' : 'HELD'}, hold_id = ${holdId}, expires_at = ${paid ? null : sql`now() + interval '5 min'`}
            WHERE id IN (SELECT id FROM seats WHERE event_id = ${eventId} AND status = 'AVAILABLE' ORDER BY id LIMIT ${n})`.execute(tdb.db);
  if (!paid) return { holdId, orderId: null };
  const o = await sql<{ id: string }>`
    INSERT INTO orders (hold_id, event_id, account_id, idempotency_key, seat_count, amount_cents, instrument_fingerprint, payment_reference)
    VALUES (${holdId}, ${eventId}, ${accountId}, ${`k-${holdId}`}, ${n}, ${n * 12_000}, ${card}, 'sim') RETURNING id`.execute(tdb.db);
  return { holdId, orderId: o.rows[0]!.id };
}

describe('operations from the console', () => {
  it('refuses each operation to the roles without it', async () => {
    for (const who of [viewer, promoter]) {
      const c = callerAs(tdb.db, who);
      for (const call of [
        c.support.lookup({ accountId: 'fan-x' }),
        c.support.releaseHold({ holdId: '00000000-0000-0000-0000-000000000000', reason: 'r' }),
        c.support.block({ eventId, accountId: 'fan-x', reason: 'r' }),
        c.operations.cancelOrder({ orderId: '00000000-0000-0000-0000-000000000000', reason: 'r' }),
        c.operations.review({ eventId }),
        c.operations.cancelCluster({ eventId, clusterId: 'c1', reason: 'r' }),
        c.webhooks.list(),
        c.webhooks.add({ url: 'https://example.com/hook' }),
      ])
        expect(await refusal(call)).toMatchObject({ code: 'FORBIDDEN', domainCode: 'ROLE_FORBIDDEN' });
    }
    // Inventory: a viewer never; a promoter only on their organisation's events.
    expect(await refusal(callerAs(tdb.db, viewer).operations.addSeats({ eventId, section: 'A', rows: 1, seatsPerRow: 2 }))).toMatchObject({
      code: 'FORBIDDEN',
      domainCode: 'ROLE_FORBIDDEN',
    });
    expect(await refusal(callerAs(tdb.db, promoter).operations.addSeats({ eventId, section: 'A', rows: 1, seatsPerRow: 2 }))).toMatchObject(
      { code: 'FORBIDDEN', domainCode: 'EVENT_FORBIDDEN' },
    );
  });

  it('fan support: lookup shows holds and orders; a hold released and an account blocked, each audited with the reason', async () => {
    const held = await fanWith('fan-support-1', 2, false);
    const bought = await fanWith('fan-support-1', 1, true);
    const ops = callerAs(tdb.db, operator);
    const before = await ops.support.lookup({ accountId: 'fan-support-1' });
    expect(before.holds.map((h) => [h.id, h.live])).toEqual(expect.arrayContaining([[held.holdId, true]]));
    expect(before.orders.map((o) => [o.id, o.status, o.currency])).toEqual([[bought.orderId, 'CONFIRMED', 'USD']]);

    expect(await ops.support.releaseHold({ holdId: held.holdId, reason: 'fan called: card stuck' })).toMatchObject({
      status: 'RELEASED',
      accountId: 'fan-support-1',
    });
    expect(await refusal(ops.support.releaseHold({ holdId: held.holdId, reason: 'again' }))).toMatchObject({
      code: 'CONFLICT',
      domainCode: 'HOLD_NOT_LIVE',
    });
    expect(await refusal(ops.support.releaseHold({ holdId: held.holdId, reason: '  ' }))).toMatchObject({ code: 'BAD_REQUEST' });

    expect(await ops.support.block({ eventId, accountId: 'fan-support-1', reason: 'resale ring' })).toMatchObject({ blocked: true });
    const after = await ops.support.lookup({ accountId: 'fan-support-1' });
    expect(after.blocks).toEqual([expect.objectContaining({ eventId, reason: 'resale ring', blockedBy: 'operator@ops.test' })]);
    await ops.support.unblock({ eventId, accountId: 'fan-support-1', reason: 'appeal upheld' });
    expect(await refusal(ops.support.unblock({ eventId, accountId: 'fan-support-1', reason: 'twice' }))).toMatchObject({
      code: 'NOT_FOUND',
      domainCode: 'NOT_BLOCKED',
    });

    expect(await ops.operations.cancelOrder({ orderId: bought.orderId!, reason: 'duplicate purchase' })).toMatchObject({
      status: 'CANCELLED',
      seatsReturned: 1,
    });
    const audit = await tdb.db
      .selectFrom('audit_log')
      .select(['action', 'actor', 'details'])
      .where('event_id', '=', eventId)
      .orderBy('id')
      .execute();
    expect(audit.map((a) => `${a.action} ${a.actor}`)).toEqual(
      expect.arrayContaining([
        'hold.released operator@ops.test',
        'account.blocked operator@ops.test',
        'account.unblocked operator@ops.test',
        'order.cancel operator@ops.test',
      ]),
    );
    expect(audit.find((a) => a.action === 'hold.released')!.details).toMatchObject({
      reason: 'fan called: card stuck',
      accountId: 'fan-support-1',
    });
  });

  it('support finds an order by the reference the fan reads, by e-mail, by account id; the order page shows it; viewers are refused', async () => {
    const { orderId } = await fanWith('maya@fans.test', 2, true);
    const reference = orderId!.slice(0, 8).toUpperCase();
    const c = callerAs(tdb.db, operator);
    for (const typed of [reference, `#${reference.toLowerCase().slice(0, 4)}-${reference.slice(4)}`, ` ${reference} `, orderId!]) {
      const found = await c.support.search({ query: typed });
      expect(found.orders.map((o) => [o.id, o.reference, o.accountId, o.currency])).toEqual([
        [orderId, reference, 'maya@fans.test', 'USD'],
      ]);
    }
    // By e-mail (the account id is the fan's e-mail), in any case, and by part of it.
    for (const typed of ['MAYA@fans.test', 'maya@', 'fans.test'])
      expect((await c.support.search({ query: typed })).accounts.map((a) => a.accountId)).toContain('maya@fans.test');
    // By the name the fan's identity provider gave (kept with the account), in any case and in part; shown with the order.
    await sql`UPDATE accounts SET display_name = 'Maya Okafor' WHERE id = 'maya@fans.test'`.execute(tdb.db);
    for (const typed of ['maya okafor', 'OKAF', 'Okafor'])
      expect((await c.support.search({ query: typed })).accounts).toEqual([
        expect.objectContaining({ accountId: 'maya@fans.test', displayName: 'Maya Okafor' }),
      ]);
    expect((await c.support.search({ query: reference })).orders[0]).toMatchObject({ accountName: 'Maya Okafor' });
    expect(await c.support.lookup({ accountId: 'maya@fans.test' })).toMatchObject({ displayName: 'Maya Okafor' });
    // A reference nobody has: no order, and no error.
    expect(await c.support.search({ query: 'FFFFFFFF' })).toMatchObject({ orders: [], accounts: [] });
    // Wildcards are text, not patterns.
    expect((await c.support.search({ query: '%' })).accounts).toEqual([]);
    expect(await refusal(c.support.search({ query: '  ' }))).toMatchObject({ code: 'BAD_REQUEST' });
    expect(await refusal(callerAs(tdb.db, viewer).support.search({ query: reference }))).toMatchObject({ code: 'FORBIDDEN' });

    const page = await c.support.order({ orderId: orderId! });
    expect(page).toMatchObject({
      reference,
      accountId: 'maya@fans.test',
      seats: 2,
      amountCents: 24_000,
      currency: 'USD',
      status: 'CONFIRMED',
    });
    expect(page.seatList).toHaveLength(2);
    // The account's own orders carry the reference too.
    expect((await c.support.lookup({ accountId: 'maya@fans.test' })).orders.map((o) => o.reference)).toEqual([reference]);
    expect(await refusal(c.support.order({ orderId: '00000000-0000-0000-0000-000000000000' }))).toMatchObject({
      code: 'NOT_FOUND',
      domainCode: 'ORDER_NOT_FOUND',
    });
    expect(await refusal(c.support.order({ orderId: 'nope' }))).toMatchObject({ code: 'NOT_FOUND', domainCode: 'ORDER_NOT_FOUND' });
  });

  it('refunds an order from its page: cancelled first (seats before money), the charge refunded at the provider, audited in money; once only; refused by role', async () => {
    const { orderId } = await fanWith('rita@fans.test', 2, true);
    // The simulated gateway's record of the charge, under the order's payment reference.
    await sql`UPDATE orders SET payment_reference = 'ch_refund_1' WHERE id = ${orderId}::uuid`.execute(tdb.db);
    await sql`INSERT INTO simulated_gateway_charges (idempotency_key, request_fingerprint, status, reference, amount_cents, currency)
              VALUES ('k-refund-1', 'fp', 'succeeded', 'ch_refund_1', 24000, 'USD')`.execute(tdb.db);
    for (const who of [viewer, promoter])
      expect(await refusal(callerAs(tdb.db, who).operations.refundOrder({ orderId: orderId!, reason: 'r' }))).toMatchObject({
        code: 'FORBIDDEN',
      });

    // The provider fails: the order is cancelled (its seats back), not refunded, and the answer says to retry.
    const down = {
      charge: () => Promise.reject(new Error('x')),
      lookup: () => Promise.resolve(null),
      refund: () => Promise.reject(new Error('provider down')),
    };
    expect(
      await refusal(callerAs(tdb.db, operator, { payments: down }).operations.refundOrder({ orderId: orderId!, reason: 'show cancelled' })),
    ).toMatchObject({ code: 'SERVICE_UNAVAILABLE', domainCode: 'PAYMENT_PROVIDER_UNAVAILABLE' });
    const ops = callerAs(tdb.db, operator);
    expect(await ops.support.order({ orderId: orderId! })).toMatchObject({ status: 'CANCELLED', refundedAt: null, seatList: [] });

    // Asked again, through the simulated gateway: refunded, the gateway's charge marked, the page reads it back.
    const r = await ops.operations.refundOrder({ orderId: orderId!, reason: 'show cancelled' });
    expect(r).toMatchObject({ orderId, status: 'CANCELLED', amountCents: 24_000, cancelled: false });
    const charge = await sql<{
      refunded_at: Date | null;
    }>`SELECT refunded_at FROM simulated_gateway_charges WHERE reference = 'ch_refund_1'`.execute(tdb.db);
    expect(charge.rows[0]!.refunded_at).not.toBeNull();
    expect((await ops.support.order({ orderId: orderId! })).refundedAt).toBe(r.refundedAt);
    expect(await refusal(ops.operations.refundOrder({ orderId: orderId!, reason: 'again' }))).toMatchObject({
      code: 'CONFLICT',
      domainCode: 'ORDER_ALREADY_REFUNDED',
    });
    const audit = await callerAs(tdb.db, admin).auditLog.list({ action: 'order.refund' });
    expect(audit.entries.filter((e) => e.details.orderId === orderId)).toEqual([
      expect.objectContaining({
        actor: 'operator@ops.test',
        eventCurrency: 'USD',
        details: expect.objectContaining({ amountCents: 24_000, reason: 'show cancelled' }),
      }),
    ]);

    // A confirmed order refunded twice at once: cancelled once, refunded once, the other told it is done.
    const second = await fanWith('sam@fans.test', 1, true);
    const both = await Promise.allSettled([
      ops.operations.refundOrder({ orderId: second.orderId!, reason: 'duplicate' }),
      callerAs(tdb.db, admin).operations.refundOrder({ orderId: second.orderId!, reason: 'duplicate' }),
    ]);
    expect(both.filter((b) => b.status === 'fulfilled')).toHaveLength(1);
    const lost = both.find((b) => b.status === 'rejected') as PromiseRejectedResult;
    expect((lost.reason as TRPCError).cause).toMatchObject({ code: 'ORDER_ALREADY_REFUNDED' });
    const counts = await sql<{ action: string; n: number }>`
      SELECT action, count(*)::int AS n FROM audit_log WHERE details->>'orderId' = ${second.orderId} GROUP BY action ORDER BY action`.execute(
      tdb.db,
    );
    expect(counts.rows).toEqual([
      { action: 'order.cancel', n: 1 },
      { action: 'order.refund', n: 1 },
    ]);
    expect(await ops.support.order({ orderId: second.orderId! })).toMatchObject({ status: 'CANCELLED', seatList: [] });
  });

  it('adds seats to a section (a promoter on their own event too); bad input names the field', async () => {
    const r = await callerAs(tdb.db, admin).operations.addSeats({ eventId, section: 'B', rows: 1, seatsPerRow: 4 });
    expect(r).toMatchObject({ added: 4, section: 'B', firstRow: 'C' });
    expect(await refusal(callerAs(tdb.db, admin).operations.addSeats({ eventId, section: 'B', rows: 0, seatsPerRow: 4 }))).toMatchObject({
      code: 'BAD_REQUEST',
    });
    const { eventId: acme } = await seedEvent(tdb.db, 'Acme Ops Night');
    await tdb.db.transaction().execute((trx) => assignEventOrganisation(trx, acme, 'Acme Live', 'test'));
    expect(await callerAs(tdb.db, promoter).operations.addSeats({ eventId: acme, section: 'A', rows: 1, seatsPerRow: 2 })).toMatchObject({
      added: 2,
    });
  });

  it('the post-sale review clusters orders on one card; cancelling the cluster needs a reason and cancels each order', async () => {
    for (const n of [1, 2, 3]) await fanWith(`ring-00${n}`, 1, true, 'shared-card');
    const ops = callerAs(tdb.db, operator);
    const review = await ops.operations.review({ eventId });
    const cluster = review.clusters.find((c) => c.accounts.includes('ring-001'))!;
    expect(cluster.accounts).toEqual(['ring-001', 'ring-002', 'ring-003']);
    expect(cluster.signals).toContain('INSTRUMENT');
    expect(await refusal(ops.operations.cancelCluster({ eventId, clusterId: cluster.id, reason: '' }))).toMatchObject({
      code: 'BAD_REQUEST',
    });
    const done = await ops.operations.cancelCluster({ eventId, clusterId: cluster.id, reason: 'one card, three accounts' });
    expect(done.cancelled).toHaveLength(3);
    const audit = await tdb.db.selectFrom('audit_log').select(['action']).where('action', '=', 'review.cancel_cluster').execute();
    expect(audit).toHaveLength(1);
  });

  it('webhook endpoints: add (secret once), disable, enable, deliveries; each change audited', async () => {
    const ops = callerAs(tdb.db, operator);
    const added = await ops.webhooks.add({ url: 'https://hooks.example.com/onsale' });
    expect(added.secret).toMatch(/^whsec_/);
    expect((await ops.webhooks.list()).map((e) => e.url)).toContain('https://hooks.example.com/onsale');
    expect(JSON.stringify(await ops.webhooks.list())).not.toContain(added.secret);
    expect((await ops.webhooks.disable({ endpointId: added.id })).active).toBe(false);
    expect((await ops.webhooks.enable({ endpointId: added.id })).active).toBe(true);
    expect(await ops.webhooks.deliveries({ status: 'DEAD' })).toEqual([]);
    expect(await refusal(ops.webhooks.redeliver({ deliveryId: 999999 }))).toMatchObject({
      code: 'NOT_FOUND',
      domainCode: 'WEBHOOK_DELIVERY_NOT_FOUND',
    });
    expect(await refusal(ops.webhooks.add({ url: 'ftp://nope' }))).toMatchObject({ code: 'BAD_REQUEST' });
    // Internal receivers (the metadata service, this machine in any spelling) are refused at the url field.
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[::ffff:127.0.0.1]:5432/',
      'http://2130706433/',
      'http://localhost:3000/',
    ]) {
      const refused = await ops.webhooks.add({ url }).then(
        () => null,
        (e: TRPCError) => ({ code: e.code, cause: e.cause as { code?: string; details?: { field?: string } } }),
      );
      expect(refused, url).toMatchObject({ code: 'BAD_REQUEST', cause: { code: 'INVALID_WEBHOOK_ENDPOINT', details: { field: 'url' } } });
    }
    const audit = await tdb.db
      .selectFrom('audit_log')
      .select(['action', 'details'])
      .where('action', 'like', 'webhook.%')
      .orderBy('id')
      .execute();
    expect(audit.map((a) => a.action)).toEqual(['webhook.added', 'webhook.disabled', 'webhook.enabled']);
    expect(JSON.stringify(audit)).not.toContain(added.secret);
  });
});
