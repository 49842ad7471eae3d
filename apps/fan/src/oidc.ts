// Sign-in with the promoter's identity provider: OpenID Connect authorization code flow with PKCE, as a public
// client in the browser (oauth4webapi does the protocol). The store API verifies the provider's token against its
// key set (AUTH_JWKS_URL); the page only carries it.
import * as oauth from 'oauth4webapi';
import type { FanConfig } from './context';
import type { Account } from './session';

type Oidc = NonNullable<FanConfig['oidc']>;
const PENDING = 'onsale.oidc.pending';

interface Pending {
  verifier: string;
  state: string;
  nonce: string;
  returnTo: string;
}

async function discover(cfg: Oidc): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(cfg.issuer);
  const res = await oauth.discoveryRequest(issuer, { algorithm: 'oidc', [oauth.allowInsecureRequests]: issuer.protocol === 'http:' });
  return oauth.processDiscoveryResponse(issuer, res);
}

const redirectUri = (cfg: Oidc) => new URL(cfg.redirectPath, location.origin).toString();

/** Sends the fan to the provider's sign-in page; they come back to the redirect path with a code. */
export async function startSignIn(cfg: Oidc, returnTo: string): Promise<void> {
  const as = await discover(cfg);
  if (!as.authorization_endpoint) throw new Error('the identity provider has no authorization endpoint');
  const verifier = oauth.generateRandomCodeVerifier();
  const pending: Pending = { verifier, state: oauth.generateRandomState(), nonce: oauth.generateRandomNonce(), returnTo };
  sessionStorage.setItem(PENDING, JSON.stringify(pending));
  const url = new URL(as.authorization_endpoint);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', cfg.clientId);
  url.searchParams.set('redirect_uri', redirectUri(cfg));
  url.searchParams.set('scope', cfg.scope);
  url.searchParams.set('state', pending.state);
  url.searchParams.set('nonce', pending.nonce);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  if (cfg.audience) url.searchParams.set('audience', cfg.audience);
  location.assign(url.toString());
}

/** On the redirect path: trades the code (with the PKCE verifier) for tokens; returns the account and where to go. */
export async function finishSignIn(cfg: Oidc, current: URL): Promise<{ account: Account; returnTo: string }> {
  const raw = sessionStorage.getItem(PENDING);
  if (!raw) throw new Error('no sign-in was started on this tab');
  sessionStorage.removeItem(PENDING);
  const pending = JSON.parse(raw) as Pending;
  const as = await discover(cfg);
  const client: oauth.Client = { client_id: cfg.clientId };
  const params = oauth.validateAuthResponse(as, client, current, pending.state);
  const res = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri(cfg), pending.verifier, {
    [oauth.allowInsecureRequests]: as.issuer.startsWith('http:'),
  });
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, res, { expectedNonce: pending.nonce, requireIdToken: true });
  const claims = oauth.getValidatedIdTokenClaims(tokens)!;
  const token = cfg.useToken === 'id_token' ? tokens.id_token! : tokens.access_token;
  const name = [claims.name, claims.preferred_username, claims.email, claims.sub].find(
    (v): v is string => typeof v === 'string' && v !== '',
  )!;
  return {
    account: {
      accountId: claims.sub,
      displayName: name,
      token,
      expiresAt: cfg.useToken === 'id_token' ? claims.exp * 1000 : tokens.expires_in ? Date.now() + tokens.expires_in * 1000 : null,
      via: 'oidc',
      ...(tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}),
    },
    returnTo: pending.returnTo,
  };
}
