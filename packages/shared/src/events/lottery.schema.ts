import { z } from 'zod';

const isoDate = z.iso.datetime({ offset: true });

/**
 * A REGISTRATION_LOTTERY event's settings (the event file's `lottery`): fans register in a window before the
 * on-sale, a draw under a committed seed picks winners sized from inventory and expected conversion, and winners
 * buy in staggered cohorts (cohort k's window opens at onsaleAt + k x cohortMinutes and lasts cohortMinutes).
 */
export const lotterySettingsSchema = z
  .object({
    registrationOpensAt: isoDate,
    registrationClosesAt: isoDate,
    /** The share of winners expected to buy (0-1]: the draw picks about seats / (requested quantity x conversion) winners. */
    expectedConversion: z.number().gt(0).max(1).default(0.8),
    /** Purchase windows winners are spread over. */
    cohorts: z.number().int().min(1).max(48).default(4),
    /** Each cohort's purchase window, in minutes. */
    cohortMinutes: z
      .number()
      .int()
      .min(5)
      .max(7 * 24 * 60)
      .default(60),
  })
  .superRefine((l, ctx) => {
    if (Date.parse(l.registrationOpensAt) >= Date.parse(l.registrationClosesAt))
      ctx.addIssue({ code: 'custom', path: ['registrationClosesAt'], message: 'registration must close after it opens' });
  });

export type LotterySettings = z.output<typeof lotterySettingsSchema>;
