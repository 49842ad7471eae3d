import type { Trx } from '../db/connect.js';
import type { Metrics } from '../metrics/index.js';
import { enqueueDeliveries } from './webhooks.js';

/**
 * A chunk of notifications just inserted (a few hundred at most): by a waitlist fan-out, all of one availability
 * event, or by a lottery draw (no availability event: `availabilityId` null).
 */
export interface NotificationBatch {
  listingId: string;
  availabilityId: number | null;
  /** When the availability event happened: the start of the notify latency. */
  availabilityCreatedAt?: Date;
  notificationIds: number[];
}

/**
 * A way notifications reach fans (the in-app inbox, webhooks; e-mail and SMS plug in here). The fan-out tells
 * each channel about every chunk inside the transaction that inserts it, so a channel must only write durable
 * work there (rows, jobs enqueued by SQL) and never talk to the outside world: a rolled-back fan-out then sends
 * nothing, and a committed one is sure to be sent, by a job, with retries.
 */
export interface NotificationChannel {
  /** Stable name, used as the `channel` label of the metrics. */
  readonly name: string;
  /** Takes on the chunk within the fan-out's transaction. */
  deliver(trx: Trx, batch: NotificationBatch): Promise<void>;
}

/**
 * The in-app inbox. Fan-out on read: the notifications rows are the inbox (GET /me/notifications reads them), so
 * the insert is the delivery and there is nothing to do but count it. Counted before the commit, so a rolled-back
 * fan-out over-counts (rare, and only a metric).
 */
export function inboxChannel(metrics?: Metrics): NotificationChannel {
  return {
    name: 'inbox',
    async deliver(_trx, batch) {
      if (!metrics || batch.notificationIds.length === 0) return;
      metrics.waitlistNotifications.inc({ channel: 'inbox', status: 'delivered' }, batch.notificationIds.length);
      if (batch.availabilityCreatedAt)
        metrics.waitlistNotifyLatency.observe(
          { channel: 'inbox' },
          Math.max(0, (Date.now() - batch.availabilityCreatedAt.getTime()) / 1000),
        );
    },
  };
}

/** Webhooks: one signed POST per active endpoint per chunk, sent by the `webhook_deliver` job (see delivery.ts). */
export function webhookChannel(): NotificationChannel {
  return {
    name: 'webhook',
    async deliver(trx, batch) {
      await enqueueDeliveries(trx, batch);
    },
  };
}

/** Hands one chunk to every channel in turn, inside the caller's transaction. */
export async function deliverToChannels(trx: Trx, channels: readonly NotificationChannel[], batch: NotificationBatch): Promise<void> {
  for (const c of channels) await c.deliver(trx, batch);
}
