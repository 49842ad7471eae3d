import { QueryCache, QueryClient } from '@tanstack/react-query';
import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink } from '@trpc/client';
import { createTRPCContext, createTRPCOptionsProxy, type TRPCOptionsProxy } from '@trpc/tanstack-react-query';
import type { AppRouter } from '@onsale/bff/root';

export type Trpc = TRPCOptionsProxy<AppRouter>;

/** `useTRPC()` for components; the same proxy reaches loaders through the router context. */
export const { TRPCProvider, useTRPC } = createTRPCContext<AppRouter>();

/**
 * A query client and tRPC proxy per app instance (one per page load; tests may make their own).
 * `onUnauthorized` runs when a query is refused for want of a session (it expired, or was signed out elsewhere).
 */
export function createTrpc(opts: { onUnauthorized?: () => void } = {}): {
  queryClient: QueryClient;
  trpcClient: ReturnType<typeof createTRPCClient<AppRouter>>;
  trpc: Trpc;
} {
  const queryClient = new QueryClient({
    queryCache: new QueryCache({
      onError: (error) => {
        if (trpcCodeOf(error) === 'UNAUTHORIZED') opts.onUnauthorized?.();
      },
    }),
    defaultOptions: {
      queries: {
        // Counts move during a sale; a few seconds of staleness is what an operator can live with.
        staleTime: 2_000,
        // A 4xx will not fix itself by asking again.
        retry: (failures, error) => failures < 2 && !isClientError(error),
      },
    },
  });
  // Same origin: the BFF serves this build, and Vite's dev server proxies /trpc to it. The session cookie
  // (httpOnly) goes along by itself; x-csrf is the header the BFF requires on every mutation.
  // Subscriptions (the war room) stream over Server-Sent Events; the browser's EventSource sends the cookie too.
  const trpcClient = createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === 'subscription',
        true: httpSubscriptionLink({ url: '/trpc' }),
        false: httpBatchLink({ url: '/trpc', headers: { 'x-csrf': '1' } }),
      }),
    ],
  });
  const trpc = createTRPCOptionsProxy<AppRouter>({ client: trpcClient, queryClient });
  return { queryClient, trpcClient, trpc };
}

/** The tRPC code of an error from the BFF, if it is one (e.g. 'NOT_FOUND'). */
export function trpcCodeOf(error: unknown): string | undefined {
  const data = (error as { data?: { code?: unknown } } | null)?.data;
  return typeof data?.code === 'string' ? data.code : undefined;
}

function isClientError(error: unknown): boolean {
  const status = (error as { data?: { httpStatus?: unknown } } | null)?.data?.httpStatus;
  return typeof status === 'number' && status >= 400 && status < 500;
}

/** The BFF's messages per form field for a refused call (zod or domain validation), if any. */
export function fieldErrorsOf(error: unknown): Record<string, string> {
  const data = (error as { data?: { fieldErrors?: unknown; field?: unknown } } | null)?.data;
  if (data?.fieldErrors && typeof data.fieldErrors === 'object') return data.fieldErrors as Record<string, string>;
  return {};
}

/** The domain code of an error from the BFF (e.g. 'INVALID_CREDENTIALS'), if it has one. */
export function domainCodeOf(error: unknown): string | undefined {
  const code = (error as { data?: { domainCode?: unknown } } | null)?.data?.domainCode;
  return typeof code === 'string' ? code : undefined;
}

/**
 * A failed call in words a person can act on. The server's refusal is its own message (a sentence about what was
 * wrong); no answer at all ("Failed to fetch", "NetworkError…") says the server could not be reached and, for a
 * change (`change: true`), that it is not known whether it was made; a 5xx says the server cannot do it now.
 */
export function messageOf(error: unknown, opts: { change?: boolean } = {}): string {
  const data = (error as { data?: { httpStatus?: unknown } } | null)?.data;
  const status = typeof data?.httpStatus === 'number' ? data.httpStatus : undefined;
  if (status === undefined)
    return opts.change
      ? 'Could not reach the server, so it is not known whether this was done. Check the connection, then look at the page again before retrying.'
      : 'Could not reach the server. Check the connection; the page tries again by itself.';
  const message = error instanceof Error ? error.message : String(error);
  if (status >= 500) return `The server cannot do this right now (${message.replace(/[.\s]+$/, '')}). Try again in a moment.`;
  return message;
}
