import { createHash, randomBytes, type KeyObject } from 'node:crypto';
import type { Db, Trx } from '../db/connect.js';
import { DomainError, invalid, notFound } from '../errors.js';
import { insertAudit } from '../audit/index.js';
import { isUuid } from '../ids.js';
import { hashDevice, isDeviceId } from '../queue/edge.js';
import { emitAvailability } from '../waitlist/availability.js';
import { formatMoney } from '../words/money.js';
import { checkTicketCode, generateTicketKeyPair, privateKeyOf, publicKeyOf, signTicketCode, stepOf } from './codes.js';
import * as repo from './tickets.repository.js';
import type { TicketEventRow, TicketWithEvent } from './tickets.repository.js';
import {
  CODE_STEP_SECONDS,
  MAX_DEVICE_MOVES,
  type ScanAnswer,
  type TicketCounts,
  type TicketStatus,
  type TicketView,
} from './tickets.schema.js';
import type { ScanResult, TicketRow } from './tickets.table.js';

// Tickets (issue 29): issued with a confirmed order, delivered at the event's delivery time, bound to one device,
// shown as rotating signed codes, admitted once at the door, passed on by transfer or sold back at face value
// through the waitlist. The rules live here; the store API, the BFF and the CLI call this service.

/** A scanner's credential, as the door's routes know it. */
export interface Scanner {
  id: string;
  eventId: string;
  name: string;
}

export interface TicketServiceDeps {
  db: Db;
  /** The clock (ms) for delivery, codes and scans; tests inject one. */
  now?: () => number;
}

/** When an event's tickets are delivered; null: at once. */
export function deliveryTimeOf(e: Pick<TicketEventRow, 'ticket_delivery_at' | 'ticket_delivery_hours_before' | 'starts_at'>): Date | null {
  if (e.ticket_delivery_at) return e.ticket_delivery_at;
  if (e.ticket_delivery_hours_before !== null) return new Date(e.starts_at.getTime() - e.ticket_delivery_hours_before * 3_600_000);
  return null;
}

/** The most a ticket may be listed for: face value plus the event's fee cap (a percentage of it, rounded down). */
export function resaleCapOf(faceValueCents: number, feeCapPercent: number): number {
  return faceValueCents + Math.floor((faceValueCents * feeCapPercent) / 100);
}

const LIVE = new Set(['ACTIVE', 'LISTED', 'ADMITTED']);
const fanActor = (accountId: string) => `fan:${accountId}`;
const seatOf = (t: Pick<TicketRow, 'section_code' | 'row_label' | 'seat_number'>) => ({
  section: t.section_code,
  row: t.row_label,
  number: t.seat_number,
});
const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

function ticketNotFound(): DomainError {
  return notFound('TICKET_NOT_FOUND', 'you hold no such ticket', 'id');
}

export class TicketService {
  private readonly keys = new Map<string, { priv: KeyObject; pub: KeyObject; raw: string }>();
  private readonly now: () => number;
  constructor(private readonly deps: TicketServiceDeps) {
    this.now = deps.now ?? Date.now;
  }

  private get db() {
    return this.deps.db;
  }

  /** The event's signing key (made on first use, then cached: keys never change). */
  async keyOf(eventId: string) {
    const cached = this.keys.get(eventId);
    if (cached) return cached;
    const row = await repo.ensureKey(this.db, eventId, generateTicketKeyPair());
    const key = { priv: privateKeyOf(row.private_key), pub: publicKeyOf(row.public_key), raw: row.public_key };
    this.keys.set(eventId, key);
    return key;
  }

