// Which settings of an event may change, and when. Pure (no I/O, zod-free): the console imports it to lock the
// fields a rule forbids, and the service applies it to every edit, so the two cannot disagree.
import type { EventSpec } from './events.schema.js';
import { rowLabel } from './layout.js';

/** Before the on-sale opens anything may change; from `onsale_at` on, only what is safe for fans already in it. */
export type EventPhase = 'BEFORE_OPEN' | 'OPEN';

/** The phase of an event at `now`: OPEN from `onsaleAt` on (the pre-open cohort is sealed then). */
export function eventPhase(onsaleAt: Date | string, now: Date = new Date()): EventPhase {
  return now.getTime() >= new Date(onsaleAt).getTime() ? 'OPEN' : 'BEFORE_OPEN';
}

/**
 * When a setting may change:
 * - `ANY_TIME`: display only, or read live (the controller's next tick, the next hold, the next status poll);
 * - `LOWER_AFTER_OPEN`: anything before the open, afterwards only lowered;
 * - `BEFORE_OPEN`: fixed once the on-sale opens.
 */
export type ChangeRule = 'ANY_TIME' | 'LOWER_AFTER_OPEN' | 'BEFORE_OPEN';

/** The settings of an event file an edit may touch, named by their path in the file (and in the form). */
export const EVENT_SETTINGS = [
  'name',
  'venueName',
  'timeZone',
  'currency',
  'startsAt',
  'onsaleAt',
  'seatPickingOpensAfterMinutes',
  'fairnessMode',
  'noSingleSeats',
  'tickets.deliveryAt',
  'tickets.deliveryHoursBeforeShow',
  'tickets.transferLimit',
  'tickets.resale',
  'tickets.resaleFeeCapPercent',
  'limits.perAccountSeats',
  'limits.perInstrumentSeats',
  'limits.perDeviceSeats',
  'holds.ttlSeconds',
  'holds.extensionSeconds',
  'pacing.targetSaleMinutes',
  'pacing.ticketsPerOrder',
  'pacing.checkoutMinutes',
  'pacing.paymentTps',
  'pacing.overbookFactor',
  'queueCopy',
  'look',
  'priceLevels',
  'sections',
  'allocations',
  'lottery',
] as const;
export type EventSetting = (typeof EVENT_SETTINGS)[number];

const pacingWhy = 'the admission controller reads the pacing inputs on its next tick; the plan follows';
const holdWhy = 'applies to holds made (and extensions granted) from the change on; a live hold keeps its expiry';
const limitWhy =
  'after the open a limit may only be lowered: a higher one would let each admitted fan take more seats than the admission plan assumed; holds and orders already made stand';

