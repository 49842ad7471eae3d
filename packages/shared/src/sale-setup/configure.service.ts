import { z } from 'zod';
import type { Db, Trx } from '../db/connect.js';
import { DomainError, conflict, invalid, notFound } from '../errors.js';
import { fairnessDescription, type FairnessMode } from '../queue/fairness.js';
import { setListingWaitlistSettings } from '../waitlist/listings.js';
import {
  diffEventSpecs,
  eventPhase,
  lockedSettings,
  refusedChanges,
  seatCount,
  type ChangeContext,
  type EventChange,
  type EventPhase,
  type EventSetting,
} from '../events/change-rules.js';
import { listingWaitlistSchema, type ListingWaitlistInput } from './configure.schema.js';
import * as repo from './configure.repository.js';
import { formatIssues, type EventSpec } from '../events/events.schema.js';
import { insertAudit } from '../audit/index.js';
import { insertPriceLevels, insertSeats, insertSections } from '../events/events.service.js';
import { isUuid } from '../ids.js';
import { createEvent } from './create-event.js';
import { tierQueues } from './tier-queues.js';
import { eventColumns, parseEventFile, parseNewEventFile } from '../events/events.service.js';
import { findLiveSignoff, findSignoffs, insertFairnessSignOff, supersedeSignoff } from '../events/signoff.service.js';
import { expandSeats, rowLabel } from '../events/layout.js';
import { insertGaShards } from '../inventory/ga.service.js';
import { alignAllocations, replaceAllocations } from '../allocations/allocations.service.js';
import { assignAllocations } from '../allocations/assign.js';
import { findAllocations, presaleQueueHasFans } from '../allocations/allocations.service.js';
import type { AllocationRow } from '../allocations/allocations.service.js';
import { findLottery, lockLottery, type LotteryRow } from '../lottery/lottery.service.js';
import { alignLottery, lotterySettingsOf } from '../lottery/lottery.service.js';

// Event configuration from the console (see "An operator's request path" in docs/architecture.md: every change is audited).
// Every function runs in the caller's transaction; `actor` is who the audit log names (the user's e-mail).

/** Who is configuring: the audit log's actor and, for a promoter, the organisation they act for. */
export interface ConfigureActor {
  actor: string;
  /** A promoter's organisation: what they create is theirs, and they may use only their own listings. Null: the house. */
  organisationId: string | null;
}

/** A promoter's sign-off of a fairness mode, as recorded. */
export interface FairnessSignOff {
  id: number;
  fairnessMode: FairnessMode;
  /** The plain-words description as it read when signed: what fans are shown. */
  description: string;
  signedOffBy: string;
  signedOffAt: Date;
  eventVersion: number;
  supersededAt: Date | null;
  supersededBy: string | null;
  supersededReason: string | null;
}

/** A listing's waitlist settings in the console's units. */
export interface ListingWaitlistSettingsView {
  mode: 'OFFER' | 'BROADCAST';
  ttlDays: number;
  offerTtlMinutes: number;
}

/** An event's configuration as the edit form needs it: the event file it amounts to now, and what may change. */
export interface EventConfiguration {
  eventId: string;
  version: number;
  organisationId: string | null;
  updatedAt: Date;
  listing: { id: string; name: string; waitlist: ListingWaitlistSettingsView };
  /** The event as an event file (without `listing`: an event stays on its listing). Import/export as JSON. */
  file: EventSpec;
  capacity: number;
  phase: EventPhase;
  queueHasFans: boolean;
  seatsInUse: boolean;
  /** Settings no edit may change now, each with the reason. */
  locked: Partial<Record<EventSetting, string>>;
  fairness: {
    mode: FairnessMode;
    /** The published plain-words description of the current mode. */
    description: string;
    /** The live sign-off of the current mode; null: it needs one. */
    signOff: FairnessSignOff | null;
    /** Every sign-off, newest first (superseded ones say who changed the mode and when). */
    history: FairnessSignOff[];
    /** When the sale opened (its queue's cohort sealed); null before. Unsigned and not opened: it will not open. */
    openedAt: Date | null;
  };
}

