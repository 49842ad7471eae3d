import type { Db, Trx } from '../db/connect.js';
import { DomainError, notFound } from '../errors.js';
import { isUuid } from '../ids.js';
import type { EventLookColumn, FairnessMode } from './events.table.js';
import { eventFileSchema, formatIssues, type EventSpec } from './events.schema.js';
import { pastTimeIssues } from './create-checks.js';
import * as repo from './events.repository.js';
import { awaitsSignOff } from './signoff.service.js';

/** An event as the domain sees it: settings in domain words and units. */
export interface OnsaleEvent {
  id: string;
  listingId: string;
  name: string;
  venueName: string;
  startsAt: Date;
  onsaleAt: Date;
  seatPickingOpensAt: Date;
  fairnessMode: FairnessMode;
  perAccountSeatLimit: number;
  perInstrumentSeatLimit: number;
  /** Seats per device (holds + confirmed orders made from it, whatever the account); defaults to the per-account limit. */
  perDeviceSeatLimit: number;
  holdTtlSeconds: number;
  holdExtensionSeconds: number;
  /**
   * "No single seats": best-available and exact-seat holds never leave one seat alone between taken seats or at a
   * row's end next to a taken seat, unless it cannot be helped (inventory/best-available.ts). False: off.
   */
  noSingleSeats: boolean;
  /** Tickets: delivery, transfers, the face-value exchange (tickets/tickets.service.ts). */
  tickets: {
    /** When tickets are delivered: a time, or hours before the show; both null: at once. */
    deliveryAt: Date | null;
    deliveryHoursBeforeShow: number | null;
    transferLimit: number;
    resale: boolean;
    resaleFeeCapPercent: number;
  };
  pacing: {
    targetSaleMinutes: number;
    ticketsPerOrder: number;
    checkoutMinutes: number;
    paymentTps: number;
    overbookFactor: number;
  };
  capacity: number;
  /** Fan-facing words per queue state where the promoter replaced the defaults. */
  queueCopy: Record<string, string> | null;
  /** The fans' page look (logo, colours, per-state words beside English); null: the default look. */
  look: EventLookColumn | null;
  /** The organisation that owns the event (its promoters see it); null for a house event. */
  organisationId: string | null;
  /** The venue's IANA time zone: every time of the event is shown in it. */
  timeZone: string;
  /** ISO 4217 code of the currency its prices are in. */
  currency: string;
  /** A rehearsal's event (a synthetic on-sale, `onsale rehearse`): how many times fast its clock runs; null for a real event. */
  rehearsalTimeScale: number | null;
  version: number;
  updatedAt: Date;
  /** The fairness mode has a live sign-off. */
  fairnessSignedOff: boolean;
  /** Not signed off and not opened yet: the sale will not open until someone signs the fairness mode off. */
  awaitingSignOff: boolean;
}

export interface EventSection {
  code: string;
  name: string;
  /** RESERVED: seats, best available or picked; GA: general admission, a count of identical units. */
  kind: 'RESERVED' | 'GA';
  priceLevel: string;
  priceLevelName: string;
  priceCents: number;
  qualityRank: number;
  capacity: number;
}

export function toOnsaleEvent(r: Awaited<ReturnType<typeof repo.findEvent>> & {}): OnsaleEvent {
  return {
    id: r.id,
    listingId: r.listing_id,
    name: r.name,
    venueName: r.venue_name,
    startsAt: r.starts_at,
    onsaleAt: r.onsale_at,
    seatPickingOpensAt: r.seat_picking_opens_at,
    fairnessMode: r.fairness_mode,
    perAccountSeatLimit: r.per_account_seat_limit,
    perInstrumentSeatLimit: r.per_instrument_seat_limit,
    perDeviceSeatLimit: r.per_device_seat_limit ?? r.per_account_seat_limit,
    holdTtlSeconds: r.hold_ttl_seconds,
    holdExtensionSeconds: r.hold_extension_seconds,
    noSingleSeats: r.no_single_seats,
    tickets: {
      deliveryAt: r.ticket_delivery_at,
      deliveryHoursBeforeShow: r.ticket_delivery_hours_before,
      transferLimit: r.ticket_transfer_limit,
      resale: r.resale_enabled,
      resaleFeeCapPercent: r.resale_fee_cap_percent,
    },
    pacing: {
      targetSaleMinutes: r.target_sale_minutes,
      ticketsPerOrder: r.tickets_per_order,
      checkoutMinutes: r.checkout_minutes,
      paymentTps: r.payment_tps,
      overbookFactor: r.overbook_factor,
    },
    capacity: r.capacity,
    queueCopy: r.queue_copy,
    look: r.look ?? null,
    organisationId: r.organisation_id,
    timeZone: r.time_zone,
    currency: r.currency,
    rehearsalTimeScale: r.rehearsal_time_scale ?? null,
    version: r.version,
    updatedAt: r.updated_at,
    fairnessSignedOff: r.fairness_signed_off,
    awaitingSignOff: awaitsSignOff({ signedOff: r.fairness_signed_off, sealedAt: r.queue_opened ? 'opened' : null }),
  };
}