/** The rule of each setting, with the reason the console shows beside a locked field. */
export const EVENT_SETTING_RULES: Record<EventSetting, { rule: ChangeRule; why: string }> = {
  name: { rule: 'ANY_TIME', why: 'display only' },
  venueName: { rule: 'ANY_TIME', why: 'display only' },
  timeZone: { rule: 'ANY_TIME', why: 'display only: the times themselves stay the same instants' },
  currency: { rule: 'BEFORE_OPEN', why: 'seats are held and sold at prices in this currency' },
  startsAt: { rule: 'BEFORE_OPEN', why: 'fans queue and buy for this date, and the waitlist matches on it' },
  onsaleAt: { rule: 'BEFORE_OPEN', why: 'at the open the pre-open cohort is sealed and the seed revealed' },
  seatPickingOpensAfterMinutes: { rule: 'BEFORE_OPEN', why: 'announced to fans with the on-sale' },
  fairnessMode: { rule: 'BEFORE_OPEN', why: 'fans queue under the published, signed-off rule' },
  noSingleSeats: { rule: 'ANY_TIME', why: 'applies to holds made from the change on; seats already held or sold stand' },
  'tickets.deliveryAt': {
    rule: 'ANY_TIME',
    why: 'tickets not yet delivered follow the new time; a ticket already bound to a device stays delivered',
  },
  'tickets.deliveryHoursBeforeShow': {
    rule: 'ANY_TIME',
    why: 'tickets not yet delivered follow the new time; a ticket already bound to a device stays delivered',
  },
  'tickets.transferLimit': { rule: 'ANY_TIME', why: 'applies to transfers from the change on; transfers made stand' },
  'tickets.resale': {
    rule: 'ANY_TIME',
    why: 'applies to listings from the change on; tickets already listed stay listed until sold or withdrawn',
  },
  'tickets.resaleFeeCapPercent': { rule: 'ANY_TIME', why: 'applies to listings from the change on; listed prices stand' },
  'limits.perAccountSeats': { rule: 'LOWER_AFTER_OPEN', why: limitWhy },
  'limits.perInstrumentSeats': { rule: 'LOWER_AFTER_OPEN', why: limitWhy },
  'limits.perDeviceSeats': { rule: 'LOWER_AFTER_OPEN', why: limitWhy },
  'holds.ttlSeconds': { rule: 'ANY_TIME', why: holdWhy },
  'holds.extensionSeconds': { rule: 'ANY_TIME', why: holdWhy },
  'pacing.targetSaleMinutes': { rule: 'ANY_TIME', why: pacingWhy },
  'pacing.ticketsPerOrder': { rule: 'ANY_TIME', why: pacingWhy },
  'pacing.checkoutMinutes': { rule: 'ANY_TIME', why: pacingWhy },
  'pacing.paymentTps': { rule: 'ANY_TIME', why: pacingWhy },
  'pacing.overbookFactor': { rule: 'ANY_TIME', why: pacingWhy },
  queueCopy: { rule: 'ANY_TIME', why: 'fans read it on their next status poll' },
  look: { rule: 'ANY_TIME', why: 'fans see it when their page next loads; the words per state on their next status poll' },
  priceLevels: { rule: 'BEFORE_OPEN', why: 'seats are held and sold at these prices' },
  sections: { rule: 'BEFORE_OPEN', why: 'seats are held and sold in this layout' },
  allocations: { rule: 'BEFORE_OPEN', why: 'the presale tiers split the seats and each sells through its own queue' },
  lottery: { rule: 'BEFORE_OPEN', why: 'fans register under these settings and the draw is sized from them' },
};

/** One setting an edit changes. Sections and price levels are summarised (a stadium has 60,000 seats). */
export interface EventChange {
  setting: EventSetting;
  from: unknown;
  to: unknown;
}

/** A change the rules refuse, at the form field it concerns. */
export interface RefusedChange {
  setting: EventSetting;
  /** The form field (the setting's path in the event file). */
  field: string;
  code:
    | 'LOCKED_AFTER_OPEN'
    | 'LIMIT_RAISED_AFTER_OPEN'
    | 'ONSALE_NOT_IN_FUTURE'
    | 'QUEUE_HAS_FANS'
    | 'SEATS_IN_USE'
    | 'PRESALE_OPENED'
    | 'REGISTRATION_OPENED'
    | 'LOTTERY_DRAWN';
  message: string;
}

/** What the rules need to know about the event besides its settings. */
export interface ChangeContext {
  phase: EventPhase;
  now: Date;
  /** Fans have joined the waiting room: the published fairness rule is what they joined under. */
  queueHasFans: boolean;
  /** Some seat is held or sold: the layout and prices are in use. */
  seatsInUse: boolean;
  /**
   * When the event's first presale tier opens (or opened; or a tier was rolled forward early, if that came
   * first). Absent or null: the event has no tiers. From then on the tiers, and the seats they split, are selling.
   */
  tiersStartAt?: Date | null;
  /** Fans have joined a presale tier's own queue (the general sale's queue is `queueHasFans`). */
  presaleQueueHasFans?: boolean;
  /**
   * The event's registration lottery as it stands (absent or null: it has none): when registration opens (or
   * opened), how many fans have registered, and when the draw ran (null: not yet).
   */
  lottery?: { registrationOpensAt: Date; registrations: number; drawnAt: Date | null } | null;
}

type Rows = { label: string; seats: number }[];
type Section = EventSpec['sections'][number];

