import { z } from 'zod';
import '../words/zod-messages.js';
import { DEFAULT_GA_SHARDS, MAX_GA_SHARDS, MAX_HOLD_EXTENSION_SECONDS } from './limits.js';
import { allocationSchema } from './allocations.schema.js';
import { lotterySettingsSchema } from './lottery.schema.js';
import { fairnessModes } from './fairness-modes.js';
import { isTimeZone } from '../words/time.js';
import { isCurrency } from '../words/money.js';
import { lookSchema } from './look.schema.js';

export { fairnessModes };

const code = z
  .string()
  .min(1)
  .max(32)
  .regex(/^[A-Za-z0-9_-]+$/, 'use letters, digits, "-" and "_" only (no spaces)');

const rowSchema = z.object({
  label: z.string().min(1).max(8),
  seats: z.number().int().min(1).max(200),
});

const reservedSectionSchema = z
  .object({
    kind: z.literal('RESERVED').optional(),
    code,
    name: z.string().min(1).max(120).optional(),
    priceLevel: code,
    /** 1 is the best section in the house; best-available prefers lower ranks when asked for no section. */
    qualityRank: z.number().int().min(1).max(10_000),
    /** Explicit rows, front to back... */
    rows: z.array(rowSchema).min(1).max(200).optional(),
    /** ...or a rectangular block: rows labelled A, B, ... (AA, AB, ... past Z). */
    rowCount: z.number().int().min(1).max(200).optional(),
    seatsPerRow: z.number().int().min(1).max(200).optional(),
  })
  .superRefine((s, ctx) => {
    const grid = s.rowCount !== undefined || s.seatsPerRow !== undefined;
    if (s.rows && grid)
      ctx.addIssue({
        code: 'custom',
        path: ['rows'],
        message: 'give either the rows one by one or a number of rows and seats per row, not both',
      });
    if (!s.rows && !(s.rowCount !== undefined && s.seatsPerRow !== undefined))
      ctx.addIssue({ code: 'custom', path: ['rows'], message: 'give the number of rows and the seats per row (or the rows one by one)' });
    if (s.rows) {
      const seen = new Set<string>();
      s.rows.forEach((r, i) => {
        if (seen.has(r.label))
          ctx.addIssue({
            code: 'custom',
            path: ['rows', i, 'label'],
            message: `row ${r.label} appears twice; give each row its own label`,
          });
        seen.add(r.label);
      });
    }
  });

const noSeatRows = z.undefined({ error: 'a GA section has a capacity, not seat rows' }).optional();

/** General admission: a capacity of identical units (a counter split into `shards` rows), no seat rows. */
const gaSectionSchema = z.object({
  kind: z.literal('GA'),
  code,
  name: z.string().min(1).max(120).optional(),
  priceLevel: code,
  qualityRank: z.number().int().min(1).max(10_000).default(1),
  capacity: z.number().int('enter a whole number of places').min(1).max(1_000_000),
  /** More shards, fewer holds waiting on one counter row; a hold that must span shards locks them all. */
  shards: z.number().int().min(1).max(MAX_GA_SHARDS).default(DEFAULT_GA_SHARDS),
  rows: noSeatRows,
  rowCount: noSeatRows,
  seatsPerRow: noSeatRows,
});

/** A section: reserved seats (`kind` omitted or RESERVED) or general admission (`kind: 'GA'`). */
const sectionSchema = z.discriminatedUnion('kind', [reservedSectionSchema, gaSectionSchema]);

const isoDate = (what: string) => z.iso.datetime({ offset: true, error: `enter the date and time ${what}` });

/** The venue's IANA time zone ("Europe/London"): the console shows and takes the event's times in it. */
export const timeZoneSchema = z
  .string({ error: 'choose the time zone of the venue' })
  .trim()
  .refine(isTimeZone, 'choose a time zone from the list, such as Europe/London');

/** The currency of the event's prices (ISO 4217). */
export const currencySchema = z
  .string({ error: 'choose the currency of the prices' })
  .trim()
  .toUpperCase()
  .refine(isCurrency, 'choose a currency from the list, such as EUR or USD');