/** Parses an event file; throws an `invalid` DomainError whose details list every issue with its path. */
export function parseEventFile(input: unknown): EventSpec {
  const parsed = eventFileSchema.safeParse(input);
  if (!parsed.success) {
    const issues = formatIssues(parsed.error);
    throw new DomainError('invalid', 'INVALID_EVENT_FILE', issues.map((i) => `${i.path}: ${i.message}`).join('; '), {
      field: issues[0]?.path,
      issues,
    });
  }
  return parsed.data;
}

/**
 * Parses the event file of a new event at `now`: as parseEventFile, and a show time that has passed or an on-sale
 * more than 5 minutes ago is refused at its field (create-checks.ts). EVENT_TIME_PASSED when the times are all
 * that is wrong; INVALID_EVENT_FILE with the time issues beside the schema's otherwise. The console's form, the
 * BFF and the CLI's event:create all create through this.
 */
export function parseNewEventFile(input: unknown, now: Date = new Date()): EventSpec {
  const times = pastTimeIssues(input ?? {}, now);
  const parsed = eventFileSchema.safeParse(input);
  if (!parsed.success || times.length > 0) {
    const schemaIssues = parsed.success ? [] : formatIssues(parsed.error);
    const issues = [...times.filter((t) => !schemaIssues.some((i) => i.path === t.path)), ...schemaIssues];
    const code = parsed.success ? 'EVENT_TIME_PASSED' : 'INVALID_EVENT_FILE';
    throw new DomainError('invalid', code, issues.map((i) => `${i.path}: ${i.message}`).join('; '), { field: issues[0]?.path, issues });
  }
  return parsed.data;
}

/** An event file's settings as the events row's columns (one home for create and edit). */
export function eventColumns(spec: EventSpec, capacity: number) {
  const onsaleAt = new Date(spec.onsaleAt);
  return {
    name: spec.name,
    venue_name: spec.venueName,
    starts_at: spec.startsAt,
    onsale_at: onsaleAt,
    seat_picking_opens_at: new Date(onsaleAt.getTime() + spec.seatPickingOpensAfterMinutes * 60_000),
    fairness_mode: spec.fairnessMode,
    per_account_seat_limit: spec.limits.perAccountSeats,
    per_instrument_seat_limit: spec.limits.perInstrumentSeats,
    per_device_seat_limit: spec.limits.perDeviceSeats ?? null,
    hold_ttl_seconds: spec.holds.ttlSeconds,
    hold_extension_seconds: spec.holds.extensionSeconds,
    no_single_seats: spec.noSingleSeats,
    ticket_delivery_at: spec.tickets.deliveryAt ?? null,
    ticket_delivery_hours_before: spec.tickets.deliveryHoursBeforeShow ?? null,
    ticket_transfer_limit: spec.tickets.transferLimit,
    resale_enabled: spec.tickets.resale,
    resale_fee_cap_percent: spec.tickets.resaleFeeCapPercent,
    target_sale_minutes: spec.pacing.targetSaleMinutes,
    tickets_per_order: spec.pacing.ticketsPerOrder,
    checkout_minutes: spec.pacing.checkoutMinutes,
    payment_tps: spec.pacing.paymentTps,
    overbook_factor: spec.pacing.overbookFactor,
    capacity,
    queue_copy: spec.queueCopy && Object.keys(spec.queueCopy).length > 0 ? JSON.stringify(spec.queueCopy) : null,
    time_zone: spec.timeZone,
    currency: spec.currency,
    look: spec.look && Object.keys(spec.look).length > 0 ? JSON.stringify(spec.look) : null,
  };
}

/** The event, or EVENT_NOT_FOUND. Malformed ids are reported as not found too (field `id`). */
export async function getEvent(db: Db | Trx, id: string): Promise<OnsaleEvent> {
  if (!isUuid(id)) throw notFound('EVENT_NOT_FOUND', `no event ${id}`, 'id');
  const row = await repo.findEvent(db, id);
  if (!row) throw notFound('EVENT_NOT_FOUND', `no event ${id}`, 'id');
  return toOnsaleEvent(row);
}

/** Events, newest on-sale first; with a scope, only that organisation's (what a promoter may see). */
export async function listEvents(db: Db | Trx, scope: { organisationId: string } | null = null): Promise<OnsaleEvent[]> {
  return (await repo.listEvents(db, 200, scope?.organisationId)).map(toOnsaleEvent);
}

/** The events board's facts per event id (see board.ts): organisation name, paused, sold out, fairness signed off. */
export async function boardFacts(
  db: Db | Trx,
  eventIds: string[],
): Promise<Map<string, { organisationName: string | null; paused: boolean; soldOut: boolean; signedOff: boolean }>> {
  const rows = await repo.findBoardFacts(db, eventIds);
  return new Map(
    rows.map((r) => [r.id, { organisationName: r.organisation_name, paused: r.paused, soldOut: r.sold_out, signedOff: r.signed_off }]),
  );
}

export async function getSections(db: Db | Trx, eventId: string): Promise<EventSection[]> {
  return (await repo.findSections(db, eventId)).map((s) => ({
    code: s.code,
    name: s.name,
    kind: s.kind,
    priceLevel: s.price_level,
    priceLevelName: s.price_level_name,
    priceCents: s.price_cents,
    qualityRank: s.quality_rank,
    capacity: s.capacity,
  }));
}

export { repo as eventsRepository };

// What other domains may use of this domain's repository (eslint-rules/onsale.js, onsale/domain-borders).
export { findEvent, insertPriceLevels, insertSeats, insertSections, listingExists } from './events.repository.js';
