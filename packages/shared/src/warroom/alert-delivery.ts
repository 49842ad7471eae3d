import type { JobHelpers, Task, TaskList } from 'graphile-worker';
import type pino from 'pino';
import type { Db } from '../db/connect.js';
import {
  DEFAULT_OUTBOUND_POLICY,
  DELIVERY_HEADER,
  outboundDispatcher,
  postOutbound,
  SIGNATURE_HEADER,
  signWebhookPayload,
  type OutboundPolicy,
} from '../notify/index.js';
import { alertMessage } from './alert-history.js';
import * as repo from './alerts.repository.js';

export interface AlertDeliverDeps {
  db: Db;
  /** The console's address (e.g. https://ops.example.com), for a link to the event's war room in each message. */
  consoleUrl?: string | null;
  /** Per-request timeout (default 5 s). */
  timeoutMs?: number;
  logger?: pino.Logger;
  /** Where messages may go (default: public addresses only; the install's WEBHOOK_ALLOW_HOSTS names internal ones). */
  outbound?: OutboundPolicy;
}

/** A receiver refused or did not answer; graphile retries the job with its backoff. */
export class AlertDeliveryError extends Error {
  override name = 'AlertDeliveryError';
}

/**
 * The `alert_deliver` task: posts one alert message (FIRING, ESCALATED or RESOLVED) to one receiver as
 * Slack-compatible JSON, signed like the product's other webhooks (`X-Onsale-Signature`, `X-Onsale-Delivery`).
 * Delivered, dead or gone: nothing to do (a duplicate job). A disabled receiver: dead with the reason. A 2xx:
 * delivered. A receiver on an internal address (checked on the address connected to, after DNS): dead at once with
 * the reason, no request made. Anything else: its status and time recorded (never the receiver's body) and thrown,
 * so graphile-worker retries with backoff; on the job's last try the message is dead-lettered. Redirects are not
 * followed.
 */
export function alertDeliverTask(deps: AlertDeliverDeps): Task {
  const timeoutMs = deps.timeoutMs ?? 5_000;
  const dispatcher = outboundDispatcher(deps.outbound ?? DEFAULT_OUTBOUND_POLICY);
  return async (payload: unknown, helpers: JobHelpers) => {
    const id = Number((payload as { deliveryId?: unknown } | null)?.deliveryId);
    if (!Number.isSafeInteger(id) || id <= 0) throw new Error(`alert_deliver: bad payload ${JSON.stringify(payload)}`);
    const lastTry = helpers.job.attempts >= helpers.job.max_attempts;
    const d = await repo.loadAlertDelivery(deps.db, id);
    if (!d || d.status === 'DELIVERED' || d.status === 'DEAD') return;
    if (!d.active)
      return repo.recordAlertFailure(deps.db, id, { statusCode: null, error: 'receiver disabled', dead: true, requested: false });

    const body = JSON.stringify(
      alertMessage({
        kind: d.kind,
        deliveryId: d.id,
        alert: {
          id: d.alert_id,
          code: d.code,
          scope: d.scope,
          severity: d.severity,
          title: d.title,
          action: d.action,
          detail: d.detail,
          firedAt: d.fired_at,
          resolvedAt: d.resolved_at,
        },
        event: { id: d.event_id, name: d.event_name },
        warRoomUrl: deps.consoleUrl ? `${deps.consoleUrl.replace(/\/$/, '')}/events/${d.event_id}/war-room` : null,
        sentAt: new Date(),
      }),
    );
    const outcome = await postOutbound(
      d.url,
      body,
      {
        'Content-Type': 'application/json',
        'User-Agent': 'onsale-alerts/1',
        [DELIVERY_HEADER]: `alert-${d.id}`,
        [SIGNATURE_HEADER]: signWebhookPayload(d.secret, body),
      },
      { dispatcher, timeoutMs, signal: helpers.abortSignal },
    );
    if (outcome.ok) return repo.markAlertDelivered(deps.db, id, outcome.statusCode);
    if (helpers.abortSignal?.aborted) throw new Error(`alert delivery ${id} interrupted by shutdown`);
    const { statusCode, error, refused } = outcome;
    if (refused) {
      await repo.recordAlertFailure(deps.db, id, { statusCode, error, dead: true, requested: false });
      deps.logger?.warn({ alertDeliveryId: id, error }, 'alert delivery refused');
      return;
    }
    await repo.recordAlertFailure(deps.db, id, { statusCode, error, dead: lastTry, requested: true });
    deps.logger?.warn({ alertDeliveryId: id, error, lastTry }, 'alert delivery failed');
    if (!lastTry) throw new AlertDeliveryError(`alert delivery ${id}: ${error}`);
  };
}

/** The alert tasks, to spread into the worker's taskList. */
export function alertTasks(deps: AlertDeliverDeps): TaskList {
  return { [repo.ALERT_DELIVER_TASK]: alertDeliverTask(deps) };
}
