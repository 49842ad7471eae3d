// The event form's state and its two translations: an event file (the CLI's JSON, or the BFF's answer) into what
// the inputs show, and the inputs back into an event file for `eventFileSchema`. Pure: no React, no I/O.
import { rowLabel, type EventFile } from '@onsale/shared/sale-setup/schema';
import { QUEUE_STATES } from '@onsale/shared/queue/copy';
import { instantOfWallTime, minorUnitsPerUnit, wallTimeOf } from '@onsale/shared/words';
import { emptyLook, lookDraftOf, lookOfDraft, type LookDraft } from './look-draft';
import { emptyTicketsDraft, ticketsDraftOf, ticketsOfDraft, type TicketsDraft } from './ticket-draft';

export { QUEUE_STATES };
export type QueueState = (typeof QUEUE_STATES)[number];

/** How a section's seats are written: a block of rows x seats, row by row, or general admission (a capacity). */
export type SectionLayout = 'grid' | 'rows' | 'ga';

export interface SectionDraft {
  /** React key; not part of the file. */
  key: string;
  layout: SectionLayout;
  code: string;
  name: string;
  priceLevel: string;
  qualityRank: string;
  rowCount: string;
  seatsPerRow: string;
  /** Row by row: one row per line, "LABEL SEATS" (e.g. "A 12"). */
  rowsText: string;
  capacity: string;
  shards: string;
}

export const TIER_ACCESS = ['OPEN', 'ACCESS_CODE', 'CARD_BIN'] as const;

/**
 * A presale tier as typed. The last tier of the list is the general sale: only its code, name and access rule
 * are its own (it opens at the event's on-sale, under the event's fairness mode, with the seats the others leave);
 * its other inputs are kept while it is last, in case it is moved back up, but are not part of the file.
 */
export interface TierDraft {
  key: string;
  code: string;
  name: string;
  /** Percent of every section, as typed ("30"); the file has a fraction (0.3). */
  sharePct: string;
  access: string;
  /** Card ranges, one "FROM-TO" per line (the first 6-8 digits of a card number). */
  binRangesText: string;
  opensAt: string;
  opensAtIso: string | null;
  closesAt: string;
  closesAtIso: string | null;
  /** Empty: the seats roll forward when the window closes. */
  rollsForwardAt: string;
  rollsForwardAtIso: string | null;
  fairnessMode: string;
}

/**
 * A registration lottery's settings as typed (the event file's `lottery`, part of the file only while the fairness
 * mode is REGISTRATION_LOTTERY; kept while another mode is chosen, in case it is chosen back).
 */
export interface LotteryDraft {
  registrationOpensAt: string;
  registrationOpensAtIso: string | null;
  registrationClosesAt: string;
  registrationClosesAtIso: string | null;
  /** Percent of winners expected to buy, as typed ("80"); the file has a fraction (0.8). */
  expectedConversionPct: string;
  cohorts: string;
  cohortMinutes: string;
}

export interface PriceLevelDraft {
  key: string;
  code: string;
  name: string;
  /** In currency units as typed ("65.00"); the file has integer cents. */
  price: string;
}

/** Every input of the form, as typed (numbers are strings until they are checked). */
export interface EventDraft {
  name: string;
  venueName: string;
  /** The venue's IANA time zone: every date-time input of the form is a wall-clock time there. */
  timeZone: string;
  /** ISO 4217: the currency the prices are typed in. */
  currency: string;
  /** Date-times as a datetime-local input shows them (in the venue's zone), with the ISO text they came from. */
  startsAt: string;
  startsAtIso: string | null;
  onsaleAt: string;
  onsaleAtIso: string | null;
  /** "Open the sale now": the on-sale is the moment the file is made (Create), whatever `onsaleAt` says. */
  onsaleNow: boolean;
  seatPickingOpensAfterMinutes: string;
  fairnessMode: string;
  perAccountSeats: string;
  perInstrumentSeats: string;
  perDeviceSeats: string;
  ttlSeconds: string;
  extensionSeconds: string;
  /** "No single seats": 'true' (the default) or 'false'. */
  noSingleSeats: 'true' | 'false';
  /** Delivery, transfers and the face-value exchange (ticket-draft.ts). */
  tickets: TicketsDraft;
  targetSaleMinutes: string;
  ticketsPerOrder: string;
  checkoutMinutes: string;
  paymentTps: string;
  overbookFactor: string;
  queueCopy: Record<QueueState, string>;
  /** The fans' page: logo, colours, the words per state in Spanish (LookEditor). */
  look: LookDraft;
  priceLevels: PriceLevelDraft[];
  sections: SectionDraft[];
  /** Presale tiers in sale order, the general sale last; empty: one general sale of every seat. */
  allocations: TierDraft[];
  lottery: LotteryDraft;
}