  /** How a fan reads a ticket row. */
  view(t: TicketWithEvent): TicketView {
    const deliverAt = deliveryTimeOf(t) ?? t.created_at;
    const nowMs = this.now();
    let status: TicketStatus = t.status;
    if (t.status === 'ACTIVE' && t.device_hash === null && deliverAt.getTime() > nowMs) status = 'PENDING_DELIVERY';
    const live = LIVE.has(t.status);
    const beforeShow = t.starts_at.getTime() > nowMs;
    const transfersLeft = Math.max(0, t.ticket_transfer_limit - t.transfer_count);
    return {
      ticketId: t.id,
      eventId: t.event_id,
      eventName: t.event_name,
      startsAt: t.starts_at.toISOString(),
      orderId: t.order_id,
      seat: seatOf(t),
      status,
      deliverAt: deliverAt.toISOString(),
      faceValueCents: t.face_value_cents,
      currency: t.currency,
      transfersLeft: live ? transfersLeft : 0,
      deviceMovesLeft: Math.max(0, MAX_DEVICE_MOVES - t.device_moves),
      boundToDevice: t.device_hash !== null,
      resale:
        t.resale_id !== null
          ? {
              priceCents: t.resale_price_cents!,
              capCents: t.resale_cap_cents!,
              listedAt: t.resale_created_at!.toISOString(),
              stage: t.resale_stage ?? 'PUBLIC',
            }
          : null,
      can: {
        transfer: t.status === 'ACTIVE' && beforeShow && transfersLeft > 0,
        resell: t.status === 'ACTIVE' && beforeShow && t.resale_enabled && t.seat_id !== null,
        withdraw: t.status === 'LISTED' && t.resale_stage !== 'IN_CHECKOUT',
      },
    };
  }

  /** The fan's tickets (those passed on too, with what became of them), by show and seat. */
  async mine(accountId: string): Promise<TicketView[]> {
    return (await repo.ticketsOfAccount(this.db, accountId)).map((t) => this.view(t));
  }

  private async held(accountId: string, ticketId: string): Promise<TicketWithEvent> {
    if (!isUuid(ticketId)) throw ticketNotFound();
    const t = await repo.findTicket(this.db, ticketId);
    if (!t || t.holder_account_id !== accountId) throw ticketNotFound();
    return t;
  }

  /**
   * The ticket's current code, for the device it is bound to. The first fetch after delivery binds the ticket to
   * the asking device; another device gets TICKET_OTHER_DEVICE (move it with moveToDevice). Before delivery,
   * while listed, or once passed on, admitted or revoked: a 409 with a code, and no code.
   */
  async code(accountId: string, ticketId: string, deviceId: string) {
    const deviceHash = await this.deviceHashOf(deviceId, accountId);
    const held = await this.held(accountId, ticketId);
    this.assertShowable(held);
    const deliverAt = deliveryTimeOf(held);
    let t: TicketRow = held;
    if (t.device_hash === null && deliverAt && deliverAt.getTime() > this.now())
      throw new DomainError('conflict', 'TICKET_NOT_DELIVERED', `your ticket arrives on ${deliverAt.toISOString()}`, {
        field: 'id',
        deliverAt: deliverAt.toISOString(),
      });
    if (t.device_hash === null) t = await repo.bindDevice(this.db, t.id, deviceHash);
    if (t.device_hash !== deviceHash)
      throw new DomainError('forbidden', 'TICKET_OTHER_DEVICE', 'this ticket is on another of your devices; move it to this one first', {
        field: 'x-device-id',
        deviceMovesLeft: Math.max(0, MAX_DEVICE_MOVES - t.device_moves),
      });
    const key = await this.keyOf(t.event_id);
    const step = stepOf(this.now());
    const ms = CODE_STEP_SECONDS * 1000;
    return {
      code: signTicketCode(key.priv, { id: t.id, generation: t.generation }, step),
      validFrom: new Date(step * ms).toISOString(),
      validUntil: new Date((step + 2) * ms).toISOString(),
      refreshAt: new Date((step + 1) * ms).toISOString(),
      generation: t.generation,
    };
  }

  private assertShowable(t: { status: string }) {
    if (t.status === 'LISTED')
      throw new DomainError('conflict', 'TICKET_LISTED', 'this ticket is listed for resale: withdraw it to use it', { field: 'id' });
    if (t.status !== 'ACTIVE')
      throw new DomainError('conflict', 'TICKET_NOT_ACTIVE', `this ticket is ${t.status.toLowerCase()}`, { field: 'id', status: t.status });
  }

