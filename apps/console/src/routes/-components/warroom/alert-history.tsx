import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { alertKey, type Alert } from '@onsale/shared/warroom/schema';
import { formatDuration } from '@onsale/shared/words';
import { messageOf, useTRPC } from '../../../trpc';
import { formatCount } from '../format';
import { When } from '../When';
import { AlertReach } from './parts';

/**
 * Every alert this event raised, newest first: what was wrong and what to do, when it fired and for how long, and
 * how many messages went out to the alert receivers. Recorded by the worker whether or not anyone had the war
 * room open. Alerts firing now that the record does not have yet (the worker writes every few seconds, and measures
 * only what it can reach) are listed first, from the live figures, so the history never says fewer than the page
 * shows. Times are the venue's.
 */
export function AlertHistory({
  eventId,
  timeZone,
  canManageReceivers,
  firingNow,
  at,
}: {
  eventId: string;
  timeZone: string;
  canManageReceivers: boolean;
  /** The alerts the live figures show firing now. */
  firingNow: Alert[];
  /** When those figures were read. */
  at: string;
}) {
  const trpc = useTRPC();
  const history = useQuery(trpc.warRoom.alertHistory.queryOptions({ eventId }, { refetchInterval: 10_000 }));
  const list = history.data ?? [];
  const recordedOpen = new Set(list.filter((a) => a.resolvedAt === null).map((a) => alertKey(a)));
  const unrecorded = history.data ? firingNow.filter((a) => !recordedOpen.has(alertKey(a))) : [];
  const total = list.length + unrecorded.length;
  const firing = list.filter((a) => a.resolvedAt === null).length + unrecorded.length;
  return (
    <section className="wr-panel wr-talk" aria-labelledby="wr-history-title" data-testid="wr-alert-history" data-count={total}>
      <div className="wr-talk-head">
        <h2 id="wr-history-title">Alert history</h2>
        {canManageReceivers && (
          <Link to="/alerts" data-testid="wr-alert-receivers-link">
            Where alerts are sent
          </Link>
        )}
      </div>
      {history.error && (
        <p className="form-error" role="alert">
          Could not read the alert history. {messageOf(history.error)}
        </p>
      )}
      {history.data && total === 0 && (
        <p className="muted" data-testid="wr-alert-history-empty">
          No alert has fired for this event.
        </p>
      )}
      {total > 0 && (
        <>
          <p className="muted" data-testid="wr-alert-history-summary">
            {formatCount(total)} alert{total === 1 ? '' : 's'} so far{firing > 0 ? `, ${formatCount(firing)} firing now` : ''}. Times in the
            venue’s zone ({timeZone}).
          </p>
          <table className="grid wr-stack" data-testid="wr-alert-history-table">
            <thead>
              <tr>
                <th>Alert</th>
                <th>Fired</th>
                <th>Lasted</th>
                <th className="num">Messages sent</th>
              </tr>
            </thead>
            <tbody>
              {unrecorded.map((a) => (
                <tr
                  key={`live:${alertKey(a)}`}
                  data-testid="wr-alert-history-row"
                  data-code={a.code}
                  data-resolved="false"
                  data-live="true"
                >
                  <td>
                    <span className={`pill ${a.severity === 'critical' ? 'pill-alarm' : 'pill-warn'}`}>
                      {a.severity === 'critical' ? 'Critical' : 'Warning'}
                    </span>{' '}
                    <strong data-testid="wr-alert-history-title">{a.title}</strong> <AlertReach code={a.code} />
                    <br />
                    {a.action}
                  </td>
                  <td data-label="Fired">
                    firing now (seen <When iso={at} zone={timeZone} />)
                  </td>
                  <td data-label="Lasted" data-testid="wr-alert-history-lasted">
                    <strong>still firing</strong>
                  </td>
                  <td className="num" data-label="Messages sent" data-testid="wr-alert-history-messages">
                    not recorded yet
                  </td>
                </tr>
              ))}
              {list.map((a) => {
                const end = a.resolvedAt ?? a.lastSeenAt;
                const lastedSeconds = (Date.parse(end) - Date.parse(a.firedAt)) / 1000;
                return (
                  <tr key={a.id} data-testid="wr-alert-history-row" data-code={a.code} data-resolved={a.resolvedAt ? 'true' : 'false'}>
                    <td>
                      <span className={`pill ${a.peakSeverity === 'critical' ? 'pill-alarm' : 'pill-warn'}`}>
                        {a.peakSeverity === 'critical' ? 'Critical' : 'Warning'}
                      </span>{' '}
                      <strong data-testid="wr-alert-history-title">{a.title}</strong> <AlertReach code={a.code} />
                      <br />
                      {a.action}
                      {(a.detail || a.source) && (
                        <details className="wr-history-detail">
                          <summary>Details</summary>
                          {a.detail} {a.source && <span className="muted">({a.source})</span>}
                        </details>
                      )}
                    </td>
                    <td data-label="Fired">
                      <When iso={a.firedAt} zone={timeZone} />
                    </td>
                    <td data-label="Lasted" data-testid="wr-alert-history-lasted">
                      {a.resolvedAt ? formatDuration(lastedSeconds) : <strong>still firing</strong>}
                    </td>
                    <td className="num" data-label="Messages sent" data-testid="wr-alert-history-messages">
                      {a.messages.queued === 0
                        ? 'none'
                        : `${formatCount(a.messages.delivered)} of ${formatCount(a.messages.queued)} delivered`}
                      {a.messages.dead > 0 && <span className="pill pill-alarm"> {formatCount(a.messages.dead)} failed</span>}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
