import type { ReactNode } from 'react';
import type { QueryClient } from '@tanstack/react-query';
import { createRootRouteWithContext, Link, Outlet, type ErrorComponentProps } from '@tanstack/react-router';
import type { Trpc } from '../trpc';
import { ErrorNotice, NotFound } from './-components/Status';

export interface RouterContext {
  trpc: Trpc;
  queryClient: QueryClient;
}

export const Route = createRootRouteWithContext<RouterContext>()({
  component: () => (
    <Shell>
      <Outlet />
    </Shell>
  ),
  // The root's error component replaces its layout, so it brings the shell back: the operator keeps the navigation.
  errorComponent: (props: ErrorComponentProps) => (
    <Shell>
      <ErrorNotice {...props} />
    </Shell>
  ),
  notFoundComponent: () => <NotFound what="page" />,
});

function Shell({ children }: { children: ReactNode }) {
  return (
    <div className="shell">
      <header className="topbar">
        <Link to="/" className="brand">
          Onsale console
        </Link>
        <nav>
          <Link to="/" activeOptions={{ exact: true }} activeProps={{ className: 'active' }}>
            Events
          </Link>
        </nav>
      </header>
      <main className="content">{children}</main>
    </div>
  );
}
