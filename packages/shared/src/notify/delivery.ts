import type { JobHelpers, Task, TaskList } from 'graphile-worker';
import type pino from 'pino';
import type { Db } from '../db/connect.js';
import type { Metrics } from '../metrics/index.js';
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

/** At most this much of a refusing receiver's body is kept in last_error: enough to diagnose, never a flood. */
const ERROR_BODY_BYTES = 512;

type Outcome = { ok: true; statusCode: number } | { ok: false; statusCode: number | null; error: string };

/** Reads at most `max` bytes of a response body as text and drops the rest (a hostile receiver cannot make us buffer it all). */
async function readSome(res: Response, max: number): Promise<string> {
  if (!res.body) return '';
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < max) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).subarray(0, max).toString('utf8');
}

/** Why a request failed, in words an operator can act on (the cause of undici's bare "fetch failed"). */
function describeError(e: unknown, timeoutMs: number): string {
  const err = e as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err?.name === 'TimeoutError') return `timeout: no answer within ${timeoutMs} ms`;
  if (err?.name === 'AbortError') return 'aborted: the worker is shutting down';
  const cause = err?.cause?.code ?? err?.cause?.message;
  return `network error: ${cause ?? err?.message ?? String(e)}`;
}

/**
 * One signed POST. Redirects are not followed (a receiver that moved is a misconfiguration to fix, and following
 * would send the signed body wherever it points); the timeout covers the whole exchange, body included.
 */
async function post(
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
  shutdown: AbortSignal | undefined,
): Promise<Outcome> {
  const signal = shutdown ? AbortSignal.any([AbortSignal.timeout(timeoutMs), shutdown]) : AbortSignal.timeout(timeoutMs);
  try {
    const res = await fetch(url, { method: 'POST', headers, body, signal, redirect: 'manual' });
    if (res.status >= 200 && res.status < 300) {
      await res.body?.cancel().catch(() => {});
      return { ok: true, statusCode: res.status };
    }
    const text = (await readSome(res, ERROR_BODY_BYTES).catch(() => '')).trim();
    return { ok: false, statusCode: res.status, error: `HTTP ${res.status}${text ? `: ${text}` : ''}` };
  } catch (e) {
    return { ok: false, statusCode: null, error: describeError(e, timeoutMs) };
  }
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
 * - Anything else: the attempt is recorded, the endpoint's circuit opens for min(2^failures, 300) s, and the task
 *   throws (RETRYING; graphile retries with backoff) or, at the endpoint's max_attempts, returns DEAD.
 *
 * Each endpoint's deliveries run in a few graphile named queues (WEBHOOK_LANES_PER_ENDPOINT), so a slow or
 * silent endpoint holds at most that many worker slots, each for at most its timeout.
 */
export function webhookDeliverTask(deps: WebhookDeliverDeps): Task {
  const { db, metrics, logger } = deps;
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

      const outcome = await post(d.url, body, headers, d.timeout_ms, helpers.abortSignal);
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
      if (lastTry) await giveUp(`gave up: ${(e as Error).message}`).catch(() => {});
      throw e;
    }
  };
}

/** The notify tasks, to spread into the worker's taskList. */
export function notifyTasks(deps: WebhookDeliverDeps): TaskList {
  return { [WEBHOOK_DELIVER_TASK]: webhookDeliverTask(deps) };
}