const toSignOff = (r: NonNullable<Awaited<ReturnType<typeof findLiveSignoff>>>): FairnessSignOff => ({
  id: r.id,
  fairnessMode: r.fairness_mode,
  description: r.description,
  signedOffBy: r.signed_off_by,
  signedOffAt: r.signed_off_at,
  eventVersion: r.event_version,
  supersededAt: r.superseded_at,
  supersededBy: r.superseded_by,
  supersededReason: r.superseded_reason,
});

const toWaitlistView = (l: {
  waitlist_mode: 'OFFER' | 'BROADCAST';
  waitlist_ttl_seconds: number;
  offer_ttl_seconds: number;
}): ListingWaitlistSettingsView => ({
  mode: l.waitlist_mode,
  ttlDays: Math.round(l.waitlist_ttl_seconds / 86_400),
  offerTtlMinutes: Math.round(l.offer_ttl_seconds / 60),
});

type EventRowT = NonNullable<Awaited<ReturnType<typeof repo.findEventRow>>>;

/**
 * The event file an event amounts to, read back from its rows: rectangular sections come back as
 * rowCount x seatsPerRow, any other as explicit rows. Feeding it to an edit unchanged changes nothing.
 */
async function eventSpecOf(db: Db | Trx, row: EventRowT, tierRows?: AllocationRow[], lotteryRow?: LotteryRow | null): Promise<EventSpec> {
  const [sections, levels, rows, tiers, lottery] = await Promise.all([
    repo.findSectionRows(db, row.id),
    repo.findPriceLevelRows(db, row.id),
    repo.findRows(db, row.id),
    tierRows ?? findAllocations(db, row.id),
    lotteryRow === undefined ? findLottery(db, row.id) : lotteryRow,
  ]);
  const gaShards = sections.some((s) => s.kind === 'GA') ? await repo.findGaShardCounts(db, row.id) : new Map<string, number>();
  const rowsBySection = new Map<string, { label: string; seats: number }[]>();
  for (const r of rows) {
    const list = rowsBySection.get(r.section_code) ?? [];
    list.push({ label: r.row_label, seats: r.seats });
    rowsBySection.set(r.section_code, list);
  }
  return {
    name: row.name,
    venueName: row.venue_name,
    timeZone: row.time_zone,
    currency: row.currency,
    startsAt: row.starts_at.toISOString(),
    onsaleAt: row.onsale_at.toISOString(),
    seatPickingOpensAfterMinutes: Math.round((row.seat_picking_opens_at.getTime() - row.onsale_at.getTime()) / 60_000),
    fairnessMode: row.fairness_mode,
    limits: {
      perAccountSeats: row.per_account_seat_limit,
      perInstrumentSeats: row.per_instrument_seat_limit,
      ...(row.per_device_seat_limit !== null ? { perDeviceSeats: row.per_device_seat_limit } : {}),
    },
    noSingleSeats: row.no_single_seats,
    tickets: {
      ...(row.ticket_delivery_at ? { deliveryAt: row.ticket_delivery_at.toISOString() } : {}),
      ...(row.ticket_delivery_hours_before !== null ? { deliveryHoursBeforeShow: row.ticket_delivery_hours_before } : {}),
      transferLimit: row.ticket_transfer_limit,
      resale: row.resale_enabled,
      resaleFeeCapPercent: row.resale_fee_cap_percent,
    },
    holds: { ttlSeconds: row.hold_ttl_seconds, extensionSeconds: row.hold_extension_seconds },
    pacing: {
      targetSaleMinutes: row.target_sale_minutes,
      ticketsPerOrder: row.tickets_per_order,
      checkoutMinutes: row.checkout_minutes,
      paymentTps: row.payment_tps,
      overbookFactor: row.overbook_factor,
    },
    ...(row.queue_copy && Object.keys(row.queue_copy).length > 0 ? { queueCopy: row.queue_copy } : {}),
    ...(row.look && Object.keys(row.look).length > 0 ? { look: row.look } : {}),
    priceLevels: levels.map((p) => ({ code: p.code, name: p.name, priceCents: p.price_cents })),
    sections: sections.map((s): EventSpec['sections'][number] => {
      const base = { code: s.code, name: s.name, priceLevel: s.price_level, qualityRank: s.quality_rank };
      if (s.kind === 'GA') return { kind: 'GA', ...base, capacity: s.capacity, shards: gaShards.get(s.code) ?? 1 };
      const sectionRows = rowsBySection.get(s.code) ?? [];
      const first = sectionRows[0];
      const grid = first !== undefined && sectionRows.every((r, i) => r.label === rowLabel(i) && r.seats === first.seats);
      return { ...base, ...(grid ? { rowCount: sectionRows.length, seatsPerRow: first.seats } : { rows: sectionRows }) };
    }),
    ...(tiers.length > 0 ? { allocations: tiers.map(tierSpecOf) } : {}),
    // Only a lottery event's: the schema refuses lottery settings under another mode.
    ...(lottery && row.fairness_mode === 'REGISTRATION_LOTTERY' ? { lottery: lotterySettingsOf(lottery) } : {}),
  };
}

