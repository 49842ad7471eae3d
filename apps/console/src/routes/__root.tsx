import type { ReactNode } from 'react';
import type { QueryClient } from '@tanstack/react-query';
import { createRootRouteWithContext, Link, Outlet, type ErrorComponentProps } from '@tanstack/react-router';
import type { Trpc } from '../trpc';
import { ErrorNotice, NotFound } from './-components/Status';

export interface RouterContext {
  trpc: Trpc;
  queryClient: QueryClient;
}

// The signed-in shell (navigation, user, sign-out) is the `_authed` layout's; the sign-in page has none.
export const Route = createRootRouteWithContext<RouterContext>()({
  component: Outlet,
  // The root's error component replaces every layout, so it brings a bare top bar back: the way home stays.
  errorComponent: (props: ErrorComponentProps) => (
    <BareShell>
      <ErrorNotice {...props} />
    </BareShell>
  ),
  notFoundComponent: () => (
    <BareShell>
      <NotFound what="page" />
    </BareShell>
  ),
});

export function BareShell({ children }: { children: ReactNode }) {
  return (
    <div className="shell">
      <header className="topbar">
        <Link to="/" className="brand">
          Onsale console
        </Link>
      </header>
      <main className="content">{children}</main>
    </div>
  );
}
