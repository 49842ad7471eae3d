import type { Db } from '../db/connect.js';
import { insertAudit } from '../audit/index.js';
import type { WebhookEndpointInput } from './notify.schema.js';
import type { OutboundPolicy } from './outbound.js';
import { addWebhookEndpoint, redeliver, setWebhookEndpointActive, type WebhookDelivery, type WebhookEndpoint } from './webhooks.js';

// The operator's changes to webhook endpoints (console and CLI), each in one transaction with its audit entry. The
// secret is never audited.

/** Adds an endpoint (see addWebhookEndpoint; the secret is returned this once), audited `webhook.added`. */
export function addWebhookEndpointAs(
  db: Db,
  input: WebhookEndpointInput,
  actor: string,
  opts: { outbound?: OutboundPolicy } = {},
): Promise<WebhookEndpoint & { secret: string }> {
  return db.transaction().execute(async (trx) => {
    const endpoint = await addWebhookEndpoint(trx, input, opts);
    await insertAudit(trx, {
      actor,
      action: 'webhook.added',
      details: { endpointId: endpoint.id, url: endpoint.url, listingId: endpoint.listingId },
    });
    return endpoint;
  });
}

/** Disables or enables an endpoint, audited `webhook.disabled` / `webhook.enabled`. */
export function setWebhookEndpointActiveAs(db: Db, id: string, active: boolean, actor: string): Promise<WebhookEndpoint> {
  return db.transaction().execute(async (trx) => {
    const endpoint = await setWebhookEndpointActive(trx, id, active);
    await insertAudit(trx, {
      actor,
      action: active ? 'webhook.enabled' : 'webhook.disabled',
      details: { endpointId: endpoint.id, url: endpoint.url },
    });
    return endpoint;
  });
}

/** Sends a dead delivery again (see redeliver), audited `webhook.redelivered`. */
export function redeliverAs(db: Db, deliveryId: number, actor: string): Promise<WebhookDelivery> {
  return db.transaction().execute(async (trx) => {
    const delivery = await redeliver(trx, deliveryId);
    await insertAudit(trx, { actor, action: 'webhook.redelivered', details: { deliveryId, endpointId: delivery.endpointId } });
    return delivery;
  });
}
