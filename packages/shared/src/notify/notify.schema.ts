import { z } from 'zod';
import { DomainError, formatIssues, type ErrorCode } from '../errors.js';
import type { DeliveryStatus } from './notify.table.js';

export const deliveryStatuses = ['PENDING', 'RETRYING', 'DELIVERED', 'DEAD'] as const satisfies readonly DeliveryStatus[];

/** Bounds of the table's CHECKs, named once so the schema and the messages agree with the database. */
export const WEBHOOK_MAX_ATTEMPTS = { min: 1, max: 25 } as const;
export const WEBHOOK_TIMEOUT_MS = { min: 100, max: 60_000 } as const;

/** A new webhook endpoint: only http(s) URLs (a receiver reachable by the worker), limits within the table's checks. */
export const webhookEndpointInputSchema = z.object({
  url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).max(2000),
  listingId: z.guid({ error: 'must be a listing id (uuid)' }).optional(),
  secret: z.string().min(16, 'must be at least 16 characters').max(200).optional(),
  maxAttempts: z.int().min(WEBHOOK_MAX_ATTEMPTS.min).max(WEBHOOK_MAX_ATTEMPTS.max).optional(),
  timeoutMs: z.int().min(WEBHOOK_TIMEOUT_MS.min).max(WEBHOOK_TIMEOUT_MS.max).optional(),
});
export type WebhookEndpointInput = z.input<typeof webhookEndpointInputSchema>;

export const listDeliveriesSchema = z.object({
  endpointId: z.guid({ error: 'must be an endpoint id (uuid)' }).optional(),
  status: z.enum(deliveryStatuses).optional(),
  limit: z.int().min(1).max(1000).default(50),
});
export type ListDeliveriesInput = z.input<typeof listDeliveriesSchema>;

/** Parses with `schema`; a failure is an `invalid` DomainError naming the first field at fault (and listing all). */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, code: ErrorCode): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issues = formatIssues(parsed.error);
  throw new DomainError('invalid', code, issues.map((i) => `${i.path}: ${i.message}`).join('; '), { field: issues[0]?.path, issues });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Whether `id` can be a uuid column's value at all (so a malformed id is "not found", not a database error). */
export const isUuid = (id: string) => UUID.test(id);

// What other domains may use of this domain's repository (eslint-rules/onsale.js, onsale/domain-borders).
export type { DeliveryStatus, NotificationKind } from './notify.table.js';
