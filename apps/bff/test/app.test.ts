import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb } from '@onsale/shared/db';
import { createTestDatabase, type TestDatabase } from '@onsale/shared/testing';
import { signIn } from '@onsale/shared/users';
import { buildBff } from '../src/app.js';
import { SESSION_COOKIE } from '../src/context.js';
import { seedEvent, seedUser } from './fixtures.js';

let tdb: TestDatabase;
let app: FastifyInstance;
let consoleDir: string;
const BIG_SCRIPT = `export const words = ${JSON.stringify(Array.from({ length: 2_000 }, (_, i) => `word ${i}`))};`;
let eventId: string;
/** A viewer's session cookie: every event procedure needs a signed-in user. */
let cookie: string;

beforeAll(async () => {
  tdb = await createTestDatabase(inject('templateDatabaseUrl'));
  ({ eventId } = await seedEvent(tdb.db, 'HTTP Test Night'));
  await seedUser(tdb.db, 'viewer@app.test', 'viewer');
  cookie = `${SESSION_COOKIE}=${(await signIn(tdb.db, { email: 'viewer@app.test', password: 'password of viewer@app.test' })).token}`;
  // A stand-in console build, so this file does not depend on Vite.
  consoleDir = mkdtempSync(join(tmpdir(), 'onsale-console-'));
  mkdirSync(join(consoleDir, 'assets'));
  writeFileSync(join(consoleDir, 'index.html'), '<!doctype html><title>Onsale console</title>');
  writeFileSync(join(consoleDir, 'assets', 'app-abc123.js'), 'console.log(1)');
  // As the console's build writes them (vite-plugin-compression2): brotli and gzip beside the script.
  writeFileSync(join(consoleDir, 'assets', 'big-def456.js'), BIG_SCRIPT);
  writeFileSync(join(consoleDir, 'assets', 'big-def456.js.br'), brotliCompressSync(BIG_SCRIPT));
  writeFileSync(join(consoleDir, 'assets', 'big-def456.js.gz'), gzipSync(BIG_SCRIPT));
  app = await buildBff({ db: tdb.db, consoleDir });
});

afterAll(async () => {
  await app?.close();
  await tdb?.drop();
  rmSync(consoleDir, { recursive: true, force: true });
});

describe('buildBff over HTTP', () => {
  it('answers /healthz', async () => {
    const res = await app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('serves a tRPC query at /trpc', async () => {
    const input = encodeURIComponent(JSON.stringify({ id: eventId }));
    const res = await app.inject({ method: 'GET', url: `/trpc/events.byId?input=${input}`, headers: { cookie } });
    expect(res.statusCode).toBe(200);
    expect(res.json().result.data.name).toBe('HTTP Test Night');
  });

  it('maps a domain not-found to HTTP 404 with the domain code', async () => {
    const input = encodeURIComponent(JSON.stringify({ id: 'nope' }));
    const res = await app.inject({ method: 'GET', url: `/trpc/events.byId?input=${input}`, headers: { cookie } });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.data).toMatchObject({ code: 'NOT_FOUND', domainCode: 'EVENT_NOT_FOUND', field: 'id' });
    expect(res.json().error.data.stack).toBeUndefined();
  });

  it('accepts long batched URLs', async () => {
    const calls = Array.from({ length: 40 }, () => 'events.list').join(',');
    const input = encodeURIComponent(JSON.stringify({}));
    const res = await app.inject({ method: 'GET', url: `/trpc/${calls}?batch=1&input=${input}`, headers: { cookie } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toHaveLength(40);
  });

  it('serves the console with an SPA fallback, but not for missing files or API paths', async () => {
    const index = await app.inject({ method: 'GET', url: '/' });
    expect(index.statusCode).toBe(200);
    expect(index.body).toContain('Onsale console');

    const deep = await app.inject({ method: 'GET', url: `/events/${eventId}` });
    expect(deep.statusCode).toBe(200);
    expect(deep.headers['content-type']).toContain('text/html');
    expect(deep.headers['cache-control']).toBe('no-cache');

    const asset = await app.inject({ method: 'GET', url: '/assets/app-abc123.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['cache-control']).toContain('immutable');

    expect((await app.inject({ method: 'GET', url: '/assets/missing.js' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'POST', url: '/events/x' })).statusCode).toBe(404);
  });

  it("sends the console's scripts compressed (brotli, else gzip), cached for a year as immutable", async () => {
    const url = '/assets/big-def456.js';
    const br = await app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(br.statusCode).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toContain('javascript');
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(br.headers.vary).toContain('accept-encoding');
    expect(br.rawPayload.length).toBeLessThan(BIG_SCRIPT.length / 4);
    expect(brotliDecompressSync(br.rawPayload).toString()).toBe(BIG_SCRIPT);

    const gz = await app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).toString()).toBe(BIG_SCRIPT);

    // A client that takes neither gets the file as it is.
    const plain = await app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'identity' } });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toBe(BIG_SCRIPT);
  });
});

