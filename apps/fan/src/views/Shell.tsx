import type { ReactNode } from 'react';
import { FAN_LANGUAGES, STRINGS, type FanLanguage, type Formatters, type Strings } from '../i18n';
import { lookStyle, type FanLook } from '../look';

export interface ShellProps {
  t: Strings;
  f: Formatters;
  lang: FanLanguage;
  event: { id: string; name: string; venueName: string; startsAt: string; onsaleAt: string; fairnessMode: string; timeZone?: string };
  look: FanLook | null | undefined;
  onLanguage?: (l: FanLanguage) => void;
  signedInAs?: string | null;
  onSignOut?: () => void;
  /** How the line is ordered: shown until the fan has bought (it no longer concerns them after). */
  showFairness?: boolean;
  children: ReactNode;
}

/** The page around every step: the promoter's logo and colours, the event, the fairness rule, the language. */
export function Shell({ t, f, lang, event, look, onLanguage, signedInAs, onSignOut, showFairness = true, children }: ShellProps) {
  return (
    <div className="fan" style={lookStyle(look)} lang={lang}>
      <header className="brand-bar">
        <div className="brand-inner">
          {look?.logoUrl ? <img className="logo" src={look.logoUrl} alt={look.logoAlt ?? ''} data-testid="logo" /> : null}
          <div className="event-head">
            <h1 data-testid="event-name">{event.name}</h1>
            <p className="event-meta">
              {event.venueName} · {t.startsAt(f.dateTime(new Date(event.startsAt), event.timeZone, true))}
            </p>
          </div>
          {onLanguage && (
            <label className="lang">
              <span className="sr-only">{t.language}</span>
              <select value={lang} onChange={(e) => onLanguage(e.target.value as FanLanguage)} data-testid="language">
                {FAN_LANGUAGES.map((l) => (
                  <option key={l} value={l}>
                    {STRINGS[l].languageName}
                  </option>
                ))}
              </select>
            </label>
          )}
        </div>
      </header>
      <main className="fan-main">
        {children}
        {showFairness && (
          <section className="card fairness" data-testid="fairness">
            <h2>{t.fairness}</h2>
            <p>{t.fairnessModes[event.fairnessMode] ?? event.fairnessMode}</p>
            <p className="small">
              <a href={`/events/${event.id}/fairness`} target="_blank" rel="noreferrer" data-testid="fairness-audit">
                {t.fairnessAudit}
              </a>
            </p>
          </section>
        )}
        {signedInAs && (
          <p className="signed-in small muted">
            <span data-testid="signed-in-as">{t.signedInAs(signedInAs)}</span>
            {onSignOut && (
              <>
                {' · '}
                <button type="button" className="link" onClick={onSignOut}>
                  {t.signOut}
                </button>
              </>
            )}
          </p>
        )}
      </main>
    </div>
  );
}
