import type { Db, Trx } from '../db/connect.js';
import { DomainError, notFound } from '../errors.js';
import { isUuid } from '../ids.js';
import { getEvent } from '../events/events.service.js';
import { insertAudit } from '../audit/index.js';
import { releaseHolds } from '../inventory/holds.service.js';
import { findHold } from '../inventory/holds.service.js';
import { permutePosition } from '../queue/fairness.js';
import { parseInput } from '../notify/notify.schema.js';
import * as repo from './support.repository.js';
import {
  accountBlockSchema,
  accountLookupSchema,
  accountUnblockSchema,
  holdReleaseSchema,
  supportOrderSchema,
  supportSearchSchema,
} from './support.schema.js';
import { orderReference, parseOrderReference } from '../checkout/reference.js';

// Fan support: what one fan account has done across events, and what an operator does for or against it (release a
// hold, block it from an event). Every change is audited with the operator and the reason.

/** One place of the account in a queue (an event's own, or a presale tier's), and where it stands now. */
export interface SupportQueuePlace {
  eventId: string;
  eventName: string;
  timeZone: string;
  tier: string | null;
  cohort: 'PREOPEN' | 'FIFO';
  joinIndex: number;
  joinedAt: Date;
  /** 1-based position; null for a pre-open join before the cohort is sealed at the open. */
  position: number | null;
  admittedThrough: number;
  /**
   * WAITING_FOR_OPEN (pre-open, position drawn at the open), WAITING, ADMITTED (their turn; no admission token
   * claimed yet), ADMISSION_CLAIMED (an admission token was issued on a poll), PAUSED, SOLD_OUT.
   */
  state: 'WAITING_FOR_OPEN' | 'WAITING' | 'ADMITTED' | 'ADMISSION_CLAIMED' | 'PAUSED' | 'SOLD_OUT';
  claimedAt: Date | null;
}

export interface AccountLookup {
  accountId: string;
  /** The fan's name as their identity provider's token gave it (null: none seen, or never signed in here). */
  displayName: string | null;
  /** When the store API first saw the account (null: never signed in here). */
  createdAt: Date | null;
  queues: SupportQueuePlace[];
  holds: {
    id: string;
    eventId: string;
    eventName: string;
    timeZone: string;
    section: string | null;
    quantity: number;
    status: string;
    live: boolean;
    expiresAt: Date;
    createdAt: Date;
  }[];
  orders: {
    id: string;
    /** What the fan reads on their order confirmation ("05B0DD69"). */
    reference: string;
    eventId: string;
    eventName: string;
    timeZone: string;
    currency: string;
    seats: number;
    amountCents: number;
    status: string;
    createdAt: Date;
  }[];
  waitlist: {
    id: number;
    listingId: string;
    listingName: string;
    createdAt: Date;
    expiresAt: Date;
    live: boolean;
    dateFrom: string;
    dateTo: string;
    maxPriceCents: number | null;
    /** The listing's events' currency, the one its maximum price is in. */
    currency: string;
    quantity: number;
    sections: string[] | null;
  }[];
  notifications: {
    id: number;
    listingId: string;
    listingName: string;
    kind: string;
    cause: string | null;
    createdAt: Date;
    readAt: Date | null;
    offerStatus: string | null;
  }[];
  blocks: { eventId: string; eventName: string; reason: string; blockedBy: string; blockedAt: Date }[];
}

async function placeOf(r: Awaited<ReturnType<typeof repo.findQueueEntries>>[number]): Promise<SupportQueuePlace> {
  let position: number | null = null;
  if (r.cohort === 'FIFO') position = r.join_index + 1;
  else if (r.sealed && r.seed_hex && r.cohort_size !== null && r.join_index < r.cohort_size)
    position = (await permutePosition(r.seed_hex, r.cohort_size, r.join_index)) + 1;
  const admitted = position !== null && position <= Number(r.admitted_through);
  const state: SupportQueuePlace['state'] =
    r.inventory_state === 'SOLD_OUT'
      ? 'SOLD_OUT'
      : r.claimed_at
        ? 'ADMISSION_CLAIMED'
        : admitted
          ? 'ADMITTED'
          : r.paused
            ? 'PAUSED'
            : position === null
              ? 'WAITING_FOR_OPEN'
              : 'WAITING';
  return {
    eventId: r.event_id,
    eventName: r.event_name,
    timeZone: r.time_zone,
    tier: r.tier,
    cohort: r.cohort,
    joinIndex: r.join_index,
    joinedAt: r.joined_at,
    position,
    admittedThrough: Number(r.admitted_through),
    state,
    claimedAt: r.claimed_at,
  };
}

/**
 * Everything one fan account has in this system (the latest 100 of each): its places in queues with their state,
 * its holds, orders, waitlist entries, notifications and blocks. Reads only. INVALID_ACCOUNT_ID for a malformed id;
 * an unknown account is an empty answer (it may simply not have signed in yet).
 */