describe('errors show no internals', () => {
  it('a database it cannot reach is a 503 (retry later) that shows no internals', async () => {
    // A pool on a port nothing listens on: the driver's message (host, port) must not reach the client.
    const broken = createDb('postgres://postgres@127.0.0.1:1/nothing', { max: 1 });
    const bad = await buildBff({ db: broken });
    try {
      // With a session cookie, so resolving the user reaches the database.
      const res = await bad.inject({ method: 'GET', url: '/trpc/events.list', headers: { cookie } });
      expect(res.statusCode).toBe(503);
      const body = res.json();
      expect(body.error.message).toBe('the database is briefly unavailable; retry in a few seconds');
      expect(JSON.stringify(body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|stack/);
      expect((await bad.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(503);
    } finally {
      await bad.close();
      await broken.destroy();
    }
  });
});

describe('a database outage', () => {
  it('answers 503 SERVICE_UNAVAILABLE with Retry-After, not an internal error, and serves again when it is back', async () => {
    const { DatabaseProxy } = await import('@onsale/shared/testing');
    const proxy = await DatabaseProxy.start(tdb.url);
    const db = createDb(proxy.url(tdb.url), { max: 2, connectionTimeoutMillis: 1000 });
    const bff = await buildBff({ db });
    const input = encodeURIComponent(JSON.stringify({ id: eventId }));
    const byId = () => bff.inject({ method: 'GET', url: `/trpc/events.byId?input=${input}`, headers: { cookie } });
    try {
      expect((await byId()).statusCode).toBe(200);
      proxy.cut();
      await proxy.setMode('refuse');
      const down = await byId();
      expect(down.statusCode).toBe(503);
      expect(down.json().error).toMatchObject({ data: { code: 'SERVICE_UNAVAILABLE' } });
      const health = await bff.inject({ method: 'GET', url: '/healthz' });
      expect(health.statusCode).toBe(503);
      expect(health.headers['retry-after']).toBe('5');
      await proxy.setMode('pass');
      expect((await byId()).statusCode).toBe(200);
    } finally {
      await bff.close();
      await db.destroy();
      await proxy.close();
    }
  });
});

describe('security headers (@fastify/helmet)', () => {
  it('sends a CSP with frame-ancestors none, nosniff and a referrer policy on the console and the API', async () => {
    const tdb = await createTestDatabase(inject('templateDatabaseUrl'), { max: 2 });
    const app = await buildBff({ db: tdb.db });
    try {
      for (const url of ['/healthz', '/trpc/auth.me', '/no-such-page']) {
        const r = await app.inject({ method: 'GET', url });
        const csp = String(r.headers['content-security-policy']);
        expect(csp, url).toContain("frame-ancestors 'none'");
        expect(csp).toContain("script-src 'self'");
        expect(csp).toContain("object-src 'none'");
        expect(r.headers['x-content-type-options']).toBe('nosniff');
        expect(r.headers['referrer-policy']).toBe('same-origin');
        expect(r.headers['x-frame-options']).toBe('DENY');
        // Over plain http (development) no HSTS: a browser would pin 127.0.0.1 to https.
        expect(r.headers['strict-transport-security']).toBeUndefined();
      }
    } finally {
      await app.close();
      await tdb.drop();
    }
  });
});
