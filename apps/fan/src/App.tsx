import { lazy, Suspense, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { call, serverNow, type ApiContext } from './api';
import { FanContext, type EventPage, type Fan, type FanConfig } from './context';
import { formatters, initialLanguage, STRINGS, type FanLanguage } from './i18n';
import { loadAccount, loadProgress, saveAccount, saveProgress, type Account, type EventProgress } from './session';
import { Shell } from './views/Shell';
import { SignIn } from './views/SignIn';
import { WaitingRoom } from './views/WaitingRoom';

// The steps after the line load only when a fan reaches them: the waiting room's script stays small.
const Seats = lazy(() => import('./views/Seats'));
const Hold = lazy(() => import('./views/Hold'));
const Order = lazy(() => import('./views/Order'));
const Waitlist = lazy(() => import('./views/Waitlist'));
const Tickets = lazy(() => import('./views/Tickets'));

/** /e/:eventId (and /e/callback, where the identity provider sends the fan back). */
export function App() {
  const [lang, setLang] = useState<FanLanguage>(initialLanguage);
  const t = STRINGS[lang];
  const f = useMemo(() => formatters(lang), [lang]);
  const [eventId, setEventId] = useState(() => decodeURIComponent(location.pathname.replace(/^\/e\/?/, '').split('/')[0] ?? ''));
  const [event, setEvent] = useState<EventPage | null>(null);
  const [config, setConfig] = useState<FanConfig | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [account, setAccountState] = useState<Account | null>(loadAccount);
  const [expired, setExpired] = useState(false);
  const [progress, setProgressState] = useState<EventProgress>({});
  const [soldOut, setSoldOut] = useState(false);
  // The page's one polite live region: present from the first render, so what is put in it later is read out.
  const [announcement, setAnnouncement] = useState('');
  const announce = useCallback((text: string) => {
    // The same words twice in a row are still read: they are made to differ (a trailing no-break space), no timer.
    setAnnouncement((was) => (was === text ? `${text}\u00a0` : text));
  }, []);
  const wasAdmitted = useRef(false);

  const setAccount = useCallback((a: Account | null) => {
    saveAccount(a);
    setAccountState(a);
  }, []);
  const onSignedOut = useCallback(() => {
    setExpired(true);
    setAccount(null);
  }, [setAccount]);
  const api: ApiContext = useMemo(() => ({ account, language: lang, onSignedOut }), [account, lang, onSignedOut]);

  // Back from the identity provider: finish the sign-in, then go where the fan was.
  useEffect(() => {
    if (eventId !== 'callback') return;
    void (async () => {
      const cfg = await call<FanConfig>({ account: null, language: lang }, 'GET', '/fan/config');
      if (cfg.kind !== 'ok' || !cfg.body.oidc) return setFailure(t.signInFailed('no identity provider is configured'));
      try {
        const { finishSignIn } = await import('./oidc');
        const done = await finishSignIn(cfg.body.oidc, new URL(location.href));
        setAccount(done.account);
        history.replaceState(null, '', done.returnTo);
        setEventId(decodeURIComponent(done.returnTo.replace(/^\/e\/?/, '').split('/')[0] ?? ''));
      } catch (e) {
        setFailure(t.signInFailed((e as Error).message));
      }
    })();
  }, []);

  useEffect(() => {
    if (!eventId || eventId === 'callback') return;
    let stop = false;
    const load = async () => {
      const [ev, cfg] = await Promise.all([
        call<EventPage>({ account: null, language: lang }, 'GET', `/events/${encodeURIComponent(eventId)}`),
        call<FanConfig>({ account: null, language: lang }, 'GET', '/fan/config'),
      ]);
      if (stop) return;
      if (ev.kind === 'ok' && cfg.kind === 'ok') {
        setEvent(ev.body);
        setConfig(cfg.body);
        document.title = ev.body.name;
      } else if (ev.kind === 'refused') setFailure(ev.body.message);
      else setTimeout(() => void load(), ((ev.kind === 'busy' ? ev.retryAfterSeconds : 5) || 5) * 1000 * (1 + Math.random() * 0.25));
    };
    void load();
    return () => {
      stop = true;
    };
  }, [eventId]);

  // The fan's progress for this event on this device.
  useEffect(() => {
    if (account && eventId) setProgressState(loadProgress(account.accountId, eventId));
  }, [account?.accountId, eventId]);

  const update = useCallback(
    (patch: Partial<EventProgress> | ((p: EventProgress) => EventProgress)) => {
      setProgressState((p) => {
        const next = typeof patch === 'function' ? patch(p) : { ...p, ...patch };
        if (account) saveProgress(account.accountId, eventId, next);
        return next;
      });
    },
    [account?.accountId, eventId],
  );

  const admittedNow = !!progress.admissionToken && (progress.admissionExpiresAt ?? 0) > serverNow();
  // Let in: said once, when it happens (or on arriving at the page already let in).
  useEffect(() => {
    if (admittedNow && !wasAdmitted.current && event && !progress.hold && !progress.order)
      announce(
        `${t.stateName.ADMITTED}. ${event.copy?.[lang]?.ADMITTED ?? ''} ${
          progress.admissionExpiresAt ? t.admittedUntil(f.time(new Date(progress.admissionExpiresAt))) : ''
        }`.trim(),
      );
    wasAdmitted.current = admittedNow;
  }, [admittedNow, event]);
  // A notice for the next step (a hold that ran out, seats let go) is read out as it appears.
  useEffect(() => {
    if (progress.notice) announce(progress.notice);
  }, [progress.notice]);

  const chooseLanguage = (l: FanLanguage) => {
    localStorage.setItem('onsale.language', l);
    setLang(l);
  };

  if (failure)
    return (
      <div className="fan">
        <main className="fan-main">
          <p className="card error" role="alert" data-testid="page-error">
            {failure}
          </p>
        </main>
      </div>
    );
  if (!event || !config)
    return (
      <div className="fan">
        <main className="fan-main">
          <p className="card muted" role="status">
            {t.loading}
          </p>
        </main>
      </div>
    );

  const shell = { t, f, lang, event, look: event.look, onLanguage: chooseLanguage };
  if (!account)
    return (
      <Shell {...shell}>
        <SignIn t={t} config={config} api={api} expired={expired} onSignedIn={(a) => (setExpired(false), setAccount(a))} />
      </Shell>
    );

  const fan: Fan = { event, config, lang, t, f, account, api, progress, update, soldOut, setSoldOut, announce };
  const admitted = admittedNow;
  const step = progress.order ? (
    <Order />
  ) : progress.hold ? (
    <Hold />
  ) : admitted ? (
    <Seats />
  ) : (
    <>
      <WaitingRoom />
      {soldOut && <Waitlist />}
    </>
  );
  return (
    <FanContext.Provider value={fan}>
      <Shell {...shell} signedInAs={account.displayName} onSignOut={() => setAccount(null)} showFairness={!progress.order}>
        {progress.notice && (
          <p className="card notice" data-testid="step-notice">
            {progress.notice}
            <button type="button" className="link" onClick={() => update({ notice: undefined })} aria-label="OK">
              ✕
            </button>
          </p>
        )}
        <Suspense fallback={<p className="card muted">{t.loading}</p>}>
          {/* The account's tickets for this event, whatever step this device is at (a friend's transfer too). */}
          <Tickets />
          {step}
        </Suspense>
        <p className="sr-only" aria-live="polite" aria-atomic="true" data-testid="announcer">
          {announcement}
        </p>
      </Shell>
    </FanContext.Provider>
  );
}
