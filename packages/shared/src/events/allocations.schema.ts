import { z } from 'zod';
import { fairnessModes } from './fairness-modes.js';

const isoDate = z.iso.datetime({ offset: true });
const code = z
  .string()
  .min(1)
  .max(32)
  .regex(/^[A-Z0-9_-]+$/, 'capital letters, digits, "-" and "_" only');

/** Card ranges a CARD_BIN tier accepts: the first 6-8 digits of the card number, inclusive bounds. */
const binRangeSchema = z
  .object({ from: z.string().regex(/^\d{6,8}$/, '6-8 digits'), to: z.string().regex(/^\d{6,8}$/, '6-8 digits') })
  .superRefine((r, ctx) => {
    if (r.from.length !== r.to.length)
      ctx.addIssue({ code: 'custom', path: ['to'], message: 'from and to must have the same number of digits' });
    else if (r.from > r.to) ctx.addIssue({ code: 'custom', path: ['to'], message: 'the range ends before it starts' });
  });

/**
 * One presale tier (the event file's `allocations[]`): a share of every reserved section's seats, sold in its own
 * window through its own queue, to the fans its access rule lets in. The last tier is the general sale: it opens
 * at the event's `onsaleAt`, uses the event's own queue and takes the seats the others leave. A tier's unsold
 * seats roll forward into the next tier at `rollsForwardAt` (default: when its window closes).
 */
export const allocationSchema = z.object({
  code,
  name: z.string().min(1).max(120),
  /** Fraction of each reserved section (0-1). The last tier's share is the rest and may be left out. */
  share: z.number().gt(0).max(1).optional(),
  /** OPEN: anyone; ACCESS_CODE: a signed single-account code at the queue; CARD_BIN: a partner card at checkout. */
  access: z.enum(['OPEN', 'ACCESS_CODE', 'CARD_BIN']).default('OPEN'),
  binRanges: z.array(binRangeSchema).min(1).max(100).optional(),
  /** The tier's window. The general tier's opens at the event's onsaleAt and has no close. */
  opensAt: isoDate.optional(),
  closesAt: isoDate.optional(),
  rollsForwardAt: isoDate.optional(),
  fairnessMode: z.enum(fairnessModes).exclude(['REGISTRATION_LOTTERY']).default('RANDOMIZED_PREOPEN_THEN_FIFO'),
});

export type AllocationFile = z.input<typeof allocationSchema>;
export type AllocationSpec = z.output<typeof allocationSchema>;