/** Most moves of one ticket to a new device a fan may make (support can reissue beyond it). */
export const MAX_DEVICE_MOVES = 3;

/**
 * An event's ticket settings. Delivery: at a time (`deliveryAt`), or `deliveryHoursBeforeShow` hours before the
 * show, or (both left out) at once; before it a fan sees the ticket and when it arrives, but no code. Transfers:
 * how many times one seat's ticket may pass to another account (0: never). Resale: the face-value exchange on or
 * off, and the most a seller may add to face value, as a percentage of it.
 */
export const ticketSettingsSchema = z
  .object({
    deliveryAt: isoDate('tickets are delivered').optional(),
    deliveryHoursBeforeShow: z
      .number({ error: 'enter a whole number of hours' })
      .int('enter a whole number of hours')
      .min(1, 'at least 1 hour')
      .max(24 * 365, 'at most a year (8760 hours)')
      .optional(),
    transferLimit: z.number({ error: 'enter a number' }).int('enter a whole number').min(0, 'at least 0').max(10, 'at most 10').default(1),
    resale: z.boolean({ error: 'true or false' }).default(true),
    resaleFeeCapPercent: z
      .number({ error: 'enter a percentage' })
      .int('enter a whole percentage')
      .min(0, 'at least 0%')
      .max(100, 'at most 100%')
      .default(10),
  })
  .strict()
  .superRefine((t, ctx) => {
    if (t.deliveryAt !== undefined && t.deliveryHoursBeforeShow !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['deliveryHoursBeforeShow'],
        message: 'give either a delivery time or a number of hours before the show, not both',
      });
  });
export type TicketSettings = z.output<typeof ticketSettingsSchema>;
export const DEFAULT_TICKET_SETTINGS = { transferLimit: 1, resale: true, resaleFeeCapPercent: 10 } as const;

