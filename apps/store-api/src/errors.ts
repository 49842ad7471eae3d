import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { DomainError, HTTP_STATUS_OF, type ErrorCode } from '@onsale/shared';
import { databaseFaultOf, type DatabaseFault, type DatabaseHealth } from '@onsale/shared/db';
import { TokenError } from '@onsale/shared/queue';

export interface ErrorBody {
  error: ErrorCode;
  message: string;
  field?: string;
  [k: string]: unknown;
}

/** How the error handler learns of database faults and counts the 503s it answers for them. */
export interface FaultHandling {
  /** The pool's health: a connection-class error starts (or continues) an outage, logged once by its listener. */
  health: DatabaseHealth;
  /** Counts a 503 answered for a database fault, or for a request past its budget. */
  count503(reason: 'database' | 'database_busy' | 'overload_pool' | 'request_budget'): void;
  /** Notes a request answered 503 past its budget (logged as episodes, not per request). */
  overBudget?(): void;
}

/**
 * A request answered 503 past its budget goes on running (Fastify's handlerTimeout is cooperative): when it ends, its
 * late answer is dropped. Fastify would warn that the reply was already sent, or log the late failure as an error;
 * neither is news (the 503 was the answer), except a late failure that is a bug.
 */
function quietLateAnswer(reply: FastifyReply, health: DatabaseHealth | undefined): void {
  const log = reply.log;
  reply.log = Object.create(log, {
    warn: {
      value: (obj: unknown, ...rest: unknown[]) => {
        if ((obj as { err?: { code?: string } } | null)?.err?.code === 'FST_ERR_REP_ALREADY_SENT') return;
        Reflect.apply(log.warn, log, [obj, ...rest]);
      },
    },
    error: {
      value: (obj: unknown, ...rest: unknown[]) => {
        const err = (obj as { err?: unknown } | null)?.err;
        const expected = err instanceof DomainError || err instanceof TokenError || (health ? health.noteError(err) : databaseFaultOf(err));
        if (expected) return;
        Reflect.apply(log.error, log, [obj, ...rest]);
      },
    },
  }) as FastifyReply['log'];
}

/**
 * Answers a request that is past its budget (REQUEST_BUDGET_MS) and has no answer yet: 503 SERVICE_UNAVAILABLE with
 * Retry-After and reason `request_budget`, now, before any socket timeout could close it unanswered. Its handler
 * goes on (a hold or a checkout in flight finishes; a retry gets what it made); its late answer is dropped quietly.
 */
export function answerOverBudget(reply: FastifyReply, faults?: FaultHandling): void {
  if (reply.sent || reply.raw.headersSent || reply.raw.destroyed) return;
  quietLateAnswer(reply, faults?.health);
  const a = overBudgetAnswer(faults);
  void reply.status(a.status).headers(a.headers).send(a.body);
}

/**
 * The answer to a request past its budget (answerOverBudget's), counted and noted as one: for code that answers
 * without a reply of its own (a join of an edge's batch whose answers are streamed, each past the batch's budget).
 */
export function overBudgetAnswer(faults?: FaultHandling): Answer {
  faults?.count503('request_budget');
  faults?.overBudget?.();
  const retryAfter = outageRetryAfterSeconds();
  return {
    status: 503,
    headers: { 'retry-after': String(retryAfter) },
    body: {
      error: 'SERVICE_UNAVAILABLE',
      message: `the service is too busy to answer in time; retry in ${retryAfter} s (a retried checkout with the same Idempotency-Key is never charged twice, and a retried hold gets the hold it made back)`,
      reason: 'request_budget',
      retryAfterSeconds: retryAfter,
    } satisfies ErrorBody,
  };
}

/** Seconds a client waits before retrying during a database outage: 2-5 s, spread so retries do not arrive together. */
export const outageRetryAfterSeconds = (random = Math.random) => 2 + Math.floor(random() * 4);

/**
 * Every error leaves as `{ error, message, field? }`; a 5xx never shows internals. A database that cannot be
 * reached (refused, reset, terminated, starting up, pool wait timeout) or that refused a statement under load is a
 * `503 SERVICE_UNAVAILABLE` with `Retry-After` on every route, never a 500: the outage is logged once by the
 * health tracker's listener, not once per request.
 */
/** An answer as the store sends it: status, headers (besides the content type), body. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The error handler's answer to an error, for code that answers without a reply of its own (the edge's joins). */
    errorAnswer: (err: unknown, log: FastifyBaseLogger) => Answer;
    /** The answer to a request past its budget (REQUEST_BUDGET_MS), counted as one: see overBudgetAnswer. */
    overBudgetAnswer: () => Answer;
  }
}