let keySeq = 0;
export const newKey = () => `k${++keySeq}`;

export const emptySection = (priceLevel = ''): SectionDraft => ({
  key: newKey(),
  layout: 'grid',
  code: '',
  name: '',
  priceLevel,
  qualityRank: '1',
  rowCount: '',
  seatsPerRow: '',
  rowsText: '',
  capacity: '',
  shards: '',
});

export const emptyPriceLevel = (): PriceLevelDraft => ({ key: newKey(), code: '', name: '', price: '' });

export const emptyTier = (over: Partial<TierDraft> = {}): TierDraft => ({
  key: newKey(),
  code: '',
  name: '',
  sharePct: '',
  access: 'OPEN',
  binRangesText: '',
  opensAt: '',
  opensAtIso: null,
  closesAt: '',
  closesAtIso: null,
  rollsForwardAt: '',
  rollsForwardAtIso: null,
  fairnessMode: 'RANDOMIZED_PREOPEN_THEN_FIFO',
  ...over,
});

/** The lottery inputs before anything is typed: the schema's defaults (80% conversion, 4 windows of an hour). */
export const emptyLottery = (): LotteryDraft => ({
  registrationOpensAt: '',
  registrationOpensAtIso: null,
  registrationClosesAt: '',
  registrationClosesAtIso: null,
  expectedConversionPct: '80',
  cohorts: '4',
  cohortMinutes: '60',
});

/** What "Add presale tiers" starts from: one presale and the general sale. */
export const starterTiers = (): TierDraft[] => [
  emptyTier({ code: 'PRESALE', name: 'Presale', sharePct: '20' }),
  emptyTier({ code: 'GENERAL', name: 'General sale' }),
];

/** A new event's form: the schema's defaults filled in, one price level and one section to start from. */
export function newEventDraft(): EventDraft {
  return {
    name: '',
    venueName: '',
    // A new event starts in the operator's own zone; the venue's is chosen in the form.
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC',
    currency: 'USD',
    startsAt: '',
    startsAtIso: null,
    onsaleAt: '',
    onsaleAtIso: null,
    onsaleNow: false,
    seatPickingOpensAfterMinutes: '30',
    fairnessMode: 'RANDOMIZED_PREOPEN_THEN_FIFO',
    perAccountSeats: '4',
    perInstrumentSeats: '4',
    perDeviceSeats: '',
    ttlSeconds: '360',
    extensionSeconds: '180',
    noSingleSeats: 'true',
    tickets: emptyTicketsDraft(),
    targetSaleMinutes: '25',
    ticketsPerOrder: '2.5',
    checkoutMinutes: '6',
    paymentTps: '1000',
    overbookFactor: '1.3',
    queueCopy: { WAITING: '', PAUSED: '', ADMITTED: '', LAST_CHANCE: '', SOLD_OUT: '' },
    look: emptyLook(),
    priceLevels: [emptyPriceLevel()],
    sections: [emptySection()],
    allocations: [],
    lottery: emptyLottery(),
  };
}

const pad = (n: number) => String(n).padStart(2, '0');