/** What the change rules need to know of an event's lottery (null: it has none). */
const lotteryContext = (l: LotteryRow | null | undefined): ChangeContext['lottery'] =>
  l ? { registrationOpensAt: l.registration_opens_at, registrations: l.registration_count, drawnAt: l.drawn_at } : null;

/**
 * A tier as the event file writes it. A presale's share and window as set (not its capacity now, which a roll
 * changes), its roll time only where it differs from the close; the general sale only its code, name and access
 * rule (its window and fairness mode are the event's).
 */
function tierSpecOf(t: AllocationRow): NonNullable<EventSpec['allocations']>[number] {
  const access = { access: t.access, ...(t.bin_ranges ? { binRanges: t.bin_ranges.map((r) => ({ from: r.from, to: r.to })) } : {}) };
  if (t.general) return { code: t.code, name: t.name, ...access, fairnessMode: 'RANDOMIZED_PREOPEN_THEN_FIFO' };
  const rolls =
    t.rolls_forward_at && t.closes_at && t.rolls_forward_at.getTime() !== t.closes_at.getTime()
      ? { rollsForwardAt: t.rolls_forward_at.toISOString() }
      : {};
  return {
    code: t.code,
    name: t.name,
    ...(t.share !== null ? { share: t.share } : {}),
    ...access,
    opensAt: t.opens_at.toISOString(),
    ...(t.closes_at ? { closesAt: t.closes_at.toISOString() } : {}),
    ...rolls,
    fairnessMode: t.fairness_mode,
  };
}

/** When the event's tiers start selling: the first tier's opening, or an early roll forward if one came first. */
function tiersStartAt(tiers: AllocationRow[]): Date | null {
  const times = tiers.flatMap((t) => [t.opens_at, ...(t.rolled_at ? [t.rolled_at] : [])]).map((d) => d.getTime());
  return times.length > 0 ? new Date(Math.min(...times)) : null;
}

async function eventRowOrThrow(db: Db | Trx, eventId: string, lock: boolean): Promise<EventRowT> {
  if (!isUuid(eventId)) throw notFound('EVENT_NOT_FOUND', `no event ${eventId}`, 'eventId');
  const row = lock ? await repo.lockEvent(db as Trx, eventId) : await repo.findEventRow(db, eventId);
  if (!row) throw notFound('EVENT_NOT_FOUND', `no event ${eventId}`, 'eventId');
  return row;
}

