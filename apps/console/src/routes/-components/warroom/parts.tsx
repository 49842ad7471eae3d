import type { ReactNode } from 'react';
import { alertReachOf, explainSnapshot, type Alert, type AlertMetric } from '@onsale/shared/warroom/schema';
import type { RouterOutputs } from '@onsale/bff/root';
import { formatCount } from '../format';
import { useAge, type LinkState } from './useLiveStream';
import './warroom.css';

export type WarRoomSnapshot = RouterOutputs['warRoom']['snapshot'];
export type WarRoomState = WarRoomSnapshot['state'];

const time = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', second: '2-digit' });
export const formatTime = (iso: string | number) => time.format(new Date(iso));
export const formatRate = (n: number) => (n >= 100 ? formatCount(Math.round(n)) : n.toLocaleString('en-US', { maximumFractionDigits: 1 }));
export const formatPct = (x: number) => `${(x * 100).toLocaleString('en-US', { maximumFractionDigits: 1 })}%`;

/** The words and colour of each war-room state. PAUSED and FAILED_CLOSED are the loud ones. */
export const STATE_LOOK: Record<WarRoomState, { label: string; tone: 'ok' | 'alarm' | 'warn' | 'quiet' | 'done'; fan: string }> = {
  ADMITTING: { label: 'ADMITTING', tone: 'ok', fan: 'fans waiting are let in at the admission rate' },
  PAUSED: { label: 'PAUSED', tone: 'alarm', fan: 'nobody new is admitted; every fan not yet admitted reads PAUSED' },
  FAILED_CLOSED: {
    label: 'PAUSED — CONTROLLER SILENT',
    tone: 'alarm',
    fan: 'no controller heartbeat: the queue fails closed, fans read PAUSED',
  },
  NOT_OPEN: { label: 'NOT OPEN YET', tone: 'quiet', fan: 'fans who join now are in the pre-open cohort' },
  LAST_CHANCE: { label: 'LAST CHANCE', tone: 'warn', fan: 'nothing available; held seats may come back' },
  SOLD_OUT: { label: 'SOLD OUT', tone: 'done', fan: 'every poller is told SOLD_OUT and pointed to the waitlist' },
  ENDED: { label: 'ENDED', tone: 'quiet', fan: 'the event has started; the queue is closed' },
  AWAITING_SIGNOFF: {
    label: 'NOT OPEN — AWAITING FAIRNESS SIGN-OFF',
    tone: 'alarm',
    fan: 'the sale has not opened: fans keep their places and read that the organiser is completing its final checks',
  },
};

/** How old the last figures are, in words ("just now", "12 s ago"); re-renders itself every second, nothing else. */
export function LinkAge({ receivedAt }: { receivedAt: number | null }) {
  const sinceMs = useAge(receivedAt);
  const age = sinceMs === null ? '' : sinceMs < 1_500 ? 'just now' : `${Math.round(sinceMs / 1000)} s ago`;
  return <span data-testid="wr-connection-age">{age}</span>;
}

/** The connection, said plainly: live with the age of the figures, or lost and reconnecting. */
export function LinkBanner({ state, receivedAt, at }: { state: LinkState; receivedAt: number | null; at: string | null }) {
  if (state === 'live')
    return (
      <p className="wr-link wr-link-live" data-testid="wr-connection" data-state="live">
        <span className="wr-dot" aria-hidden />
        <span>
          Live · updated <LinkAge receivedAt={receivedAt} />
        </span>
      </p>
    );
  if (state === 'connecting')
    return (
      <p className="wr-link wr-link-connecting" data-testid="wr-connection" data-state="connecting" role="status">
        Connecting to the war room…
      </p>
    );
  return (
    <p className="wr-link wr-link-lost" data-testid="wr-connection" data-state={state} role="alert">
      {state === 'lost' ? (
        // One flex item (the banner is a flex row): the age inside the sentence.
        <span>
          Connection lost — reconnecting… The figures below are from {at ? formatTime(at) : 'before'} (
          <LinkAge receivedAt={receivedAt} />) and are not live.
        </span>
      ) : state === 'unavailable' ? (
        'The BFF cannot read the figures right now (database unreachable). The figures below are not live.'
      ) : (
        'This stream was refused.'
      )}
    </p>
  );
}

/** The figures area: dimmed and marked when not live, so old numbers never pass for current ones. */
export function LiveArea({ live, children, testId = 'wr-area' }: { live: boolean; children: ReactNode; testId?: string }) {
  return (
    <div className={`wr-area${live ? '' : ' wr-stale'}`} data-testid={testId} data-live={live ? 'true' : 'false'} aria-busy={!live}>
      {children}
    </div>
  );
}

