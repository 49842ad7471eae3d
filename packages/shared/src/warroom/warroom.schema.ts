// War-room inputs: zod only, no Node built-ins. The console imports this file (`@onsale/shared/warroom/schema`)
// to check its control dialogs with the very schemas the BFF enforces.
import { z } from 'zod';

// The rest of the war room's browser-safe parts, so the console needs one entry point.
export { ALERT_THRESHOLDS, type Alert, type AlertCode, type AlertMetric, type AlertSeverity } from './alerts.js';
export { appendPoint, toPoint, type WarRoomPoint } from './series.js';
export { explainAdmissions, explainSnapshot, formatDuration, type AdmissionExplanation, type AdmissionExplanationCode } from './explain.js';

/**
 * The bounds of an operator's admission rate, admits per minute. The same bounds as `setRateOverride` in
 * admission/operator.ts (MAX_RATE_OVERRIDE_PER_MIN; a test pins them equal), kept here because that module
 * reaches the database and this one must load in a browser.
 */
export const RATE_OVERRIDE_BOUNDS = { min: 0, max: 100_000 } as const;
/** Longest reason an operator may give (as operator.ts accepts). */
export const CONTROL_REASON_MAX = 500;

const eventId = z.string({ error: 'an event id' }).trim().min(1, 'an event id').max(100, 'at most 100 characters');

/** Why an operator acts: required, trimmed, at most 500 characters. It goes into the audit log with their e-mail. */
export const controlReasonSchema = z
  .string({ error: 'give a reason' })
  .trim()
  .min(1, 'give a reason')
  .max(CONTROL_REASON_MAX, `at most ${CONTROL_REASON_MAX} characters`);

export const warRoomEventSchema = z.object({ eventId });

/** A presale tier's code: the control applies to that tier's queue only (left out: pause/resume every queue of the event, rate the general sale's). */
const queueTier = z.string().min(1).max(32).optional();

/** Pause admissions: the reason is required (ARCHITECTURE rule 10: pauses with who and why). */
export const pauseQueueSchema = z.object({ eventId, reason: controlReasonSchema, tier: queueTier });

/** Resume admissions: the war room asks for a reason too, so the audit says why the queue moved again. */
export const resumeQueueSchema = z.object({ eventId, reason: controlReasonSchema, tier: queueTier });

/** Set the operator's admission rate (whole admits per minute within the bounds), or null to follow the plan again. */
export const rateOverrideSchema = z.object({
  eventId,
  perMinute: z
    .number({ error: 'a number of admits per minute' })
    .int('whole admits per minute')
    .min(RATE_OVERRIDE_BOUNDS.min, `at least ${RATE_OVERRIDE_BOUNDS.min}`)
    .max(RATE_OVERRIDE_BOUNDS.max, `at most ${RATE_OVERRIDE_BOUNDS.max.toLocaleString('en-US')} admits per minute`)
    .nullable(),
  reason: controlReasonSchema,
  tier: queueTier,
});

const tier = z
  .string({ error: 'a tier code' })
  .trim()
  .min(1, 'a tier code')
  .max(32, 'at most 32 characters');

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
    if (v.accountId !== undefined && v.count !== 1) ctx.addIssue({ code: 'custom', path: ['count'], message: 'a code bound to an account is issued one at a time' });
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

export type PauseQueueInput = z.input<typeof pauseQueueSchema>;
export type ResumeQueueInput = z.input<typeof resumeQueueSchema>;
export type RateOverrideInput = z.input<typeof rateOverrideSchema>;
export type TierRollInput = z.input<typeof tierRollSchema>;
export type AccessCodesInput = z.input<typeof accessCodesSchema>;
