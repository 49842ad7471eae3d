import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TRPCError } from '@trpc/server';
import { DomainError } from '@onsale/shared';
import { sql } from '@onsale/shared/db';
import { createTestDatabase, type TestDatabase } from '@onsale/shared/testing';
import type { EventFile } from '@onsale/shared/sale-setup/schema';
import { signTicketCode, stepOf, TicketService } from '@onsale/shared/tickets';
import type { ConsoleUser } from '@onsale/shared/users';
import { callerAs, seedUser, smallEventFile } from './fixtures.js';

// The tickets procedures the console uses, through createCaller against real PostgreSQL: the event's ticket settings
// saved and validated by the event config router, counts, fan support (find by order, reissue), the scanner page
// (a token for a signed-in scanner, scans with it) and the refusals by role.

let tdb: TestDatabase;
let admin: ConsoleUser;
let operator: ConsoleUser;
let viewer: ConsoleUser;
let scanner: ConsoleUser;
let promoter: ConsoleUser;

async function refusal(p: Promise<unknown>): Promise<{ code: string; domainCode: string | undefined; field: unknown }> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(TRPCError);
    const cause = (err as TRPCError).cause;
    const domain = cause instanceof DomainError ? cause : undefined;
    return { code: (err as TRPCError).code, domainCode: domain?.code, field: domain?.details.field };
  }
  throw new Error('expected the call to be refused');
}

function futureFile(name: string, over: Partial<EventFile> = {}): EventFile {
  // Open now: an on-sale within the last 5 minutes is accepted as "open the sale now" (an older one is refused).
  const onsale = new Date(Date.now() - 1000);
  return {
    ...smallEventFile(name),
    onsaleAt: onsale.toISOString(),
    startsAt: new Date(onsale.getTime() + 30 * 86_400_000).toISOString(),
    ...over,
  };
}

/** A confirmed order of `seats` seats in section A for `accountId`, with its tickets (as the checkout writes them). */
async function order(eventId: string, accountId: string, seats: number): Promise<string> {
  const { issueTicketsForOrder } = await import('@onsale/shared/tickets');
  return tdb.db.transaction().execute(async (trx) => {
    await sql`INSERT INTO accounts (id) VALUES (${accountId}) ON CONFLICT DO NOTHING`.execute(trx);
    const hold = await sql<{ id: string }>`
      INSERT INTO holds (event_id, account_id, quantity, status, expires_at) VALUES (${eventId}, ${accountId}, ${seats}, 'PURCHASED', now())
      RETURNING id`.execute(trx);
    const holdId = hold.rows[0]!.id;
    await sql`UPDATE seats SET status = 'SOLD', hold_id = ${holdId} WHERE event_id = ${eventId} AND id IN (
                SELECT id FROM seats WHERE event_id = ${eventId} AND section_code = 'A' AND status = 'AVAILABLE' ORDER BY id LIMIT ${seats})`.execute(
      trx,
    );
    const o = await sql<{ id: string }>`
      INSERT INTO orders (hold_id, event_id, account_id, idempotency_key, seat_count, amount_cents, instrument_fingerprint, payment_reference)
      VALUES (${holdId}, ${eventId}, ${accountId}, ${`k-${holdId}`}, ${seats}, ${seats * 12_000}, 'fp', ${`pay_${holdId.slice(0, 8)}`}) RETURNING id`.execute(
      trx,
    );
    await issueTicketsForOrder(trx, { orderId: o.rows[0]!.id, holdId, eventId, accountId, quantity: seats });
    return o.rows[0]!.id;
  });
}

beforeAll(async () => {
  tdb = await createTestDatabase(inject('templateDatabaseUrl'));
  [admin, operator, viewer, scanner, promoter] = await Promise.all([
    seedUser(tdb.db, 'admin@tickets.test', 'admin'),
    seedUser(tdb.db, 'operator@tickets.test', 'operator'),
    seedUser(tdb.db, 'viewer@tickets.test', 'viewer'),
    seedUser(tdb.db, 'door@tickets.test', 'scanner'),
    seedUser(tdb.db, 'promoter@acme.test', 'promoter', 'Acme Live'),
  ]);
});
afterAll(() => tdb?.drop());

