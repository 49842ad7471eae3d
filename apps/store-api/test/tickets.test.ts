// Tickets over real HTTP against real PostgreSQL (issue 29): issued with the order, delivered at the event's time,
// rotating codes bound to a device, the door (20 concurrent scans at 5 gates: one ADMIT; a screenshot 60 s later:
// EXPIRED_CODE), an offline gate's upload with its double entries, transfer, and the face-value exchange through
// the waitlist. The clock is injected: nothing here waits on the wall clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { TEST_CARDS } from '@onsale/shared/checkout';
import { cancelOrder } from '@onsale/shared/checkout';
import { reconcileInventory } from '@onsale/shared/jobs';
import { reviewEvent } from '@onsale/shared/abuse';
import { checkTicketCode, publicKeyOf, TicketService } from '@onsale/shared/tickets';
import { relayFanouts, runFanout } from '@onsale/shared/waitlist';
import { admitted, bearer, cardNumberOf, checkInvariants, login, makeEvent, setupApp, type TestApp } from './helper.js';

let h: TestApp;
let base: string;
let offsetMs = 0;
const clock = () => Date.now() + offsetMs;
let service: TicketService;

beforeAll(async () => {
  h = await setupApp({ clock, poolMax: 16 });
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(h.app.server.address() as { port: number }).port}`;
  service = new TicketService({ db: h.t.db, now: clock });
});
afterAll(() => h.close());

async function call(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const r = await fetch(base + path, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
}

let cards = 0;
/** A fan buys `quantity` seats of section `section` (held and paid for as the fans' page does); returns the order. */
async function buy(fan: string, eventId: string, quantity: number, section = 'A') {
  const headers = await admitted(fan, eventId);
  const held = await call('POST', `/events/${eventId}/holds`, headers, { section, quantity });
  expect(held.status, JSON.stringify(held.body)).toBe(201);
  const paid = await call(
    'POST',
    `/holds/${held.body.holdId}/checkout`,
    { ...headers, 'idempotency-key': `pay-${held.body.holdId}` },
    { payment: { instrument: { type: 'card', number: cardNumberOf(++cards) } } },
  );
  expect(paid.status, JSON.stringify(paid.body)).toBe(200);
  return paid.body as { orderId: string; amountCents: number };
}

const device = (name: string) => ({ 'x-device-id': `device-${name}-0001` });
const myTickets = async (fan: string) => (await call('GET', '/me/tickets', bearer(fan))).body.tickets as Record<string, any>[];
const codeOf = (fan: string, ticketId: string, dev: string) => call('GET', `/tickets/${ticketId}/code`, { ...bearer(fan), ...device(dev) });

describe('issue and delivery', () => {
  it('a confirmed order issues one ticket per seat; before delivery it says when it arrives and has no code; after, a code bound to the device', async () => {
    const { eventId } = await makeEvent(h.t, { tickets: { deliveryAt: new Date(Date.now() + 86_400_000).toISOString() } });
    const fan = await login(h.app, 'tk-deliver');
    const order = await buy(fan, eventId, 2);
    const mine = await myTickets(fan);
    expect(mine).toHaveLength(2);
    expect(mine.map((t) => [t.orderId, t.status, t.eventId])).toEqual([
      [order.orderId, 'PENDING_DELIVERY', eventId],
      [order.orderId, 'PENDING_DELIVERY', eventId],
    ]);
    expect(new Set(mine.map((t) => `${t.seat.section}${t.seat.row}${t.seat.number}`)).size).toBe(2);
    const early = await codeOf(fan, mine[0]!.ticketId, 'phone');
    expect([early.status, early.body.error, early.body.deliverAt]).toEqual([409, 'TICKET_NOT_DELIVERED', mine[0]!.deliverAt]);

    offsetMs += 2 * 86_400_000; // past the delivery time
    try {
      expect((await myTickets(fan)).map((t) => t.status)).toEqual(['ACTIVE', 'ACTIVE']);
      const code = await codeOf(fan, mine[0]!.ticketId, 'phone');
      expect(code.status).toBe(200);
      expect(code.body.code).toMatch(/^[A-Za-z0-9_-]{116}$/);
      expect(Date.parse(code.body.validUntil) - Date.parse(code.body.validFrom)).toBe(30_000);
      // Bound to the first device: another device is refused until the fan moves it.
      const other = await codeOf(fan, mine[0]!.ticketId, 'tablet');
      expect([other.status, other.body.error, other.body.deviceMovesLeft]).toEqual([403, 'TICKET_OTHER_DEVICE', 3]);
      // Someone else's ticket is not found; a malformed device id is refused.
      const stranger = await login(h.app, 'tk-stranger');
      expect((await codeOf(stranger, mine[0]!.ticketId, 'phone')).body.error).toBe('TICKET_NOT_FOUND');
      const bad = await call('GET', `/tickets/${mine[0]!.ticketId}/code`, { ...bearer(fan), 'x-device-id': 'x' });
      expect(bad.status).toBe(400);
    } finally {
      offsetMs -= 2 * 86_400_000;
    }
  });

  it('a move to a new device stops the old codes (REVOKED at the door), at most 3 moves', async () => {
    const { eventId } = await makeEvent(h.t);
    const fan = await login(h.app, 'tk-mover');
    await buy(fan, eventId, 1);
    const [t] = await myTickets(fan);
    const old = (await codeOf(fan, t!.ticketId, 'm0')).body.code as string;
    for (let i = 1; i <= 3; i++) {
      const moved = await call('POST', `/tickets/${t!.ticketId}/device`, { ...bearer(fan), ...device(`m${i}`) });
      expect([moved.status, moved.body.deviceMovesLeft]).toEqual([200, 3 - i]);
    }
    const fourth = await call('POST', `/tickets/${t!.ticketId}/device`, { ...bearer(fan), ...device('m4') });
    expect([fourth.status, fourth.body.error]).toEqual([409, 'DEVICE_MOVES_EXHAUSTED']);
    expect((await codeOf(fan, t!.ticketId, 'm0')).body.error).toBe('TICKET_OTHER_DEVICE');
    const scanner = await service.createScanner(eventId, { createdBy: 'test' });
    const scan = await call('POST', '/scan', bearer(scanner.token), { code: old });
    expect(scan.body.result).toBe('REVOKED');
    const now = (await codeOf(fan, t!.ticketId, 'm3')).body.code as string;
    expect((await call('POST', '/scan', bearer(scanner.token), { code: now })).body.result).toBe('ADMIT');
    const audit = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM audit_log WHERE action = 'ticket.device_moved' AND event_id = ${eventId}`.execute(h.t.db);
    expect(audit.rows[0]!.n).toBe(3);
  });
});