/** The event's configuration for the edit form: its file, version, what is locked now and why, and its sign-off. */
export async function getEventConfiguration(db: Db | Trx, eventId: string, now: Date = new Date()): Promise<EventConfiguration> {
  const row = await eventRowOrThrow(db, eventId, false);
  const [tiers, lottery] = await Promise.all([findAllocations(db, row.id), findLottery(db, row.id)]);
  const [file, listing, hasFans, inUse, signoffs, presaleFans, openedAt] = await Promise.all([
    eventSpecOf(db, row, tiers, lottery ?? null),
    repo.findListing(db, row.listing_id),
    repo.queueHasFans(db, row.id),
    repo.seatsInUse(db, row.id),
    findSignoffs(db, row.id),
    tiers.length > 0 ? presaleQueueHasFans(db, row.id) : false,
    repo.queueOpenedAt(db, row.id),
  ]);
  const phase = eventPhase(row.onsale_at, now);
  const history = signoffs.map(toSignOff);
  const live = history.find((s) => s.supersededAt === null && s.fairnessMode === row.fairness_mode) ?? null;
  return {
    eventId: row.id,
    version: row.version,
    organisationId: row.organisation_id,
    updatedAt: row.updated_at,
    listing: { id: row.listing_id, name: listing!.name, waitlist: toWaitlistView(listing!) },
    file,
    capacity: row.capacity,
    phase,
    queueHasFans: hasFans,
    seatsInUse: inUse,
    locked: lockedSettings({
      phase,
      now,
      queueHasFans: hasFans,
      seatsInUse: inUse,
      tiersStartAt: tiersStartAt(tiers),
      presaleQueueHasFans: presaleFans,
      lottery: lotteryContext(lottery),
    }),
    fairness: { mode: row.fairness_mode, description: fairnessDescription(row.fairness_mode), signOff: live, history, openedAt },
  };
}

/**
 * A change to a listing's waitlist settings: any of them (the console sends the three it shows); `inlineThreshold`
 * (how many matches a fan-out tells in the releasing transaction before it goes to a background job) is set by
 * operators from the CLI only.
 */
export type ListingWaitlistChange = Partial<ListingWaitlistInput> & { inlineThreshold?: number };

const waitlistChangeSchema = listingWaitlistSchema.partial().extend({ inlineThreshold: z.number().int('whole fans').min(1).optional() });

function parseWaitlist<T>(schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issues = formatIssues(parsed.error).map((i) => ({ path: `waitlist.${i.path}`, message: i.message }));
  throw invalid('INVALID_WAITLIST_SETTINGS', issues.map((i) => `${i.path}: ${i.message}`).join('; '), issues[0]!.path, { issues });
}

/**
 * Whether `organisationId` (a promoter's) may use a listing: every event on it is that organisation's. The
 * house (null) may use any. LISTING_NOT_FOUND for an unknown listing, LISTING_FORBIDDEN otherwise.
 */
export async function requireListingInScope(
  db: Db | Trx,
  listingId: string,
  organisationId: string | null,
  field = 'listingId',
): Promise<void> {
  if (!isUuid(listingId) || !(await repo.findListing(db, listingId))) throw notFound('LISTING_NOT_FOUND', `no listing ${listingId}`, field);
  if (organisationId === null) return;
  const orgs = await repo.findListingOrganisations(db, listingId);
  if (orgs.length === 0 || orgs.some((o) => o !== organisationId))
    throw new DomainError('forbidden', 'LISTING_FORBIDDEN', `listing ${listingId} has events of another organisation`, { field });
}

async function applyWaitlistSettings(trx: Trx, listingId: string, w: ListingWaitlistChange, actor: string): Promise<void> {
  const settings = {
    ...(w.mode !== undefined ? { mode: w.mode } : {}),
    ...(w.ttlDays !== undefined ? { ttlSeconds: w.ttlDays * 86_400 } : {}),
    ...(w.offerTtlMinutes !== undefined ? { offerTtlSeconds: w.offerTtlMinutes * 60 } : {}),
    ...(w.inlineThreshold !== undefined ? { inlineThreshold: w.inlineThreshold } : {}),
  };
  await setListingWaitlistSettings(trx, listingId, settings);
  await insertAudit(trx, { actor, action: 'listing.waitlist', details: { listingId, ...settings } });
}

/**
 * Creates an event from an event file (through `createEvent`: listing, price levels, sections, seats, queue and
 * its seed commitment, audited `event.created`), gives it to the creator's organisation, and sets the listing's
 * waitlist settings when given. INVALID_EVENT_FILE with every issue at its path (EVENT_TIME_PASSED when only a time
 * has passed at `now`: see parseNewEventFile); LISTING_FORBIDDEN when a promoter
 * names a listing with another organisation's events.
 */
