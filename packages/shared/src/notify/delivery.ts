import type { JobHelpers, Task, TaskList } from 'graphile-worker';
import type pino from 'pino';
import type { Db } from '../db/connect.js';
import type { Metrics } from '../metrics/index.js';
import { DEFAULT_OUTBOUND_POLICY, outboundDispatcher, postOutbound, type OutboundPolicy } from './outbound.js';
import { DELIVERY_HEADER, SIGNATURE_HEADER, signWebhookPayload } from './signature.js';
import * as repo from './webhooks.repository.js';
import { WEBHOOK_DELIVER_TASK } from './webhooks.repository.js';

export interface WebhookDeliverDeps {
  db: Db;
  /**
   * The bodies of the notifications a delivery carries, in id order. The waitlist's renderNotifications(db, ids)
   * once it lands; anything JSON-serialisable meanwhile.
   */
  render: (ids: number[]) => Promise<unknown[]>;
  metrics?: Metrics;
  logger?: pino.Logger;
  /** Where deliveries may go (default: public addresses only; the install's WEBHOOK_ALLOW_HOSTS names internal ones). */
  outbound?: OutboundPolicy;
}

/** The body every receiver gets; `deliveryId` (also in X-Onsale-Delivery) is what it deduplicates on. */
export interface WebhookPayload {
  deliveryId: number;
  endpointId: string;
  sentAt: string;
  notifications: unknown[];
}

/** A try that made no request because the endpoint's circuit is open; graphile retries it with its backoff. */
export class CircuitOpenError extends Error {
  override name = 'CircuitOpenError';
}

/** A request that failed (non-2xx, timeout, network error); graphile retries it with its backoff. */
export class WebhookRequestError extends Error {
  override name = 'WebhookRequestError';
}

/**
 * The `webhook_deliver` task: sends one delivery (a chunk of notifications to one endpoint), signed.
 *
 * - Settled (DELIVERED, DEAD) or gone: nothing to do (a duplicate job).
 * - Endpoint disabled: DEAD with the reason, so it can be redelivered once the endpoint is back.
 * - Endpoint circuit open: throws without a request; graphile's exponential backoff brings it back later, and the
 *   worker slot is free at once. On the job's last try it goes DEAD instead, so a delivery to an endpoint that
 *   stays down is dead-lettered on graphile's schedule rather than left RETRYING with no job behind it.
 * - 2xx: DELIVERED, and the endpoint's failures are forgiven.
 * - The receiver's address is internal (checked on the address connected to, after DNS; see outbound.ts): DEAD at
 *   once with the reason, no request made; once the install allows the host, it can be redelivered.
 * - Anything else (its status and time are recorded, never its body): the attempt is recorded, the endpoint's circuit opens for min(2^failures, 300) s, and the task
 *   throws (RETRYING; graphile retries with backoff) or, at the endpoint's max_attempts, returns DEAD.
 *
 * Each endpoint's deliveries run in a few graphile named queues (WEBHOOK_LANES_PER_ENDPOINT), so a slow or
 * silent endpoint holds at most that many worker slots, each for at most its timeout.
 */