/** An ISO instant as a datetime-local value in this browser's zone (seconds kept when not 0). '' for anything else. */
export function localInputOf(iso: unknown): string {
  if (typeof iso !== 'string') return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  // Whole minutes without seconds, as the browser itself writes a datetime-local value.
  const seconds = d.getSeconds() === 0 ? '' : `:${pad(d.getSeconds())}`;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}${seconds}`;
}

/** A form field's text for a value read from an event file: primitives as written, anything else as JSON. */
const text = (v: unknown): string => {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v);
};
const obj = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function sectionDraftOf(raw: unknown): SectionDraft {
  const s = obj(raw);
  const base = {
    ...emptySection(),
    code: text(s.code),
    name: text(s.name),
    priceLevel: text(s.priceLevel),
    qualityRank: text(s.qualityRank),
  };
  if (s.kind === 'GA') return { ...base, layout: 'ga', capacity: text(s.capacity), shards: text(s.shards) };
  const rows = arr(s.rows).map(obj);
  if (rows.length > 0) {
    // A block whose labels are A, B, C... with equal rows reads better as rows x seats.
    const first = rows[0]!;
    const grid = rows.every((r, i) => r.label === rowLabel(i) && r.seats === first.seats);
    if (grid) return { ...base, layout: 'grid', rowCount: String(rows.length), seatsPerRow: text(first.seats) };
    return { ...base, layout: 'rows', rowsText: rows.map((r) => `${text(r.label)} ${text(r.seats)}`).join('\n') };
  }
  return { ...base, layout: 'grid', rowCount: text(s.rowCount), seatsPerRow: text(s.seatsPerRow) };
}

/** A fraction (0.3) as the percent the form shows ("30"), without float noise. */
const percentOf = (share: unknown): string => (typeof share === 'number' ? String(Math.round(share * 1e6) / 1e4) : text(share));

function lotteryDraftOf(raw: unknown, zone: string): LotteryDraft {
  if (raw === undefined) return emptyLottery();
  const l = obj(raw);
  const d = emptyLottery();
  const time = (v: unknown) => ({ local: wallTimeOf(v, zone) || text(v), iso: typeof v === 'string' ? v : null });
  const [opens, closes] = [time(l.registrationOpensAt), time(l.registrationClosesAt)];
  return {
    registrationOpensAt: opens.local,
    registrationOpensAtIso: opens.iso,
    registrationClosesAt: closes.local,
    registrationClosesAtIso: closes.iso,
    expectedConversionPct: l.expectedConversion === undefined ? d.expectedConversionPct : percentOf(l.expectedConversion),
    cohorts: l.cohorts === undefined ? d.cohorts : text(l.cohorts),
    cohortMinutes: l.cohortMinutes === undefined ? d.cohortMinutes : text(l.cohortMinutes),
  };
}

function tierDraftOf(raw: unknown, zone: string): TierDraft {
  const t = obj(raw);
  const time = (v: unknown) => ({ local: wallTimeOf(v, zone) || text(v), iso: typeof v === 'string' ? v : null });
  const [opens, closes, rolls] = [time(t.opensAt), time(t.closesAt), time(t.rollsForwardAt)];
  return emptyTier({
    code: text(t.code),
    name: text(t.name),
    sharePct: percentOf(t.share),
    access: t.access === undefined ? 'OPEN' : text(t.access),
    binRangesText: arr(t.binRanges)
      .map(obj)
      .map((r) => (r.from === r.to ? text(r.from) : `${text(r.from)}-${text(r.to)}`))
      .join('\n'),
    opensAt: opens.local,
    opensAtIso: opens.iso,
    closesAt: closes.local,
    closesAtIso: closes.iso,
    rollsForwardAt: rolls.local,
    rollsForwardAtIso: rolls.iso,
    fairnessMode: t.fairnessMode === undefined ? 'RANDOMIZED_PREOPEN_THEN_FIFO' : text(t.fairnessMode),
  });
}

/**
 * The form for an event file (the JSON the CLI takes, or the event as the BFF reads it back). Whatever the file
 * gets wrong stays as it is, for the schema to point at.
 */
export function draftFromFile(input: unknown): EventDraft {
  const f = obj(input);
  const limits = obj(f.limits);
  const holds = obj(f.holds);
  const pacing = obj(f.pacing);
  const copy = obj(f.queueCopy);
  const d = newEventDraft();
  const or = (v: unknown, fallback: string) => (v === undefined ? fallback : text(v));
  // The file's times are instants; the form shows them on the venue's clock (a file without a zone: UTC, as the schema).
  const zone = typeof f.timeZone === 'string' && f.timeZone.trim() !== '' ? f.timeZone : 'UTC';
  const currency = typeof f.currency === 'string' && f.currency.trim() !== '' ? f.currency : 'USD';
  const unit = minorUnitsPerUnit(currency);
  return {
    name: text(f.name),
    venueName: text(f.venueName),
    timeZone: zone,
    currency,
    startsAt: wallTimeOf(f.startsAt, zone) || text(f.startsAt),
    startsAtIso: typeof f.startsAt === 'string' ? f.startsAt : null,
    onsaleAt: wallTimeOf(f.onsaleAt, zone) || text(f.onsaleAt),
    onsaleAtIso: typeof f.onsaleAt === 'string' ? f.onsaleAt : null,
    onsaleNow: false,
    seatPickingOpensAfterMinutes: or(f.seatPickingOpensAfterMinutes, d.seatPickingOpensAfterMinutes),
    fairnessMode: or(f.fairnessMode, d.fairnessMode),
    perAccountSeats: or(limits.perAccountSeats, d.perAccountSeats),
    perInstrumentSeats: or(limits.perInstrumentSeats, d.perInstrumentSeats),
    perDeviceSeats: text(limits.perDeviceSeats),
    ttlSeconds: or(holds.ttlSeconds, d.ttlSeconds),
    extensionSeconds: or(holds.extensionSeconds, d.extensionSeconds),
    noSingleSeats: f.noSingleSeats === false ? 'false' : 'true',
    tickets: ticketsDraftOf(f.tickets, zone),
    targetSaleMinutes: or(pacing.targetSaleMinutes, d.targetSaleMinutes),
    ticketsPerOrder: or(pacing.ticketsPerOrder, d.ticketsPerOrder),
    checkoutMinutes: or(pacing.checkoutMinutes, d.checkoutMinutes),
    paymentTps: or(pacing.paymentTps, d.paymentTps),
    overbookFactor: or(pacing.overbookFactor, d.overbookFactor),
    queueCopy: Object.fromEntries(QUEUE_STATES.map((s) => [s, text(copy[s])])) as Record<QueueState, string>,
    look: lookDraftOf(f.look),
    priceLevels: arr(f.priceLevels).map((raw) => {
      const p = obj(raw);
      const cents = p.priceCents;
      return {
        key: newKey(),
        code: text(p.code),
        name: text(p.name),
        price: typeof cents === 'number' ? (cents / unit).toFixed(Math.log10(unit)) : text(cents),
      };
    }),
    sections: arr(f.sections).map(sectionDraftOf),
    allocations: arr(f.allocations).map((t) => tierDraftOf(t, zone)),
    lottery: lotteryDraftOf(f.lottery, zone),
  };
}

/** The listing part of an imported file, for the form's listing choice. */
export function listingOfFile(input: unknown): { name: string } | { id: string } | undefined {
  const l = obj(obj(input).listing);
  if (typeof l.id === 'string') return { id: l.id };
  if (typeof l.name === 'string') return { name: l.name };
  return undefined;
}

/**
 * The event file the form amounts to, and the inputs that are not even numbers ("enter a number" at the field,
 * where the schema would only say NaN). Empty optional inputs are left out, so the schema's defaults apply.
 * "Open the sale now" makes the on-sale `now`.
 */
export function fileFromDraft(d: EventDraft, now: Date = new Date()): { file: EventFile; problems: Record<string, string> } {
  const problems: Record<string, string> = {};
  const num = (path: string, v: string, opts: { optional?: boolean } = {}): number | undefined => {
    const t = v.trim();
    if (t === '') {
      if (!opts.optional) problems[path] = 'enter a number';
      return undefined;
    }
    const n = Number(t);
    if (!Number.isFinite(n)) problems[path] = 'enter a number';
    return n;
  };
  // Inputs are wall-clock times at the venue: read them in its zone.
  const instant = (local: string, iso: string | null): string => {
    if (iso !== null && wallTimeOf(iso, d.timeZone) === local) return iso; // untouched: keep the exact instant it came as
    const t = local.trim();
    if (t === '') return t;
    return instantOfWallTime(t, d.timeZone) ?? t;
  };
  const unit = minorUnitsPerUnit(d.currency);
  const optionalObject = <T extends Record<string, unknown>>(o: T): T | undefined =>
    Object.values(o).every((v) => v === undefined) ? undefined : o;

  const copy = Object.fromEntries(QUEUE_STATES.flatMap((s) => (d.queueCopy[s].trim() === '' ? [] : [[s, d.queueCopy[s]]])));
  const file: Record<string, unknown> = {
    name: d.name,
    venueName: d.venueName,
    timeZone: d.timeZone,
    currency: d.currency,
    startsAt: instant(d.startsAt, d.startsAtIso),
    onsaleAt: d.onsaleNow ? now.toISOString() : instant(d.onsaleAt, d.onsaleAtIso),
    seatPickingOpensAfterMinutes: num('seatPickingOpensAfterMinutes', d.seatPickingOpensAfterMinutes, { optional: true }),
    fairnessMode: d.fairnessMode,
    noSingleSeats: d.noSingleSeats !== 'false',
    tickets: ticketsOfDraft(d.tickets, d.timeZone, problems),
    limits: optionalObject({
      perAccountSeats: num('limits.perAccountSeats', d.perAccountSeats, { optional: true }),
      perInstrumentSeats: num('limits.perInstrumentSeats', d.perInstrumentSeats, { optional: true }),
      perDeviceSeats: num('limits.perDeviceSeats', d.perDeviceSeats, { optional: true }),
    }),
    holds: optionalObject({
      ttlSeconds: num('holds.ttlSeconds', d.ttlSeconds, { optional: true }),
      extensionSeconds: num('holds.extensionSeconds', d.extensionSeconds, { optional: true }),
    }),
    pacing: optionalObject({
      targetSaleMinutes: num('pacing.targetSaleMinutes', d.targetSaleMinutes, { optional: true }),
      ticketsPerOrder: num('pacing.ticketsPerOrder', d.ticketsPerOrder, { optional: true }),
      checkoutMinutes: num('pacing.checkoutMinutes', d.checkoutMinutes, { optional: true }),
      paymentTps: num('pacing.paymentTps', d.paymentTps, { optional: true }),
      overbookFactor: num('pacing.overbookFactor', d.overbookFactor, { optional: true }),
    }),
    ...(Object.keys(copy).length > 0 ? { queueCopy: copy } : {}),
    ...(lookOfDraft(d.look) ? { look: lookOfDraft(d.look) } : {}),
    priceLevels: d.priceLevels.map((p, i) => {
      const price = num(`priceLevels.${i}.priceCents`, p.price);
      return { code: p.code, name: p.name, priceCents: price === undefined || Number.isNaN(price) ? price : Math.round(price * unit) };
    }),
    sections: d.sections.map((s, i) => {
      const base = {
        code: s.code,
        ...(s.name.trim() === '' ? {} : { name: s.name }),
        priceLevel: s.priceLevel,
        qualityRank: num(`sections.${i}.qualityRank`, s.qualityRank),
      };
      if (s.layout === 'ga')
        return {
          kind: 'GA',
          ...base,
          capacity: num(`sections.${i}.capacity`, s.capacity),
          shards: num(`sections.${i}.shards`, s.shards, { optional: true }),
        };
      if (s.layout === 'grid')
        return {
          ...base,
          rowCount: num(`sections.${i}.rowCount`, s.rowCount),
          seatsPerRow: num(`sections.${i}.seatsPerRow`, s.seatsPerRow),
        };
      const rows = s.rowsText
        .split(/[\n,;]+/)
        .map((line) => line.trim())
        .filter((line) => line !== '')
        .map((line) => {
          const m = /^(\S+)\s*[: ]\s*(\S+)$/.exec(line);
          if (!m) {
            problems[`sections.${i}.rows`] = `write each row as LABEL SEATS, e.g. "A 12" (not "${line}")`;
            return { label: line, seats: Number.NaN };
          }
          const seats = Number(m[2]);
          if (!Number.isFinite(seats)) problems[`sections.${i}.rows`] = `row ${m[1]}: the seats must be a number`;
          return { label: m[1]!, seats };
        });
      return { ...base, rows };
    }),
    ...(d.allocations.length > 0 ? { allocations: d.allocations.map((t, i) => tierOfDraft(t, i, i === d.allocations.length - 1)) } : {}),
    ...(d.fairnessMode === 'REGISTRATION_LOTTERY' ? { lottery: lotteryOfDraft(d.lottery) } : {}),
  };
  return { file: file as unknown as EventFile, problems };

  function lotteryOfDraft(l: LotteryDraft): Record<string, unknown> {
    const pct = num('lottery.expectedConversion', l.expectedConversionPct, { optional: true });
    if (pct !== undefined && Number.isFinite(pct) && !(pct > 0 && pct <= 100))
      problems['lottery.expectedConversion'] = 'a percentage above 0, at most 100';
    return {
      registrationOpensAt: instant(l.registrationOpensAt, l.registrationOpensAtIso),
      registrationClosesAt: instant(l.registrationClosesAt, l.registrationClosesAtIso),
      ...(pct === undefined ? {} : { expectedConversion: Number.isFinite(pct) ? Math.round(pct * 1e4) / 1e6 : pct }),
      cohorts: num('lottery.cohorts', l.cohorts, { optional: true }),
      cohortMinutes: num('lottery.cohortMinutes', l.cohortMinutes, { optional: true }),
    };
  }

  function tierOfDraft(t: TierDraft, i: number, general: boolean): Record<string, unknown> {
    const p = `allocations.${i}`;
    const parsed = t.access === 'CARD_BIN' ? binRangesOf(t.binRangesText, `${p}.binRanges`) : [];
    // None typed: left out, so the schema says a CARD_BIN tier needs its ranges.
    const ranges = parsed.length > 0 ? { binRanges: parsed } : {};
    const own = { code: t.code, name: t.name, access: t.access, ...ranges };
    if (general) return own;
    const pct = num(`${p}.share`, t.sharePct, { optional: true });
    if (pct !== undefined && Number.isFinite(pct) && !(pct > 0 && pct <= 100)) problems[`${p}.share`] = 'a percentage above 0, at most 100';
    const rolls = t.rollsForwardAt.trim() === '' ? {} : { rollsForwardAt: instant(t.rollsForwardAt, t.rollsForwardAtIso) };
    return {
      ...own,
      ...(pct === undefined ? {} : { share: Number.isFinite(pct) ? Math.round(pct * 1e4) / 1e6 : pct }),
      ...(t.opensAt.trim() === '' ? {} : { opensAt: instant(t.opensAt, t.opensAtIso) }),
      ...(t.closesAt.trim() === '' ? {} : { closesAt: instant(t.closesAt, t.closesAtIso) }),
      ...rolls,
      fairnessMode: t.fairnessMode,
    };
  }

  function binRangesOf(textIn: string, path: string): { from: string; to: string }[] {
    return textIn
      .split(/[\n,;]+/)
      .map((line) => line.trim())
      .filter((line) => line !== '')
      .map((line) => {
        const m = /^(\d+)(?:\s*[-–]\s*(\d+))?$/.exec(line);
        if (!m) {
          problems[path] = `write each range as FROM-TO, e.g. "411100-411199" (not "${line}")`;
          return { from: line, to: line };
        }
        return { from: m[1]!, to: m[2] ?? m[1]! };
      });
  }
}

/** The first message at `path` or under it (`sections.0` shows what `sections.0.rows.2.label` says). */
export function errorAt(errors: Record<string, string>, path: string): string | undefined {
  if (errors[path]) return errors[path];
  const key = Object.keys(errors).find((k) => k.startsWith(`${path}.`));
  return key ? errors[key] : undefined;
}
