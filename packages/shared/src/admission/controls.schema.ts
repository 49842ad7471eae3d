// The queue controls' inputs (pause, resume, an operator's rate, and their schedule): zod only, no Node built-ins.
// The console checks its control dialogs with them through `@onsale/shared/warroom/schema`, which re-exports this
// file; the BFF and admission/schedule.service.ts enforce them.
import { z } from 'zod';
import '../words/zod-messages.js';

/**
 * The bounds of an operator's admission rate, admits per minute. The same bounds as `setRateOverride` in
 * admission/operator.ts (MAX_RATE_OVERRIDE_PER_MIN; a test pins them equal), kept here because that module
 * reaches the database and this one must load in a browser.
 */
export const RATE_OVERRIDE_BOUNDS = { min: 0, max: 100_000 } as const;
/** Longest reason an operator may give (as operator.ts accepts). */
export const CONTROL_REASON_MAX = 500;

/** An event's id as an operator's control names it. */
export const eventIdSchema = z.string({ error: 'an event id' }).trim().min(1, 'an event id').max(100, 'at most 100 characters');

const eventId = eventIdSchema;

/** Why an operator acts: required, trimmed, at most 500 characters. It goes into the audit log with their e-mail. */
export const controlReasonSchema = z
  .string({ error: 'give a reason' })
  .trim()
  .min(1, 'give a reason')
  .max(CONTROL_REASON_MAX, `at most ${CONTROL_REASON_MAX} characters`);

/** A presale tier's code: the control applies to that tier's queue only (left out: pause/resume every queue of the event, rate the general sale's). */
const queueTier = z.string().min(1).max(32).optional();

/** What the publishable summary may say about a pause (optional; the reason stays internal). */
export const PUBLIC_NOTE_MAX = 280;
export const publicNoteSchema = z.string().trim().max(PUBLIC_NOTE_MAX, `at most ${PUBLIC_NOTE_MAX} characters`).optional();

/** Pause admissions: the reason is required (rule 10 in docs/architecture.md: pauses with who and why); a public note is optional. */
export const pauseQueueSchema = z.object({ eventId, reason: controlReasonSchema, publicNote: publicNoteSchema, tier: queueTier });

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

export type PauseQueueInput = z.input<typeof pauseQueueSchema>;
export type ResumeQueueInput = z.input<typeof resumeQueueSchema>;
export type RateOverrideInput = z.input<typeof rateOverrideSchema>;

/** What a scheduled queue control does. */
export const SCHEDULED_ACTIONS = ['PAUSE', 'RESUME', 'RATE'] as const;

/**
 * A pause, a resume or a rate change set for a time (`runAt`, an ISO date-time with its offset). RATE takes
 * `perMinute` (whole admits per minute within the bounds, or null to follow the plan again); the reason is
 * required and goes to the audit log when it runs, with who scheduled it.
 */
export const queueScheduleInputSchema = z
  .object({
    eventId,
    action: z.enum(SCHEDULED_ACTIONS, { error: 'choose pause, resume or a rate change' }),
    runAt: z.iso.datetime({ offset: true, error: 'give the date and time it should happen' }),
    perMinute: rateOverrideSchema.shape.perMinute.optional(),
    reason: controlReasonSchema,
    tier: queueTier,
  })
  .superRefine((v, ctx) => {
    if (v.action === 'RATE' && v.perMinute === undefined)
      ctx.addIssue({ code: 'custom', path: ['perMinute'], message: 'give the admits per minute, or choose to follow the plan' });
    if (v.action !== 'RATE' && v.perMinute !== undefined && v.perMinute !== null)
      ctx.addIssue({ code: 'custom', path: ['perMinute'], message: 'only a rate change takes admits per minute' });
  });

/** Cancel a scheduled control that has not run yet. */
export const queueScheduleCancelSchema = z.object({
  eventId,
  id: z.number({ error: 'a schedule id' }).int().positive(),
  reason: controlReasonSchema,
});

export type QueueScheduleInput = z.input<typeof queueScheduleInputSchema>;
