import { QueryClientProvider } from '@tanstack/react-query';
import { createRouter as createTanStackRouter } from '@tanstack/react-router';
import { routeTree } from './routeTree.gen';
import { createTrpc, TRPCProvider } from './trpc';
import { Pending } from './routes/-components/Status';
import { parseSearch } from './search-params';

export function createRouter() {
  const { queryClient, trpcClient, trpc } = createTrpc({
    // The session ended under an open page (expired, or signed out in another tab): forget what this user could
    // see and go to sign-in, coming back here afterwards.
    onUnauthorized() {
      const { pathname, href } = router.state.location;
      if (pathname === '/sign-in') return;
      queryClient.clear();
      void router.navigate({ to: '/sign-in', search: { redirect: href } });
    },
  });
  const router = createTanStackRouter({
    routeTree,
    context: { trpc, queryClient },
    defaultPreload: 'intent',
    // Loaders only warm the query cache; TanStack Query decides freshness, so the router never caches on its own.
    defaultPreloadStaleTime: 0,
    defaultPendingComponent: Pending,
    parseSearch,
    scrollRestoration: true,
    Wrap({ children }) {
      return (
        <QueryClientProvider client={queryClient}>
          <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
            {children}
          </TRPCProvider>
        </QueryClientProvider>
      );
    },
  });
  return router;
}

declare module '@tanstack/react-router' {
  interface Register {
    router: ReturnType<typeof createRouter>;
  }
}