describe('the event’s ticket settings', () => {
  it('are saved with the event and changed by an edit (diffed and audited); bad values are refused with their field', async () => {
    const deliveryAt = new Date(Date.now() + 20 * 86_400_000).toISOString();
    const { eventId } = await callerAs(tdb.db, promoter).eventConfig.create({
      event: futureFile('Tickets Night', { tickets: { deliveryAt, transferLimit: 2, resale: true, resaleFeeCapPercent: 5 } }),
    });
    const config = await callerAs(tdb.db, promoter).eventConfig.get({ id: eventId });
    expect(config.file.tickets).toEqual({
      deliveryAt: new Date(deliveryAt).toISOString(),
      transferLimit: 2,
      resale: true,
      resaleFeeCapPercent: 5,
    });

    const edit = await callerAs(tdb.db, promoter).eventConfig.update({
      eventId,
      expectedVersion: config.version,
      event: { ...config.file, tickets: { deliveryHoursBeforeShow: 48, transferLimit: 0, resale: false, resaleFeeCapPercent: 5 } },
    });
    expect(edit.changes.map((c: { setting: string }) => c.setting)).toEqual([
      'tickets.deliveryAt',
      'tickets.deliveryHoursBeforeShow',
      'tickets.transferLimit',
      'tickets.resale',
    ]);
    const row = await tdb.db
      .selectFrom('events')
      .select(['ticket_delivery_at', 'ticket_delivery_hours_before', 'ticket_transfer_limit', 'resale_enabled'])
      .where('id', '=', eventId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ ticket_delivery_at: null, ticket_delivery_hours_before: 48, ticket_transfer_limit: 0, resale_enabled: false });

    const now = await callerAs(tdb.db, promoter).eventConfig.get({ id: eventId });
    const bad: [Record<string, unknown>, string][] = [
      [{ deliveryAt, deliveryHoursBeforeShow: 3 }, 'tickets.deliveryHoursBeforeShow'],
      [{ deliveryAt: new Date(Date.now() + 90 * 86_400_000).toISOString() }, 'tickets.deliveryAt'],
      [{ transferLimit: 11 }, 'tickets.transferLimit'],
      [{ resaleFeeCapPercent: -1 }, 'tickets.resaleFeeCapPercent'],
      [{ resaleFeeCapPercent: 2.5 }, 'tickets.resaleFeeCapPercent'],
      [{ deliveryHoursBeforeShow: 0 }, 'tickets.deliveryHoursBeforeShow'],
    ];
    for (const [tickets, field] of bad) {
      const r = await refusal(
        callerAs(tdb.db, promoter).eventConfig.update({ eventId, expectedVersion: now.version, event: { ...now.file, tickets } }),
      );
      expect(r, JSON.stringify(tickets)).toMatchObject({ code: 'BAD_REQUEST', field });
    }
    expect((await callerAs(tdb.db, promoter).eventConfig.get({ id: eventId })).version).toBe(now.version);
  });
});

