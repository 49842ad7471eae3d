import type { Formatters, Strings } from '../i18n';
import type { QueueStatusState } from '@onsale/shared/queue/edge';

export type QueueState = QueueStatusState;

export interface QueueCardProps {
  t: Strings;
  f: Formatters;
  state: QueueState;
  /** The event's words for the state, in the fan's language. */
  message: string;
  position: number | null;
  admittedThrough: number | null;
  estWaitSeconds: number | null;
  /** How far through the line this fan is, 0-100; null: not known yet. */
  progressPct: number | null;
  /** Before the open: seconds until it. */
  opensInSeconds: number | null;
  /** "Still in line, checking again in N s" and the like. */
  notice?: string | null;
}

/** The waiting room's card: state, the event's words, place, people ahead, wait and progress. Shown in the console's preview too. */
export function QueueCard({
  t,
  f,
  state,
  message,
  position,
  admittedThrough,
  estWaitSeconds,
  progressPct,
  opensInSeconds,
  notice,
}: QueueCardProps) {
  const ahead = position !== null && admittedThrough !== null ? Math.max(0, position - admittedThrough - 1) : null;
  const showPlace = state === 'WAITING' || state === 'PAUSED' || state === 'LAST_CHANCE';
  return (
    <section className="card queue-card" data-testid="queue-card" data-state={state} aria-labelledby="queue-state">
      <p className={`state-badge state-${state.toLowerCase()}`} id="queue-state" data-testid="queue-state" data-state={state}>
        {t.stateName[state] ?? state}
      </p>
      <p className="queue-message" data-testid="queue-message">
        {message}
      </p>
      {showPlace && (
        <div className="place">
          {position === null ? (
            <>
              <p className="place-label">{t.yourPlace}</p>
              <p className="place-number place-pending" data-testid="queue-position" data-position="">
                {t.placeAtOpen}
              </p>
              {opensInSeconds !== null && opensInSeconds > 0 && (
                <p className="opens-in" data-testid="opens-in">
                  {t.opensIn(f.clock(opensInSeconds))}
                </p>
              )}
              <p className="muted small">{t.preopenExplain}</p>
            </>
          ) : (
            <>
              <p className="place-label">{t.yourPlace}</p>
              <p className="place-number" data-testid="queue-position" data-position={position}>
                {f.number(position)}
              </p>
              <p className="ahead" data-testid="queue-ahead" data-ahead={ahead ?? ''}>
                {ahead === 0 ? t.nobodyAhead : ahead !== null ? t.peopleAhead(f.number(ahead)) : ''}
              </p>
              {state !== 'PAUSED' && (
                <p className="wait" data-testid="queue-wait">
                  {estWaitSeconds !== null ? t.estWait(f.duration(estWaitSeconds)) : t.estWaitUnknown}
                </p>
              )}
            </>
          )}
          <div
            className="progress"
            role="progressbar"
            aria-label={t.progressLabel}
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={progressPct ?? undefined}
            data-testid="queue-progress"
          >
            <div
              className={`progress-fill${progressPct === null ? ' indeterminate' : ''}`}
              style={{ width: progressPct === null ? undefined : `${Math.max(3, progressPct)}%` }}
            />
          </div>
        </div>
      )}
      {notice && (
        <p className="notice" data-testid="queue-notice" role="status">
          {notice}
        </p>
      )}
      {/* Screen readers hear the place when it changes, politely, not every second. */}
      <p className="sr-only" aria-live="polite" data-testid="queue-live">
        {showPlace && position !== null && ahead !== null ? t.placeAnnounce(f.number(position), f.number(ahead)) : ''}
      </p>
    </section>
  );
}