  private async deviceHashOf(deviceId: string, accountId: string): Promise<string> {
    if (!deviceId) throw invalid('DEVICE_ID_REQUIRED', 'send X-Device-Id (the id your device keeps)', 'x-device-id');
    if (!isDeviceId(deviceId)) throw invalid('DEVICE_ID_REQUIRED', 'X-Device-Id is not a device id', 'x-device-id');
    return hashDevice(deviceId, accountId);
  }

  /**
   * Moves the ticket to the asking device (a new phone): at most MAX_DEVICE_MOVES times per ticket, a fan's own
   * action; the generation goes up so every code of the old device reads REVOKED at once. Audited.
   */
  async moveToDevice(accountId: string, ticketId: string, deviceId: string): Promise<TicketView> {
    const deviceHash = await this.deviceHashOf(deviceId, accountId);
    if (!isUuid(ticketId)) throw ticketNotFound();
    await this.db.transaction().execute(async (trx) => {
      const t = await repo.lockTicket(trx, ticketId);
      if (!t || t.holder_account_id !== accountId) throw ticketNotFound();
      this.assertShowable(t);
      if (t.device_hash === deviceHash || t.device_hash === null) {
        if (t.device_hash === null) await repo.bindDevice(trx, t.id, deviceHash);
        return;
      }
      if (t.device_moves >= MAX_DEVICE_MOVES)
        throw new DomainError(
          'limit',
          'DEVICE_MOVES_EXHAUSTED',
          `this ticket has moved devices ${MAX_DEVICE_MOVES} times; ask fan support`,
          {
            field: 'id',
            limit: MAX_DEVICE_MOVES,
          },
        );
      const moved = await repo.moveDevice(trx, t.id, deviceHash, true);
      await insertAudit(trx, {
        actor: fanActor(accountId),
        action: 'ticket.device_moved',
        eventId: t.event_id,
        details: { ticketId: t.id, generation: moved.generation, moves: moved.device_moves },
      });
    });
    return this.view((await repo.findTicket(this.db, ticketId))!);
  }

  /**
   * Transfers a ticket to another account: the sender's ticket ends TRANSFERRED (its codes stop at once) and the
   * receiver gets a new ticket for the same seat, in one transaction under the ticket's lock, within the event's
   * transfer limit (per seat) and the receiver's per-account limit. Refused, nothing changes: not the holder,
   * not ACTIVE, after the show, to oneself, to an unknown account, over a limit, or a second transfer at once.
   */
  async transfer(accountId: string, ticketId: string, toAccountId: string): Promise<{ ticket: TicketView; fromTicketId: string }> {
    if (!isUuid(ticketId)) throw ticketNotFound();
    if (toAccountId === accountId) throw invalid('TRANSFER_TO_SELF', 'you already hold this ticket', 'toAccountId');
    const newId = await this.db.transaction().execute(async (trx) => {
      const t = await repo.lockTicket(trx, ticketId);
      if (!t || t.holder_account_id !== accountId) throw ticketNotFound();
      this.assertShowable(t);
      const e = (await repo.findEvent(trx, t.event_id))!;
      this.assertBeforeShow(e);
      if (t.transfer_count >= e.ticket_transfer_limit)
        throw new DomainError(
          'limit',
          'TRANSFER_LIMIT_REACHED',
          e.ticket_transfer_limit === 0
            ? 'tickets for this event cannot be transferred'
            : `this ticket has been transferred ${t.transfer_count} of ${e.ticket_transfer_limit} times allowed`,
          { field: 'id', limit: e.ticket_transfer_limit },
        );
      if (!(await repo.accountExists(trx, toAccountId)))
        throw notFound('TRANSFER_RECIPIENT_NOT_FOUND', 'no account with that id has signed in here', 'toAccountId');
      await repo.lockAccountTickets(trx, t.event_id, toAccountId);
      const has = await repo.liveTicketsOf(trx, t.event_id, toAccountId);
      if (has + 1 > e.per_account_seat_limit)
        throw new DomainError(
          'limit',
          'ACCOUNT_LIMIT_EXCEEDED',
          `that account already holds ${has} of ${e.per_account_seat_limit} tickets for this event`,
          {
            field: 'toAccountId',
            limit: e.per_account_seat_limit,
            current: has,
          },
        );
      await repo.endTicket(trx, t.id, 'TRANSFERRED', `transferred to ${toAccountId}`);
      const ids = await repo.insertTickets(trx, [
        {
          eventId: t.event_id,
          orderId: t.order_id,
          slot: t.slot,
          seatId: t.seat_id,
          section: t.section_code,
          row: t.row_label,
          number: t.seat_number,
          faceValueCents: t.face_value_cents,
          holder: toAccountId,
          transferCount: t.transfer_count + 1,
          parent: t.id,
        },
      ]);
      const id = ids.get(t.slot)!;
      await insertAudit(trx, {
        actor: fanActor(accountId),
        action: 'ticket.transferred',
        eventId: t.event_id,
        details: { fromTicketId: t.id, ticketId: id, from: accountId, to: toAccountId, seat: seatOf(t), transfer: t.transfer_count + 1 },
      });
      return id;
    });
    return { ticket: this.view((await repo.findTicket(this.db, newId))!), fromTicketId: ticketId };
  }

