import { initTRPC, TRPCError, type TRPC_ERROR_CODE_KEY } from '@trpc/server';
import { DomainError, type ErrorKind } from '@onsale/shared';
import type { Context } from './context.js';

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
  unavailable: 'SERVICE_UNAVAILABLE',
};

const t = initTRPC.context<Context>().create({
  // Stack traces never leave the process, whatever NODE_ENV says.
  isDev: false,
  errorFormatter({ shape, error }) {
    const { data } = shape;
    if (error.code === 'INTERNAL_SERVER_ERROR') {
      // An unknown error: its message may carry SQL, paths or secrets. The server log has it (onError in app.ts).
      return { ...shape, message: 'Internal server error', data: { ...data, domainCode: null, field: null } };
    }
    const cause = error.cause instanceof DomainError ? error.cause : undefined;
    return {
      ...shape,
      data: { ...data, domainCode: cause?.code ?? null, field: cause?.details.field ?? null },
    };
  },
});

/** Turns a DomainError thrown below into the matching TRPCError, so callers, HTTP statuses and shapes agree. */
const domainErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof DomainError) {
    const cause = result.error.cause;
    throw new TRPCError({ code: trpcCodeOf[cause.kind], message: cause.message, cause });
  }
  return result;
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/** No operator sign-in yet; role-based procedures (promoter, operator) will be built on this one. */
export const publicProcedure = t.procedure.use(domainErrors);
