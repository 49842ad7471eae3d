// The tickets API's inputs and answers, zod only (no Node built-ins): the store API, the BFF and the console
// (`@onsale/shared/tickets/schema`) validate with these very schemas.
import { z } from 'zod';
import '../words/zod-messages.js';

/** A ticket's status as fans and operators read it; PENDING_DELIVERY: held, but its code is not out yet. */
export const TICKET_STATUSES = ['PENDING_DELIVERY', 'ACTIVE', 'TRANSFERRED', 'LISTED', 'RESOLD', 'REVOKED', 'ADMITTED'] as const;
export type TicketStatus = (typeof TICKET_STATUSES)[number];

/** What a scan answers. */
export const SCAN_RESULTS = ['ADMIT', 'ALREADY_ADMITTED', 'EXPIRED_CODE', 'INVALID', 'REVOKED'] as const;

/** A rotating code is signed for one 15-second step and accepted in that step and the next one only. */
export const CODE_STEP_SECONDS = 15;
/** Most moves of one ticket to a new device a fan may make themselves (support can reissue beyond it). */
export const MAX_DEVICE_MOVES = 3;

export const seatSchema = z.object({
  section: z.string(),
  row: z.string().nullable().describe('null for general admission'),
  number: z.number().nullable().describe('null for general admission'),
});

export const ticketSchema = z.object({
  ticketId: z.string(),
  eventId: z.string(),
  eventName: z.string(),
  startsAt: z.string(),
  orderId: z.string(),
  seat: seatSchema,
  status: z.enum(TICKET_STATUSES),
  /** When the code is out (ISO); the ticket's creation when the event delivers at once. */
  deliverAt: z.string(),
  faceValueCents: z.number(),
  currency: z.string(),
  transfersLeft: z.number(),
  deviceMovesLeft: z.number(),
  /** Bound to a device yet (the first code fetched after delivery binds it). */
  boundToDevice: z.boolean(),
  /** The open resale listing, if the ticket is listed. */
  resale: z
    .object({ priceCents: z.number(), capCents: z.number(), listedAt: z.string(), stage: z.enum(['WAITLIST', 'PUBLIC', 'IN_CHECKOUT']) })
    .nullable(),
  /** What the fan may do with it now. */
  can: z.object({ transfer: z.boolean(), resell: z.boolean(), withdraw: z.boolean() }),
});
export type TicketView = z.infer<typeof ticketSchema>;

export const ticketCodeSchema = z.object({
  code: z.string().describe('base64url: version, ticket id, device generation, time step, Ed25519 signature (116 characters)'),
  validFrom: z.string(),
  validUntil: z.string().describe('accepted until then (its step and the next)'),
  refreshAt: z.string().describe('the next code is out then (fetch again)'),
  generation: z.number(),
});

export const transferBodySchema = z
  .object({
    toAccountId: z.string({ error: 'enter the account to transfer to' }).trim().min(1, 'enter the account to transfer to').max(128),
  })
  .strict();

export const resaleBodySchema = z
  .object({
    priceCents: z
      .number({ error: 'enter a price in cents' })
      .int('enter a whole number of cents')
      .min(1, 'a price of at least 1 cent')
      .max(100_000_000, 'at most 100,000,000 cents'),
  })
  .strict();

export const scanBodySchema = z
  .object({
    code: z.string({ error: 'enter the code' }).trim().min(1, 'enter the code').max(512, 'not a ticket code'),
    gate: z.string().trim().min(1).max(64).optional().describe('the gate or lane (for the log); default "main"'),
  })
  .strict();

export const scanAnswerSchema = z.object({
  result: z.enum(SCAN_RESULTS),
  ticket: z.object({ ticketId: z.string(), status: z.enum(TICKET_STATUSES), admittedAt: z.string().nullable() }).nullable(),
  seat: seatSchema.nullable(),
  /** For ALREADY_ADMITTED: when and at which gate it was first admitted. */
  firstAdmitted: z.object({ at: z.string(), gate: z.string() }).nullable(),
});
export type ScanAnswer = z.infer<typeof scanAnswerSchema>;

export const manifestSchema = z.object({
  eventId: z.string(),
  eventName: z.string(),
  /** Raw Ed25519 public key (32 bytes, base64url) that signs the event's codes. */
  publicKey: z.string(),
  stepSeconds: z.number(),
  generatedAt: z.string(),
  tickets: z.array(
    z.object({
      ticketId: z.string(),
      generation: z.number(),
      status: z.enum(TICKET_STATUSES),
      seat: seatSchema,
    }),
  ),
});

export const uploadBodySchema = z
  .object({
    gate: z.string().trim().min(1).max(64),
    scans: z
      .array(
        z
          .object({
            scanId: z.string().trim().min(1).max(64).describe("the gate's own id for the scan: an upload sent twice is counted once"),
            code: z.string().trim().min(1).max(512),
            scannedAt: z.iso.datetime({ offset: true }),
          })
          .strict(),
      )
      .min(1)
      .max(5000),
  })
  .strict();

export const uploadAnswerSchema = z.object({
  accepted: z.number(),
  /** Scans already uploaded before (same scanId): not counted again. */
  repeated: z.number(),
  results: z.array(
    z.object({
      scanId: z.string(),
      result: z.enum(SCAN_RESULTS),
      ticketId: z.string().nullable(),
      /** A second entry on the same ticket (at this gate or another, online or not): reported, not lost. */
      doubleEntry: z.boolean(),
      firstAdmitted: z.object({ at: z.string(), gate: z.string() }).nullable(),
    }),
  ),
});

/** Ticket counts for the war room and the post-sale review. */
export const ticketCountsSchema = z.object({
  issued: z.number(),
  delivered: z.number(),
  pendingDelivery: z.number(),
  transferred: z.number(),
  listed: z.number(),
  resold: z.number(),
  revoked: z.number(),
  scanned: z.number(),
  admitted: z.number(),
  refusedScans: z.number(),
});
export type TicketCounts = z.infer<typeof ticketCountsSchema>;