export function webhookDeliverTask(deps: WebhookDeliverDeps): Task {
  const { db, metrics, logger } = deps;
  const dispatcher = outboundDispatcher(deps.outbound ?? DEFAULT_OUTBOUND_POLICY);
  const count = (status: string, n: number) => metrics?.waitlistNotifications.inc({ channel: 'webhook', status }, n);

  return async (payload: unknown, helpers: JobHelpers) => {
    const deliveryId = Number((payload as { deliveryId?: unknown } | null)?.deliveryId);
    if (!Number.isSafeInteger(deliveryId) || deliveryId <= 0) throw new Error(`webhook_deliver: bad payload ${JSON.stringify(payload)}`);
    const lastTry = helpers.job.attempts >= helpers.job.max_attempts;

    const d = await repo.loadDeliveryForSend(db, deliveryId);
    if (!d || d.status === 'DELIVERED' || d.status === 'DEAD') return;
    const n = d.notification_ids.length;
    const giveUp = async (reason: string) => {
      if (await repo.markDead(db, deliveryId, reason)) {
        count('dead', n);
        logger?.warn({ deliveryId, endpointId: d.endpoint_id, reason }, 'webhook delivery dead-lettered');
      }
    };

    try {
      if (!d.active) return await giveUp('endpoint disabled');
      if (d.attempts >= d.max_attempts) return await giveUp(`max_attempts (${d.max_attempts}) reached`);

      const gate = await repo.passCircuit(db, d.endpoint_id);
      if (!gate.send) {
        const reason = `circuit open until ${gate.openUntil?.toISOString() ?? 'now'} after ${gate.failures} consecutive failures; no request made`;
        if (lastTry) return await giveUp(`${reason}; tries used up (last request: ${d.attempts} attempts)`);
        count('deferred', n);
        throw new CircuitOpenError(`endpoint ${d.endpoint_id} ${reason}`);
      }

      const ids = d.notification_ids.map(Number);
      const notifications = await deps.render(ids);
      if (notifications.length === 0) return await giveUp('its notifications no longer exist');
      const body = JSON.stringify({
        deliveryId,
        endpointId: d.endpoint_id,
        sentAt: new Date().toISOString(),
        notifications,
      } satisfies WebhookPayload);
      const headers = {
        'Content-Type': 'application/json',
        'User-Agent': 'onsale-webhooks/1',
        [DELIVERY_HEADER]: String(deliveryId),
        [SIGNATURE_HEADER]: signWebhookPayload(d.secret, body),
      };

      const outcome = await postOutbound(d.url, body, headers, { dispatcher, timeoutMs: d.timeout_ms, signal: helpers.abortSignal });
      if (outcome.ok) {
        const done = await repo.markDelivered(db, deliveryId, outcome.statusCode);
        if (done) {
          count('delivered', n);
          if (d.availability_created_at)
            metrics?.waitlistNotifyLatency.observe(
              { channel: 'webhook' },
              Math.max(0, (done.deliveredAt.getTime() - d.availability_created_at.getTime()) / 1000),
            );
        }
        return;
      }
      // A shutdown is not the receiver's fault: no attempt counted, the job runs again on the next worker.
      if (helpers.abortSignal?.aborted) throw new Error(`webhook delivery ${deliveryId} interrupted by shutdown`);
      // An internal address stays internal on every retry: dead now, with the reason, and the endpoint's circuit untouched.
      if (outcome.refused) return await giveUp(outcome.error);
      const f = await repo.recordFailure(db, deliveryId, d.endpoint_id, { statusCode: outcome.statusCode, error: outcome.error });
      if (!f) return;
      // Tries skipped while the circuit was open used up the job before the attempts ran out: dead-letter it now.
      if (f.status === 'RETRYING' && lastTry)
        return await giveUp(`${outcome.error}; the job's tries are used up after ${f.attempts} attempts`);
      count(f.status === 'DEAD' ? 'dead' : 'retrying', n);
      logger?.warn(
        { deliveryId, endpointId: d.endpoint_id, attempts: f.attempts, status: f.status, error: outcome.error },
        'webhook delivery failed',
      );
      if (f.status === 'RETRYING')
        throw new WebhookRequestError(`delivery ${deliveryId} to endpoint ${d.endpoint_id}: ${outcome.error} (attempt ${f.attempts})`);
    } catch (e) {
      // Whatever else failed (the database, rendering, a shutdown): on the job's last try the delivery must not be
      // left RETRYING with no job behind it; DEAD, it shows in the dead-letter list and can be redelivered.
      // Ignored on purpose: The original error is rethrown below and is what the job reports; a failed give-up leaves the delivery for maintenance to find.
      if (lastTry) await giveUp(`gave up: ${(e as Error).message}`).catch(() => {});
      throw e;
    }
  };
}

/** The notify tasks, to spread into the worker's taskList. */
export function notifyTasks(deps: WebhookDeliverDeps): TaskList {
  return { [WEBHOOK_DELIVER_TASK]: webhookDeliverTask(deps) };
}
