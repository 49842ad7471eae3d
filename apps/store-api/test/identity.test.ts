import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createTestDatabase, testSecrets, type TestDatabase } from '@onsale/shared/testing';
import { sql } from '@onsale/shared/db';
import type { FastifyInstance } from 'fastify';
import { buildStoreApi } from '../src/app.js';
import { loadStoreApiConfig } from '../src/env.js';

// Fans sign in with the promoter's identity provider: asymmetric JWTs checked against its key set, served here by a
// local JWKS endpoint. Everything else the provider could be tricked into (another key, another audience, HS256
// keyed with the public key, alg none) is a 401.

const ISSUER = 'https://idp.test/realms/fans';
const AUDIENCE = 'onsale-store';

interface Key {
  kid: string;
  alg: 'RS256' | 'ES256' | 'EdDSA';
  privateKey: CryptoKey;
  jwk: JWK;
}

async function makeKey(kid: string, alg: Key['alg']): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

let served: Key[] = [];
let fetches = 0;
let idpDown = false;
let idp: Server;
let jwksUrl: string;
let t: TestDatabase;
let app: FastifyInstance;
let rsa: Key;

function sign(key: Key, claims: Record<string, unknown> = {}, opts: { exp?: string | number; aud?: string; kid?: string } = {}) {
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: key.alg, kid: opts.kid ?? key.kid, typ: 'JWT' })
    .setIssuer(ISSUER)
    .setAudience(opts.aud ?? AUDIENCE)
    .setSubject((claims.sub as string | undefined) ?? 'auth0|fan-0001')
    .setIssuedAt()
    .setExpirationTime(opts.exp ?? '1h')
    .sign(key.privateKey);
}

const asFan = (token: string) => app.inject({ method: 'GET', url: '/me/waitlist', headers: { authorization: `Bearer ${token}` } });

