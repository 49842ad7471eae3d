import type { Db, Trx } from '../db/connect.js';
import { DomainError, notFound } from '../errors.js';
import type { EventLookColumn, FairnessMode } from './events.table.js';
import { eventFileSchema, formatIssues, type EventSpec } from './events.schema.js';
import { expandSeats } from './layout.js';
import * as repo from './events.repository.js';
import { initQueue } from '../queue/queue.service.js';
import { insertGaShards } from '../inventory/ga.repository.js';
import { createLottery } from '../lottery/lottery.service.js';
import { assignAllocations, tierCapacities } from '../allocations/assign.js';
import { createAllocations } from '../allocations/allocations.service.js';
import { awaitsSignOff, insertFairnessSignOff } from './signoff.service.js';

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
    target_sale_minutes: spec.pacing.targetSaleMinutes,
    tickets_per_order: spec.pacing.ticketsPerOrder,
    checkout_minutes: spec.pacing.checkoutMinutes,
    payment_tps: spec.pacing.paymentTps,
    overbook_factor: spec.pacing.overbookFactor,
    capacity,
    queue_copy: spec.queueCopy && Object.keys(spec.queueCopy).length > 0 ? JSON.stringify(spec.queueCopy) : null,
    look: spec.look && Object.keys(spec.look).length > 0 ? JSON.stringify(spec.look) : null,
  };
}

/** How an event is created: `signOff` records `actor`'s sign-off of its fairness mode at once (see signoff.service.ts). */
export interface CreateEventOptions {
  signOff?: boolean;
}

/**
 * Creates an event with its listing, price levels, sections, every seat and the GA counters. Runs in the caller's
 * transaction. Without `signOff` the event does not open until someone signs its fairness mode off.
 */
export async function createEvent(trx: Trx, spec: EventSpec, actor = 'system', opts: CreateEventOptions = {}): Promise<{ eventId: string; listingId: string; capacity: number }> {
  let listingId: string;
  if (spec.listing && 'id' in spec.listing) {
    if (!(await repo.listingExists(trx, spec.listing.id))) throw notFound('LISTING_NOT_FOUND', `no listing ${spec.listing.id}`, 'listing.id');
    listingId = spec.listing.id;
  } else {
    listingId = await repo.insertListing(trx, spec.listing?.name ?? spec.name);
  }
  const seats = assignAllocations(expandSeats(spec), spec.allocations);
  const generalAdmission = spec.sections.flatMap((s) => (s.kind === 'GA' ? [s] : []));
  const capacity = seats.length + generalAdmission.reduce((a, s) => a + s.capacity, 0);
  const eventId = await repo.insertEvent(trx, { listing_id: listingId, ...eventColumns(spec, capacity) });
  await repo.insertPriceLevels(trx, eventId, spec.priceLevels);
  const perSection = new Map<string, number>();
  for (const s of seats) perSection.set(s.sectionCode, (perSection.get(s.sectionCode) ?? 0) + 1);
  for (const s of generalAdmission) perSection.set(s.code, s.capacity);
  await repo.insertSections(
    trx,
    eventId,
    spec.sections.map((s) => ({
      code: s.code,
      name: s.name ?? `Section ${s.code}`,
      kind: s.kind,
      priceLevel: s.priceLevel,
      qualityRank: s.qualityRank,
      capacity: perSection.get(s.code) ?? 0,
    })),
  );
  await repo.insertSeats(trx, eventId, seats);
  await insertGaShards(trx, eventId, generalAdmission, spec.allocations);
  const { seedCommitment } = await initQueue(trx, eventId);
  if (spec.lottery) await createLottery(trx, eventId, spec.lottery, actor);
  await createAllocations(trx, eventId, spec, tierCapacities(seats, spec));
  await repo.insertAudit(trx, { actor, action: 'event.created', eventId, details: { name: spec.name, capacity, fairnessMode: spec.fairnessMode, seedCommitment } });
  if (opts.signOff) await insertFairnessSignOff(trx, { id: eventId, fairnessMode: spec.fairnessMode, version: 1 }, actor);
  return { eventId, listingId, capacity };
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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string) => UUID.test(s);

export { repo as eventsRepository };