  private assertBeforeShow(e: TicketEventRow) {
    if (e.starts_at.getTime() <= this.now())
      throw new DomainError('gone', 'EVENT_STARTED', 'the show has started: tickets can no longer be passed on', { field: 'id' });
  }

  /**
   * Lists a ticket on the face-value exchange at `priceCents`, at most face value plus the event's fee cap. The
   * seat goes to the listing's waitlist first (a release of its own, offered in FIFO order to matching fans, who
   * claim it and pay through the checkout); if no waitlist fan takes it, it stays on sale publicly at the same
   * price until sold or withdrawn. The ticket stays the seller's (LISTED, no code) until a buyer pays.
   */
  async listForResale(accountId: string, ticketId: string, priceCents: number): Promise<TicketView> {
    if (!isUuid(ticketId)) throw ticketNotFound();
    await this.db.transaction().execute(async (trx) => {
      const t = await repo.lockTicket(trx, ticketId);
      if (!t || t.holder_account_id !== accountId) throw ticketNotFound();
      if (t.status === 'LISTED') throw new DomainError('conflict', 'TICKET_LISTED', 'this ticket is already listed', { field: 'id' });
      this.assertShowable(t);
      const e = (await repo.findEvent(trx, t.event_id))!;
      this.assertBeforeShow(e);
      if (!e.resale_enabled)
        throw new DomainError('forbidden', 'RESALE_DISABLED', 'the promoter has not opened resale for this event', { field: 'id' });
      if (t.seat_id === null)
        throw new DomainError('conflict', 'RESALE_NOT_SUPPORTED', 'general-admission tickets are passed on by transfer, not resale', {
          field: 'id',
        });
      const cap = resaleCapOf(t.face_value_cents, e.resale_fee_cap_percent);
      if (priceCents > cap)
        throw invalid(
          'RESALE_PRICE_ABOVE_CAP',
          `the most you can ask is ${formatMoney(cap, e.currency)}: face value ${formatMoney(t.face_value_cents, e.currency)} plus the event's ${e.resale_fee_cap_percent}% fee cap`,
          'priceCents',
          { capCents: cap, faceValueCents: t.face_value_cents, feeCapPercent: e.resale_fee_cap_percent },
        );
      const order = await repo.orderHoldOf(trx, t.order_id);
      const seats = await repo.releaseSoldSeat(trx, t.event_id, t.seat_id, order.hold_id);
      if (seats.length !== 1)
        throw new DomainError('conflict', 'TICKET_NOT_ACTIVE', 'this seat is not sold to this ticket any more', { field: 'id' });
      await repo.setTicketStatus(trx, t.id, 'LISTED');
      const r = await repo.insertResale(trx, {
        ticketId: t.id,
        eventId: t.event_id,
        seatId: t.seat_id,
        seller: accountId,
        priceCents,
        faceValueCents: t.face_value_cents,
        capCents: cap,
      });
      await emitAvailability(trx, t.event_id, 'RESALE', seats, { pool: true });
      await insertAudit(trx, {
        actor: fanActor(accountId),
        action: 'ticket.listed',
        eventId: t.event_id,
        details: { ticketId: t.id, resaleId: r.id, priceCents, capCents: cap, seat: seatOf(t) },
      });
    });
    return this.view((await repo.findTicket(this.db, ticketId))!);
  }

