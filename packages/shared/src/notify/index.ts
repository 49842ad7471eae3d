export type { NotificationKind, DeliveryStatus } from './notify.table.js';
export {
  deliveryStatuses,
  webhookEndpointInputSchema,
  listDeliveriesSchema,
  type WebhookEndpointInput,
  type ListDeliveriesInput,
} from './notify.schema.js';
export { inboxChannel, webhookChannel, deliverToChannels, type NotificationChannel, type NotificationBatch } from './channel.js';
export {
  addWebhookEndpoint,
  listWebhookEndpoints,
  setWebhookEndpointActive,
  listDeliveries,
  redeliver,
  enqueueDeliveries,
  generateWebhookSecret,
  type WebhookEndpoint,
  type WebhookDelivery,
} from './webhooks.js';
export { WEBHOOK_DELIVER_TASK, WEBHOOK_LANES_PER_ENDPOINT } from './webhooks.repository.js';
export {
  webhookDeliverTask,
  notifyTasks,
  CircuitOpenError,
  WebhookRequestError,
  type WebhookDeliverDeps,
  type WebhookPayload,
} from './delivery.js';
export {
  verifyWebhookSignature,
  signWebhookPayload,
  SIGNATURE_HEADER,
  DELIVERY_HEADER,
  DEFAULT_SIGNATURE_TOLERANCE_SECONDS,
} from './signature.js';
export { addWebhookEndpointAs, setWebhookEndpointActiveAs, redeliverAs } from './webhook-admin.js';
export {
  ALLOW_HOSTS_SETTING,
  DEFAULT_OUTBOUND_POLICY,
  OutboundRefusedError,
  outboundDispatcher,
  outboundEnvShape,
  outboundPolicyFromEnv,
  outboundPolicyOf,
  postOutbound,
  refusedAddress,
  refusedReceiverUrl,
  type OutboundPolicy,
  type PostOutcome,
  type ResolveHost,
} from './outbound.js';
