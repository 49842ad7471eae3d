import { initTRPC, TRPCError, type TRPC_ERROR_CODE_KEY } from '@trpc/server';
import { ZodError } from 'zod';
import { DomainError, type ErrorCode, type ErrorKind } from '@onsale/shared';
import { databaseFaultOf } from '@onsale/shared/db';
import { fieldErrors, requireRole, type Role } from '@onsale/shared/users';
import { CSRF_HEADER, type Context } from './context.js';

/** The one mapping from domain error kinds to tRPC codes (the store API has its own to HTTP statuses). */
const trpcCodeOf: Record<ErrorKind, TRPC_ERROR_CODE_KEY> = {
  invalid: 'BAD_REQUEST',
  unauthenticated: 'UNAUTHORIZED',
  forbidden: 'FORBIDDEN',
  not_found: 'NOT_FOUND',
  conflict: 'CONFLICT',
  // tRPC has no 410; the domain code in `data.domainCode` tells an expiry apart from a missing thing.
  gone: 'NOT_FOUND',
  limit: 'CONFLICT',
  payment: 'PAYMENT_REQUIRED',
  throttled: 'TOO_MANY_REQUESTS',
  unavailable: 'SERVICE_UNAVAILABLE',
};

/** `data.domainCode` of every tRPC error: a registered code, or null for an internal error. */
type DomainCode = ErrorCode | null;

const t = initTRPC.context<Context>().create({
  // Stack traces never leave the process, whatever NODE_ENV says.
  isDev: false,
  // Subscriptions (the war room) stream over SSE: a ping comment every 2 s keeps proxies from closing a quiet
  // stream, and a client that hears nothing for 5 s (ping or data) drops the stream and reconnects.
  sse: { ping: { enabled: true, intervalMs: 2_000 }, client: { reconnectAfterInactivityMs: 5_000 } },
  errorFormatter({ shape, error }) {
    const { data } = shape;
    if (error.code === 'INTERNAL_SERVER_ERROR') {
      // An unknown error: its message may carry SQL, paths or secrets. The server log has it (onError in app.ts).
      return {
        ...shape,
        message: 'Internal server error',
        data: { ...data, domainCode: null as DomainCode, field: null, fieldErrors: null },
      };
    }
    // Input that failed a procedure's zod schema: name every field, as the service's own validation does.
    if (error.cause instanceof ZodError) {
      const fields = fieldErrors(error.cause);
      const first = Object.keys(fields)[0] ?? null;
      return {
        ...shape,
        message: first ? `${first}: ${fields[first]}` : 'invalid input',
        data: { ...data, domainCode: 'INVALID_INPUT' satisfies ErrorCode, field: first, fieldErrors: fields },
      };
    }
    const cause = error.cause instanceof DomainError ? error.cause : undefined;
    const issues = cause?.details.issues as { path: string; message: string }[] | undefined;
    return {
      ...shape,
      data: {
        ...data,
        domainCode: (cause?.code ?? null) satisfies DomainCode,
        field: cause?.details.field ?? null,
        fieldErrors: issues
          ? Object.fromEntries(issues.map((i) => [i.path, i.message]))
          : cause?.details.field
            ? { [cause.details.field]: cause.message }
            : null,
      },
    };
  },
});

/** Turns a DomainError thrown below into the matching TRPCError, so callers, HTTP statuses and shapes agree. */
const domainErrors = t.middleware(async ({ next }) => {
  const result = await next();
  // A database outage (or a statement refused under load) is retryable: SERVICE_UNAVAILABLE, not an internal error.
  if (!result.ok && !(result.error.cause instanceof DomainError) && databaseFaultOf(result.error.cause ?? result.error))
    throw new TRPCError({
      code: 'SERVICE_UNAVAILABLE',
      message: 'the database is briefly unavailable; retry in a few seconds',
      cause: new DomainError('unavailable', 'SERVICE_UNAVAILABLE', 'the database is briefly unavailable; retry in a few seconds', {
        retryAfterSeconds: 5,
      }),
    });
  if (!result.ok && result.error.cause instanceof DomainError) {
    const cause = result.error.cause;
    throw new TRPCError({ code: trpcCodeOf[cause.kind], message: cause.message, cause });
  }
  return result;
});

/**
 * CSRF defence for every mutation. Two layers, so neither alone has to hold:
 * - the session cookie is SameSite=Strict, so a browser does not send it with any request started by another site;
 * - every mutation must carry the custom header `x-csrf`. A cross-site page can only add a custom header through
 *   fetch with CORS, which needs a preflight the BFF never grants (it serves no CORS headers), and an HTML form
 *   cannot add headers at all.
 * A required header rather than a double-submit token: the console and the BFF share one origin, so there is no
 * token to hand out, keep in sync across tabs or rotate, and the check cannot be got wrong by a forgotten field.
 * It covers sign-in as well (no login CSRF). Queries change nothing, so they need no header.
 */
const csrfGuard = t.middleware(({ type, ctx, next }) => {
  if (type === 'mutation' && !ctx.csrfHeader)
    throw new DomainError('forbidden', 'CSRF_HEADER_MISSING', `a change needs the ${CSRF_HEADER} header (the console sends it)`, {
      field: CSRF_HEADER,
    });
  return next();
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/** Anyone, signed in or not: sign-in, sign-out and `auth.me` only. Mutations still need the CSRF header. */
export const publicProcedure = t.procedure.use(domainErrors).use(csrfGuard);

/** A signed-in console user of any role; `ctx.user` is set. */
export const authedProcedure = publicProcedure.use(({ ctx, next }) => {
  if (!ctx.user) throw new DomainError('unauthenticated', 'SIGN_IN_REQUIRED', 'sign in to the console first', { field: 'session' });
  return next({ ctx: { ...ctx, user: ctx.user } });
});

/**
 * A signed-in user with one of `roles`; others get FORBIDDEN (ROLE_FORBIDDEN). Routers pass the roles of a
 * permission (`roleProcedure(...PERMISSIONS['users.manage'])`), the table the console also hides things by.
 */
export function roleProcedure(...roles: Role[]) {
  return authedProcedure.use(({ ctx, next }) => {
    requireRole(ctx.user, roles);
    return next();
  });
}
