// War-room inputs: zod only, no Node built-ins. The console imports this file (`@onsale/shared/warroom/schema`)
// to check its control dialogs with the very schemas the BFF enforces.
import { z } from 'zod';
import '../words/zod-messages.js';
import { controlReasonSchema, eventIdSchema as eventId } from '../admission/controls.schema.js';

// The rest of the war room's browser-safe parts, so the console needs one entry point.
export {
  ALERT_THRESHOLDS,
  alertKey,
  alertReachOf,
  type Alert,
  type AlertCode,
  type AlertMetric,
  type AlertReach,
  type AlertSeverity,
} from './alerts.js';
export { appendPoint, toPoint, type WarRoomPoint } from './series.js';
export { explainAdmissions, explainSnapshot, formatDuration, type AdmissionExplanation, type AdmissionExplanationCode } from './explain.js';
// The queue controls' inputs (pause, resume, rate, their schedule) are admission's: admission/controls.schema.ts.
export * from '../admission/controls.schema.js';

export const warRoomEventSchema = z.object({ eventId });

const tier = z.string({ error: 'a tier code' }).trim().min(1, 'a tier code').max(32, 'at most 32 characters');

/** Roll a presale tier's unsold seats forward into the next tier now, before its time. The reason is audited. */
export const tierRollSchema = z.object({ eventId, tier, reason: controlReasonSchema });

/** Most access codes one request issues (a bigger batch: the CLI's presale:codes). */
export const ACCESS_CODES_MAX = 5_000;

/**
 * Issue signed access codes for an ACCESS_CODE tier: `count` codes each usable by the first account that joins
 * with it, or one code bound to `accountId`; valid until the tier closes unless `validUntil` says otherwise.
 */
export const accessCodesSchema = z
  .object({
    eventId,
    tier,
    count: z
      .number({ error: 'a number of codes' })
      .int('whole codes')
      .min(1, 'at least 1')
      .max(ACCESS_CODES_MAX, `at most ${ACCESS_CODES_MAX.toLocaleString('en-US')} at a time`),
    accountId: z.string().trim().min(1, 'an account id').max(200, 'at most 200 characters').optional(),
    validUntil: z.iso.datetime({ offset: true, error: 'a date and time' }).optional(),
  })
  .superRefine((v, ctx) => {
    if (v.accountId !== undefined && v.count !== 1)
      ctx.addIssue({ code: 'custom', path: ['count'], message: 'a code bound to an account is issued one at a time' });
  });

/** An IANA time zone this runtime knows (the board's "today" is the operator's day). */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** The board of every event on sale today (in `timeZone`) or on sale now. */
export const warRoomBoardSchema = z.object({
  timeZone: z.string().trim().min(1).max(64).refine(isTimeZone, 'not a time zone').default('UTC'),
});

export type TierRollInput = z.input<typeof tierRollSchema>;
export type AccessCodesInput = z.input<typeof accessCodesSchema>;

/** Severities an alert receiver may ask for: `warning` gets every alert, `critical` only the critical ones. */
export const ALERT_SEVERITIES = ['warning', 'critical'] as const;

/**
 * An alert receiver: a Slack-compatible incoming-webhook URL (http or https), for one event's alerts or (no
 * `eventId`) every event's, from `minSeverity` up.
 */
export const alertEndpointInputSchema = z.object({
  url: z
    .string({ error: "enter the receiver's URL" })
    .trim()
    .max(2000, 'a URL of at most 2,000 characters')
    .refine((u) => {
      try {
        const p = new URL(u);
        return (p.protocol === 'https:' || p.protocol === 'http:') && p.hostname !== '';
      } catch {
        return false;
      }
    }, 'enter a web address starting with https:// (or http://)'),
  eventId: eventId.optional(),
  minSeverity: z.enum(ALERT_SEVERITIES, { error: 'choose warning (every alert) or critical (critical alerts only)' }).default('warning'),
});

/** Turn an alert receiver on or off. */
export const alertEndpointActiveSchema = z.object({ id: z.string().uuid('an alert receiver id'), active: z.boolean() });

export type AlertEndpointInput = z.input<typeof alertEndpointInputSchema>;

/** One state's words: what a waiting fan reads (1 to 500 characters). */
const stateWords = z
  .string({ error: 'write the words fans read' })
  .trim()
  .min(1, 'write the words fans read')
  .max(500, 'at most 500 characters');
const wordsByState = z
  .object({ WAITING: stateWords, PAUSED: stateWords, ADMITTED: stateWords, LAST_CHANCE: stateWords, SOLD_OUT: stateWords })
  .partial()
  .strict();

/**
 * The words waiting fans read per queue state, in English (`en`) and the other fan languages, edited live from the
 * war room against the event's version; a reason is required (it goes to the audit log).
 */
export const queueCopyEditSchema = z.object({
  eventId,
  expectedVersion: z.number({ error: 'the version the words were edited from' }).int().positive(),
  words: z.object({ en: wordsByState.optional(), es: wordsByState.optional() }).strict(),
  reason: controlReasonSchema,
});

export type QueueCopyEditInput = z.input<typeof queueCopyEditSchema>;
