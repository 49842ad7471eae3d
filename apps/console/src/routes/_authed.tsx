import { useMutation, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, Link, Outlet, redirect, useNavigate } from '@tanstack/react-router';
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

const ROLE_LABEL = { admin: 'Admin', operator: 'Operator', promoter: 'Promoter', viewer: 'Viewer' } as const;

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
          <Link to="/war-room" activeProps={{ className: 'active' }} data-testid="nav-war-room">
            War room
          </Link>
          {me.permissions.includes('events.configure') && (
            <Link to="/events/new" activeProps={{ className: 'active' }} data-testid="nav-new-event">
              New event
            </Link>
          )}
          <Link to="/listings" activeProps={{ className: 'active' }} data-testid="nav-waitlists">
            Waitlists
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
          <span data-testid="signed-in-user">{me.email}</span>
          <span className={`role role-${me.role}`} data-testid="signed-in-role" title={me.organisationName ?? undefined}>
            {ROLE_LABEL[me.role]}
            {me.organisationName ? ` · ${me.organisationName}` : ''}
          </span>
          <button type="button" className="link-button" onClick={() => signOut.mutate()} disabled={signOut.isPending} data-testid="sign-out">
            Sign out
          </button>
        </div>
      </header>
      <main className="content">
        <Outlet />
      </main>
    </div>
  );
}
