import { QueryClient } from '@tanstack/react-query';
import { createTRPCClient, httpBatchLink } from '@trpc/client';
import { createTRPCContext, createTRPCOptionsProxy, type TRPCOptionsProxy } from '@trpc/tanstack-react-query';
import type { AppRouter } from '@onsale/bff/root';

export type Trpc = TRPCOptionsProxy<AppRouter>;

/** `useTRPC()` for components; the same proxy reaches loaders through the router context. */
export const { TRPCProvider, useTRPC } = createTRPCContext<AppRouter>();

/** A query client and tRPC proxy per app instance (one per page load; tests may make their own). */
export function createTrpc(): { queryClient: QueryClient; trpcClient: ReturnType<typeof createTRPCClient<AppRouter>>; trpc: Trpc } {
  const queryClient = new QueryClient({
    defaultOptions: {
      queries: {
        // Counts move during a sale; a few seconds of staleness is what an operator can live with.
        staleTime: 2_000,
        // A 4xx will not fix itself by asking again.
        retry: (failures, error) => failures < 2 && !isClientError(error),
      },
    },
  });
  // Same origin: the BFF serves this build, and Vite's dev server proxies /trpc to it.
  const trpcClient = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: '/trpc' })] });
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