describe('the door', () => {
  it('20 concurrent scans of one code at 5 gates admit it once; a screenshot 60 s later is EXPIRED_CODE; forged, foreign and unauthenticated scans are refused', async () => {
    const { eventId } = await makeEvent(h.t);
    const { eventId: otherEvent } = await makeEvent(h.t, { name: 'Other Night' });
    const fan = await login(h.app, 'tk-door');
    await buy(fan, eventId, 2);
    await buy(fan, otherEvent, 1);
    const [a, b] = await myTickets(fan).then((ts) => ts.filter((t) => t.eventId === eventId));
    const foreign = (await myTickets(fan)).find((t) => t.eventId === otherEvent)!;
    const scanner = await service.createScanner(eventId, { name: 'north', createdBy: 'test' });

    const code = (await codeOf(fan, a!.ticketId, 'door')).body.code as string;
    const scans = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call('POST', '/scan', bearer(scanner.token), { code, gate: `gate-${i % 5}` })),
    );
    expect(scans.map((s) => s.status).every((s) => s === 200)).toBe(true);
    const results = scans.map((s) => s.body.result as string);
    expect(results.filter((r) => r === 'ADMIT')).toHaveLength(1);
    expect(results.filter((r) => r === 'ALREADY_ADMITTED')).toHaveLength(19);
    const first = scans.find((s) => s.body.result === 'ADMIT')!.body;
    expect(first).toMatchObject({ ticket: { ticketId: a!.ticketId, status: 'ADMITTED' }, seat: a!.seat });
    expect(scans.find((s) => s.body.result === 'ALREADY_ADMITTED')!.body.firstAdmitted.gate).toMatch(/^north \/ gate-\d$/);
    const logged = await sql<{ result: string; n: number }>`
      SELECT result, count(*)::int AS n FROM ticket_scans WHERE ticket_id = ${a!.ticketId} GROUP BY result ORDER BY result`.execute(h.t.db);
    expect(logged.rows).toEqual([
      { result: 'ADMIT', n: 1 },
      { result: 'ALREADY_ADMITTED', n: 19 },
    ]);
    expect((await myTickets(fan)).find((t) => t.ticketId === a!.ticketId)!.status).toBe('ADMITTED');

    // A screenshot of b's code, shown 60 s later.
    const shot = (await codeOf(fan, b!.ticketId, 'door')).body.code as string;
    offsetMs += 60_000;
    try {
      const late = await call('POST', '/scan', bearer(scanner.token), { code: shot });
      expect(late.body).toMatchObject({ result: 'EXPIRED_CODE', ticket: { ticketId: b!.ticketId, status: 'ACTIVE' } });
      // The fan's phone shows the current one.
      const fresh = (await codeOf(fan, b!.ticketId, 'door')).body.code as string;
      expect((await call('POST', '/scan', bearer(scanner.token), { code: fresh })).body.result).toBe('ADMIT');
    } finally {
      offsetMs -= 60_000;
    }

    // Another event's ticket, a forged signature, garbage, no token.
    const foreignCode = (await codeOf(fan, foreign.ticketId, 'door')).body.code as string;
    expect((await call('POST', '/scan', bearer(scanner.token), { code: foreignCode })).body).toMatchObject({
      result: 'INVALID',
      ticket: null,
    });
    const forged = Buffer.from(code, 'base64url');
    forged[forged.length - 1] = forged[forged.length - 1]! ^ 0xff;
    expect((await call('POST', '/scan', bearer(scanner.token), { code: forged.toString('base64url') })).body.result).toBe('INVALID');
    expect((await call('POST', '/scan', bearer(scanner.token), { code: 'hello' })).body.result).toBe('INVALID');
    const noToken = await call('POST', '/scan', {}, { code });
    expect([noToken.status, noToken.body.error]).toEqual([401, 'SCANNER_TOKEN_INVALID']);
    const wrongToken = await call('POST', '/scan', bearer('sc_nope'), { code });
    expect([wrongToken.status, wrongToken.body.error]).toEqual([401, 'SCANNER_TOKEN_INVALID']);
    expect((await call('POST', '/scan', bearer(scanner.token), {})).status).toBe(400);
  });

  it('an offline gate verifies with the manifest, and its upload reports double entries (also against an online gate) and counts a repeat once', async () => {
    const { eventId } = await makeEvent(h.t);
    const fan = await login(h.app, 'tk-offline');
    await buy(fan, eventId, 2);
    const [x, y] = await myTickets(fan);
    const online = await service.createScanner(eventId, { name: 'online', createdBy: 'test' });
    const gate = await service.createScanner(eventId, { name: 'gate-7', createdBy: 'test' });
    const manifest = await call('GET', '/scan/manifest', bearer(gate.token));
    expect(manifest.status).toBe(200);
    expect(manifest.body.tickets.map((t: { ticketId: string }) => t.ticketId).sort()).toEqual([x!.ticketId, y!.ticketId].sort());

    // The connection drops: the gate checks codes itself with the manifest's key.
    const key = publicKeyOf(manifest.body.publicKey);
    const cx = (await codeOf(fan, x!.ticketId, 'off')).body.code as string;
    const cy = (await codeOf(fan, y!.ticketId, 'off')).body.code as string;
    const at = clock();
    expect(checkTicketCode(key, cx, at)).toMatchObject({ ok: true, ticketId: x!.ticketId });
    // Meanwhile y is admitted at an online gate.
    expect((await call('POST', '/scan', bearer(online.token), { code: cy })).body.result).toBe('ADMIT');

    const scans = [
      { scanId: 's1', code: cx, scannedAt: new Date(at).toISOString() },
      { scanId: 's2', code: cx, scannedAt: new Date(at + 2_000).toISOString() }, // passed back through the fence
      { scanId: 's3', code: cy, scannedAt: new Date(at + 3_000).toISOString() },
    ];
    const up = await call('POST', '/scan/uploads', bearer(gate.token), { gate: 'east', scans });
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ accepted: 3, repeated: 0 });
    expect(
      up.body.results.map((r: { scanId: string; result: string; doubleEntry: boolean }) => [r.scanId, r.result, r.doubleEntry]),
    ).toEqual([
      ['s1', 'ADMIT', false],
      ['s2', 'ALREADY_ADMITTED', true],
      ['s3', 'ALREADY_ADMITTED', true],
    ]);
    expect(up.body.results[2].firstAdmitted.gate).toBe('online / main');
    const again = await call('POST', '/scan/uploads', bearer(gate.token), { gate: 'east', scans });
    expect(again.body).toMatchObject({ accepted: 0, repeated: 3, results: [] });
    const logged = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ticket_scans WHERE scanner_id = ${gate.id} AND offline`.execute(
      h.t.db,
    );
    expect(logged.rows[0]!.n).toBe(3);
  });
});

describe('transfer', () => {
  it('passes a ticket to a friend: their page shows it, the sender’s code stops, the chain is audited; limits and bad input change nothing', async () => {
    const { eventId } = await makeEvent(h.t, { tickets: { transferLimit: 1 } });
    const fan = await login(h.app, 'tk-sender');
    const friend = await login(h.app, 'tk-friend');
    const third = await login(h.app, 'tk-third');
    await buy(fan, eventId, 2);
    const [t, u] = await myTickets(fan);
    const oldCode = (await codeOf(fan, t!.ticketId, 'snd')).body.code as string;

    const refusals: [unknown, number, string, string][] = [
      [{ toAccountId: 'tk-sender' }, 400, 'TRANSFER_TO_SELF', 'toAccountId'],
      [{ toAccountId: 'nobody-here' }, 404, 'TRANSFER_RECIPIENT_NOT_FOUND', 'toAccountId'],
      [{}, 400, 'VALIDATION_FAILED', ''],
    ];
    for (const [body, status, code, field] of refusals) {
      const r = await call('POST', `/tickets/${t!.ticketId}/transfer`, bearer(fan), body);
      expect([r.status, r.body.error], JSON.stringify(body)).toEqual([status, code]);
      if (field) expect(r.body.field).toBe(field);
    }
    expect((await call('POST', `/tickets/${t!.ticketId}/transfer`, bearer(friend), { toAccountId: 'tk-third' })).body.error).toBe(
      'TICKET_NOT_FOUND',
    );

    // Twice at once, to two accounts: one wins.
    const both = await Promise.all([
      call('POST', `/tickets/${t!.ticketId}/transfer`, bearer(fan), { toAccountId: 'tk-friend' }),
      call('POST', `/tickets/${t!.ticketId}/transfer`, bearer(fan), { toAccountId: 'tk-third' }),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
    const won = both.find((r) => r.status === 200)!.body;
    const receiver = won.ticket.ticketId && (await myTickets(friend)).length === 1 ? friend : third;
    const received = await myTickets(receiver);
    expect(received).toEqual([
      expect.objectContaining({ ticketId: won.ticket.ticketId, status: 'ACTIVE', seat: t!.seat, transfersLeft: 0 }),
    ]);
    const live = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM tickets WHERE slot = ${`seat:${(await h.t.db.selectFrom('tickets').select('seat_id').where('id', '=', t!.ticketId).executeTakeFirstOrThrow()).seat_id}`}
        AND status IN ('ACTIVE', 'LISTED', 'ADMITTED')`.execute(h.t.db);
    expect(live.rows[0]!.n).toBe(1);

    // The sender's ticket is TRANSFERRED: no code, and the old one reads REVOKED at the door.
    expect((await myTickets(fan)).find((x) => x.ticketId === t!.ticketId)!.status).toBe('TRANSFERRED');
    expect((await codeOf(fan, t!.ticketId, 'snd')).body.error).toBe('TICKET_NOT_ACTIVE');
    const scanner = await service.createScanner(eventId, { createdBy: 'test' });
    expect((await call('POST', '/scan', bearer(scanner.token), { code: oldCode })).body.result).toBe('REVOKED');
    // The receiver's own code admits.
    const theirs = (await codeOf(receiver, won.ticket.ticketId, 'rcv')).body.code as string;
    expect((await call('POST', '/scan', bearer(scanner.token), { code: theirs })).body.result).toBe('ADMIT');

    // The event allows one transfer a seat: the received ticket cannot go on.
    const onward = await call('POST', `/tickets/${u!.ticketId}/transfer`, bearer(fan), { toAccountId: 'tk-friend' });
    expect(onward.status).toBe(200);
    const further = await call('POST', `/tickets/${onward.body.ticket.ticketId}/transfer`, bearer(friend), { toAccountId: 'tk-sender' });
    expect([further.status, further.body.error]).toEqual([409, 'TRANSFER_LIMIT_REACHED']);

    const chain = await sql<{ details: { fromTicketId: string; ticketId: string; from: string; to: string } }>`
      SELECT details FROM audit_log WHERE action = 'ticket.transferred' AND event_id = ${eventId} ORDER BY id`.execute(h.t.db);
    expect(chain.rows.map((r) => [r.details.fromTicketId, r.details.from])).toEqual([
      [t!.ticketId, 'tk-sender'],
      [u!.ticketId, 'tk-sender'],
    ]);
  });

  it('refuses a transfer after the show starts, and above the receiver’s seat limit', async () => {
    const { eventId } = await makeEvent(h.t, { limits: { perAccountSeats: 2, perInstrumentSeats: 4 } });
    const fan = await login(h.app, 'tk-late');
    const full = await login(h.app, 'tk-full');
    await buy(fan, eventId, 1);
    await buy(full, eventId, 2);
    const [t] = await myTickets(fan);
    const over = await call('POST', `/tickets/${t!.ticketId}/transfer`, bearer(fan), { toAccountId: 'tk-full' });
    expect([over.status, over.body.error, over.body.limit]).toEqual([409, 'ACCOUNT_LIMIT_EXCEEDED', 2]);
    offsetMs += 40 * 86_400_000;
    try {
      const late = await call('POST', `/tickets/${t!.ticketId}/transfer`, bearer(fan), { toAccountId: 'tk-friend' });
      expect([late.status, late.body.error]).toEqual([410, 'EVENT_STARTED']);
      const resale = await call('POST', `/tickets/${t!.ticketId}/resale`, bearer(fan), { priceCents: 100 });
      expect([resale.status, resale.body.error]).toEqual([410, 'EVENT_STARTED']);
    } finally {
      offsetMs -= 40 * 86_400_000;
    }
    expect((await myTickets(fan))[0]!.status).toBe('ACTIVE');
  });
});