export async function lookupAccount(db: Db | Trx, input: unknown): Promise<AccountLookup> {
  const { accountId } = parseInput(accountLookupSchema, input, 'INVALID_ACCOUNT_ID');
  const [account, queues, holds, orders, waitlist, notifications, blocks] = await Promise.all([
    repo.findAccount(db, accountId),
    repo.findQueueEntries(db, accountId),
    repo.findHolds(db, accountId),
    repo.findOrders(db, accountId),
    repo.findWaitlistEntries(db, accountId),
    repo.findNotifications(db, accountId),
    repo.findBlocksOfAccount(db, accountId),
  ]);
  return {
    accountId,
    displayName: account?.display_name ?? null,
    createdAt: account?.created_at ?? null,
    queues: await Promise.all(queues.map(placeOf)),
    holds: holds.map((h) => ({
      id: h.id,
      eventId: h.event_id,
      eventName: h.event_name,
      timeZone: h.time_zone,
      section: h.section_code,
      quantity: h.quantity,
      status: h.status,
      live: h.live,
      expiresAt: h.expires_at,
      createdAt: h.created_at,
    })),
    orders: orders.map((o) => ({
      id: o.id,
      reference: orderReference(o.id),
      eventId: o.event_id,
      eventName: o.event_name,
      timeZone: o.time_zone,
      currency: o.currency,
      seats: o.seat_count,
      amountCents: o.amount_cents,
      status: o.status,
      createdAt: o.created_at,
    })),
    waitlist: waitlist.map((w) => ({
      id: Number(w.id),
      listingId: w.listing_id,
      listingName: w.listing_name,
      createdAt: w.created_at,
      expiresAt: w.expires_at,
      live: w.live,
      dateFrom: w.date_from,
      dateTo: w.date_to,
      maxPriceCents: w.max_price_cents,
      currency: w.currency,
      quantity: w.quantity,
      sections: w.sections,
    })),
    notifications: notifications.map((n) => ({
      id: Number(n.id),
      listingId: n.listing_id,
      listingName: n.listing_name,
      kind: n.kind,
      cause: n.cause,
      createdAt: n.created_at,
      readAt: n.read_at,
      offerStatus: n.offer_status,
    })),
    blocks: blocks.map((b) => ({
      eventId: b.event_id,
      eventName: b.event_name,
      reason: b.reason,
      blockedBy: b.blocked_by,
      blockedAt: b.blocked_at,
    })),
  };
}

/**
 * Blocks a fan account from one event: from now on the store API refuses it that event's queue, holds and checkout
 * (ACCOUNT_BLOCKED, within a second: each store process re-reads the blocks with the event's settings), and its live
 * holds of the event go back now. Audited `account.blocked` with the reason. Blocking twice changes nothing.
 */
export async function blockAccount(
  db: Db,
  input: unknown,
  actor: string,
): Promise<{ eventId: string; accountId: string; blocked: boolean; holdsReleased: number }> {
  const spec = parseInput(accountBlockSchema, input, 'INVALID_BLOCK');
  const event = await getEvent(db, spec.eventId);
  return db.transaction().execute(async (trx) => {
    const blocked = await repo.insertBlock(trx, { eventId: event.id, accountId: spec.accountId, reason: spec.reason, blockedBy: actor });
    if (!blocked) return { eventId: event.id, accountId: spec.accountId, blocked: false, holdsReleased: 0 };
    const live = (await repo.findHolds(trx, spec.accountId)).filter((h) => h.live && h.event_id === event.id && h.status === 'HELD');
    const released = await releaseHolds(
      trx,
      live.map((h) => ({ accountId: spec.accountId, holdId: h.id })),
    );
    const holdsReleased = released.filter((r) => !(r instanceof DomainError)).length;
    await insertAudit(trx, {
      actor,
      action: 'account.blocked',
      eventId: event.id,
      details: { accountId: spec.accountId, reason: spec.reason, holdsReleased },
    });
    return { eventId: event.id, accountId: spec.accountId, blocked: true, holdsReleased };
  });
}

/** Lifts a block (audited `account.unblocked` with the reason); NOT_BLOCKED when there was none. */
export async function unblockAccount(db: Db, input: unknown, actor: string): Promise<{ eventId: string; accountId: string }> {
  const spec = parseInput(accountUnblockSchema, input, 'INVALID_BLOCK');
  const event = await getEvent(db, spec.eventId);
  return db.transaction().execute(async (trx) => {
    const was = await repo.deleteBlock(trx, event.id, spec.accountId);
    if (!was) throw notFound('NOT_BLOCKED', `account ${spec.accountId} is not blocked from this event`, 'accountId');
    await insertAudit(trx, {
      actor,
      action: 'account.unblocked',
      eventId: event.id,
      details: { accountId: spec.accountId, reason: spec.reason, blockedBy: was.blocked_by, blockReason: was.reason },
    });
    return { eventId: event.id, accountId: spec.accountId };
  });
}

