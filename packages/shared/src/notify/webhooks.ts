import { randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Db, Trx } from '../db/connect.js';
import { conflict, invalid, notFound } from '../errors.js';
import { listingExists } from '../events/events.service.js';
import type { DeliveryStatus, WebhookDeliveriesTable, WebhookEndpointsTable } from './notify.table.js';
import {
  isUuid,
  listDeliveriesSchema,
  parseInput,
  webhookEndpointInputSchema,
  type ListDeliveriesInput,
  type WebhookEndpointInput,
} from './notify.schema.js';
import { DEFAULT_OUTBOUND_POLICY, refusedReceiverUrl, type OutboundPolicy } from './outbound.js';
import * as repo from './webhooks.repository.js';

/** A webhook endpoint as operators see it. The secret is not here: it is shown once, when the endpoint is added. */
export interface WebhookEndpoint {
  id: string;
  url: string;
  /** null: notifications of every listing. */
  listingId: string | null;
  active: boolean;
  maxAttempts: number;
  timeoutMs: number;
  consecutiveFailures: number;
  /** While in the future, deliveries to this endpoint wait without a request (its circuit is open). */
  openUntil: Date | null;
  createdAt: Date;
}

export interface WebhookDelivery {
  id: number;
  endpointId: string;
  availabilityId: number | null;
  notificationIds: number[];
  status: DeliveryStatus;
  /** HTTP requests made so far. */
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
  deliveredAt: Date | null;
}

/** A row as operators see it: camelCase, and without the secret. */
const toEndpoint = (r: Selectable<WebhookEndpointsTable>): WebhookEndpoint => ({
  id: r.id,
  url: r.url,
  listingId: r.listing_id,
  active: r.active,
  maxAttempts: r.max_attempts,
  timeoutMs: r.timeout_ms,
  consecutiveFailures: r.consecutive_failures,
  openUntil: r.open_until,
  createdAt: r.created_at,
});

/** A row as operators see it (bigint[] ids arrive from pg as strings: made numbers here). */
const toDelivery = (r: Selectable<WebhookDeliveriesTable>): WebhookDelivery => ({
  id: r.id,
  endpointId: r.endpoint_id,
  availabilityId: r.availability_id,
  notificationIds: r.notification_ids.map(Number),
  status: r.status,
  attempts: r.attempts,
  lastStatusCode: r.last_status_code,
  lastError: r.last_error,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  deliveredAt: r.delivered_at,
});

/** A fresh signing secret: 32 random bytes, prefixed so a leaked one is recognisable in logs and scanners. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/**
 * Registers an operator's receiver (a messaging gateway, say) for one listing's notifications or, without
 * `listingId`, every listing's. Returns the signing secret this once (generated unless given): the receiver
 * needs it to verify X-Onsale-Signature, and listings never show it again. A URL whose host is internal (loopback,
 * private, link-local, metadata... in any spelling, or a name resolving to one) is refused at `url` unless the
 * install's `outbound` policy allows it; every delivery checks the address it connects to again.
 */
export async function addWebhookEndpoint(
  db: Db | Trx,
  input: WebhookEndpointInput,
  opts: { outbound?: OutboundPolicy } = {},
): Promise<WebhookEndpoint & { secret: string }> {
  const i = parseInput(webhookEndpointInputSchema, input, 'INVALID_WEBHOOK_ENDPOINT');
  const refused = await refusedReceiverUrl(i.url, opts.outbound ?? DEFAULT_OUTBOUND_POLICY);
  if (refused) throw invalid('INVALID_WEBHOOK_ENDPOINT', `url: ${refused}`, 'url', { issues: [{ path: 'url', message: refused }] });
  if (i.listingId !== undefined && !(await listingExists(db, i.listingId)))
    throw notFound('LISTING_NOT_FOUND', `no listing ${i.listingId}`, 'listingId');
  const secret = i.secret ?? generateWebhookSecret();
  const row = await repo.insertEndpoint(db, {
    url: i.url,
    secret,
    listing_id: i.listingId ?? null,
    ...(i.maxAttempts !== undefined && { max_attempts: i.maxAttempts }),
    ...(i.timeoutMs !== undefined && { timeout_ms: i.timeoutMs }),
  });
  return { ...toEndpoint(row), secret };
}

/** Every endpoint, oldest first, with its circuit state (for operators deciding whether a receiver is down). */
export async function listWebhookEndpoints(db: Db | Trx): Promise<WebhookEndpoint[]> {
  return (await repo.findEndpoints(db)).map(toEndpoint);
}

/**
 * Turns an endpoint off (its pending deliveries go DEAD, with the reason, when their job next runs, so they can
 * be redelivered once it is back) or on again. Unknown id: not_found WEBHOOK_ENDPOINT_NOT_FOUND.
 */
export async function setWebhookEndpointActive(db: Db | Trx, id: string, active: boolean): Promise<WebhookEndpoint> {
  const row = isUuid(id) ? await repo.updateEndpointActive(db, id, active) : undefined;
  if (!row) throw notFound('WEBHOOK_ENDPOINT_NOT_FOUND', `no webhook endpoint ${id}`, 'id');
  return toEndpoint(row);
}

/** Recent deliveries, newest first, optionally of one endpoint and in one status (DEAD: the dead-letter list). */
export async function listDeliveries(db: Db | Trx, input: ListDeliveriesInput = {}): Promise<WebhookDelivery[]> {
  const q = parseInput(listDeliveriesSchema, input, 'INVALID_DELIVERY_QUERY');
  return (await repo.findDeliveries(db, q)).map(toDelivery);
}

/**
 * Sends a dead-lettered delivery again, with a fresh attempt budget (after the receiver is fixed). Only DEAD ones:
 * anything else is still being tried or already arrived (conflict DELIVERY_NOT_DEAD); an inactive endpoint would
 * only kill it again (conflict WEBHOOK_ENDPOINT_INACTIVE).
 */
export async function redeliver(db: Db | Trx, deliveryId: number): Promise<WebhookDelivery> {
  const valid = Number.isSafeInteger(deliveryId) && deliveryId > 0;
  const requeued = valid ? await repo.requeueDeadDelivery(db, deliveryId) : undefined;
  const row = valid ? await repo.findDelivery(db, deliveryId) : undefined;
  if (!row) throw notFound('WEBHOOK_DELIVERY_NOT_FOUND', `no webhook delivery ${deliveryId}`, 'deliveryId');
  if (!requeued) {
    if (row.status !== 'DEAD')
      throw conflict('DELIVERY_NOT_DEAD', `delivery ${deliveryId} is ${row.status}; only DEAD deliveries are redelivered`, {
        status: row.status,
      });
    throw conflict('WEBHOOK_ENDPOINT_INACTIVE', `the endpoint of delivery ${deliveryId} is disabled; enable it first`, {
      endpointId: row.endpoint_id,
    });
  }
  return toDelivery(row);
}

/**
 * The webhook side of a fan-out chunk: one delivery (and one `webhook_deliver` job, with the endpoint's
 * max_attempts) per active endpoint of the listing or of every listing. Call it inside the transaction that
 * inserts the notifications, so a rolled-back fan-out sends nothing and a committed one is sure to be sent.
 * One statement per call; no endpoint, no rows. Returns the delivery ids.
 */
export async function enqueueDeliveries(
  trx: Trx,
  batch: { listingId: string; availabilityId: number | null; notificationIds: number[] },
): Promise<number[]> {
  if (batch.notificationIds.length === 0) return [];
  return repo.insertDeliveriesWithJobs(trx, batch);
}