/** Where an alert belongs, in words: this event's own, or the whole platform's (it fires on every event on sale). */
export function AlertReach({ code }: { code: string }) {
  const platform = alertReachOf(code) === 'platform';
  return (
    <span
      className={`pill ${platform ? 'pill-platform' : 'pill-event'}`}
      data-testid="wr-alert-reach"
      data-reach={platform ? 'platform' : 'event'}
      title={platform ? 'Measured across every event on this platform: it shows on every event on sale, whichever caused it.' : undefined}
    >
      {platform ? 'Every event on the platform' : 'This event'}
    </span>
  );
}

/** The alerts firing now, critical first, each saying whether it is this event's or the whole platform's. */
export function AlertList({ alerts }: { alerts: Alert[] }) {
  if (alerts.length === 0)
    return (
      <p className="wr-no-alerts" data-testid="wr-alerts" data-count="0">
        No alerts.
      </p>
    );
  return (
    <ul className="wr-alerts" data-testid="wr-alerts" data-count={alerts.length} aria-label="Alerts firing">
      {alerts.map((a) => (
        <li
          key={`${a.code}:${a.scope}`}
          className={`wr-alert wr-alert-${a.severity}`}
          data-testid="wr-alert"
          data-code={a.code}
          data-severity={a.severity}
          data-reach={alertReachOf(a.code)}
        >
          <strong>{a.severity === 'critical' ? 'Act now' : 'Look now'}:</strong> <span data-testid="wr-alert-title">{a.title}</span>{' '}
          <AlertReach code={a.code} />
          <span className="wr-alert-action" data-testid="wr-alert-action">
            {a.action}
          </span>
          <span className="wr-alert-detail">{a.detail}</span>
          <details className="wr-alert-source">
            <summary>Why this rule</summary>
            {a.source}
          </details>
        </li>
      ))}
    </ul>
  );
}

/** One figure, with any alert that belongs to it shown on it. */
export function Metric({
  label,
  term,
  value,
  testId,
  note,
  alerts = [],
  metric,
}: {
  label: string;
  /** The technical term the plain label stands for (docs, metrics), shown as the label's tooltip. */
  term?: string;
  value: ReactNode;
  testId: string;
  note?: ReactNode;
  alerts?: Alert[];
  metric?: AlertMetric;
}) {
  const mine = metric ? alerts.filter((a) => a.metric === metric) : [];
  const severity = mine.some((a) => a.severity === 'critical') ? 'critical' : mine.length > 0 ? 'warning' : null;
  return (
    <div className={`wr-metric${severity ? ` wr-metric-${severity}` : ''}`} data-alert={severity ?? undefined}>
      {term ? (
        <span className="wr-metric-label wr-term" title={term} data-term={term}>
          {label}
        </span>
      ) : (
        <span className="wr-metric-label">{label}</span>
      )}
      <span className="wr-metric-value" data-testid={testId}>
        {value}
      </span>
      {note && <span className="wr-metric-note">{note}</span>}
      {mine.map((a) => (
        <span key={`${a.code}:${a.scope}`} className="wr-metric-alert" data-testid={`${testId}-alert`} data-code={a.code}>
          {a.title}
        </span>
      ))}
    </div>
  );
}

/** A group of figures under a heading. */
export function Panel({ title, children, testId }: { title: string; children: ReactNode; testId?: string }) {
  return (
    <section className="wr-panel" data-testid={testId}>
      <h2>{title}</h2>
      <div className="wr-metrics">{children}</div>
    </section>
  );
}

const clock = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', timeZoneName: 'short' });

/**
 * Why fans are or are not being let in, what the operator can do, and how long the queue takes to clear at the
 * current rate (explainSnapshot, the domain's rule). Loud when admissions are below the plan or zero.
 */
export function AdmissionWhy({ snapshot }: { snapshot: WarRoomSnapshot }) {
  const e = explainSnapshot(snapshot, (ms) => clock.format(new Date(ms)));
  return (
    <div
      className={`wr-why${e.stalled ? ' wr-why-stalled' : ''}`}
      data-testid="wr-why"
      data-code={e.code}
      data-stalled={e.stalled ? 'true' : 'false'}
      role={e.stalled ? 'status' : undefined}
    >
      <strong className="wr-why-sentence" data-testid="wr-why-sentence">
        {e.sentence}
      </strong>
      <span className="wr-why-action" data-testid="wr-why-action">
        {e.action}
      </span>
      <span className="wr-why-clear" data-testid="wr-clear-queue">
        {e.clearQueue}
      </span>
    </div>
  );
}
