import { useQuery } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { messageOf, useTRPC } from '../../trpc';
import { Forbidden } from '../-components/Status';
import { When } from '../-components/When';

// The doors: every event a gate can be set up for, soonest show first, each opening its door scanner. The start page
// of door staff (the scanner role), who read nothing else here.
export const Route = createFileRoute('/_authed/door')({
  component: DoorsPage,
});

function DoorsPage() {
  const { me } = Route.useRouteContext();
  const trpc = useTRPC();
  const allowed = me.permissions.includes('tickets.scan');
  const doors = useQuery(trpc.tickets.doorEvents.queryOptions(undefined, { enabled: allowed }));
  if (!allowed) return <Forbidden what="page (the doors are for door staff, operators and admins)" />;
  const now = Date.now();
  const upcoming = (doors.data ?? []).filter((e) => Date.parse(e.startsAt) > now - 12 * 3_600_000);
  return (
    <section>
      <h1>Doors</h1>
      <p className="muted">Choose the show at your door, then start scanning at your gate. Each gate works offline too.</p>
      {doors.error && (
        <p className="form-error" role="alert">
          {messageOf(doors.error)}
        </p>
      )}
      {doors.data && upcoming.length === 0 && <p className="muted">No show starts soon.</p>}
      <ul className="door-list" data-testid="door-events">
        {upcoming.map((e) => (
          <li key={e.id}>
            <Link to="/events/$eventId/scanner" params={{ eventId: e.id }} data-testid="door-event">
              {e.name}
            </Link>{' '}
            <span className="muted">
              {e.venueName} · <When iso={e.startsAt} zone={e.timeZone} />
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}
