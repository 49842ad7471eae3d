import fp from 'fastify-plugin';
import underPressure from '@fastify/under-pressure';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LoadShedder, SHED_ORDERS, type ShedAnswer, type ShedOrder, type SheddingLimits } from '@onsale/shared/overload';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the request is shed: tRPC answers it SERVICE_UNAVAILABLE per procedure (see createContextFactory). */
    shed?: ShedAnswer;
  }
}

/**
 * The console's procedures by when they are shed; not named: `standard`. `last`: what the war room needs to see
 * and act during an overload (its figures, the queue's pause, resume and rate, who is signed in). `first`: the
 * heavy reports, which can wait.
 */
export const BFF_SHED_ORDER_OF: Record<string, Exclude<ShedOrder, 'standard'>> = {
  'warRoom.snapshot': 'last',
  'warRoom.watch': 'last',
  'warRoom.board': 'last',
  'warRoom.controls': 'last',
  'warRoom.pause': 'last',
  'warRoom.resume': 'last',
  'warRoom.setRate': 'last',
  'auth.me': 'last',
  'fairnessAudit.get': 'first',
  'waitlistReport.get': 'first',
  'auditLog.list': 'first',
  'auditLog.facets': 'first',
  'warRoom.series': 'first',
  'warRoom.alertHistory': 'first',
};

/** A request's class: GET /healthz last; a tRPC batch as its earliest-shed procedure; anything else standard. */
export function bffShedOrderOf(method: string, url: string): ShedOrder {
  const path = url.split('?')[0] ?? '';
  if (method === 'GET' && path === '/healthz') return 'last';
  if (!path.startsWith('/trpc/')) return 'standard';
  const procedures = decodeURIComponent(path.slice('/trpc/'.length)).split(',');
  const orders = procedures.map((p) => BFF_SHED_ORDER_OF[p] ?? 'standard');
  return SHED_ORDERS.find((o) => orders.includes(o)) ?? 'standard';
}

export interface BffLoadSheddingOptions {
  limits: SheddingLimits;
  sampleIntervalMs: number;
  poolWaiting: () => number | null;
}

/**
 * Load shedding for the BFF with @fastify/under-pressure (the rule and its logging: LoadShedder). A shed tRPC
 * request reaches tRPC marked, and is answered SERVICE_UNAVAILABLE (HTTP 503, `domainCode` SERVICE_UNAVAILABLE) for
 * each procedure of its batch without touching the database; anything else is answered 503 JSON here. Both carry
 * Retry-After.
 */
export const bffLoadShedding = fp<BffLoadSheddingOptions>(
  async (app, opts) => {
    const shedder = new LoadShedder({ ...opts, log: app.log });
    const stopTicking = shedder.startTicking();
    app.addHook('onClose', async () => stopTicking());
    const pressureHandler = (req: FastifyRequest, reply: FastifyReply) => {
      const shed = shedder.decide(bffShedOrderOf(req.method, req.url), app.memoryUsage().eventLoopDelay);
      if (!shed) return;
      reply.header('retry-after', String(shed.retryAfterSeconds));
      if (req.url.startsWith('/trpc/')) {
        req.shed = shed; // answered by tRPC in its own shape
        return;
      }
      void reply
        .status(503)
        .send({ error: 'SERVICE_UNAVAILABLE', message: shed.message, reason: shed.reason, retryAfterSeconds: shed.retryAfterSeconds });
    };
    await app.register(underPressure, shedder.underPressureOptions(pressureHandler));
  },
  { name: 'bff-load-shedding' },
);
