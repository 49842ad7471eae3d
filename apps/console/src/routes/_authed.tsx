import { useEffect, useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, Link, Outlet, redirect, useNavigate, useRouterState } from '@tanstack/react-router';
import { useTRPC } from '../trpc';

/**
 * Every page but sign-in lives under this layout. It asks the BFF who is signed in before anything loads and
 * sends anyone else to sign-in, coming back afterwards. The BFF checks every call on its own: this guard only
 * spares a signed-out user a page of errors.
 */
export const Route = createFileRoute('/_authed')({
  beforeLoad: async ({ context: { trpc, queryClient }, location }) => {
    const me = await queryClient.ensureQueryData(trpc.auth.me.queryOptions());
    if (!me) throw redirect({ to: '/sign-in', search: { redirect: location.href } });
    return { me };
  },
  component: SignedInShell,
});

const ROLE_LABEL = { admin: 'Admin', operator: 'Operator', promoter: 'Promoter', viewer: 'Viewer', scanner: 'Door staff' } as const;

function SignedInShell() {
  const { me } = Route.useRouteContext();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const signOut = useMutation(
    trpc.auth.signOut.mutationOptions({
      // Signed out or not (the session may be gone already), nothing of this user stays in the page.
      onSettled: async () => {
        queryClient.clear();
        await navigate({ to: '/sign-in' });
      },
    }),
  );

  // At phone width the menu folds behind one button; it closes again whenever a page is chosen.
  const [menuOpen, setMenuOpen] = useState(false);
  const pathname = useRouterState({ select: (st) => st.location.pathname });
  useEffect(() => setMenuOpen(false), [pathname]);

  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className={`topbar${menuOpen ? ' menu-open' : ''}`}>
        <Link to="/" className="brand">
          Onsale console
        </Link>
        <button
          type="button"
          className="menu-button"
          aria-expanded={menuOpen}
          aria-controls="main-menu"
          onClick={() => setMenuOpen((o) => !o)}
          data-testid="menu-button"
        >
          {menuOpen ? 'Close menu' : 'Menu'}
        </button>
        <div className="menu" id="main-menu" data-testid="main-menu">
          <nav aria-label="Console">
            <Link to="/" activeOptions={{ exact: true }} activeProps={{ className: 'active' }} data-testid="nav-events">
              Events
            </Link>
            <Link to="/war-room" activeProps={{ className: 'active' }} data-testid="nav-war-room">
              War room
            </Link>
            {me.permissions.includes('events.configure') && (
              <Link to="/events/new" activeProps={{ className: 'active' }} data-testid="nav-new-event">
                New event
              </Link>
            )}
            {me.permissions.includes('tickets.scan') && (
              <Link to="/door" activeProps={{ className: 'active' }} data-testid="nav-door">
                Door
              </Link>
            )}
            <Link to="/listings" activeProps={{ className: 'active' }} data-testid="nav-waitlists">
              Waitlists
            </Link>
            {me.permissions.includes('support.read') && (
              <Link to="/support" activeProps={{ className: 'active' }} data-testid="nav-support">
                Fan support
              </Link>
            )}
            {me.permissions.includes('warroom.control') && (
              <Link to="/alerts" activeProps={{ className: 'active' }} data-testid="nav-alerts">
                Alerts
              </Link>
            )}
            {me.permissions.includes('webhooks.manage') && (
              <Link to="/webhooks" activeProps={{ className: 'active' }} data-testid="nav-webhooks">
                Webhooks
              </Link>
            )}
            <Link to="/rehearsals" activeProps={{ className: 'active' }} data-testid="nav-rehearsals">
              Rehearsals
            </Link>
            <Link to="/audit-log" activeProps={{ className: 'active' }} data-testid="nav-audit-log">
              Audit log
            </Link>
            {me.permissions.includes('users.manage') && (
              <Link to="/users" activeProps={{ className: 'active' }} data-testid="nav-users">
                Users
              </Link>
            )}
          </nav>
          <div className="whoami">
            <Link to="/account" data-testid="signed-in-user" title="Your account">
              {me.email}
            </Link>
            <span className={`role role-${me.role}`} data-testid="signed-in-role" title={me.organisationName ?? undefined}>
              {ROLE_LABEL[me.role]}
              {me.organisationName ? ` · ${me.organisationName}` : ''}
            </span>
            <button
              type="button"
              className="link-button"
              onClick={() => signOut.mutate()}
              disabled={signOut.isPending}
              data-testid="sign-out"
            >
              Sign out
            </button>
          </div>
        </div>
      </header>
      <main className="content" id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </div>
  );
}