export async function createConfiguredEvent(
  trx: Trx,
  input: { event: unknown; waitlist?: unknown },
  who: ConfigureActor,
  now: Date = new Date(),
): Promise<{ eventId: string; listingId: string; capacity: number; version: number }> {
  const spec = parseNewEventFile(input.event, now);
  const waitlist = input.waitlist === undefined ? undefined : parseWaitlist(listingWaitlistSchema, input.waitlist);
  if (spec.listing && 'id' in spec.listing) await requireListingInScope(trx, spec.listing.id, who.organisationId, 'listing.id');
  const created = await createEvent(trx, spec, who.actor);
  if (who.organisationId !== null) {
    const organisation = await repo.setEventOrganisation(trx, created.eventId, who.organisationId);
    await insertAudit(trx, {
      actor: who.actor,
      action: 'event.organisation_assigned',
      eventId: created.eventId,
      details: { organisation },
    });
  }
  if (waitlist) await applyWaitlistSettings(trx, created.listingId, waitlist, who.actor);
  return { ...created, version: 1 };
}

/**
 * Writes an event's layout anew (price levels, sections, seats, GA counters) as createEvent writes it; returns the
 * new capacity. Only for an event none of whose seats is in use.
 */
async function rebuildLayout(trx: Trx, eventId: string, spec: EventSpec): Promise<number> {
  const seats = assignAllocations(expandSeats(spec), spec.allocations);
  const generalAdmission = spec.sections.flatMap((s) => (s.kind === 'GA' ? [s] : []));
  await repo.deleteLayout(trx, eventId);
  await insertPriceLevels(trx, eventId, spec.priceLevels);
  const perSection = new Map<string, number>();
  for (const s of seats) perSection.set(s.sectionCode, (perSection.get(s.sectionCode) ?? 0) + 1);
  for (const s of generalAdmission) perSection.set(s.code, s.capacity);
  await insertSections(
    trx,
    eventId,
    spec.sections.map((s) => ({
      code: s.code,
      name: s.name ?? `Section ${s.code}`,
      kind: s.kind ?? 'RESERVED',
      priceLevel: s.priceLevel,
      qualityRank: s.qualityRank,
      capacity: perSection.get(s.code) ?? 0,
    })),
  );
  await insertSeats(trx, eventId, seats);
  await insertGaShards(trx, eventId, generalAdmission, spec.allocations);
  return seatCount(spec.sections);
}

/**
 * Changes an event's configuration to `event` (a whole event file), made from `expectedVersion`:
 * - STALE_EVENT_VERSION (conflict, field `version`) when someone changed the event since: nothing is overwritten;
 * - INVALID_EVENT_FILE (every issue at its path) for a file the schema refuses;
 * - the change rules (change-rules.ts) refuse what is unsafe now, each at its field (conflict, code of the first);
 * - a new layout or new prices rebuild the seats (only before the open, and only while no seat is in use);
 * - new presale tiers re-split the seats and replace the tiers' rows and queues (only before any tier opens, while
 *   no seat is in use and no fan is in a presale queue: PRESALE_OPENED, SEATS_IN_USE, QUEUE_HAS_FANS at `allocations`);
 * - new lottery settings create, change or remove the event's lottery (switching to or from REGISTRATION_LOTTERY),
 *   only before registration opens (REGISTRATION_OPENED, LOTTERY_DRAWN at `lottery`; once drawn the on-sale is fixed too);
 * - a new fairness mode supersedes the live sign-off: the new mode needs its own.
 * Audited `event.updated` with every change. An edit that changes nothing writes nothing.
 */