describe('the face-value exchange', () => {
  it('refuses a price above the cap (naming it) and changes nothing; sells to the first matching waitlist fan, revoking the seller’s codes, with the payout recorded once', async () => {
    const { eventId, listingId } = await makeEvent(h.t, {
      tickets: { resaleFeeCapPercent: 10 },
      sections: [
        { code: 'A', priceLevel: 'P1', qualityRank: 1, rowCount: 1, seatsPerRow: 4 },
        { code: 'C', priceLevel: 'P2', qualityRank: 3, rowCount: 1, seatsPerRow: 4 },
      ],
    });
    const seller = await login(h.app, 'tk-seller');
    await buy(seller, eventId, 2);
    const [t, keep] = await myTickets(seller);
    expect(t!.faceValueCents).toBe(12_000);
    const oldCode = (await codeOf(seller, t!.ticketId, 'sell')).body.code as string;

    const above = await call('POST', `/tickets/${t!.ticketId}/resale`, bearer(seller), { priceCents: 13_201 });
    expect([above.status, above.body.error, above.body.field, above.body.capCents]).toEqual([
      400,
      'RESALE_PRICE_ABOVE_CAP',
      'priceCents',
      13_200,
    ]);
    expect(above.body.message).toContain('$132.00');
    const seat = await sql<{
      status: string;
    }>`SELECT s.status FROM seats s JOIN tickets t ON t.seat_id = s.id AND t.event_id = s.event_id WHERE t.id = ${t!.ticketId}`.execute(
      h.t.db,
    );
    expect(seat.rows[0]!.status).toBe('SOLD');
    expect((await myTickets(seller))[0]!.status).toBe('ACTIVE');

    // The waitlist: a fan who wants only section C joined first, then two who take any seat.
    const cOnly = await login(h.app, 'tk-wl-c');
    const first = await login(h.app, 'tk-wl-first');
    const second = await login(h.app, 'tk-wl-second');
    expect(
      (await call('PUT', `/listings/${listingId}/waitlist`, bearer(cOnly), { criteria: { quantity: 1, sections: ['C'] } })).status,
    ).toBe(201);
    expect((await call('PUT', `/listings/${listingId}/waitlist`, bearer(first), { criteria: { quantity: 1 } })).status).toBe(201);
    expect((await call('PUT', `/listings/${listingId}/waitlist`, bearer(second), { criteria: { quantity: 1 } })).status).toBe(201);

    const listed = await call('POST', `/tickets/${t!.ticketId}/resale`, bearer(seller), { priceCents: 13_200 });
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ status: 'LISTED', resale: { priceCents: 13_200, capCents: 13_200, stage: 'WAITLIST' } });
    expect((await codeOf(seller, t!.ticketId, 'sell')).body.error).toBe('TICKET_LISTED');
    const twice = await call('POST', `/tickets/${t!.ticketId}/resale`, bearer(seller), { priceCents: 12_000 });
    expect([twice.status, twice.body.error]).toEqual([409, 'TICKET_LISTED']);

    await relayFanouts(h.t.db);
    const av = await h.t.db
      .selectFrom('availability_events')
      .select('id')
      .where('event_id', '=', eventId)
      .where('cause', '=', 'RESALE')
      .executeTakeFirstOrThrow();
    await runFanout({ db: h.t.db }, Number(av.id));
    const inboxOf = async (fan: string) =>
      (await call('GET', '/me/notifications', bearer(fan))).body.notifications as Record<string, any>[];
    expect(await inboxOf(cOnly)).toEqual([]);
    expect(await inboxOf(second)).toEqual([]);
    const [offer] = await inboxOf(first);
    expect(offer).toMatchObject({ kind: 'OFFER', claim: { status: 'OPEN', quantity: 1 } });
    expect((await myTickets(seller)).find((x) => x.ticketId === t!.ticketId)!.resale.stage).toBe('WAITLIST');

    const claimHeaders = { ...bearer(first), 'x-device-id': 'device-tk-wl-first' };
    const claimed = await call('POST', '/waitlist/claims', claimHeaders, { claimToken: offer!.claim.claimToken });
    expect([claimed.status, claimed.body.amountCents]).toEqual([201, 13_200]);
    // While the buyer pays, the seller cannot withdraw.
    const busy = await call('DELETE', `/tickets/${t!.ticketId}/resale`, bearer(seller));
    expect([busy.status, busy.body.error]).toEqual([409, 'RESALE_IN_PROGRESS']);
    const payHeaders = { ...claimHeaders, 'x-admission-token': claimed.body.admissionToken, 'idempotency-key': 'resale-pay-1' };
    const body = { payment: { instrument: { type: 'card', number: TEST_CARDS.success } } };
    const paid = await Promise.all([
      call('POST', `/holds/${claimed.body.holdId}/checkout`, payHeaders, body),
      call('POST', `/holds/${claimed.body.holdId}/checkout`, payHeaders, body),
    ]);
    expect(paid.map((p) => p.status)).toEqual([200, 200]);
    expect(paid.map((p) => p.body.amountCents)).toEqual([13_200, 13_200]);
    expect(new Set(paid.map((p) => p.body.orderId)).size).toBe(1);

    // The buyer holds a new ticket for the seat; the seller's is RESOLD and its old code reads REVOKED.
    const bought = await myTickets(first);
    expect(bought).toEqual([
      expect.objectContaining({ status: 'ACTIVE', seat: t!.seat, orderId: paid[0].body.orderId, faceValueCents: 12_000 }),
    ]);
    expect(bought[0]!.ticketId).not.toBe(t!.ticketId);
    expect((await myTickets(seller)).map((x) => [x.ticketId, x.status])).toEqual([
      [t!.ticketId, 'RESOLD'],
      [keep!.ticketId, 'ACTIVE'],
    ]);
    const scanner = await service.createScanner(eventId, { createdBy: 'test' });
    expect((await call('POST', '/scan', bearer(scanner.token), { code: oldCode })).body.result).toBe('REVOKED');
    const buyerCode = (await codeOf(first, bought[0]!.ticketId, 'buy')).body.code as string;
    expect((await call('POST', '/scan', bearer(scanner.token), { code: buyerCode })).body.result).toBe('ADMIT');

    const payouts = await sql<{ account_id: string; amount_cents: number; currency: string }>`
      SELECT p.account_id, p.amount_cents, p.currency FROM ticket_payouts p JOIN ticket_resales r ON r.id = p.resale_id WHERE r.ticket_id = ${t!.ticketId}`.execute(
      h.t.db,
    );
    expect(payouts.rows).toEqual([{ account_id: 'tk-seller', amount_cents: 13_200, currency: 'USD' }]);
    const parent = await h.t.db
      .selectFrom('tickets')
      .select('parent_ticket_id')
      .where('id', '=', bought[0]!.ticketId)
      .executeTakeFirstOrThrow();
    expect(parent.parent_ticket_id).toBe(t!.ticketId);
    // The inventory still adds up: every sold seat is one confirmed order's (the resold seat the buyer's).
    const [r] = (await reconcileInventory(h.t.db)).filter((x) => x.eventId === eventId);
    expect([r!.drift, r!.orderDrift]).toEqual([0, 0]);
    const inv = await checkInvariants(h.t, eventId, 8);
    expect(inv.soldseats).toBe(2);
  });

  it('a listing is withdrawn back to a usable ticket; with resale off a listing is refused', async () => {
    const { eventId } = await makeEvent(h.t);
    const fan = await login(h.app, 'tk-withdraw');
    await buy(fan, eventId, 1);
    const [t] = await myTickets(fan);
    expect((await call('POST', `/tickets/${t!.ticketId}/resale`, bearer(fan), { priceCents: 12_000 })).status).toBe(200);
    const w = await call('DELETE', `/tickets/${t!.ticketId}/resale`, bearer(fan));
    expect([w.status, w.body.status, w.body.resale]).toEqual([200, 'ACTIVE', null]);
    const seat = await sql<{ status: string; mine: boolean }>`
      SELECT s.status, s.hold_id = o.hold_id AS mine FROM tickets t JOIN seats s ON s.id = t.seat_id AND s.event_id = t.event_id
      JOIN orders o ON o.id = t.order_id WHERE t.id = ${t!.ticketId}`.execute(h.t.db);
    expect(seat.rows[0]).toEqual({ status: 'SOLD', mine: true });
    expect((await codeOf(fan, t!.ticketId, 'w')).status).toBe(200);
    expect((await call('DELETE', `/tickets/${t!.ticketId}/resale`, bearer(fan))).body.error).toBe('RESALE_NOT_LISTED');

    const { eventId: off } = await makeEvent(h.t, { tickets: { resale: false } });
    await buy(fan, off, 1);
    const offTicket = (await myTickets(fan)).find((x) => x.eventId === off)!;
    expect(offTicket.can.resell).toBe(false);
    const refused = await call('POST', `/tickets/${offTicket.ticketId}/resale`, bearer(fan), { priceCents: 100 });
    expect([refused.status, refused.body.error]).toEqual([403, 'RESALE_DISABLED']);
  });
});