/** The event file the CLI and the console take: an event, its venue layout, prices and on-sale settings. */
export const eventFileSchema = z
  .object({
    name: z.string({ error: "enter the event's name" }).trim().min(1, "enter the event's name").max(200, 'at most 200 characters'),
    venueName: z.string({ error: "enter the venue's name" }).trim().min(1, "enter the venue's name").max(200, 'at most 200 characters'),
    listing: z.union([z.object({ name: z.string().min(1).max(200) }), z.object({ id: z.uuid() })]).optional(),
    /** The venue's time zone; left out: UTC. Times in the file are instants (with their offset) whatever it is. */
    timeZone: timeZoneSchema.default('UTC'),
    /** The prices' currency; left out: USD. `priceCents` are its minor units (cents, pence; yen for JPY). */
    currency: currencySchema.default('USD'),
    startsAt: isoDate('the show starts'),
    onsaleAt: isoDate('the on-sale opens'),
    /** Minutes after the open from which fans may pick exact seats; best-available only before. */
    seatPickingOpensAfterMinutes: z
      .number()
      .int()
      .min(0)
      .max(7 * 24 * 60)
      .default(30),
    fairnessMode: z.enum(fairnessModes).default('RANDOMIZED_PREOPEN_THEN_FIFO'),
    /**
     * "No single seats": a hold (best available or exact seats) may not leave one seat alone between taken seats or at
     * a row's end next to a taken seat, unless that seat cannot be helped. Left out: on.
     */
    noSingleSeats: z.boolean({ error: 'true or false' }).default(true),
    /** Tickets: when they are delivered, how often they may be transferred, and the face-value exchange. */
    tickets: ticketSettingsSchema.default(DEFAULT_TICKET_SETTINGS),
    limits: z
      .object({
        perAccountSeats: z.number().int().min(1).max(100).default(4),
        perInstrumentSeats: z.number().int().min(1).max(100).default(4),
        /** Seats per device across the event (all accounts on it); left out: the same as perAccountSeats. */
        perDeviceSeats: z.number().int().min(1).max(100).optional(),
      })
      .default({ perAccountSeats: 4, perInstrumentSeats: 4 }),
    holds: z
      .object({
        ttlSeconds: z.number().int().min(30).max(3600).default(360),
        extensionSeconds: z.number().int().min(0).max(MAX_HOLD_EXTENSION_SECONDS).default(180),
      })
      .default({ ttlSeconds: 360, extensionSeconds: 180 }),
    pacing: z
      .object({
        targetSaleMinutes: z
          .number()
          .positive()
          .max(24 * 60)
          .default(25),
        ticketsPerOrder: z.number().min(1).max(100).default(2.5),
        checkoutMinutes: z.number().positive().max(120).default(6),
        paymentTps: z.number().int().positive().max(1_000_000).default(1000),
        overbookFactor: z.number().min(1).max(5).default(1.3),
      })
      .default({ targetSaleMinutes: 25, ticketsPerOrder: 2.5, checkoutMinutes: 6, paymentTps: 1000, overbookFactor: 1.3 }),
    /** The words fans read in each queue state; any state left out keeps the default. */
    queueCopy: z
      .object({
        WAITING: z.string().min(1).max(500),
        PAUSED: z.string().min(1).max(500),
        ADMITTED: z.string().min(1).max(500),
        LAST_CHANCE: z.string().min(1).max(500),
        SOLD_OUT: z.string().min(1).max(500),
      })
      .partial()
      .strict()
      .optional(),
    /** The fans' page: logo, colours, and the per-state words in languages beside English. */
    look: lookSchema.optional(),
    priceLevels: z.array(z.object({ code, name: z.string().min(1).max(120), priceCents: z.number().int().min(0).max(100_000_000) })).min(1),
    sections: z.array(sectionSchema).min(1).max(2000),
    /** Presale tiers, in sale order; the last is the general sale. Left out: one general sale of every seat. */
    allocations: z.array(allocationSchema).min(2).max(10).optional(),
    /** Registration and draw settings; required when fairnessMode is REGISTRATION_LOTTERY. */
    lottery: lotterySettingsSchema.optional(),
  })
  .superRefine((e, ctx) => {
    if (Date.parse(e.onsaleAt) >= Date.parse(e.startsAt))
      ctx.addIssue({ code: 'custom', path: ['onsaleAt'], message: 'the on-sale must open before the show starts' });
    if (e.tickets.deliveryAt !== undefined && Date.parse(e.tickets.deliveryAt) > Date.parse(e.startsAt))
      ctx.addIssue({ code: 'custom', path: ['tickets', 'deliveryAt'], message: 'tickets must be delivered by the time the show starts' });
    if (e.fairnessMode === 'REGISTRATION_LOTTERY' && !e.lottery)
      ctx.addIssue({
        code: 'custom',
        path: ['lottery'],
        message: 'a registration lottery needs its registration window and draw settings',
      });
    if (e.lottery && e.fairnessMode !== 'REGISTRATION_LOTTERY')
      ctx.addIssue({ code: 'custom', path: ['lottery'], message: 'lottery settings apply only to the registration lottery fairness mode' });
    if (e.lottery && Date.parse(e.lottery.registrationClosesAt) > Date.parse(e.onsaleAt))
      ctx.addIssue({ code: 'custom', path: ['lottery', 'registrationClosesAt'], message: 'registration must close by the on-sale' });
    if (e.allocations) checkAllocations(e, ctx);
    const levels = new Set<string>();
    e.priceLevels.forEach((p, i) => {
      if (levels.has(p.code))
        ctx.addIssue({ code: 'custom', path: ['priceLevels', i, 'code'], message: `another price level already has the code ${p.code}` });
      levels.add(p.code);
    });
    const sections = new Set<string>();
    e.sections.forEach((s, i) => {
      if (sections.has(s.code))
        ctx.addIssue({ code: 'custom', path: ['sections', i, 'code'], message: `another section already has the code ${s.code}` });
      sections.add(s.code);
      if (!levels.has(s.priceLevel))
        ctx.addIssue({
          code: 'custom',
          path: ['sections', i, 'priceLevel'],
          message: `there is no price level ${s.priceLevel}; choose one of the price levels above`,
        });
    });
  });