/**
 * Releases a fan's hold for them (fan support): its seats go back at once, to the waitlist after a sell-out, as a
 * release by the fan would. A hold being paid for, paid, or already gone is refused with the fan's own codes
 * (CHECKOUT_IN_PROGRESS, HOLD_PURCHASED; a released or lapsed hold answers its state). Audited `hold.released`.
 */
export async function releaseFanHold(
  db: Db,
  input: unknown,
  actor: string,
): Promise<{ holdId: string; eventId: string; accountId: string; status: string }> {
  const spec = parseInput(holdReleaseSchema, input, 'INVALID_RELEASE');
  const row = isUuid(spec.holdId) ? await findHold(db, spec.holdId) : undefined;
  if (!row || row.account_id === '~waitlist') throw notFound('HOLD_NOT_FOUND', `no hold ${spec.holdId}`, 'holdId');
  if (row.status !== 'HELD' && row.status !== 'PAYING')
    throw new DomainError('conflict', 'HOLD_NOT_LIVE', `this hold is ${row.status.toLowerCase()} already; there is nothing to release`, {
      field: 'holdId',
    });
  return db.transaction().execute(async (trx) => {
    const [r] = await releaseHolds(trx, [{ accountId: row.account_id, holdId: row.id }]);
    if (r instanceof DomainError) throw r;
    await insertAudit(trx, {
      actor,
      action: 'hold.released',
      eventId: row.event_id,
      details: { holdId: row.id, accountId: row.account_id, reason: spec.reason, status: r!.status, seats: row.quantity },
    });
    return { holdId: row.id, eventId: row.event_id, accountId: row.account_id, status: r!.status };
  });
}

/** An order as support finds it: its reference (what the fan reads), its account, its event, its amount. */
export interface SupportOrder {
  id: string;
  reference: string;
  accountId: string;
  /** The fan's display name, when their identity provider gave one. */
  accountName: string | null;
  eventId: string;
  eventName: string;
  timeZone: string;
  currency: string;
  seats: number;
  amountCents: number;
  status: string;
  paymentReference: string;
  /** When its money went back through the payment provider (null: not refunded). */
  refundedAt: Date | null;
  createdAt: Date;
}

const supportOrderOf = (r: repo.SupportOrderRow): SupportOrder => ({
  id: r.id,
  reference: orderReference(r.id),
  accountId: r.account_id,
  accountName: r.account_name,
  eventId: r.event_id,
  eventName: r.event_name,
  timeZone: r.time_zone,
  currency: r.currency,
  seats: r.seat_count,
  amountCents: r.amount_cents,
  status: r.status,
  paymentReference: r.payment_reference,
  refundedAt: r.refunded_at,
  createdAt: r.created_at,
});

/**
 * Finds a fan from what they can tell support: an order reference ("05B0DD69", as the order confirmation shows it;
 * "#05b0-dd69" too) or a whole order id finds the order; any text finds the accounts whose id (often the fan's
 * e-mail) or display name (as their identity provider gave it) contains it, ignoring case. Reads only; empty lists
 * when nothing matches.
 */
export async function searchSupport(
  db: Db | Trx,
  input: unknown,
): Promise<{ query: string; orders: SupportOrder[]; accounts: { accountId: string; displayName: string | null; createdAt: Date }[] }> {
  const { query } = parseInput(supportSearchSchema, input, 'INVALID_INPUT');
  const reference = parseOrderReference(query);
  const [orders, accounts] = await Promise.all([
    reference
      ? repo.findOrdersByIdPrefix(db, reference)
      : isUuid(query)
        ? repo.findSupportOrder(db, query).then((o) => (o ? [o] : []))
        : Promise.resolve([]),
    repo.findAccountsLike(db, query),
  ]);
  return {
    query,
    orders: orders.map(supportOrderOf),
    accounts: accounts.map((a) => ({ accountId: a.id, displayName: a.display_name, createdAt: a.created_at })),
  };
}

/** One order's page: the order and the seats it holds now (none once cancelled). ORDER_NOT_FOUND otherwise. */
export async function getSupportOrder(
  db: Db | Trx,
  input: unknown,
): Promise<SupportOrder & { seatList: { section: string; row: string | null; seat: number }[] }> {
  const { orderId } = parseInput(supportOrderSchema, input, 'INVALID_INPUT');
  if (!isUuid(orderId)) throw notFound('ORDER_NOT_FOUND', `no order ${orderId}`, 'orderId');
  const [row, seats] = await Promise.all([repo.findSupportOrder(db, orderId), repo.findOrderSeats(db, orderId)]);
  if (!row) throw notFound('ORDER_NOT_FOUND', `no order ${orderId}`, 'orderId');
  return { ...supportOrderOf(row), seatList: seats.map((s) => ({ section: s.section_code, row: s.row_label, seat: s.seat_number })) };
}