describe('general admission', () => {
  it('issues one ticket per unit, passed on by transfer, not resale', async () => {
    const { eventId } = await makeEvent(h.t, {
      sections: [{ kind: 'GA', code: 'FLOOR', name: 'Floor', priceLevel: 'P2', capacity: 20, shards: 2 }],
    });
    const fan = await login(h.app, 'tk-ga');
    await buy(fan, eventId, 2, 'FLOOR');
    const mine = await myTickets(fan);
    expect(mine.map((t) => [t.seat, t.faceValueCents, t.can.resell])).toEqual([
      [{ section: 'FLOOR', row: null, number: null }, 6_000, false],
      [{ section: 'FLOOR', row: null, number: null }, 6_000, false],
    ]);
    const resale = await call('POST', `/tickets/${mine[0]!.ticketId}/resale`, bearer(fan), { priceCents: 6_000 });
    expect([resale.status, resale.body.error]).toEqual([409, 'RESALE_NOT_SUPPORTED']);
    expect((await codeOf(fan, mine[1]!.ticketId, 'ga')).status).toBe(200);
  });
});

describe('the post-sale review', () => {
  it("counts the transfers and listings of a cluster's accounts, so a reseller's accounts show up", async () => {
    const { eventId } = await makeEvent(h.t);
    const a = await login(h.app, 'resell-001');
    const b = await login(h.app, 'resell-002');
    await login(h.app, 'tk-end-buyer'); // the receiver has signed in here
    await buy(a, eventId, 2);
    await buy(b, eventId, 1);
    const [a1, a2] = await myTickets(a);
    const [b1] = await myTickets(b);
    expect((await call('POST', `/tickets/${a1!.ticketId}/transfer`, bearer(a), { toAccountId: 'tk-end-buyer' })).status).toBe(200);
    expect((await call('POST', `/tickets/${a2!.ticketId}/resale`, bearer(a), { priceCents: 12_000 })).status).toBe(200);
    expect((await call('POST', `/tickets/${b1!.ticketId}/resale`, bearer(b), { priceCents: 13_000 })).status).toBe(200);
    const review = await reviewEvent(h.t.db, eventId);
    expect(review.clusters.map((c) => [c.accounts, c.signals, c.transfers, c.listings])).toEqual([
      [['resell-001', 'resell-002'], ['ACCOUNT_SEQUENCE'], 1, 2],
    ]);
  });
});

describe('cancelled orders', () => {
  it('an operator’s cancellation revokes the order’s tickets (their codes read REVOKED)', async () => {
    const { eventId } = await makeEvent(h.t);
    const fan = await login(h.app, 'tk-cancel');
    const order = await buy(fan, eventId, 1);
    const [t] = await myTickets(fan);
    const code = (await codeOf(fan, t!.ticketId, 'c')).body.code as string;
    await cancelOrder(h.t.db, order.orderId, { actor: 'op@example.com', reason: 'chargeback' });
    expect((await myTickets(fan))[0]!.status).toBe('REVOKED');
    const scanner = await service.createScanner(eventId, { createdBy: 'test' });
    expect((await call('POST', '/scan', bearer(scanner.token), { code })).body.result).toBe('REVOKED');
  });
});
