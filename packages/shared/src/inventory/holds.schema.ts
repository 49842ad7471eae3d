import { z } from 'zod';

/**
 * `POST /events/:id/holds`: `{ section, quantity }` (best available) or `{ seatIds }` (exact seats, once seat
 * picking is open). One object with per-field rules rather than a union, so an error names the field at fault.
 */
export const holdRequestSchema = z
  .strictObject({
    section: z.string().min(1).max(32).optional(),
    quantity: z.number().int('quantity must be a whole number').min(1, 'quantity must be at least 1').max(100).optional(),
    seatIds: z.array(z.number().int().positive()).min(1, 'give at least one seat').max(100).optional(),
    /**
     * Best available only: when the section has no `quantity` seats together, hold the best split of the party (two
     * pairs for four, say: the one a SECTION_NEARLY_FULL refusal offers) rather than refusing. Seats together still
     * come first.
     */
    split: z
      .boolean()
      .optional()
      .describe('best available: when the party cannot sit together, hold the best split of it (as a SECTION_NEARLY_FULL refusal offers)'),
  })
  .superRefine((b, ctx) => {
    if (b.seatIds !== undefined) {
      if (b.section !== undefined || b.quantity !== undefined)
        ctx.addIssue({ code: 'custom', path: ['seatIds'], message: 'give either seatIds or section + quantity, not both' });
      if (b.split !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['split'],
          message: 'split applies to best available (section + quantity), not to exact seats',
        });
      return;
    }
    if (b.section === undefined) ctx.addIssue({ code: 'custom', path: ['section'], message: 'section is required (or give seatIds)' });
    if (b.quantity === undefined) ctx.addIssue({ code: 'custom', path: ['quantity'], message: 'quantity is required' });
  });

export type HoldRequest = { section: string; quantity: number; split?: boolean } | { seatIds: number[] };

/** Narrows a validated body to one of the two forms. */
export function toHoldRequest(b: z.output<typeof holdRequestSchema>): HoldRequest {
  if (b.seatIds !== undefined) return { seatIds: b.seatIds };
  return b.split ? { section: b.section!, quantity: b.quantity!, split: true } : { section: b.section!, quantity: b.quantity! };
}

/** A held seat as the store API answers it (`seats` of a hold, an order, a waitlist claim). */
export const heldSeatSchema = z.object({
  id: z.number(),
  section: z.string(),
  row: z.string(),
  number: z.number(),
  priceCents: z.number(),
});

/** General admission: identical units of a section, no seat ids. */
export const heldUnitsSchema = z.object({ section: z.string(), quantity: z.number(), priceCents: z.number() });

/**
 * A hold as the store API answers it (`POST /events/:id/holds`, `GET /holds/:id`): the route schemas use this one, and
 * the fans' page derives its types from it (`HoldView`), so a change here is a change of contract both must follow.
 */
export const holdViewSchema = z.object({
  holdId: z.string(),
  eventId: z.string(),
  status: z.enum(['HELD', 'PAYING', 'PURCHASED', 'RELEASED', 'EXPIRED']),
  /** Empty for a general-admission hold, which has `units` instead. */
  seats: z.array(heldSeatSchema),
  units: z.array(heldUnitsSchema).optional(),
  quantity: z.number(),
  amountCents: z.number(),
  expiresAt: z.string(),
  extended: z.boolean(),
});

/** `POST /holds/:id/extend`: the hold's new expiry. */
export const holdExtensionSchema = z.object({ holdId: z.string(), expiresAt: z.string() });

/**
 * `POST /waitlist/claims`: an offer's seats, held for the fan who claimed them, with an admission token for that hold
 * (pay, extend, release).
 */
export const waitlistClaimSchema = holdViewSchema
  .pick({ holdId: true, eventId: true, seats: true, quantity: true, amountCents: true, expiresAt: true })
  .extend({ offerId: z.string(), admissionToken: z.string() });

export type HeldSeatView = z.output<typeof heldSeatSchema>;
export type HoldView = z.output<typeof holdViewSchema>;
export type HoldExtension = z.output<typeof holdExtensionSchema>;
export type WaitlistClaim = z.output<typeof waitlistClaimSchema>;