/**
 * The answer to an error, as the error handler sends it. A database that cannot be reached (refused, reset,
 * terminated, starting up, pool wait timeout) or that refused a statement under load is a `503
 * SERVICE_UNAVAILABLE` with `Retry-After`, never a 500; a 5xx never shows internals.
 */
export function errorAnswer(err: unknown, faults: FaultHandling | undefined, log: FastifyBaseLogger): Answer {
  const fault: DatabaseFault | null = faults ? faults.health.noteError(err) : null;
  if (fault) {
    faults!.count503(fault === 'unavailable' ? 'database' : fault === 'busy' ? 'database_busy' : 'overload_pool');
    if (fault === 'busy') log.warn({ err }, 'database refused a statement under load; answered 503');
    const retryAfter = fault === 'busy' ? 1 : outageRetryAfterSeconds();
    return {
      status: 503,
      headers: { 'retry-after': String(retryAfter) },
      body: {
        error: 'SERVICE_UNAVAILABLE',
        message: `the service is briefly unavailable; retry in ${retryAfter} s (a retried checkout with the same Idempotency-Key is never charged twice)`,
        // Which rule answered: every pooled connection busy for the whole pool wait (the process is overloaded; the
        // database answers), the database refusing a statement under load, or the database out of reach.
        reason: fault === 'saturated' ? 'overload_pool' : fault === 'busy' ? 'database_busy' : 'database',
        retryAfterSeconds: retryAfter,
      } satisfies ErrorBody,
    };
  }
  if (err instanceof DomainError) {
    const status = HTTP_STATUS_OF[err.kind];
    const headers: Record<string, string> =
      err.details.retryAfterSeconds !== undefined ? { 'retry-after': String(Number(err.details.retryAfterSeconds)) } : {};
    return { status, headers, body: { error: err.code, message: err.message, ...err.details } satisfies ErrorBody };
  }
  if (err instanceof TokenError) {
    // Queue and admission tokens: the edge module's own error type (it may not import DomainError).
    return {
      status: HTTP_STATUS_OF[err.kind],
      headers: {},
      body: { error: err.code, message: err.message, field: 'token' } satisfies ErrorBody,
    };
  }
  if (hasZodFastifySchemaValidationErrors(err)) {
    const first = err.validation[0];
    const where = err.validationContext ?? 'body';
    const path = (first?.instancePath ?? '').replace(/^\//, '').replaceAll('/', '.');
    const field = path ? `${where === 'body' ? '' : `${where}.`}${path}` : where;
    return {
      status: 400,
      headers: {},
      body: {
        error: 'VALIDATION_FAILED',
        message: `${field}: ${first?.message ?? 'invalid'}`,
        field,
        issues: err.validation.map((v) => ({ field: v.instancePath.replace(/^\//, '').replaceAll('/', '.') || where, message: v.message })),
      } satisfies ErrorBody,
    };
  }
  const fe = err as FastifyError;
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    const code: ErrorCode =
      fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || fe.name === 'SyntaxError'
        ? 'INVALID_JSON'
        : fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
          ? 'EMPTY_BODY'
          : fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
            ? 'UNSUPPORTED_MEDIA_TYPE'
            : fe.statusCode === 429
              ? 'RATE_LIMITED'
              : 'BAD_REQUEST';
    return { status: fe.statusCode, headers: {}, body: { error: code, message: fe.message, field: 'body' } satisfies ErrorBody };
  }
  log.error({ err }, 'unhandled error');
  return { status: 500, headers: {}, body: { error: 'INTERNAL', message: 'internal error' } satisfies ErrorBody };
}

/**
 * Every error leaves as `{ error, message, field? }` (errorAnswer); the app is decorated with the same answers
 * (`app.errorAnswer`) for what it runs without a reply of its own.
 */
export function installErrorHandling(app: FastifyInstance, faults?: FaultHandling): void {
  app.decorate('errorAnswer', (err: unknown, log: FastifyBaseLogger) => errorAnswer(err, faults, log));
  app.decorate('overBudgetAnswer', () => overBudgetAnswer(faults));
  app.setErrorHandler((err: FastifyError | DomainError | Error, req, reply) => {
    const a = errorAnswer(err, faults, req.log);
    return reply.status(a.status).headers(a.headers).send(a.body);
  });

  app.setNotFoundHandler((req, reply) =>
    reply.status(404).send({ error: 'ROUTE_NOT_FOUND', message: `no route ${req.method} ${req.url.split('?')[0]}` } satisfies ErrorBody),
  );
}
