import fp from 'fastify-plugin';
import { inPoolLane, observePoolWait, type Db, type PoolTag } from '@onsale/shared/db';
import type { Metrics } from '@onsale/shared/metrics';

/**
 * The pool lane and timing label of each store route (issue 28: the hold's tail is its wait for a pooled connection).
 * `purchase`: a hold and a checkout, and a hold's other routes (read, extend, release): a fan the window let in, whose
 * hold clock runs, takes the next connection handed back before seat maps, joins and the rest. Not named: `other`,
 * standard lane. Each route's services and handlers query on their lane's Db (laneDb, requestLaneDb): the lane is
 * carried by the Db, not by async context (issue 27).
 */
export const POOL_TAG_OF: Record<string, PoolTag> = {
  'POST /events/:id/holds': { lane: 'purchase', kind: 'hold' },
  'POST /holds/:id/checkout': { lane: 'purchase', kind: 'checkout' },
  'GET /holds/:id': { lane: 'purchase', kind: 'holds' },
  'POST /holds/:id/extend': { lane: 'purchase', kind: 'holds' },
  'DELETE /holds/:id': { lane: 'purchase', kind: 'holds' },
  'GET /events/:id/seatmap': { lane: 'standard', kind: 'seatmap' },
  'GET /events/:id/sections/:code/seats': { lane: 'standard', kind: 'seatmap' },
  'POST /events/:id/queue': { lane: 'standard', kind: 'join' },
  'POST /edge/joins': { lane: 'standard', kind: 'join' },
};

const OTHER: PoolTag = { lane: 'standard', kind: 'other' };

export const poolTagOf = (key: string | undefined): PoolTag => (key && POOL_TAG_OF[key]) || OTHER;

/** The Db of `key`'s route: its lane and timing label (one Db a route, over the same pool). */
export const laneDb = (db: Db, key: string | undefined): Db => inPoolLane(db, poolTagOf(key));

/**
 * A Db of one request of `key`'s route, with a tag of its own (PoolTag.begun): once it has had a connection, its
 * later queries (a checkout's second transaction, after the payment) wait ahead of purchase requests not yet begun.
 */
export const requestLaneDb = (db: Db, key: string): Db => inPoolLane(db, { ...poolTagOf(key), begun: false });

/**
 * Times every connection's wait in `db_pool_wait_seconds{kind,lane}`; queries on no lane's Db (the watermark store,
 * gauges, background work) are `background`.
 */
export const poolLanesPlugin = fp<{ db: Db; metrics: Metrics }>(
  async (app, opts) => {
    observePoolWait(opts.db, (tag, ms) =>
      opts.metrics.poolWait.observe({ kind: tag?.kind ?? 'background', lane: tag?.lane ?? 'standard' }, ms / 1000),
    );
    app.addHook('onClose', async () => observePoolWait(opts.db, undefined));
  },
  { name: 'pool-lanes' },
);
