import fp from 'fastify-plugin';
import { answerOverBudget, type FaultHandling } from '../errors.js';

export interface RequestBudgetOptions {
  /** The longest a request may take in this process before it is answered 503 (REQUEST_BUDGET_MS), ms. */
  budgetMs: number;
  faults: FaultHandling;
}

/**
 * Every request is answered within its budget: one still without an answer when the budget ends (it waited in the
 * process, for the pool, for a slow payment provider) is answered 503 with Retry-After then, before the server's
 * socket timeout could close it unanswered (see checkTimeoutOrder). The clock starts when the request is routed,
 * before any other hook; it stops when the response ends or its socket closes.
 *
 * (Fastify's own handlerTimeout would do this, but in this version a request with a body stops its timer as soon as
 * the body has been read, so a POST is never timed.)
 */
export const requestBudgetPlugin = fp<RequestBudgetOptions>(
  async (app, opts) => {
    app.addHook('onRequest', (_req, reply, done) => {
      const timer = setTimeout(() => answerOverBudget(reply, opts.faults), opts.budgetMs);
      reply.raw.once('close', () => clearTimeout(timer));
      done();
    });
  },
  { name: 'request-budget' },
);