describe('counts, fan support and the scanner page', () => {
  it('counts an event’s tickets; support finds an order’s tickets and reissues one; a scanner makes a token and scans with it', async () => {
    const { eventId } = await callerAs(tdb.db, admin).eventConfig.create({ event: futureFile('Door Night') });
    const orderId = await order(eventId, 'fan-bff', 2);
    const service = new TicketService({ db: tdb.db });
    const [t] = await service.mine('fan-bff');

    expect(await callerAs(tdb.db, viewer).tickets.counts({ eventId })).toMatchObject({ issued: 2, delivered: 2, scanned: 0 });
    expect(await refusal(callerAs(tdb.db, promoter).tickets.counts({ eventId }))).toMatchObject({
      code: 'FORBIDDEN',
      domainCode: 'EVENT_FORBIDDEN',
    });

    const found = await callerAs(tdb.db, operator).tickets.byOrder({ reference: orderId });
    expect(found).toHaveLength(2);
    expect(found[0]).toMatchObject({ orderId, holderAccountId: 'fan-bff', status: 'ACTIVE' });
    const byPayment = await tdb.db.selectFrom('orders').select('payment_reference').where('id', '=', orderId).executeTakeFirstOrThrow();
    expect(await callerAs(tdb.db, operator).tickets.byOrder({ reference: byPayment.payment_reference })).toHaveLength(2);
    expect(await refusal(callerAs(tdb.db, operator).tickets.byOrder({ reference: 'nope' }))).toMatchObject({
      domainCode: 'ORDER_NOT_FOUND',
    });
    expect(await refusal(callerAs(tdb.db, viewer).tickets.byOrder({ reference: orderId }))).toMatchObject({ domainCode: 'ROLE_FORBIDDEN' });

    // The fan's phone binds the ticket; support reissues it (lost phone): the old generation's codes stop.
    await service.code('fan-bff', t!.ticketId, 'lost-phone-0001');
    const key = await service.keyOf(eventId);
    const oldCode = signTicketCode(key.priv, { id: t!.ticketId, generation: 0 }, stepOf(Date.now()));
    expect(await refusal(callerAs(tdb.db, operator).tickets.reissue({ ticketId: t!.ticketId, reason: ' ' }))).toMatchObject({
      domainCode: 'REASON_REQUIRED',
      field: 'reason',
    });
    const reissued = await callerAs(tdb.db, operator).tickets.reissue({ ticketId: t!.ticketId, reason: 'lost phone' });
    expect(reissued).toMatchObject({ boundToDevice: false, status: 'ACTIVE' });
    await expect(service.code('fan-bff', t!.ticketId, 'new-phone-0001')).resolves.toMatchObject({ generation: 1 });

    // The door: a scanner user makes a token in the console and scans with it.
    expect((await callerAs(tdb.db, scanner).tickets.doorEvents()).map((e) => e.id)).toContain(eventId);
    const made = await callerAs(tdb.db, scanner).tickets.createScanner({ eventId });
    expect(made).toMatchObject({ eventId, name: 'door@tickets.test (console)' });
    expect((await callerAs(tdb.db, scanner).tickets.scan({ scannerToken: made.token, code: oldCode })).result).toBe('REVOKED');
    const fresh = await service.code('fan-bff', t!.ticketId, 'new-phone-0001');
    expect(await callerAs(tdb.db, scanner).tickets.scan({ scannerToken: made.token, code: fresh.code, gate: 'A' })).toMatchObject({
      result: 'ADMIT',
      ticket: { ticketId: t!.ticketId },
    });
    const manifest = await callerAs(tdb.db, scanner).tickets.manifest({ scannerToken: made.token });
    expect(manifest.tickets).toHaveLength(2);
    expect(await refusal(callerAs(tdb.db, scanner).tickets.scan({ scannerToken: 'sc_forged', code: fresh.code }))).toMatchObject({
      code: 'UNAUTHORIZED',
      domainCode: 'SCANNER_TOKEN_INVALID',
    });
    expect(await refusal(callerAs(tdb.db, viewer).tickets.createScanner({ eventId }))).toMatchObject({ domainCode: 'ROLE_FORBIDDEN' });
    expect(await refusal(callerAs(tdb.db, scanner).tickets.counts({ eventId }))).toMatchObject({ domainCode: 'ROLE_FORBIDDEN' });
    expect(await callerAs(tdb.db, admin).tickets.counts({ eventId })).toMatchObject({ admitted: 1, scanned: 2, refusedScans: 1 });
  });
});
