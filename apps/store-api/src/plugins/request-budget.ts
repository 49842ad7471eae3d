import fp from 'fastify-plugin';
import type { FastifyReply } from 'fastify';
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
 * before any other hook (Fastify's `reply.elapsedTime`); it stops when the response ends or its socket closes.
 *
 * A request answered in the turn it arrived (a status poll from memory, most requests of an on-sale) needs no
 * timer: the requests of a turn are noted, and once the turn's I/O is done (one setImmediate for all of them) only
 * those still unanswered get their timer, for what is left of their budget.
 *
 * (Fastify's own handlerTimeout would do this, but in this version a request with a body stops its timer as soon as
 * the body has been read, so a POST is never timed.)
 */
export const requestBudgetPlugin = fp<RequestBudgetOptions>(
  async (app, opts) => {
    let noted: FastifyReply[] = [];
    const timeLeft = () => {
      const replies = noted;
      noted = [];
      for (const reply of replies) {
        if (reply.sent || reply.raw.destroyed) continue; // answered (or its socket gone) within the turn
        const timer = setTimeout(() => answerOverBudget(reply, opts.faults), Math.max(0, opts.budgetMs - reply.elapsedTime));
        reply.raw.once('close', () => clearTimeout(timer));
      }
    };
    app.addHook('onRequest', (_req, reply, done) => {
      if (noted.push(reply) === 1) setImmediate(timeLeft);
      done();
    });
  },
  { name: 'request-budget' },
);
