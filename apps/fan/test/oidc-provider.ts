// A tiny OpenID Connect provider for tests: discovery, an authorization endpoint that signs the fan in at once
// (no login form) and redirects back with a code, a token endpoint that checks the PKCE verifier and signs an
// RS256 ID token with a key of its own, and the key set. node:crypto and node:http only.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

export interface TestProvider {
  issuer: string;
  clientId: string;
  /** Tokens issued, newest last. */
  issued: { sub: string; idToken: string; accessToken: string }[];
  /** Authorization requests seen (their query), newest last. */
  authorizations: URLSearchParams[];
  close(): Promise<void>;
}

export async function startTestProvider(opts: {
  clientId: string;
  user: { sub: string; name: string };
  audience?: string;
}): Promise<TestProvider> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = randomBytes(6).toString('hex');
  const codes = new Map<string, { challenge: string; redirectUri: string; nonce: string | null }>();
  const issued: TestProvider['issued'] = [];
  const authorizations: URLSearchParams[] = [];
  let issuer = '';

  const jwt = (claims: Record<string, unknown>, key: KeyObject) => {
    const head = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid }));
    const body = b64url(JSON.stringify(claims));
    return `${head}.${body}.${b64url(sign('sha256', Buffer.from(`${head}.${body}`), key))}`;
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('access-control-allow-headers', '*');
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'OPTIONS') return void res.writeHead(204).end();
    if (url.pathname === '/.well-known/openid-configuration')
      return json(200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
      });
    if (url.pathname === '/jwks') return json(200, { keys: [{ ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' }] });
    if (url.pathname === '/authorize') {
      const q = url.searchParams;
      authorizations.push(q);
      const redirect = q.get('redirect_uri');
      if (
        q.get('client_id') !== opts.clientId ||
        !redirect ||
        q.get('response_type') !== 'code' ||
        q.get('code_challenge_method') !== 'S256' ||
        !q.get('code_challenge')
      )
        return json(400, { error: 'invalid_request' });
      const code = randomBytes(16).toString('hex');
      codes.set(code, { challenge: q.get('code_challenge')!, redirectUri: redirect, nonce: q.get('nonce') });
      const back = new URL(redirect);
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state') ?? '');
      res.writeHead(302, { location: back.toString() });
      return void res.end();
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      let raw = '';
      req.on('data', (d: Buffer) => (raw += d.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(raw);
        const grant = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        if (
          !grant ||
          form.get('grant_type') !== 'authorization_code' ||
          form.get('client_id') !== opts.clientId ||
          form.get('redirect_uri') !== grant.redirectUri
        )
          return json(400, { error: 'invalid_grant' });
        // PKCE: the verifier must hash to the challenge the page sent with the authorization request.
        if (createHash('sha256').update(verifier).digest('base64url') !== grant.challenge)
          return json(400, { error: 'invalid_grant', error_description: 'PKCE verification failed' });
        const now = Math.floor(Date.now() / 1000);
        const idToken = jwt(
          {
            iss: issuer,
            sub: opts.user.sub,
            aud: opts.clientId,
            iat: now,
            exp: now + 3600,
            name: opts.user.name,
            ...(grant.nonce ? { nonce: grant.nonce } : {}),
          },
          privateKey,
        );
        const accessToken = jwt(
          { iss: issuer, sub: opts.user.sub, aud: opts.audience ?? opts.clientId, iat: now, exp: now + 3600, scope: 'openid profile' },
          privateKey,
        );
        issued.push({ sub: opts.user.sub, idToken, accessToken });
        return json(200, { access_token: accessToken, id_token: idToken, token_type: 'Bearer', expires_in: 3600 });
      });
      return;
    }
    json(404, { error: 'not_found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    clientId: opts.clientId,
    issued,
    authorizations,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