  /** Withdraws a listing: the seat comes back to the seller's ticket (ACTIVE, codes again), unless a buyer holds it now. */
  async withdrawResale(accountId: string, ticketId: string): Promise<TicketView> {
    if (!isUuid(ticketId)) throw ticketNotFound();
    await this.db.transaction().execute(async (trx) => {
      const t = await repo.lockTicket(trx, ticketId);
      if (!t || t.holder_account_id !== accountId) throw ticketNotFound();
      if (t.status !== 'LISTED') throw new DomainError('conflict', 'RESALE_NOT_LISTED', 'this ticket is not listed', { field: 'id' });
      const order = await repo.orderHoldOf(trx, t.order_id);
      if (!(await repo.reclaimListedSeat(trx, t.event_id, t.seat_id!, order.hold_id)))
        throw new DomainError('conflict', 'RESALE_IN_PROGRESS', 'a buyer is paying for this ticket now; try again in a few minutes', {
          field: 'id',
          retryAfterSeconds: 60,
        });
      await repo.withdrawResales(trx, [t.id]);
      await repo.setTicketStatus(trx, t.id, 'ACTIVE');
      await insertAudit(trx, {
        actor: fanActor(accountId),
        action: 'ticket.resale_withdrawn',
        eventId: t.event_id,
        details: { ticketId: t.id },
      });
    });
    return this.view((await repo.findTicket(this.db, ticketId))!);
  }

  // --- the door ---

  /** Makes a scanner credential for one event; the token is shown once (only its hash is kept). Audited. */
  async createScanner(eventId: string, input: { name?: string; createdBy: string }): Promise<Scanner & { token: string }> {
    if (!isUuid(eventId) || !(await repo.findEvent(this.db, eventId))) throw notFound('EVENT_NOT_FOUND', `no event ${eventId}`, 'eventId');
    const token = `sc_${randomBytes(32).toString('base64url')}`;
    const name = input.name?.trim() || `scanner ${new Date(this.now()).toISOString()}`;
    const row = await repo.insertScanner(this.db, { eventId, name, tokenHash: hashToken(token), createdBy: input.createdBy });
    await insertAudit(this.db, { actor: input.createdBy, action: 'ticket.scanner_created', eventId, details: { scannerId: row.id, name } });
    return { id: row.id, eventId, name, token };
  }

  /** The scanner a bearer token belongs to, or SCANNER_TOKEN_INVALID. */
  async scanner(token: string | undefined): Promise<Scanner> {
    const s = token ? await repo.findScanner(this.db, hashToken(token)) : undefined;
    if (!s)
      throw new DomainError('unauthenticated', 'SCANNER_TOKEN_INVALID', 'send a scanner token (npm run onsale -- scanner:create)', {
        field: 'authorization',
      });
    return { id: s.id, eventId: s.event_id, name: s.name };
  }

  /**
   * A scan at the door: the code is checked against the event's key and the clock (its step or the one before),
   * then the ticket is admitted by one conditional update (ACTIVE with the code's generation -> ADMITTED), so a
   * ticket is admitted once whatever the number of gates scanning it at once. Every scan is logged.
   */
  async scan(scanner: Scanner, code: string, gate = 'main'): Promise<ScanAnswer> {
    const out = await this.check(scanner, code, gate, { atMs: this.now(), offline: false, clientScanId: null });
    return out ?? { result: 'INVALID', ticket: null, seat: null, firstAdmitted: null };
  }