/** The tier fields in words, for messages a promoter reads. */
const TIER_FIELD_WORDS = {
  share: 'its share of the seats',
  opensAt: 'the time its window opens',
  closesAt: 'the time its window closes',
  rollsForwardAt: 'the time its unsold seats roll forward',
} as const;

/** Presale tiers: unique codes, a window and share for each presale (of reserved seats and GA counters alike), shares below the whole. */
function checkAllocations(
  e: { onsaleAt: string; startsAt: string; fairnessMode: string; allocations?: z.output<typeof allocationSchema>[] },
  ctx: z.RefinementCtx,
) {
  const tiers = e.allocations!;
  const at = (i: number, field: string) => ['allocations', i, field];
  if (e.fairnessMode === 'REGISTRATION_LOTTERY')
    ctx.addIssue({
      code: 'custom',
      path: ['allocations'],
      message: 'a registration lottery sells through its draw, not presale tiers; remove the tiers or choose another fairness mode',
    });
  const codes = new Set<string>();
  let shares = 0;
  tiers.forEach((t, i) => {
    if (codes.has(t.code)) ctx.addIssue({ code: 'custom', path: at(i, 'code'), message: `another tier already has the code ${t.code}` });
    codes.add(t.code);
    if (t.access === 'CARD_BIN' && !t.binRanges)
      ctx.addIssue({ code: 'custom', path: at(i, 'binRanges'), message: 'a CARD_BIN tier needs the card ranges it accepts' });
    if (t.access !== 'CARD_BIN' && t.binRanges)
      ctx.addIssue({ code: 'custom', path: at(i, 'binRanges'), message: 'card ranges apply only to access CARD_BIN' });
    if (i === tiers.length - 1) {
      // The general sale: the event's own window and queue, and whatever the presales leave.
      for (const f of ['share', 'opensAt', 'closesAt', 'rollsForwardAt'] as const)
        if (t[f] !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: at(i, f),
            message: `the last tier is the general sale: its ${TIER_FIELD_WORDS[f]} comes from the event; leave it empty`,
          });
      return;
    }
    for (const f of ['share', 'opensAt', 'closesAt'] as const)
      if (t[f] === undefined) ctx.addIssue({ code: 'custom', path: at(i, f), message: `a presale tier needs ${TIER_FIELD_WORDS[f]}` });
    shares += t.share ?? 0;
    if (t.opensAt && t.closesAt && Date.parse(t.opensAt) >= Date.parse(t.closesAt))
      ctx.addIssue({ code: 'custom', path: at(i, 'closesAt'), message: 'the window must close after it opens' });
    if (t.closesAt && Date.parse(t.closesAt) > Date.parse(e.startsAt))
      ctx.addIssue({ code: 'custom', path: at(i, 'closesAt'), message: 'a presale must close before the event starts' });
    const roll = t.rollsForwardAt ?? t.closesAt;
    if (t.rollsForwardAt && t.closesAt && Date.parse(t.rollsForwardAt) < Date.parse(t.closesAt))
      ctx.addIssue({
        code: 'custom',
        path: at(i, 'rollsForwardAt'),
        message: 'unsold seats roll forward when the window has closed, not before',
      });
    if (roll && Date.parse(roll) > Date.parse(e.startsAt))
      ctx.addIssue({ code: 'custom', path: at(i, 'rollsForwardAt'), message: 'unsold seats must roll forward before the event starts' });
  });
  if (shares >= 1)
    ctx.addIssue({
      code: 'custom',
      path: ['allocations'],
      message: `the presale shares add up to ${Math.round(shares * 1000) / 10}%; they must leave some seats for the general sale (below 100%)`,
    });
}

export type EventFile = z.input<typeof eventFileSchema>;
export type EventSpec = z.output<typeof eventFileSchema>;

export { formatIssues } from '../errors.js';
