import { z } from 'zod';

const luhn = (digits: string) => {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
};

export const checkoutRequestSchema = z.strictObject({
  payment: z.strictObject({
    instrument: z.strictObject({
      type: z.literal('card'),
      // One card, one spelling: digits only (no spaces, dashes or non-ASCII digits) and no leading zero (no card
      // number starts with 0; a zero in front passes the Luhn check and would make a second fingerprint).
      number: z
        .string()
        .regex(/^[0-9]{12,19}$/, 'card number must be 12-19 digits, written without spaces or dashes')
        .regex(/^[1-9]/, 'card number cannot start with 0')
        .refine(luhn, 'card number fails the Luhn check'),
      expMonth: z.number().int().min(1).max(12).optional(),
      expYear: z.number().int().min(2000).max(2100).optional(),
    }),
  }),
});
export type CheckoutRequest = z.infer<typeof checkoutRequestSchema>;

/** Idempotency-Key header: one per checkout attempt, chosen by the client (a UUID is typical). */
export const idempotencyKeySchema = z.string().regex(/^[\x21-\x7e]{8,255}$/, '8-255 visible ASCII characters');

/**
 * `POST /holds/:id/checkout`'s answer: the confirmed order. The route's schema is this one, and the fans' page derives
 * its order type from it.
 */
export const orderConfirmationSchema = z.object({
  orderId: z.string(),
  holdId: z.string(),
  status: z.literal('CONFIRMED'),
  amountCents: z.number(),
  seatCount: z.number(),
});
export type OrderConfirmation = z.output<typeof orderConfirmationSchema>;

export { ORDER_REFERENCE_LENGTH, orderReference, parseOrderReference } from './reference.js';