  private async check(
    scanner: Scanner,
    code: string,
    gate: string,
    at: { atMs: number; offline: boolean; clientScanId: string | null },
  ): Promise<ScanAnswer | null> {
    const key = await this.keyOf(scanner.eventId);
    const c = checkTicketCode(key.pub, code, at.atMs);
    const scannedAt = new Date(at.atMs);
    return this.db.transaction().execute(async (trx) => {
      const log = { eventId: scanner.eventId, scannerId: scanner.id, gate, scannedAt, offline: at.offline, clientScanId: at.clientScanId };
      // The log row first: an upload sent twice finds its scans there and changes nothing.
      const scanId = await repo.insertScan(trx, {
        ...log,
        ticketId: c.ok || c.result === 'EXPIRED_CODE' ? c.ticketId : null,
        result: 'INVALID',
      });
      if (scanId === null) return null;
      const answer = async (result: ScanResult, t: TicketRow | undefined): Promise<ScanAnswer> => {
        await repo.setScanResult(trx, scanId, result, t?.id ?? null, scanner.eventId);
        return {
          result,
          ticket: t ? { ticketId: t.id, status: t.status, admittedAt: t.admitted_at?.toISOString() ?? null } : null,
          seat: t ? seatOf(t) : null,
          firstAdmitted:
            result === 'ALREADY_ADMITTED' && t?.admitted_at ? { at: t.admitted_at.toISOString(), gate: t.admitted_by ?? '' } : null,
        };
      };
      if (!c.ok && c.result === 'INVALID') return answer('INVALID', undefined);
      const known = await repo.ticketOfEvent(trx, c.ticketId, scanner.eventId);
      if (!c.ok) return answer('EXPIRED_CODE', known);
      const admitted = await repo.admit(trx, {
        ticketId: c.ticketId,
        eventId: scanner.eventId,
        generation: c.generation,
        at: scannedAt,
        by: `${scanner.name} / ${gate}`,
      });
      if (admitted) return answer('ADMIT', admitted);
      // Lost the race, or not admissible: read it as it is now (the winner's update has committed).
      const t = await repo.ticketOfEvent(trx, c.ticketId, scanner.eventId);
      if (!t) return answer('INVALID', undefined);
      if (t.status === 'ADMITTED') return answer('ALREADY_ADMITTED', t);
      return answer('REVOKED', t);
    });
  }

  /**
   * What a gate needs to keep verifying with no connection: the event's public key, the step length and every
   * ticket's id, generation and status. A code is checked offline exactly as online (checkTicketCode).
   */
  async manifest(scanner: Scanner) {
    const key = await this.keyOf(scanner.eventId);
    const e = (await repo.findEvent(this.db, scanner.eventId))!;
    const rows = await repo.manifestTickets(this.db, scanner.eventId);
    return {
      eventId: e.id,
      eventName: e.name,
      publicKey: key.raw,
      stepSeconds: CODE_STEP_SECONDS,
      generatedAt: new Date(this.now()).toISOString(),
      tickets: rows.map((t) => ({ ticketId: t.id, generation: t.generation, status: t.status, seat: seatOf(t) })),
    };
  }

  /**
   * An offline gate's scans, uploaded when it is back: each is judged as it would have been at its scan time, in
   * scan-time order; a second entry on one ticket (at this gate or any other, online or offline) is reported as a
   * double entry, never dropped. An upload sent again (same scanIds) counts nothing twice.
   */
  async upload(scanner: Scanner, gate: string, scans: { scanId: string; code: string; scannedAt: string }[]) {
    const nowMs = this.now();
    const ordered = [...scans].sort((a, b) => Date.parse(a.scannedAt) - Date.parse(b.scannedAt));
    const results = [];
    let repeated = 0;
    for (const s of ordered) {
      // A scan time ahead of the server's clock by more than a step is not believed: judged now.
      const atMs = Math.min(Date.parse(s.scannedAt), nowMs + CODE_STEP_SECONDS * 1000);
      const a = await this.check(scanner, s.code, gate, { atMs, offline: true, clientScanId: s.scanId });
      if (!a) {
        repeated++;
        continue;
      }
      results.push({
        scanId: s.scanId,
        result: a.result,
        ticketId: a.ticket?.ticketId ?? null,
        doubleEntry: a.result === 'ALREADY_ADMITTED',
        firstAdmitted: a.firstAdmitted,
      });
    }
    return { accepted: results.length, repeated, results };
  }

