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
  })
  .superRefine((b, ctx) => {
    if (b.seatIds !== undefined) {
      if (b.section !== undefined || b.quantity !== undefined)
        ctx.addIssue({ code: 'custom', path: ['seatIds'], message: 'give either seatIds or section + quantity, not both' });
      return;
    }
    if (b.section === undefined) ctx.addIssue({ code: 'custom', path: ['section'], message: 'section is required (or give seatIds)' });
    if (b.quantity === undefined) ctx.addIssue({ code: 'custom', path: ['quantity'], message: 'quantity is required' });
  });

export type HoldRequest = { section: string; quantity: number } | { seatIds: number[] };

/** Narrows a validated body to one of the two forms. */
export function toHoldRequest(b: z.output<typeof holdRequestSchema>): HoldRequest {
  return b.seatIds !== undefined ? { seatIds: b.seatIds } : { section: b.section!, quantity: b.quantity! };
}
