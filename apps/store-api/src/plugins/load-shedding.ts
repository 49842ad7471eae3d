import fp from 'fastify-plugin';
import underPressure from '@fastify/under-pressure';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LoadShedder, type ShedOrder, type ShedReason, type SheddingLimits } from '@onsale/shared/overload';
import { routeOf } from './route-of.js';

/**
 * The store API's routes by when they are shed. Not named: `standard`. `first`: the expensive ones that start new
 * work for a fan not yet let in (a join runs the bot score and writes a place in line; waitlist and lottery writes;
 * sign-in): cheap to retry, the fan keeps its place. `last`: the cheap ones that keep fans in line and the edges and
 * the war room sighted; status polls are answered from memory, and a fan told to come back keeps their place anyway.
 *
 * A hold is `standard`, with the seat map and checkout: it comes from a fan the admission window already let in (every
 * hold carries an admission token), and a shed hold is a fan inside whose hold's clock runs (the stadium rehearsal of
 * 2026-12-06: 503s on holds took their p99, as fans time them, to 29.6 s). A hold that is shed all the same is
 * counted (StoreLoadTracker.shed, `onShedRequest`) and the admission controller halves its window on it: the window,
 * not the shedder, is what bounds the fans inside.
 */
export const SHED_ORDER_OF: Record<string, Exclude<ShedOrder, 'standard'>> = {
  'POST /events/:id/queue': 'first',
  // A batch of joins from an edge is shed as its joins would be, as a whole: they arrived together, and the shedder's
  // reading is the same for all of them (a join run as a request of its own also passes the shedder on its own).
  'POST /edge/joins': 'first',
  'POST /auth/dev-login': 'first',
  'PUT /listings/:id/waitlist': 'first',
  'POST /events/:id/lottery/registrations': 'first',
  'POST /waitlist/claims': 'first',
  'GET /events/:id/queue/status': 'last',
  'GET /events/:id/watermark': 'last',
  'GET /events/:id/edge-state': 'last',
  'GET /healthz': 'last',
  'GET /metrics': 'last',
};

/**
 * Routes never shed, whatever the load. `POST /edge/claims`: an edge's report of the admissions it issued (a signature
 * checked and a list kept in memory, written on the watermark store's beat). Shed, the admission controller does not
 * count the fans the edge let in as inside, and lets more in while they wait in front of the store: the overload
 * feeds itself (issue 28: 10,000-fan runs with `--edge` counted 0-42 fans let in and not holding while the driver had
 * 743-4,224). It is as cheap as the 503 that would answer it.
 */
export const NEVER_SHED: ReadonlySet<string> = new Set(['POST /edge/claims']);

export const shedOrderOf = (method: string, route: string | undefined): ShedOrder =>
  (route && SHED_ORDER_OF[`${method} ${route}`]) || 'standard';

export interface LoadSheddingOptions {
  limits: SheddingLimits;
  /** How often the event-loop delay (and the pool's queue) is sampled, ms. */
  sampleIntervalMs: number;
  /** Queries waiting for a pooled connection now (null when this process cannot tell). */
  poolWaiting: () => number | null;
  /** Counts each answer shed, by reason. */
  countShed: (reason: ShedReason) => void;
  /**
   * Requests served whatever the load: those whose answer ends a client's polling at a cost no greater than a 503's
   * (a status poll of a sold-out event is answered SOLD_OUT from memory, and the fan stops polling; shed, it comes
   * back after Retry-After, and learns of the sell-out seconds late).
   */
  servedAnyway?: (req: FastifyRequest) => boolean;
  /** Told of each request shed (after countShed): the store notes a shed hold for the admission controller. */
  onShedRequest?: (req: FastifyRequest, reason: ShedReason) => void;
}

/**
 * Load shedding with @fastify/under-pressure: while the event loop lags (or queries queue for the pool) past a
 * class's limit, that class's requests are answered at once, before any token check or body parse, with
 * `503 SERVICE_UNAVAILABLE`, `Retry-After` and the reason, instead of queueing until a socket timeout closes them
 * unanswered. The expensive routes go first, status polls last (see LoadShedder for the rule and its logging).
 */
export const loadSheddingPlugin = fp<LoadSheddingOptions>(
  async (app, opts) => {
    const shedder = new LoadShedder({
      limits: opts.limits,
      sampleIntervalMs: opts.sampleIntervalMs,
      poolWaiting: opts.poolWaiting,
      onShed: opts.countShed,
      log: app.log,
    });
    const stopTicking = shedder.startTicking();
    app.addHook('onClose', async () => stopTicking());

    // Called by under-pressure only while some limit is passed (LoadShedder.underPressureOptions).
    const pressureHandler = (req: FastifyRequest, reply: FastifyReply) => {
      if (NEVER_SHED.has(routeOf(req).key ?? '') || opts.servedAnyway?.(req)) return;
      const shed = shedder.decide(shedOrderOf(req.method, routeOf(req).url), app.memoryUsage().eventLoopDelay);
      if (!shed) return; // served as usual
      opts.onShedRequest?.(req, shed.reason);
      void reply
        .status(503)
        .header('retry-after', String(shed.retryAfterSeconds))
        .send({
          error: 'SERVICE_UNAVAILABLE',
          message: `${shed.message} (your place in line is kept; a retried checkout with the same Idempotency-Key is never charged twice)`,
          reason: shed.reason,
          retryAfterSeconds: shed.retryAfterSeconds,
        });
    };
    await app.register(underPressure, shedder.underPressureOptions(pressureHandler));
  },
  { name: 'load-shedding' },
);