  // --- operators ---

  /** Counts for the war room and the post-sale review. */
  async counts(eventId: string): Promise<TicketCounts> {
    const c = await repo.countsOf(this.db, eventId);
    return {
      issued: c.total - c.transferred,
      delivered: c.delivered,
      pendingDelivery: c.pending,
      transferred: c.transferred,
      listed: c.listed,
      resold: c.resold,
      revoked: c.revoked,
      scanned: c.scanned,
      admitted: c.admitted,
      refusedScans: c.refused,
    };
  }

  /** Fan support: the tickets of an order (by its id or payment reference), with the holder of each. */
  async findByOrderReference(reference: string) {
    const orders = await repo.ticketsByOrderReference(this.db, reference.trim());
    if (orders.length === 0) throw notFound('ORDER_NOT_FOUND', `no order ${reference}`, 'reference');
    const out = [];
    for (const id of orders)
      for (const t of await repo.ticketsOfOrder(this.db, id)) out.push({ ...this.view(t), holderAccountId: t.holder_account_id });
    return out;
  }

  /**
   * Fan support: reissues a ticket to a new device (the fan lost their phone, or used up their own moves): the
   * binding is cleared and the generation goes up, so the old device's codes stop and the fan's next code fetch
   * binds the new device. Audited with who and why.
   */
  async reissue(ticketId: string, by: { actor: string; reason: string }): Promise<TicketView & { holderAccountId: string }> {
    if (!isUuid(ticketId)) throw notFound('TICKET_NOT_FOUND', `no ticket ${ticketId}`, 'ticketId');
    if (!by.reason.trim()) throw invalid('REASON_REQUIRED', 'a reissue needs a reason', 'reason');
    await this.db.transaction().execute(async (trx) => {
      const t = await repo.lockTicket(trx, ticketId);
      if (!t) throw notFound('TICKET_NOT_FOUND', `no ticket ${ticketId}`, 'ticketId');
      if (t.status !== 'ACTIVE')
        throw new DomainError('conflict', 'TICKET_NOT_ACTIVE', `this ticket is ${t.status.toLowerCase()}`, { field: 'ticketId' });
      const moved = await repo.moveDevice(trx, t.id, null, false);
      await insertAudit(trx, {
        actor: by.actor,
        action: 'ticket.reissued',
        eventId: t.event_id,
        details: { ticketId: t.id, holder: t.holder_account_id, generation: moved.generation, reason: by.reason },
      });
    });
    const t = (await repo.findTicket(this.db, ticketId))!;
    return { ...this.view(t), holderAccountId: t.holder_account_id };
  }
}

// --- hooks other domains call in their own transactions ---

/** A sold seat as a ticket needs it (`soldSeatsOfHold`'s row). */
export interface SoldSeat {
  id: number;
  section: string;
  row: string;
  number: number;
  price_cents: number;
}

/**
 * Issues the tickets of a confirmed order, in the checkout's transaction: one per seat (or GA unit), held by the
 * buyer. A seat that was listed on the exchange completes its resale here too, all in that one transaction: the
 * seller's ticket ends RESOLD (its codes stop), the seller's payout is recorded (once: one per resale), and the
 * buyer's new ticket names the seller's as its parent (the chain).
 */
