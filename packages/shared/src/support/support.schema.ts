// Fan support and the operations an operator runs from the console: zod only, browser-safe
// (`@onsale/shared/support/schema`), so the console checks its forms with the schemas the BFF enforces.
import { z } from 'zod';
import '../words/zod-messages.js';

const id = (what: string) =>
  z
    .string({ error: `choose ${what}` })
    .trim()
    .min(1, `choose ${what}`)
    .max(100, 'at most 100 characters');

/** A fan's account id as the store API knows it (its dev sign-in and the identity provider's subject). */
export const accountIdSchema = z
  .string({ error: "enter the fan's account id" })
  .trim()
  .min(1, "enter the fan's account id")
  .max(128, 'an account id has at most 128 characters')
  .regex(/^[A-Za-z0-9._@:+-]+$/, 'an account id has only letters, digits and . _ @ : + -');

/** Why an operator acts on a fan's behalf or against them: required, audited with their e-mail. */
export const supportReasonSchema = z
  .string({ error: 'give a reason (it goes to the audit log)' })
  .trim()
  .min(1, 'give a reason (it goes to the audit log)')
  .max(500, 'at most 500 characters');

export const accountLookupSchema = z.object({ accountId: accountIdSchema });

/** Block a fan account from one event: it can no longer join that event's queue, hold or pay; its live holds go back. */
export const accountBlockSchema = z.object({ eventId: id('an event'), accountId: accountIdSchema, reason: supportReasonSchema });

/** Lift a block: the account may join, hold and pay again. */
export const accountUnblockSchema = accountBlockSchema;

/** Release a fan's hold for them (a stuck checkout, a fan on the phone): the seats go back at once. */
export const holdReleaseSchema = z.object({ holdId: id('a hold'), reason: supportReasonSchema });

/** Cancel a confirmed order: its seats come back (to the waitlist after a sell-out). */
export const orderCancelSchema = z.object({ orderId: id('an order'), reason: supportReasonSchema });

/** The post-sale review's clustering options (as the CLI's `review`). */
export const reviewOptionsSchema = z.object({
  eventId: id('an event'),
  createdWithinSeconds: z
    .number({ error: 'enter a number of seconds' })
    .int('whole seconds')
    .min(0, 'enter 0 or more')
    .max(86_400, 'at most a day (86,400 seconds)')
    .nullable()
    .optional(),
  minAccounts: z
    .number({ error: 'enter a number of accounts' })
    .int('whole accounts')
    .min(2, 'a cluster has at least 2 accounts')
    .max(1000, 'at most 1,000')
    .optional(),
});

/** Cancel every order of one review cluster, as the review shows it now; the reason goes to each order's audit. */
export const clusterCancelSchema = reviewOptionsSchema.extend({
  clusterId: z.string().trim().min(1, 'choose a cluster').max(40),
  reason: supportReasonSchema,
});

/** New rows of seats at the back of a section of an event on sale (as `inventory:add`). */
export const inventoryAddSchema = z.object({
  eventId: id('an event'),
  section: z.string({ error: 'choose a section' }).trim().min(1, 'choose a section').max(40, 'at most 40 characters'),
  rows: z.number({ error: 'enter a number of rows' }).int('whole rows').min(1, 'add at least 1 row').max(200, 'at most 200 rows at a time'),
  seatsPerRow: z
    .number({ error: 'enter a number of seats' })
    .int('whole seats')
    .min(1, 'at least 1 seat per row')
    .max(500, 'at most 500 seats per row'),
});

export type AccountBlockInput = z.input<typeof accountBlockSchema>;
export type HoldReleaseInput = z.input<typeof holdReleaseSchema>;
export type OrderCancelInput = z.input<typeof orderCancelSchema>;
export type ClusterCancelInput = z.input<typeof clusterCancelSchema>;
export type InventoryAddInput = z.input<typeof inventoryAddSchema>;

/** What support types to find a fan: the order reference the fan reads out, an e-mail or part of a name, an account id. */
export const supportSearchSchema = z.object({
  query: z
    .string({ error: 'enter an order reference, an e-mail or an account id' })
    .trim()
    .min(1, 'enter an order reference, an e-mail or an account id')
    .max(200, 'at most 200 characters'),
});

/** One order's page. */
export const supportOrderSchema = z.object({ orderId: id('an order') });