/** A reserved section's rows, whether written as rows or as a rowCount x seatsPerRow block; none for GA. */
export function sectionRows(s: Section): Rows {
  if (s.kind === 'GA') return [];
  return s.rows ?? Array.from({ length: s.rowCount ?? 0 }, (_, i) => ({ label: rowLabel(i), seats: s.seatsPerRow ?? 0 }));
}

/** Seats a section holds: its rows' seats, or a GA section's capacity. */
export const sectionCapacity = (s: Section): number => (s.kind === 'GA' ? s.capacity : sectionRows(s).reduce((m, r) => m + r.seats, 0));

/** An event's capacity from its sections as written: every reserved seat and every GA place (what creating it stores). */
export const seatCount = (sections: readonly Section[]): number => sections.reduce((n, s) => n + sectionCapacity(s), 0);

const byCode = (sections: Section[]) => [...sections].sort((a, b) => a.code.localeCompare(b.code));
const shape = (s: Section) => (s.kind === 'GA' ? ['GA', s.capacity, s.shards] : ['RESERVED', sectionRows(s)]);
const layoutKey = (sections: Section[]) => JSON.stringify(byCode(sections).map((s) => [s.code, shape(s)]));
const sectionsKey = (sections: Section[]) =>
  JSON.stringify(byCode(sections).map((s) => [s.code, s.name ?? `Section ${s.code}`, s.priceLevel, s.qualityRank, shape(s)]));

const priceLevelsKey = (levels: EventSpec['priceLevels']) =>
  JSON.stringify([...levels].sort((a, b) => a.code.localeCompare(b.code)).map((p) => [p.code, p.name, p.priceCents]));

