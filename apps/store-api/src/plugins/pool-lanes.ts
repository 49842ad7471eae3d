import fp from 'fastify-plugin';
import { observePoolWait, runInPoolLane, type Db, type PoolTag } from '@onsale/shared/db';
import type { Metrics } from '@onsale/shared/metrics';
import { routeOf } from './route-of.js';

/**
 * The pool lane and timing label of each store route (issue 28: the hold's tail is its wait for a pooled connection).
 * `purchase`: a hold and a checkout, and a hold's other routes (read, extend, release): a fan the window let in, whose
 * hold clock runs, takes the next connection handed back before seat maps, joins and the rest. Not named: `other`,
 * standard lane.
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

/**
 * Runs each request in its route's pool lane (packages/shared/src/db/pool-lanes.ts) and times every connection's wait
 * in `db_pool_wait_seconds{kind,lane}`; queries outside a request (the watermark store, gauges) are `background`.
 */
export const poolLanesPlugin = fp<{ db: Db; metrics: Metrics }>(
  async (app, opts) => {
    observePoolWait(opts.db, (tag, ms) =>
      opts.metrics.poolWait.observe({ kind: tag?.kind ?? 'background', lane: tag?.lane ?? 'standard' }, ms / 1000),
    );
    app.addHook('onClose', async () => observePoolWait(opts.db, undefined));
    // A callback hook: the rest of the request's hooks and its handler run inside the lane's context.
    // A tag object per request: the pool marks it once the request has had a connection (PoolTag.begun).
    app.addHook('onRequest', (req, _reply, done) => runInPoolLane({ ...poolTagOf(routeOf(req).key) }, done));
  },
  { name: 'pool-lanes' },
);