export async function updateEventConfiguration(
  trx: Trx,
  input: { eventId: string; expectedVersion: number; event: unknown },
  actor: string,
  now: Date = new Date(),
): Promise<{ eventId: string; version: number; changes: EventChange[]; signOffRequired: boolean }> {
  const spec = parseEventFile(input.event);
  const row = await eventRowOrThrow(trx, input.eventId, true);
  if (row.version !== input.expectedVersion)
    throw conflict(
      'STALE_EVENT_VERSION',
      `someone else changed this event since you opened it (you edited version ${input.expectedVersion}; it is now version ${row.version}): reload it and make your change again`,
      { field: 'version', expectedVersion: input.expectedVersion, currentVersion: row.version },
    );
  if (spec.listing) {
    const listing = await repo.findListing(trx, row.listing_id);
    const same = 'id' in spec.listing ? spec.listing.id === row.listing_id : spec.listing.name === listing?.name;
    if (!same) throw invalid('LISTING_FIXED', 'an event stays on its listing; create the event anew to put it on another', 'listing');
  }

  const tiers = await findAllocations(trx, row.id);
  // Locked: a registration waits for the edit, and then registers under the settings it leaves.
  const lottery = await lockLottery(trx, row.id);
  const before = await eventSpecOf(trx, row, tiers, lottery ?? null);
  const changes = diffEventSpecs(before, spec);
  const live = await findLiveSignoff(trx, row.id);
  if (changes.length === 0)
    return { eventId: row.id, version: row.version, changes, signOffRequired: live?.fairness_mode !== row.fairness_mode };

  const [hasFans, inUse, presaleFans] = await Promise.all([
    repo.queueHasFans(trx, row.id),
    repo.seatsInUse(trx, row.id),
    tiers.length > 0 ? presaleQueueHasFans(trx, row.id) : false,
  ]);
  const refused = refusedChanges(changes, {
    phase: eventPhase(row.onsale_at, now),
    now,
    queueHasFans: hasFans,
    seatsInUse: inUse,
    tiersStartAt: tiersStartAt(tiers),
    presaleQueueHasFans: presaleFans,
    lottery: lotteryContext(lottery),
  });
  if (refused.length > 0)
    throw new DomainError('conflict', refused[0]!.code, refused.map((r) => `${r.field}: ${r.message}`).join('; '), {
      field: refused[0]!.field,
      issues: refused.map((r) => ({ path: r.field, message: r.message })),
    });

  const changed = new Set(changes.map((c) => c.setting));
  let capacity = row.capacity;
  const layoutRewritten = changed.has('sections') || changed.has('priceLevels');
  if (layoutRewritten) {
    // Only reachable before the open with no seat in use (the rules above): the layout can be written anew.
    capacity = await rebuildLayout(trx, row.id, spec);
  }
  // New tiers (only before any opened, with no seat in use and nobody in a presale queue): seats, rows and queues
  // anew. Unchanged tiers follow the event's on-sale, fairness mode and layout.
  if (changed.has('allocations')) {
    if (!layoutRewritten) {
      // GA counters are split between the tiers too (no unit is in use: the rules above): split them anew.
      await repo.deleteGaShards(trx, row.id);
      await insertGaShards(
        trx,
        row.id,
        spec.sections.flatMap((s) => (s.kind === 'GA' ? [s] : [])),
        spec.allocations,
      );
    }
    await replaceAllocations(trx, row.id, spec, tierQueues, { seatsWritten: layoutRewritten });
  } else await alignAllocations(trx, row.id, spec, { layoutRewritten });
  const version = await repo.updateEvent(trx, row.id, eventColumns(spec, capacity));
  // After the event row: a new lottery is committed to the event as it now stands.
  if (changed.has('lottery')) await alignLottery(trx, row.id, spec.lottery, actor);
  let signOffRequired = live?.fairness_mode !== spec.fairnessMode;
  if (changed.has('fairnessMode')) {
    const reason = `fairness mode changed from ${row.fairness_mode} to ${spec.fairnessMode}`;
    const superseded = await supersedeSignoff(trx, row.id, actor, reason);
    if (superseded)
      await insertAudit(trx, {
        actor,
        action: 'event.fairness_signoff_superseded',
        eventId: row.id,
        details: { signOffId: superseded.id, signedOffBy: superseded.signed_off_by, reason },
      });
    signOffRequired = true;
  }
  await insertAudit(trx, { actor, action: 'event.updated', eventId: row.id, details: { fromVersion: row.version, version, changes } });
  return { eventId: row.id, version, changes, signOffRequired };
}

/**
 * Records the actor's sign-off of the event's fairness mode with the plain-words description fans are shown
 * (queue/fairness.ts), audited `event.fairness_signed_off`. `fairnessMode` is the mode the promoter read: if the
 * event's mode is another by now, FAIRNESS_MODE_CHANGED (conflict, field `fairnessMode`). Signing a mode that
 * already has a live sign-off returns that one (`alreadySignedOff`). An unsigned event does not open (see
 * signoff.service.ts), so signing it off is what opens it; a sale that opened unsigned (before sign-offs were
 * enforced) is refused SALE_ALREADY_OPEN.
 */
