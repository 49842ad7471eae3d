import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { DomainError, type ErrorKind } from '@onsale/shared';
import { TokenError } from '@onsale/shared/queue';

/** The one mapping from domain error kinds to HTTP statuses. */
const statusOf: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  limit: 409,
  payment: 402,
  unavailable: 503,
};

export interface ErrorBody {
  error: string;
  message: string;
  field?: string;
  [k: string]: unknown;
}

/** Every error leaves as `{ error, message, field? }`; a 5xx never shows internals. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | DomainError | Error, req, reply) => {
    if (err instanceof DomainError) {
      const status = statusOf[err.kind];
      if (err.details.retryAfterSeconds !== undefined) reply.header('retry-after', String(err.details.retryAfterSeconds));
      return reply.status(status).send({ error: err.code, message: err.message, ...err.details } satisfies ErrorBody);
    }
    if (err instanceof TokenError) {
      // Queue and admission tokens: the edge module's own error type (it may not import DomainError).
      return reply.status(statusOf[err.kind]).send({ error: err.code, message: err.message, field: 'token' });
    }
    if (hasZodFastifySchemaValidationErrors(err)) {
      const first = err.validation[0];
      const where = err.validationContext ?? 'body';
      const path = (first?.instancePath ?? '').replace(/^\//, '').replaceAll('/', '.');
      const field = path ? `${where === 'body' ? '' : `${where}.`}${path}` : where;
      return reply.status(400).send({
        error: 'VALIDATION_FAILED',
        message: `${field}: ${first?.message ?? 'invalid'}`,
        field,
        issues: err.validation.map((v) => ({ field: v.instancePath.replace(/^\//, '').replaceAll('/', '.') || where, message: v.message })),
      });
    }
    const fe = err as FastifyError;
    if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
      const code =
        fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || fe.name === 'SyntaxError'
          ? 'INVALID_JSON'
          : fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
            ? 'EMPTY_BODY'
            : fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
              ? 'UNSUPPORTED_MEDIA_TYPE'
              : fe.statusCode === 429
                ? 'RATE_LIMITED'
                : 'BAD_REQUEST';
      return reply.status(fe.statusCode).send({ error: code, message: fe.message, field: 'body' });
    }
    req.log.error({ err }, 'unhandled error');
    return reply.status(500).send({ error: 'INTERNAL', message: 'internal error' });
  });

  app.setNotFoundHandler((req, reply) =>
    reply.status(404).send({ error: 'ROUTE_NOT_FOUND', message: `no route ${req.method} ${req.url.split('?')[0]}` }),
  );
}
