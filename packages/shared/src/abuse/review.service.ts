import type { Db } from '../db/connect.js';
import { DomainError, invalid, notFound } from '../errors.js';
import { cancelOrder } from '../checkout/cancel.js';
import { insertAudit } from '../audit/index.js';
import { findEvent } from '../events/events.service.js';
import { isUuid } from '../ids.js';
import { clusterOrders, type ReviewCluster, type ReviewOptions } from './review.js';
import { confirmedOrdersForReview } from './abuse.repository.js';

export interface EventReview {
  eventId: string;
  eventName: string;
  confirmedOrders: number;
  clusteredOrders: number;
  clusteredSeats: number;
  clusters: ReviewCluster[];
}

/** Clusters an event's confirmed orders (see review.ts for the rule). Reads only. */
export async function reviewEvent(db: Db, eventId: string, opts: ReviewOptions = {}): Promise<EventReview> {
  if (!isUuid(eventId)) throw notFound('EVENT_NOT_FOUND', `no event ${eventId}`, 'eventId');
  const event = await findEvent(db, eventId);
  if (!event) throw notFound('EVENT_NOT_FOUND', `no event ${eventId}`, 'eventId');
  const orders = await confirmedOrdersForReview(db, eventId);
  const clusters = clusterOrders(orders, opts);
  return {
    eventId,
    eventName: event.name,
    confirmedOrders: orders.length,
    clusteredOrders: clusters.reduce((n, c) => n + c.orders.length, 0),
    clusteredSeats: clusters.reduce((n, c) => n + c.seats, 0),
    clusters,
  };
}

export interface ClusterCancellation {
  eventId: string;
  clusterId: string;
  reason: string;
  cancelled: { orderId: string; accountId: string; seatsReturned: number; toWaitlist: boolean }[];
  /** Orders that could not be cancelled (cancelled meanwhile by someone else, say), with the code. */
  skipped: { orderId: string; code: string }[];
  seatsReturned: number;
}

/**
 * Cancels every order of one cluster, as the review prints it now (the options must be the ones it was printed
 * with): each through `cancelOrder`, so each is audited with the actor and reason and its seats come back through
 * the waitlist after a sell-out. A cluster-level audit entry records the evidence the decision rested on.
 * CLUSTER_NOT_FOUND when no cluster has that id now (its membership changed, or a typo): nothing is cancelled.
 */
export async function cancelCluster(
  db: Db,
  eventId: string,
  clusterId: string,
  by: { actor: string; reason: string },
  opts: ReviewOptions = {},
): Promise<ClusterCancellation> {
  if (!by.reason.trim()) throw invalid('REASON_REQUIRED', 'cancelling a cluster needs a reason', 'reason');
  const review = await reviewEvent(db, eventId, opts);
  const cluster = review.clusters.find((c) => c.id === clusterId);
  if (!cluster)
    throw new DomainError(
      'not_found',
      'CLUSTER_NOT_FOUND',
      `no cluster ${clusterId} in the review of event ${eventId} now; run the review again and use an id it prints`,
      {
        field: 'cluster',
      },
    );
  const result: ClusterCancellation = { eventId, clusterId, reason: by.reason, cancelled: [], skipped: [], seatsReturned: 0 };
  for (const o of cluster.orders) {
    try {
      const r = await cancelOrder(db, o.orderId, { actor: by.actor, reason: `${by.reason} (review cluster ${clusterId})` });
      result.cancelled.push({ orderId: o.orderId, accountId: o.accountId, seatsReturned: r.seatsReturned, toWaitlist: r.toWaitlist });
      result.seatsReturned += r.seatsReturned;
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      result.skipped.push({ orderId: o.orderId, code: e.code });
    }
  }
  await insertAudit(db, {
    actor: by.actor,
    action: 'review.cancel_cluster',
    eventId,
    details: {
      clusterId,
      reason: by.reason,
      accounts: cluster.accounts,
      signals: cluster.signals,
      evidence: cluster.evidence,
      cancelled: result.cancelled.map((c) => c.orderId),
      skipped: result.skipped,
      seatsReturned: result.seatsReturned,
    },
  });
  return result;
}
