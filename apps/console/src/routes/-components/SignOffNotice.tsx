import { Link } from '@tanstack/react-router';
import { formatDateTime } from './format';
import './signoff.css';

/**
 * Says that an event's fairness mode is not signed off, so its sale will not open (or has not opened) until a
 * promoter or an admin signs it off, with the way to do it. Nothing for a signed-off or already opened event.
 */
export function SignOffNotice({
  eventId,
  onsaleAt,
  awaitingSignOff,
  compact = false,
}: {
  eventId: string;
  onsaleAt: string;
  awaitingSignOff: boolean;
  compact?: boolean;
}) {
  if (!awaitingSignOff) return null;
  const late = Date.parse(onsaleAt) <= Date.now();
  if (compact)
    return (
      <span
        className="signoff-badge"
        data-testid="signoff-missing"
        title="A promoter or an admin signs the fairness mode off on the event's Configuration page"
      >
        {late ? 'Not open: fairness not signed off' : 'Will not open: fairness not signed off'}
      </span>
    );
  return (
    <p className="signoff-notice" role="alert" data-testid="signoff-missing">
      <strong>{late ? 'This sale has not opened' : 'This sale will not open at its time'}:</strong> its fairness mode is not signed off.{' '}
      {late ? (
        'Nobody is let in; fans keep their places and read that the sale has not opened yet.'
      ) : (
        <>
          Until it is, the queue stays closed at <time dateTime={onsaleAt}>{formatDateTime(onsaleAt)}</time>.
        </>
      )}{' '}
      A promoter or an admin signs it off on the{' '}
      <Link to="/events/$eventId/edit" params={{ eventId }}>
        Configuration
      </Link>{' '}
      page.
    </p>
  );
}