/** JSON with object keys sorted at every level (jsonb gives them back in its own order). */
const canonical = (v: unknown): string =>
  v !== null && typeof v === 'object'
    ? Array.isArray(v)
      ? `[${v.map(canonical).join(',')}]`
      : `{${Object.entries(v as Record<string, unknown>)
          .filter(([, x]) => x !== undefined)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`)
          .join(',')}}`
    : JSON.stringify(v);

const copyKey = (copy: EventSpec['queueCopy']) =>
  JSON.stringify(
    Object.entries(copy ?? {})
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => a.localeCompare(b)),
  );

/** Same sections with the same rows of the same number of seats: the seats themselves need not change. */
export function sameLayout(a: Pick<EventSpec, 'sections'>, b: Pick<EventSpec, 'sections'>): boolean {
  return layoutKey(a.sections) === layoutKey(b.sections);
}

type Tiers = EventSpec['allocations'];
const iso = (t: string | undefined) => (t === undefined ? null : new Date(t).toISOString());

/**
 * Tiers as they take effect: a presale's roll defaults to its close; the general sale (the last tier) takes its
 * window and fairness mode from the event, so only its code, name and access rule are its own.
 */
const tiersKey = (tiers: Tiers) =>
  JSON.stringify(
    (tiers ?? []).map((t, i, all) => {
      const ranges = t.binRanges?.map((r) => [r.from, r.to]) ?? null;
      return i === all.length - 1
        ? [t.code, t.name, t.access, ranges]
        : [
            t.code,
            t.name,
            t.share ?? null,
            t.access,
            ranges,
            iso(t.opensAt),
            iso(t.closesAt),
            iso(t.rollsForwardAt ?? t.closesAt),
            t.fairnessMode,
          ];
    }),
  );

/** Lottery settings as they take effect (instants, the schema's defaults filled in); null without a lottery. */
function lotteryView(l: EventSpec['lottery']) {
  if (!l) return null;
  return {
    registrationOpensAt: iso(l.registrationOpensAt),
    registrationClosesAt: iso(l.registrationClosesAt),
    expectedConversion: l.expectedConversion,
    cohorts: l.cohorts,
    cohortMinutes: l.cohortMinutes,
  };
}

/** One line per tier for the audit log: code, name, share, access and window. */
export function tiersSummary(tiers: Tiers): string[] {
  return (tiers ?? []).map((t, i, all) =>
    i === all.length - 1
      ? `${t.code} ${t.name}: general sale, the rest, ${t.access}`
      : `${t.code} ${t.name}: ${Math.round((t.share ?? 0) * 1000) / 10}%, ${t.access}, ${iso(t.opensAt)} to ${iso(t.closesAt)}, rolls ${iso(t.rollsForwardAt ?? t.closesAt)}, ${t.fairnessMode}`,
  );
}

const layoutSummary = (sections: Section[]) => `${sections.length} section(s), ${seatCount(sections)} seats`;
const levelsSummary = (levels: EventSpec['priceLevels']) => levels.map((p) => `${p.code} ${p.name} ${p.priceCents}`);

/** The settings `after` changes from `before`, in EVENT_SETTINGS order. Times compare as instants. */
export function diffEventSpecs(before: EventSpec, after: EventSpec): EventChange[] {
  const changes: EventChange[] = [];
  const scalar = (setting: EventSetting, from: string | number | boolean, to: string | number | boolean) => {
    if (from !== to) changes.push({ setting, from, to });
  };
  const instant = (setting: EventSetting, from: string, to: string) => {
    if (Date.parse(from) !== Date.parse(to)) changes.push({ setting, from: new Date(from).toISOString(), to: new Date(to).toISOString() });
  };
  scalar('name', before.name, after.name);
  scalar('venueName', before.venueName, after.venueName);
  scalar('timeZone', before.timeZone, after.timeZone);
  scalar('currency', before.currency, after.currency);
  instant('startsAt', before.startsAt, after.startsAt);
  instant('onsaleAt', before.onsaleAt, after.onsaleAt);
  scalar('seatPickingOpensAfterMinutes', before.seatPickingOpensAfterMinutes, after.seatPickingOpensAfterMinutes);
  scalar('fairnessMode', before.fairnessMode, after.fairnessMode);
  scalar('noSingleSeats', before.noSingleSeats, after.noSingleSeats);
  const deliveryAt = (t: EventSpec['tickets']) => (t.deliveryAt !== undefined ? new Date(t.deliveryAt).toISOString() : '');
  scalar('tickets.deliveryAt', deliveryAt(before.tickets), deliveryAt(after.tickets));
  scalar('tickets.deliveryHoursBeforeShow', before.tickets.deliveryHoursBeforeShow ?? 0, after.tickets.deliveryHoursBeforeShow ?? 0);
  scalar('tickets.transferLimit', before.tickets.transferLimit, after.tickets.transferLimit);
  scalar('tickets.resale', before.tickets.resale, after.tickets.resale);
  scalar('tickets.resaleFeeCapPercent', before.tickets.resaleFeeCapPercent, after.tickets.resaleFeeCapPercent);
  scalar('limits.perAccountSeats', before.limits.perAccountSeats, after.limits.perAccountSeats);
  scalar('limits.perInstrumentSeats', before.limits.perInstrumentSeats, after.limits.perInstrumentSeats);
  // Left out, the device limit is the account limit: compare what is in force.
  scalar(
    'limits.perDeviceSeats',
    before.limits.perDeviceSeats ?? before.limits.perAccountSeats,
    after.limits.perDeviceSeats ?? after.limits.perAccountSeats,
  );
  scalar('holds.ttlSeconds', before.holds.ttlSeconds, after.holds.ttlSeconds);
  scalar('holds.extensionSeconds', before.holds.extensionSeconds, after.holds.extensionSeconds);
  scalar('pacing.targetSaleMinutes', before.pacing.targetSaleMinutes, after.pacing.targetSaleMinutes);
  scalar('pacing.ticketsPerOrder', before.pacing.ticketsPerOrder, after.pacing.ticketsPerOrder);
  scalar('pacing.checkoutMinutes', before.pacing.checkoutMinutes, after.pacing.checkoutMinutes);
  scalar('pacing.paymentTps', before.pacing.paymentTps, after.pacing.paymentTps);
  scalar('pacing.overbookFactor', before.pacing.overbookFactor, after.pacing.overbookFactor);
  if (copyKey(before.queueCopy) !== copyKey(after.queueCopy))
    changes.push({ setting: 'queueCopy', from: before.queueCopy ?? {}, to: after.queueCopy ?? {} });
  if (canonical(before.look ?? {}) !== canonical(after.look ?? {}))
    changes.push({ setting: 'look', from: before.look ?? {}, to: after.look ?? {} });
  if (priceLevelsKey(before.priceLevels) !== priceLevelsKey(after.priceLevels))
    changes.push({ setting: 'priceLevels', from: levelsSummary(before.priceLevels), to: levelsSummary(after.priceLevels) });
  if (sectionsKey(before.sections) !== sectionsKey(after.sections))
    changes.push({ setting: 'sections', from: layoutSummary(before.sections), to: layoutSummary(after.sections) });
  if (tiersKey(before.allocations) !== tiersKey(after.allocations))
    changes.push({ setting: 'allocations', from: tiersSummary(before.allocations), to: tiersSummary(after.allocations) });
  const [lotteryBefore, lotteryAfter] = [lotteryView(before.lottery), lotteryView(after.lottery)];
  if (JSON.stringify(lotteryBefore) !== JSON.stringify(lotteryAfter))
    changes.push({ setting: 'lottery', from: lotteryBefore, to: lotteryAfter });
  return changes;
}

const lotteryDrawn = (ctx: ChangeContext) => !!ctx.lottery?.drawnAt;
/** Registration has opened (or someone has registered, whatever the clock says). */
const registrationOpened = (ctx: ChangeContext) =>
  !!ctx.lottery && (ctx.lottery.registrations > 0 || ctx.lottery.registrationOpensAt.getTime() <= ctx.now.getTime());
const drawnMessage = (ctx: ChangeContext) =>
  `the draw ran at ${ctx.lottery!.drawnAt!.toISOString()}: the winners hold invitations for their purchase windows, and the published audit re-derives them from these settings`;
const registrationOpenedMessage = (ctx: ChangeContext) =>
  `registration opened at ${ctx.lottery!.registrationOpensAt.toISOString()}: fans registered under these settings and the draw is sized from them; they can no longer change`;

const tiersStarted = (ctx: ChangeContext) => !!ctx.tiersStartAt && ctx.tiersStartAt.getTime() <= ctx.now.getTime();
const tiersStartedMessage = (ctx: ChangeContext) =>
  `the first presale tier opened at ${ctx.tiersStartAt!.toISOString()}: the tiers, and the seats they split, are fixed once a tier is selling`;

/**
 * The changes the rules refuse (none: the edit may go ahead). Before the open: a new on-sale time must be in
 * the future, the fairness mode is fixed once a fan has joined the queue, and the layout and prices once a seat
 * is held or sold. Presale tiers may change only while no seat is in use, no fan has joined a presale's queue
 * and no tier has opened; once a tier has opened, the layout and prices it splits are fixed too. A registration
 * lottery's settings (and so a switch to or from REGISTRATION_LOTTERY) may change only until registration opens:
 * REGISTRATION_OPENED after that, LOTTERY_DRAWN once drawn, when the on-sale (which the winners' purchase windows
 * are counted from) is fixed too. From the open on: see EVENT_SETTING_RULES.
 */
export function refusedChanges(changes: EventChange[], ctx: ChangeContext): RefusedChange[] {
  const refused: RefusedChange[] = [];
  for (const c of changes) {
    const { rule, why } = EVENT_SETTING_RULES[c.setting];
    const refuse = (code: RefusedChange['code'], message: string) => refused.push({ setting: c.setting, field: c.setting, code, message });
    if ((c.setting === 'lottery' || c.setting === 'onsaleAt') && lotteryDrawn(ctx)) {
      refuse('LOTTERY_DRAWN', drawnMessage(ctx));
      continue;
    }
    if (c.setting === 'lottery' && registrationOpened(ctx)) {
      refuse('REGISTRATION_OPENED', registrationOpenedMessage(ctx));
      continue;
    }
    if (ctx.phase === 'OPEN') {
      if (rule === 'BEFORE_OPEN') refuse('LOCKED_AFTER_OPEN', `cannot change after the on-sale opened: ${why}`);
      else if (rule === 'LOWER_AFTER_OPEN' && Number(c.to) > Number(c.from))
        refuse('LIMIT_RAISED_AFTER_OPEN', `after the open this limit may only be lowered (it is ${String(c.from)})`);
      continue;
    }
    if (c.setting === 'onsaleAt' && Date.parse(String(c.to)) <= ctx.now.getTime())
      refuse(
        'ONSALE_NOT_IN_FUTURE',
        'the on-sale cannot be moved to now or the past: it would open at once, without the pre-open cohort fans were promised',
      );
    if (c.setting === 'fairnessMode' && ctx.queueHasFans)
      refuse('QUEUE_HAS_FANS', 'fans have already joined the queue under the published fairness mode; it can no longer change');
    if ((c.setting === 'sections' || c.setting === 'priceLevels' || c.setting === 'currency') && ctx.seatsInUse)
      refuse('SEATS_IN_USE', 'some seats are already held or sold in this layout at these prices');
    else if ((c.setting === 'sections' || c.setting === 'priceLevels') && tiersStarted(ctx))
      refuse('PRESALE_OPENED', tiersStartedMessage(ctx));
    if (c.setting === 'allocations') {
      if (ctx.seatsInUse) refuse('SEATS_IN_USE', 'some seats are already held or sold: the tiers that own them can no longer change');
      else if (tiersStarted(ctx)) refuse('PRESALE_OPENED', tiersStartedMessage(ctx));
      else if (ctx.presaleQueueHasFans)
        refuse('QUEUE_HAS_FANS', 'fans have already joined a presale queue under these tiers; they can no longer change');
    }
  }
  return refused;
}

/**
 * What the console should lock in an edit form now: settings no value could change, each with the reason.
 * (LOWER_AFTER_OPEN settings stay editable after the open, with the current value as their ceiling.)
 */
export function lockedSettings(ctx: ChangeContext): Partial<Record<EventSetting, string>> {
  const locked: Partial<Record<EventSetting, string>> = {};
  for (const s of EVENT_SETTINGS) {
    const { rule, why } = EVENT_SETTING_RULES[s];
    if (ctx.phase === 'OPEN' && rule === 'BEFORE_OPEN') locked[s] = `fixed since the on-sale opened: ${why}`;
  }
  if (ctx.phase === 'BEFORE_OPEN' && ctx.queueHasFans)
    locked.fairnessMode = 'fixed: fans have already joined the queue under the published mode';
  if (ctx.phase === 'BEFORE_OPEN' && ctx.seatsInUse) {
    locked.sections = 'fixed: some seats are already held or sold';
    locked.priceLevels = 'fixed: some seats are already held or sold';
    locked.currency = 'fixed: some seats are already held or sold';
    locked.allocations = 'fixed: some seats are already held or sold';
  } else if (ctx.phase === 'BEFORE_OPEN' && tiersStarted(ctx)) {
    const why = `fixed: the first presale tier opened at ${ctx.tiersStartAt!.toISOString()}`;
    locked.sections = why;
    locked.priceLevels = why;
    locked.allocations = why;
  } else if (ctx.phase === 'BEFORE_OPEN' && ctx.presaleQueueHasFans) locked.allocations = 'fixed: fans have already joined a presale queue';
  // A lottery's own reasons are the more telling ones, before the open and after it.
  if (lotteryDrawn(ctx)) {
    const why = `fixed: the draw ran at ${ctx.lottery!.drawnAt!.toISOString()}`;
    locked.lottery = why;
    locked.fairnessMode = why;
    locked.onsaleAt = `${why}: the winners' purchase windows are counted from the on-sale`;
  } else if (registrationOpened(ctx)) {
    const why = `fixed: registration opened at ${ctx.lottery!.registrationOpensAt.toISOString()} and fans register under these settings`;
    locked.lottery = why;
    locked.fairnessMode = why;
  }
  return locked;
}
