import { z } from 'zod';
import { ERROR_CODES } from '@onsale/shared';

/**
 * Every error code (the shared registry): one component of the OpenAPI document (`#/components/schemas/ErrorCode`,
 * by its id in zod's global registry, where `.describe()` keeps descriptions too) that error answers refer to.
 */
export const errorCodeSchema = z.enum(ERROR_CODES).meta({ id: 'ErrorCode', description: 'a stable error code; clients switch on it' });

/** The error shape every route answers with. */
export const errorSchema = z.object({ error: errorCodeSchema, message: z.string(), field: z.string().optional() }).passthrough();

// The hold's answers are the contract the fans' page types itself from: their schemas live in the domain.
export { heldSeatSchema, heldUnitsSchema, holdViewSchema as holdSchema } from '@onsale/shared/inventory/schema';

export const errorResponses = {
  400: errorSchema,
  401: errorSchema,
  403: errorSchema,
  404: errorSchema,
  409: errorSchema,
  410: errorSchema,
} as const;

/**
 * 503 on every route: the database is unreachable or refused the statement under load, or the request was shed
 * because the process is overloaded. Nothing was done; retry after the Retry-After header's seconds (a checkout
 * retried with the same Idempotency-Key is never charged twice).
 */
export const serviceUnavailableSchema = errorSchema
  .extend({
    retryAfterSeconds: z.number().optional(),
    reason: z
      .string()
      .optional()
      .describe(
        'the rule that answered: for a request shed under overload, overload_event_loop (the process lags) or overload_pool (queries queue for the database, or every pooled connection stayed busy for the whole pool wait); database (the database cannot be reached) or database_busy (it refused a statement under load); request_budget: the request took longer than its budget (REQUEST_BUDGET_MS) and was answered before any socket timeout (its work goes on; retry with the same Idempotency-Key)',
      ),
  })
  .describe(
    'Service unavailable (error SERVICE_UNAVAILABLE: database outage, overload shed before any work: expensive routes first, status polls last, or a request past its budget; PAYMENT_GATEWAY_BUSY at checkout): retry after the Retry-After header. A checkout retried with the same Idempotency-Key is never charged twice.',
  );
