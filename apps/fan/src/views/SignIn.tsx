import { useState, type FormEvent } from 'react';
import { call, type ApiContext } from '../api';
import type { FanConfig } from '../context';
import type { Strings } from '../i18n';
import type { Account } from '../session';

/** Sign-in before joining: the promoter's identity provider when configured, the development sign-in on `npm start`. */
export function SignIn({
  t,
  config,
  api,
  expired,
  onSignedIn,
}: {
  t: Strings;
  config: FanConfig;
  api: ApiContext;
  expired: boolean;
  onSignedIn: (a: Account) => void;
}) {
  const [name, setName] = useState(() => `fan-${Math.random().toString(36).slice(2, 8)}`);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function dev(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const r = await call<{ accountId: string; token: string; expiresAt: string }>({ ...api, account: null }, 'POST', '/auth/dev-login', {
      body: { accountId: name.trim() },
    });
    setBusy(false);
    if (r.kind === 'ok')
      onSignedIn({
        accountId: r.body.accountId,
        displayName: r.body.accountId,
        token: r.body.token,
        expiresAt: Date.parse(r.body.expiresAt),
        via: 'dev',
      });
    else setError(t.signInFailed(r.body?.message ?? t.offline));
  }

  async function provider() {
    setBusy(true);
    setError(null);
    try {
      const { startSignIn } = await import('../oidc');
      await startSignIn(config.oidc!, location.pathname);
    } catch (err) {
      setBusy(false);
      setError(t.signInFailed((err as Error).message));
    }
  }

  return (
    <section className="card" data-testid="sign-in">
      <h2>{t.signInTitle}</h2>
      {expired && (
        <p className="notice" role="alert" data-testid="sign-in-expired">
          {t.signInExpired}
        </p>
      )}
      <p className="muted">{t.signInWhy}</p>
      {config.oidc && (
        <button type="button" className="primary" onClick={() => void provider()} disabled={busy} data-testid="oidc-sign-in">
          {busy ? t.signingIn : t.signInWithProvider}
        </button>
      )}
      {config.devSignIn && (
        <form onSubmit={(e) => void dev(e)} className="dev-sign-in" data-testid="dev-sign-in">
          <h3>{t.devSignIn}</h3>
          <p className="muted small">{t.devSignInHint}</p>
          <label>
            {t.accountName}
            <input
              value={name}
              onChange={(e) => setName(e.target.value)}
              maxLength={128}
              pattern="[A-Za-z0-9._@:\-]{1,128}"
              required
              autoComplete="username"
            />
          </label>
          <button type="submit" className="primary" disabled={busy}>
            {busy ? t.signingIn : t.signInButton}
          </button>
        </form>
      )}
      {error && (
        <p className="error" role="alert" data-testid="sign-in-error">
          {error}
        </p>
      )}
    </section>
  );
}
