import { z } from 'zod';
import {
  addWebhookEndpointAs,
  listDeliveries,
  listWebhookEndpoints,
  redeliverAs,
  setWebhookEndpointActiveAs,
  type WebhookDelivery,
  type WebhookEndpoint,
} from '@onsale/shared/notify';
import { listDeliveriesSchema, webhookEndpointInputSchema } from '@onsale/shared/notify/schema';
import { PERMISSIONS } from '@onsale/shared/users';
import { roleProcedure, router } from '../trpc.js';

// Webhook endpoints of waitlist notifications (the CLI's webhook:* commands) from the console: admins and operators.
const managers = roleProcedure(...PERMISSIONS['webhooks.manage']);
const iso = (d: Date | null) => d?.toISOString() ?? null;

const endpointView = (e: WebhookEndpoint) => ({ ...e, openUntil: iso(e.openUntil), createdAt: e.createdAt.toISOString() });
const deliveryView = (d: WebhookDelivery) => ({
  ...d,
  createdAt: d.createdAt.toISOString(),
  updatedAt: d.updatedAt.toISOString(),
  deliveredAt: iso(d.deliveredAt),
});
const endpointId = z.object({ endpointId: z.string().trim().min(1, 'choose an endpoint').max(100) });

export const webhooksRouter = router({
  /** Every endpoint with its circuit state (never the secret). */
  list: managers.query(async ({ ctx }) => (await listWebhookEndpoints(ctx.db)).map(endpointView)),

  /** Adds an endpoint; its signing secret is in this answer only. Audited. */
  add: managers
    .input(webhookEndpointInputSchema)
    .mutation(
      async ({ ctx, input }) =>
        endpointView(await addWebhookEndpointAs(ctx.db, input, ctx.user.email, { outbound: ctx.outbound })) as ReturnType<
          typeof endpointView
        > & { secret: string },
    ),

  /** Stops sending to an endpoint (its pending deliveries go DEAD; redeliver them later). Audited. */
  disable: managers
    .input(endpointId)
    .mutation(async ({ ctx, input }) => endpointView(await setWebhookEndpointActiveAs(ctx.db, input.endpointId, false, ctx.user.email))),

  /** Sends to it again. Audited. */
  enable: managers
    .input(endpointId)
    .mutation(async ({ ctx, input }) => endpointView(await setWebhookEndpointActiveAs(ctx.db, input.endpointId, true, ctx.user.email))),

  /** Recent deliveries, newest first (DEAD: the dead-letter list). */
  deliveries: managers.input(listDeliveriesSchema).query(async ({ ctx, input }) => (await listDeliveries(ctx.db, input)).map(deliveryView)),

  /** Sends a DEAD delivery again with a fresh attempt budget. DELIVERY_NOT_DEAD, WEBHOOK_ENDPOINT_INACTIVE. Audited. */
  redeliver: managers
    .input(z.object({ deliveryId: z.number().int().positive() }))
    .mutation(async ({ ctx, input }) => deliveryView(await redeliverAs(ctx.db, input.deliveryId, ctx.user.email))),
});