export async function issueTicketsForOrder(
  trx: Trx,
  order: { orderId: string; holdId: string; eventId: string; accountId: string; quantity: number },
  /** The hold's sold seats when the caller already has them (the statement that sold them returned them). */
  sold?: SoldSeat[],
): Promise<void> {
  const seats = sold ?? (await repo.soldSeatsOfHold(trx, order.holdId));
  const resales = new Map(
    (
      await repo.lockListedResales(
        trx,
        order.eventId,
        seats.map((s) => s.id),
      )
    ).map((r) => [r.seat_id, r]),
  );
  const tickets: repo.NewTicket[] = [];
  for (const s of seats) {
    const r = resales.get(s.id);
    if (r) await repo.endTicket(trx, r.ticket_id, 'RESOLD', `resold (order ${order.orderId})`);
    tickets.push({
      eventId: order.eventId,
      orderId: order.orderId,
      slot: `seat:${s.id}`,
      seatId: s.id,
      section: s.section,
      row: s.row,
      number: s.number,
      faceValueCents: s.price_cents,
      holder: order.accountId,
      transferCount: 0,
      parent: r?.ticket_id ?? null,
    });
  }
  if (seats.length === 0) {
    const ga = await repo.gaSectionOfHold(trx, order.holdId);
    for (let i = 0; i < order.quantity; i++)
      tickets.push({
        eventId: order.eventId,
        orderId: order.orderId,
        slot: `ga:${order.orderId}:${i}`,
        seatId: null,
        section: ga?.section ?? 'GA',
        row: null,
        number: null,
        faceValueCents: ga?.price_cents ?? 0,
        holder: order.accountId,
        transferCount: 0,
        parent: null,
      });
  }
  // A seat sold again while an old ticket of it was still live (it came back by a path that did not revoke it):
  // the old ticket is revoked, so the seat has one holder. A slot with a live ticket is exactly one whose insert
  // conflicts (the live-slot index), so the tickets are inserted first and only the slots that conflicted are
  // revoked and inserted again: one statement for the usual order (no old ticket), the same outcome either way.
  const ids = await repo.insertTickets(trx, tickets);
  const taken = tickets.filter((t) => !ids.has(t.slot));
  if (taken.length > 0) {
    await repo.revokeLiveSlots(
      trx,
      order.eventId,
      taken.map((t) => t.slot),
      `seat sold again (order ${order.orderId})`,
    );
    for (const [slot, id] of await repo.insertTickets(trx, taken)) ids.set(slot, id);
  }
  const currency = resales.size > 0 ? (await repo.findEvent(trx, order.eventId))!.currency : '';
  for (const r of resales.values()) {
    await repo.finishResale(trx, r.id, { orderId: order.orderId, ticketId: ids.get(`seat:${r.seat_id}`) ?? null });
    // The simulated gateway's payout: recorded with the sale, once (the resale is its key); a real provider's payout
    // call would read these rows after the commit.
    await repo.insertPayout(trx, {
      resaleId: r.id,
      accountId: r.seller_account_id,
      amountCents: r.price_cents,
      currency,
      reference: `sim_payout_${r.id.replace(/-/g, '')}`,
    });
    await insertAudit(trx, {
      actor: 'system',
      action: 'ticket.resold',
      eventId: order.eventId,
      details: {
        resaleId: r.id,
        fromTicketId: r.ticket_id,
        ticketId: ids.get(`seat:${r.seat_id}`) ?? null,
        seller: r.seller_account_id,
        buyer: order.accountId,
        orderId: order.orderId,
        priceCents: r.price_cents,
      },
    });
  }
}

/** What the checkout charges for a hold's seats: a seat listed on the exchange at its listed price, others at face. */
/** A seated hold's seat count and price (listed seats at their listed price) in one read; 0 seats: a GA hold. */
export function priceOfHold(db: Db | Trx, holdId: string): Promise<{ seats: number; amountCents: number }> {
  return repo.priceOfHoldSeats(db, holdId);
}

export async function priceOfSeats(db: Db | Trx, seats: { id: number; priceCents: number }[]): Promise<number> {
  const listed = await repo.listedPrices(
    db,
    seats.map((s) => Number(s.id)),
  );
  return seats.reduce((sum, s) => sum + (listed.get(Number(s.id)) ?? s.priceCents), 0);
}

/** Revokes an order's live tickets (the order was cancelled or refunded), in the caller's transaction; listings end. */
export async function revokeTicketsOfOrder(trx: Trx, orderId: string, reason: string): Promise<number> {
  const ids = await repo.revokeTicketsOfOrder(trx, orderId, reason);
  await repo.withdrawResales(trx, ids);
  return ids.length;
}