beforeAll(async () => {
  rsa = await makeKey('rsa-1', 'RS256');
  served = [rsa, await makeKey('ec-1', 'ES256'), await makeKey('ed-1', 'EdDSA')];
  idp = createServer((req, res) => {
    if (req.url !== '/certs') return void res.writeHead(404).end();
    fetches++;
    if (idpDown) return void res.writeHead(502).end('bad gateway');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: served.map((k) => k.jwk) }));
  });
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(idp.address() as AddressInfo).port}/certs`;
  t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 5 });
  const config = loadStoreApiConfig({
    NODE_ENV: 'test',
    RATE_LIMIT_ENABLED: 'false',
    BOT_GATE_ENABLED: 'false',
    // No load shedding: the test runner shares the store API's event loop (see setupApp in helper.ts).
    LOAD_SHED_ENABLED: 'false',
    AUTH_JWKS_URL: jwksUrl,
    AUTH_ISSUER: ISSUER,
    AUTH_AUDIENCE: AUDIENCE,
    AUTH_JWKS_COOLDOWN_SECONDS: '1',
  });
  app = await buildStoreApi({ db: t.db, config });
  await app.ready();
});

afterAll(async () => {
  await app?.close();
  await t?.drop();
  await new Promise((resolve) => idp?.close(resolve));
});

describe('fan identity from an identity provider (AUTH_JWKS_URL)', () => {
  it('accepts a good RS256, ES256 or EdDSA token; the account is its sub, recorded on first sight', async () => {
    for (const [i, key] of served.entries()) {
      const r = await asFan(await sign(key, { sub: `auth0|fan-${i}` }));
      expect(r.statusCode, r.body).toBe(200);
    }
    const { rows } = await sql<{ id: string }>`SELECT id FROM accounts WHERE id LIKE 'auth0|fan-%' ORDER BY id`.execute(t.db);
    expect(rows.map((r) => r.id)).toEqual(['auth0|fan-0', 'auth0|fan-1', 'auth0|fan-2']);
  });

  it("keeps the token's name claim as the account's display name (cleaned, cut to 200 characters); a token without one leaves it", async () => {
    expect((await asFan(await sign(rsa, { sub: 'auth0|named-1', name: '  Maya\n  Okafor-Lindqvist ' }))).statusCode).toBe(200);
    expect((await asFan(await sign(rsa, { sub: 'auth0|named-2', name: 'x'.repeat(500) }))).statusCode).toBe(200);
    expect((await asFan(await sign(rsa, { sub: 'auth0|named-3', name: 42 }))).statusCode).toBe(200);
    expect((await asFan(await sign(rsa, { sub: 'auth0|named-4' }))).statusCode).toBe(200);
    const { rows } = await sql<{ id: string; display_name: string | null }>`
      SELECT id, display_name FROM accounts WHERE id LIKE 'auth0|named-%' ORDER BY id`.execute(t.db);
    expect(rows).toEqual([
      { id: 'auth0|named-1', display_name: 'Maya Okafor-Lindqvist' },
      { id: 'auth0|named-2', display_name: 'x'.repeat(200) },
      { id: 'auth0|named-3', display_name: null },
      { id: 'auth0|named-4', display_name: null },
    ]);
  });

  it('refuses with 401 a token signed by another key, expired, for another audience or issuer, HS256 keyed with the public key, or alg none', async () => {
    const stranger = await makeKey('rsa-1', 'RS256'); // the provider's kid, someone else's key
    const publicPem = await exportSPKI((await generateKeyPair('RS256', { extractable: true })).publicKey);
    const servedPem = await exportSPKI((await (await import('jose')).importJWK(rsa.jwk, 'RS256')) as CryptoKey);
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const claims = { sub: 'auth0|mallory', iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + 3600 };
    const hs256 = (secret: string, kid = 'rsa-1') => {
      const input = `${b64({ alg: 'HS256', typ: 'JWT', kid })}.${b64(claims)}`;
      return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
    };
    const cases: Record<string, string> = {
      'another key': await sign(stranger),
      expired: await sign(rsa, {}, { exp: now - 3600 }),
      'another audience': await sign(rsa, {}, { aud: 'some-other-app' }),
      'another issuer': await new SignJWT({})
        .setProtectedHeader({ alg: 'RS256', kid: 'rsa-1' })
        .setIssuer('https://evil.test/')
        .setAudience(AUDIENCE)
        .setSubject('x')
        .setExpirationTime('1h')
        .sign(rsa.privateKey),
      'HS256 keyed with the provider public key': hs256(servedPem),
      'HS256 keyed with a PEM': hs256(publicPem),
      'alg none': `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`,
      'alg none, kid set': `${b64({ alg: 'none', kid: 'rsa-1' })}.${b64(claims)}.`,
      'signature padded': `${await sign(rsa)}==`,
    };
    for (const [what, token] of Object.entries(cases)) {
      const r = await asFan(token);
      expect(r.statusCode, `${what}: ${r.body}`).toBe(401);
      expect(r.json().error, what).toBe(what === 'expired' ? 'TOKEN_EXPIRED' : 'INVALID_TOKEN');
    }
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM accounts WHERE id = 'auth0|mallory'`.execute(t.db);
    expect(rows[0]!.n).toBe(0);
  });

  it("the development sign-in is off and so are the install's own HS256 tokens", async () => {
    expect((await app.inject({ method: 'POST', url: '/auth/dev-login', payload: { accountId: 'fan-1' } })).statusCode).toBe(404);
    // A token as the development sign-in would make it, on this install's own AUTH_SECRET: refused with a key set.
    const devToken = await new SignJWT({ sub: 'fan-1' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(testSecrets().authSecret));
    const r = await asFan(devToken);
    expect(r.statusCode, r.body).toBe(401);
    expect(r.json().error).toBe('INVALID_TOKEN');
  });

  it('refuses with 401 a good signature on claims it must not take: no exp, no sub, a sub that is no account id, nbf in the future, a tampered payload', async () => {
    const noExp = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid: 'rsa-1' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject('auth0|forever')
      .setIssuedAt()
      .sign(rsa.privateKey);
    const noSub = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid: 'rsa-1' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(rsa.privateKey);
    const good = await sign(rsa, { sub: 'auth0|honest' });
    const [header, , signature] = good.split('.');
    const tampered = `${header}.${Buffer.from(JSON.stringify({ sub: 'auth0|someone-else', iss: ISSUER, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 3600 })).toString('base64url')}.${signature}`;
    const cases: Record<string, string> = {
      'no exp': noExp,
      'no sub': noSub,
      'sub with a space': await sign(rsa, { sub: 'auth0|two words' }),
      'sub too long': await sign(rsa, { sub: `auth0|${'x'.repeat(200)}` }),
      'nbf in an hour': await new SignJWT({})
        .setProtectedHeader({ alg: 'RS256', kid: 'rsa-1' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setSubject('auth0|early')
        .setNotBefore('1h')
        .setExpirationTime('2h')
        .sign(rsa.privateKey),
      'payload swapped under a good signature': tampered,
    };
    for (const [what, token] of Object.entries(cases)) {
      const r = await asFan(token);
      expect(r.statusCode, `${what}: ${r.body}`).toBe(401);
      expect(r.json().error, what).toBe('INVALID_TOKEN');
    }
    expect((await asFan(good)).statusCode).toBe(200);
    const { rows } = await sql<{
      id: string;
    }>`SELECT id FROM accounts WHERE id IN ('auth0|forever', 'auth0|early', 'auth0|someone-else')`.execute(t.db);
    expect(rows).toEqual([]);
  });

  it('a verified token is kept: polling with it fetches no keys', async () => {
    const token = await sign(rsa, { sub: 'auth0|poller' });
    expect((await asFan(token)).statusCode).toBe(200);
    const before = fetches;
    for (let i = 0; i < 20; i++) expect((await asFan(token)).statusCode).toBe(200);
    expect(fetches).toBe(before);
  });

  it('follows a key rotation without a restart, and fetches for unknown kids at a bounded rate', async () => {
    const rotated = await makeKey('rsa-2', 'RS256');
    served = [...served, rotated];
    // The provider has just added the key: the first token naming it makes the store API fetch the set again
    // (once the 1 s cooldown since the last fetch has passed).
    const token = await sign(rotated, { sub: 'auth0|after-rotation' });
    await expect.poll(async () => (await asFan(token)).statusCode, { timeout: 10_000, interval: 300 }).toBe(200);
    // A flood of tokens naming kids that do not exist: at most a fetch per cooldown, never one per request.
    const before = fetches;
    const started = Date.now();
    for (let i = 0; i < 30; i++) expect((await asFan(await sign(rsa, {}, { kid: `unknown-${i}` }))).statusCode).toBe(401);
    const seconds = (Date.now() - started) / 1000;
    expect(fetches - before).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
  });

  it('an identity provider that cannot be reached is 503 with Retry-After, not a 401', async () => {
    idpDown = true;
    try {
      const token = await sign(await makeKey('rsa-3', 'RS256'));
      // The unknown kid makes it fetch; the provider answers 502.
      await expect.poll(async () => (await asFan(token)).statusCode, { timeout: 10_000, interval: 300 }).toBe(503);
      const r = await asFan(token);
      expect(r.json().error).toBe('IDENTITY_PROVIDER_UNAVAILABLE');
      expect(r.headers['retry-after']).toBe('5');
    } finally {
      idpDown = false;
    }
  });
});

describe('configuration', () => {
  it('needs the issuer and audience with a key set, refuses DEV_AUTH with it, and wants https in production', () => {
    expect(() => loadStoreApiConfig({ NODE_ENV: 'test', AUTH_JWKS_URL: 'https://idp.test/certs' })).toThrow(
      /AUTH_ISSUER and AUTH_AUDIENCE/,
    );
    expect(() =>
      loadStoreApiConfig({
        NODE_ENV: 'test',
        AUTH_JWKS_URL: 'https://idp.test/certs',
        AUTH_ISSUER: ISSUER,
        AUTH_AUDIENCE: AUDIENCE,
        DEV_AUTH: 'true',
      }),
    ).toThrow(/DEV_AUTH cannot be on/);
    const prod = {
      NODE_ENV: 'production',
      QUEUE_TOKEN_SECRET: 'q'.repeat(32),
      CARD_FINGERPRINT_SECRET: 'c'.repeat(32),
      AUTH_ISSUER: ISSUER,
      AUTH_AUDIENCE: AUDIENCE,
    };
    expect(() => loadStoreApiConfig({ ...prod, AUTH_JWKS_URL: 'http://idp.test/certs' })).toThrow(/must be https/);
    // With a key set, production does not ask for AUTH_SECRET: nothing is signed with it.
    expect(loadStoreApiConfig({ ...prod, AUTH_JWKS_URL: 'https://idp.test/certs' }).identity).toMatchObject({
      kind: 'jwks',
      issuer: ISSUER,
      audience: AUDIENCE,
    });
  });
});
