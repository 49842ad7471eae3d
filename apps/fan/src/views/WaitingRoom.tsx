import { useCallback, useEffect, useRef, useState } from 'react';
import { call, serverNow, type ApiError } from '../api';
import { refusalText, useFan } from '../context';
import { usePoll, useNow } from '../poll';
import { solveInWorker, type Challenge } from '../pow';
import { tokenExpiry } from '../session';
import { QueueCard, type QueueState } from './QueueCard';

interface StatusBody {
  state: QueueState;
  message: string;
  position: number | null;
  admittedThrough: number;
  estWaitSeconds: number | null;
  admissionToken?: string;
  queueToken?: string;
  waitlist?: { listingId: string; join: string };
}

type Phase =
  | { kind: 'joining'; pow?: string; deferral?: string }
  | { kind: 'line' }
  | { kind: 'expired' }
  | { kind: 'moved' }
  | { kind: 'stopped'; text: string };

/**
 * The waiting room: joins (solving a proof-of-work when asked, waiting out a deferral), then polls the status
 * honouring Retry-After, until the fan is admitted (the seats step takes over) or the sale sells out.
 */
export function WaitingRoom() {
  const fan = useFan();
  const { t, f, event, progress, update, api, lang } = fan;
  const [phase, setPhase] = useState<Phase>(
    progress.movedAway ? { kind: 'moved' } : progress.queueToken ? { kind: 'line' } : { kind: 'joining' },
  );
  const [status, setStatus] = useState<StatusBody | null>(null);
  const [notice, setNotice] = useState<{ text: string; until: number } | null>(null);
  // Solving a proof-of-work (percent done), while the join waits for it; null: no challenge.
  const [challengePct, setChallengePct] = useState<number | null>(null);
  const lastPosition = useRef<number | null>(null);
  const now = useNow(1000, serverNow);

  const copyFor = (state: QueueState, answer: { message?: string; language?: string | null } | null) =>
    answer?.message && (answer.language === lang || !event.copy) ? answer.message : (event.copy?.[lang]?.[state] ?? answer?.message ?? '');

  const [answerLanguage, setAnswerLanguage] = useState<string | null>(null);

  const apply = useCallback(
    (s: StatusBody, language: string | null) => {
      setStatus(s);
      setAnswerLanguage(language);
      setNotice(null);
      if (s.position !== null) {
        const ahead = Math.max(0, s.position - s.admittedThrough - 1);
        if (progress.firstAhead === undefined || lastPosition.current === null)
          update((p) => (p.firstAhead === undefined ? { ...p, firstAhead: ahead } : p));
        lastPosition.current = s.position;
      }
      if (s.state === 'SOLD_OUT') fan.setSoldOut(true);
      if (s.admissionToken)
        update({ admissionToken: s.admissionToken, admissionExpiresAt: tokenExpiry(s.admissionToken) ?? serverNow() + 600_000 });
    },
    [fan, progress.firstAhead, update],
  );

  const busyNotice = (retry: number, offline: boolean) => {
    setNotice({ text: offline ? t.offline : t.busy, until: Date.now() + retry * 1000 });
  };

  // Joining: once, again after a challenge or a deferral.
  useEffect(() => {
    if (phase.kind !== 'joining') return;
    const abort = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    (async () => {
      const headers: Record<string, string> = {};
      if (phase.pow) headers['x-proof-of-work'] = phase.pow;
      if (phase.deferral) headers['x-join-deferral'] = phase.deferral;
      const r = await call<StatusBody & { queueToken: string }>(api, 'POST', `/events/${event.id}/queue`, {
        headers,
        signal: abort.signal,
      });
      if (abort.signal.aborted) return;
      if (r.kind === 'ok') {
        update({ queueToken: r.body.queueToken });
        apply(r.body, r.language);
        setPhase({ kind: 'line' });
        return;
      }
      if (r.kind === 'busy') {
        busyNotice(r.retryAfterSeconds, r.offline);
        timer = setTimeout(
          () => setPhase({ kind: 'joining', pow: phase.pow, deferral: phase.deferral }),
          r.retryAfterSeconds * 1000 * (1 + Math.random() * 0.25),
        );
        return;
      }
      const e = r.body;
      if (e.error === 'CHALLENGE_REQUIRED' || e.error === 'POW_EXPIRED' || e.error === 'POW_REUSED' || e.error === 'POW_UNSOLVED') {
        const challenge = e.challenge as Challenge | undefined;
        if (!challenge) {
          // A used or unsolved proof: ask for a fresh challenge by joining without one.
          setPhase({ kind: 'joining' });
          return;
        }
        setChallengePct(0);
        const pow = await solveInWorker(challenge, setChallengePct, abort.signal);
        if (!abort.signal.aborted) {
          setChallengePct(null);
          setPhase({ kind: 'joining', pow });
        }
        return;
      }
      if (e.error === 'JOIN_DEFERRED') {
        const deferral = (e.deferral as { token: string } | undefined)?.token;
        const wait = r.retryAfterSeconds ?? 5;
        setNotice({ text: t.busy, until: Date.now() + wait * 1000 });
        timer = setTimeout(() => setPhase({ kind: 'joining', deferral }), wait * 1000 * (1 + Math.random() * 0.1));
        return;
      }
      setPhase({ kind: 'stopped', text: stopText(e) });
    })().catch((err: Error) => {
      if (err.name !== 'AbortError') setPhase({ kind: 'stopped', text: t.somethingWrong(err.message) });
    });
    return () => {
      abort.abort();
      if (timer) clearTimeout(timer);
    };
  }, [phase]);

  function stopText(e: ApiError): string {
    if (e.error === 'EVENT_CLOSED') return t.eventClosed;
    if (e.error === 'LOTTERY_REGISTRATION_REQUIRED') return t.lotteryEvent;
    if (e.error === 'TOKEN_WRONG_DEVICE') return t.wrongDevice;
    if (e.error === 'PLACE_MOVE_LIMIT') return t.moveLimit;
    return refusalText(t, e);
  }

  // Polling the place in line.
  const { nextAt } = usePoll(
    async (signal) => {
      const token = progress.queueToken;
      if (!token) return null;
      const r = await call<StatusBody>(api, 'GET', `/events/${event.id}/queue/status`, { headers: { 'x-queue-token': token }, signal });
      if (r.kind === 'ok') {
        apply(r.body, r.language);
        return r.body.admissionToken ? null : (r.retryAfterSeconds ?? 15);
      }
      if (r.kind === 'busy') {
        busyNotice(r.retryAfterSeconds, r.offline);
        return r.retryAfterSeconds;
      }
      const e = r.body;
      if (e.error === 'POSITION_EXPIRED') {
        update({ queueToken: undefined, firstAhead: undefined });
        setPhase({ kind: 'expired' });
        return null;
      }
      if (e.error === 'POSITION_MOVED') {
        // The fan signed in on another device and the place went there: say so; this device can bring it back.
        update({ queueToken: undefined, firstAhead: undefined, admissionToken: undefined, admissionExpiresAt: undefined, movedAway: true });
        setPhase({ kind: 'moved' });
        fan.announce(t.placeMoved);
        return null;
      }
      if (e.field === 'authorization') return null; // signed out: the sign-in step takes over
      if (e.error.startsWith('TOKEN_') && e.error !== 'TOKEN_WRONG_DEVICE') {
        // A queue token this page can no longer use (another install's, or spoilt): joining again is idempotent
        // per account and gives the same place back.
        update({ queueToken: undefined });
        setPhase({ kind: 'joining' });
        return null;
      }
      setPhase({ kind: 'stopped', text: stopText(e) });
      return null;
    },
    phase.kind === 'line' && !!progress.queueToken,
    `${progress.queueToken}`,
  );

  const state: QueueState = status?.state ?? 'WAITING';
  const opensIn = (Date.parse(event.onsaleAt) - now) / 1000;
  const waitSeconds = nextAt !== null ? Math.max(0, Math.ceil((nextAt - Date.now()) / 1000)) : null;
  const noticeText = notice ? `${notice.text} ${waitSeconds !== null ? t.checkingAgain(waitSeconds) : ''}`.trim() : null;
  const ahead = status?.position != null ? Math.max(0, status.position - status.admittedThrough - 1) : null;
  const first = progress.firstAhead;
  const pct =
    ahead !== null && first !== undefined && first > 0
      ? Math.round((100 * (first - Math.min(first, ahead))) / first)
      : ahead === 0
        ? 100
        : null;

  if (challengePct !== null)
    return (
      <section className="card" data-testid="challenge">
        <h2>{t.challengeTitle}</h2>
        <p data-testid="challenge-progress" role="status">
          {t.challengeProgress(challengePct)}
        </p>
        <div className="progress" role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={challengePct}>
          <div className="progress-fill" style={{ width: `${Math.max(3, challengePct)}%` }} />
        </div>
        <p className="muted small">{t.challengeWhy}</p>
      </section>
    );
  if (phase.kind === 'expired')
    return (
      <section className="card" data-testid="position-expired">
        <p>{t.positionExpired}</p>
        <button type="button" className="primary" onClick={() => setPhase({ kind: 'joining' })}>
          {t.joinAgain}
        </button>
      </section>
    );
  if (phase.kind === 'moved')
    return (
      <section className="card" data-testid="place-moved">
        <p>{t.placeMoved}</p>
        <button
          type="button"
          className="secondary"
          onClick={() => (update({ movedAway: undefined }), setPhase({ kind: 'joining' }))}
          data-testid="move-here"
        >
          {t.moveHere}
        </button>
      </section>
    );
  if (phase.kind === 'stopped')
    return (
      <section className="card" data-testid="queue-stopped">
        <p role="alert">{phase.text}</p>
      </section>
    );
  if (phase.kind === 'joining' && !status)
    return (
      <section className="card" data-testid="joining">
        <p role="status">{t.joining}</p>
        {noticeText && <p className="notice">{noticeText}</p>}
      </section>
    );
  return (
    <QueueCard
      t={t}
      f={f}
      state={state}
      message={copyFor(state, status ? { message: status.message, language: answerLanguage } : null)}
      position={status?.position ?? null}
      admittedThrough={status?.admittedThrough ?? null}
      estWaitSeconds={status?.estWaitSeconds ?? null}
      progressPct={pct}
      opensInSeconds={opensIn > 0 ? opensIn : null}
      notice={noticeText}
    />
  );
}
