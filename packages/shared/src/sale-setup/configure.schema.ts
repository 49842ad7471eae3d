// The browser-safe half of event configuration (`@onsale/shared/sale-setup/schema`): the event file schema the CLI
// and the console's form share, the console's other inputs, and the change rules. Zod and pure code only.
import { z } from 'zod';
import { fairnessModes, type EventFile } from '../events/events.schema.js';

export * from '../events/events.schema.js';
export * from '../events/look.schema.js';
export * from '../events/change-rules.js';
export * from '../events/create-checks.js';
export * from '../audit/audit-log.schema.js';
export { expandSeats, rowLabel } from '../events/layout.js';
export * from '../events/board.js';
export { assignAllocations, tierCapacities } from '../allocations/assign.js';
// The draw's sizing and windows, for the form's live summary (draw.ts imports only fairness.ts: browser-safe).
export { cohortWindow, targetRequestedSeats } from '../lottery/draw.js';

export const waitlistModes = ['OFFER', 'BROADCAST'] as const;

/** Bounds of a listing's waitlist settings as the console offers them. */
export const WAITLIST_TTL_DAYS = { min: 1, max: 365 } as const;
export const OFFER_TTL_MINUTES = { min: 1, max: 24 * 60 } as const;

/**
 * A listing's waitlist settings: OFFER (returned seats are reserved for the first matching fans in turn, each
 * for `offerTtlMinutes`) or BROADCAST (every match is told; first to claim wins), and how long an entry lives.
 */
export const listingWaitlistSchema = z.object({
  mode: z.enum(waitlistModes, { error: 'OFFER or BROADCAST' }),
  ttlDays: z.number({ error: 'enter a number of days' }).int('whole days').min(WAITLIST_TTL_DAYS.min).max(WAITLIST_TTL_DAYS.max),
  offerTtlMinutes: z
    .number({ error: 'enter a number of minutes' })
    .int('whole minutes')
    .min(OFFER_TTL_MINUTES.min)
    .max(OFFER_TTL_MINUTES.max),
});
export type ListingWaitlistInput = z.input<typeof listingWaitlistSchema>;

/** Any id-shaped string: the domain answers NOT_FOUND for a malformed one, as for an unknown one. */
const id = z.string().trim().min(1).max(100);

/**
 * Creating an event from the console: the event file exactly as the CLI takes it (checked by the domain with
 * `eventFileSchema`, so problems come back at the same paths the form uses), and the listing's waitlist settings.
 */
export const eventCreateInputSchema = z.object({
  event: z.custom<EventFile>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), 'an event file (a JSON object)'),
  waitlist: listingWaitlistSchema.optional(),
});
export type EventCreateInput = z.input<typeof eventCreateInputSchema>;

/** Editing an event: the whole event file as it should be now, and the version the edit was made from. */
export const eventUpdateInputSchema = z.object({
  eventId: id,
  expectedVersion: z.number().int().min(1),
  event: eventCreateInputSchema.shape.event,
});
export type EventUpdateInput = z.input<typeof eventUpdateInputSchema>;

/** A promoter signs off the fairness mode they see (refused if the event's mode is another by now). */
export const fairnessSignOffInputSchema = z.object({
  eventId: id,
  fairnessMode: z.enum(fairnessModes),
});

export const listingWaitlistInputSchema = listingWaitlistSchema.extend({ listingId: id });
