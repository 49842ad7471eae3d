import { Link, useRouteContext } from '@tanstack/react-router';
import './event-form.css';

/** The pages of one event: inventory, configuration, fairness audit, war room, admission plan, its listing's waitlist, the door scanner, its audit log. */
export function EventLinks({ eventId, listingId }: { eventId: string; listingId?: string | undefined; permissions?: readonly string[] }) {
  const { me } = useRouteContext({ from: '/_authed' });
  const permissions: readonly string[] = me.permissions;
  return (
    <nav className="page-links" aria-label="Event pages" data-testid="event-links">
      <Link to="/events/$eventId" params={{ eventId }} activeOptions={{ exact: true }} activeProps={{ className: 'active' }}>
        Inventory
      </Link>
      <Link to="/events/$eventId/edit" params={{ eventId }} activeProps={{ className: 'active' }} data-testid="link-configure">
        Configuration
      </Link>
      <Link to="/events/$eventId/fairness" params={{ eventId }} activeProps={{ className: 'active' }} data-testid="link-fairness">
        Fairness audit
      </Link>
      <Link to="/events/$eventId/war-room" params={{ eventId }} activeProps={{ className: 'active' }} data-testid="link-war-room">
        War room
      </Link>
      <Link to="/events/$eventId/plan" params={{ eventId }} activeProps={{ className: 'active' }} data-testid="link-plan">
        Admission plan
      </Link>
      {listingId && (
        <Link to="/listings/$listingId" params={{ listingId }} data-testid="link-waitlist">
          Waitlist
        </Link>
      )}
      {permissions.includes('review.read') && (
        <Link to="/events/$eventId/review" params={{ eventId }} activeProps={{ className: 'active' }} data-testid="link-review">
          Post-sale review
        </Link>
      )}
      {permissions.includes('tickets.scan') && (
        <Link to="/events/$eventId/scanner" params={{ eventId }} activeProps={{ className: 'active' }} data-testid="link-scanner">
          Door scanner
        </Link>
      )}
      <Link to="/audit-log" search={{ eventId }} data-testid="link-audit-log">
        Audit log
      </Link>
    </nav>
  );
}
