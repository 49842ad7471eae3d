import { formatCount, formatDateTime } from '../format';
import type { TierQueue } from './tier-rows';

/** One tier's queue figures: a PAUSED badge with who, why and when; waiting, watermark, rate and the controller's heartbeat. */
export function QueueCells({ queue: q }: { queue: TierQueue | null }) {
  if (!q)
    return (
      <td colSpan={5} className="muted" data-testid="tier-queue">
        no queue row
      </td>
    );
  return (
    <>
      <td data-testid="tier-queue">
        {q.paused ? (
          <>
            <span className="wr-badge wr-badge-alarm" data-testid="tier-paused">
              PAUSED
            </span>
            <br />
            <span className="muted" data-testid="tier-paused-by">
              by {q.pausedBy ?? 'unknown'}
              {q.pausedAt && (
                <>
                  {' '}
                  at <time dateTime={q.pausedAt}>{formatDateTime(q.pausedAt)}</time>
                </>
              )}
              : “{q.pausedReason ?? 'no reason recorded'}”
            </span>
          </>
        ) : (
          <span className="wr-badge">RUNNING</span>
        )}
      </td>
      <td className="num" data-testid="tier-waiting" title={`${formatCount(q.joined)} joined − ${formatCount(q.admittedThrough)} admitted`}>
        {formatCount(q.waiting)}
        <br />
        <span className="muted">of {formatCount(q.joined)} joined</span>
      </td>
      <td className="num" data-testid="tier-watermark">
        {formatCount(q.admittedThrough)}
      </td>
      <td className="num" data-testid="tier-rate">
        {formatCount(Math.round(q.publishedRatePerMin))}
        {q.rateOverridePerMin !== null && (
          <>
            <br />
            <span className="muted">override {formatCount(q.rateOverridePerMin)}</span>
          </>
        )}
      </td>
      <td data-testid="tier-heartbeat" data-fresh={String(q.heartbeatFresh)}>
        <span className={`wr-badge ${q.heartbeatFresh ? 'wr-badge-ok' : 'wr-badge-warn'}`}>{q.heartbeatFresh ? 'FRESH' : 'STALE'}</span>
        <br />
        <span className="muted">{q.heartbeatAgeSeconds === null ? 'no heartbeat yet' : `${q.heartbeatAgeSeconds} s ago`}</span>
      </td>
    </>
  );
}