export async function signOffFairness(
  trx: Trx,
  input: { eventId: string; fairnessMode: FairnessMode },
  actor: string,
): Promise<{ signOff: FairnessSignOff; alreadySignedOff: boolean }> {
  const row = await eventRowOrThrow(trx, input.eventId, true);
  if (row.fairness_mode !== input.fairnessMode)
    throw conflict(
      'FAIRNESS_MODE_CHANGED',
      `the event's fairness mode is now ${row.fairness_mode}, not ${input.fairnessMode}: read its description and sign that off`,
      {
        field: 'fairnessMode',
        currentMode: row.fairness_mode,
      },
    );
  const live = await findLiveSignoff(trx, row.id);
  if (live && live.fairness_mode === row.fairness_mode) return { signOff: toSignOff(live), alreadySignedOff: true };
  // A sign-off is given before the sale opens; a sale that opened without one (before sign-offs were enforced) cannot be signed off afterwards.
  const openedAt = await repo.queueOpenedAt(trx, row.id);
  if (openedAt !== null)
    throw conflict(
      'SALE_ALREADY_OPEN',
      `this sale opened on ${openedAt.toISOString()} without a fairness sign-off; a sign-off is given before the open and cannot be added now`,
      {
        field: 'fairnessMode',
        openedAt: openedAt.toISOString(),
      },
    );
  const inserted = await insertFairnessSignOff(
    trx,
    { id: row.id, fairnessMode: row.fairness_mode, version: row.version },
    fairnessDescription(row.fairness_mode),
    actor,
    live ? `fairness mode is ${row.fairness_mode}, not ${live.fairness_mode}` : undefined,
  );
  return { signOff: toSignOff(inserted), alreadySignedOff: false };
}

/**
 * Sets a listing's waitlist settings, those given (audited `listing.waitlist`): the console's and the CLI's one
 * way to change them. INVALID_WAITLIST_SETTINGS at the field; LISTING_FORBIDDEN outside a promoter's scope.
 */
export async function setListingWaitlist(
  trx: Trx,
  input: { listingId: string } & ListingWaitlistChange,
  who: ConfigureActor,
): Promise<ListingWaitlistSettingsView> {
  const settings = parseWaitlist(waitlistChangeSchema, {
    mode: input.mode,
    ttlDays: input.ttlDays,
    offerTtlMinutes: input.offerTtlMinutes,
    inlineThreshold: input.inlineThreshold,
  });
  await requireListingInScope(trx, input.listingId, who.organisationId);
  await applyWaitlistSettings(trx, input.listingId, settings, who.actor);
  return toWaitlistView((await repo.findListing(trx, input.listingId))!);
}

/** A listing in the console's lists. */
export interface ListingOverview {
  id: string;
  name: string;
  waitlist: ListingWaitlistSettingsView;
  eventCount: number;
  liveEntries: number;
  createdAt: Date;
}

/** Listings with at least one event, newest first; with an organisation, only listings all of whose events are its. */
export async function listListings(db: Db | Trx, scope: { organisationId: string } | null): Promise<ListingOverview[]> {
  return (await repo.findListingsOverview(db, scope?.organisationId)).map((l) => ({
    id: l.id,
    name: l.name,
    waitlist: toWaitlistView(l),
    eventCount: l.event_count,
    liveEntries: l.live_entries,
    createdAt: l.created_at,
  }));
}

/** Every fairness sign-off of an event, newest first (superseded ones say who changed the mode, when and why). */
export async function listFairnessSignOffs(db: Db | Trx, eventId: string): Promise<FairnessSignOff[]> {
  if (!isUuid(eventId)) return [];
  return (await findSignoffs(db, eventId)).map(toSignOff);
}

// What other domains may use of this domain's repository (eslint-rules/onsale.js, onsale/domain-borders).
export * as configureRepository from './configure.repository.js';
