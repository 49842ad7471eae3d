import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { buildStoreApi } from '../src/app.js';
import { loadStoreApiConfig } from '../src/env.js';
import { admitted, login, makeEvent, setupApp, type TestApp } from './helper.js';

// The fans' page as the store API serves it (/e/:eventId, its assets, /fan/config) and the seat map route the page
// reads when a fan picks exact seats.

let h: TestApp;
let fanDir: string;
let eventId: string;

beforeAll(async () => {
  fanDir = mkdtempSync(join(tmpdir(), 'fan-dist-'));
  mkdirSync(join(fanDir, 'assets'));
  writeFileSync(
    join(fanDir, 'index.html'),
    '<!doctype html><title>fan</title><script type="module" src="/e/assets/index-abc.js"></script>',
  );
  writeFileSync(join(fanDir, 'assets', 'index-abc.js'), 'console.log(1)');
  h = await setupApp({ env: { FAN_DIR: fanDir } });
  ({ eventId } = await makeEvent(h.t, { seatPickingOpensAfterMinutes: 0 }));
});
afterAll(async () => {
  await h.close();
  rmSync(fanDir, { recursive: true, force: true });
});

describe('the fans\u2019 page', () => {
  it('serves the page at /e/:eventId, revalidated by browsers (an edge may keep it 30 s), under a strict CSP; assets for a year; a missing asset is 404', async () => {
    const page = await h.app.inject({ url: `/e/${eventId}` });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.headers['cache-control']).toBe('no-cache');
    // An edge or CDN in front may keep it for FAN_PAGE_EDGE_CACHE_SECONDS (30 s); browsers ignore this header.
    expect(page.headers['cdn-cache-control']).toBe('public, max-age=30');
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.body).toContain('/e/assets/index-abc.js');
    // The identity provider's redirect lands on the same page.
    expect((await h.app.inject({ url: '/e/callback?code=x&state=y' })).statusCode).toBe(200);
    const asset = await h.app.inject({ url: '/e/assets/index-abc.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await h.app.inject({ url: '/e/assets/nope.js' })).statusCode).toBe(404);
    // Not in the OpenAPI document: pages, not API.
    const doc = (await h.app.inject({ url: '/docs/json' })).json<{ paths: Record<string, unknown> }>();
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/e/'))).toBe(false);
    expect(doc.paths['/fan/config']).toBeDefined();
  });

  it('tells the page how fans sign in, and lists the test cards outside production', async () => {
    const cfg = (await h.app.inject({ url: '/fan/config' })).json();
    expect(cfg).toEqual({
      devSignIn: true,
      oidc: null,
      testCards: [
        { number: '4242424242424242', outcome: 'success' },
        { number: '4000000000000002', outcome: 'declined' },
      ],
    });
    const env = {
      NODE_ENV: 'production',
      AUTH_SECRET: 'a'.repeat(40),
      QUEUE_TOKEN_SECRET: 'b'.repeat(40),
      CARD_FINGERPRINT_SECRET: 'c'.repeat(40),
      FAN_OIDC_ISSUER: 'https://id.example.com/realms/fans',
      FAN_OIDC_CLIENT_ID: 'fan-page',
    };
    const prod = await buildStoreApi({ db: h.t.db, config: loadStoreApiConfig(env) });
    try {
      const p = (await prod.inject({ url: '/fan/config' })).json();
      expect(p).toEqual({
        devSignIn: false,
        oidc: {
          issuer: 'https://id.example.com/realms/fans',
          clientId: 'fan-page',
          scope: 'openid profile',
          audience: null,
          useToken: 'id_token',
          redirectPath: '/e/callback',
        },
        testCards: null,
      });
    } finally {
      await prod.close();
    }
    expect(() => loadStoreApiConfig({ FAN_OIDC_ISSUER: 'https://id.example.com' })).toThrow(/go together/);
  });
});

describe('GET /events/:id/sections/:code/seats', () => {
  it('needs an admission token, lists the section in seat-map order, and reads held seats as taken', async () => {
    const fan = await login(h.app, 'seatmap-fan');
    const url = `/events/${eventId}/sections/B/seats`;
    const refused = await h.app.inject({ url, headers: { authorization: `Bearer ${fan}` } });
    expect(refused.statusCode).toBe(401);
    expect(refused.json().error).toBe('ADMISSION_REQUIRED');

    const headers = await admitted(fan, eventId);
    const map = await h.app.inject({ url, headers });
    expect(map.statusCode).toBe(200);
    const seats = map.json().seats as { id: number; row: string; number: number; available: boolean }[];
    expect(seats).toHaveLength(50);
    expect(seats.slice(0, 3).map((s) => `${s.row}${s.number}`)).toEqual(['A1', 'A2', 'A3']);
    expect(seats.every((s) => s.available)).toBe(true);

    const hold = await h.app.inject({
      method: 'POST',
      url: `/events/${eventId}/holds`,
      headers,
      payload: { seatIds: [seats[0]!.id, seats[1]!.id] },
    });
    expect(hold.statusCode).toBe(201);
    // The map is served from a 1 s cache: the taken seats show on a later read.
    await expect
      .poll(
        async () => ((await h.app.inject({ url, headers })).json().seats as { available: boolean }[]).filter((s) => !s.available).length,
      )
      .toBe(2);

    const unknown = await h.app.inject({ url: `/events/${eventId}/sections/NOPE/seats`, headers });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ error: 'SECTION_NOT_FOUND', field: 'code' });
  });
});

describe("the promoter's look and the fan's language", () => {
  it('serves the look and the words per state in every language; join and status answer in the fan’s Accept-Language', async () => {
    const look = {
      logoUrl: 'https://cdn.example.com/acme.png',
      logoAlt: 'Acme Live',
      colors: { brand: '#5b21b6', brandText: '#ffffff' },
      copy: { es: { WAITING: 'Estás en la fila de Acme.' } },
    };
    const { eventId: id } = await makeEvent(h.t, { fairnessMode: 'FIFO', queueCopy: { WAITING: 'You are in the Acme line.' }, look });
    const page = (await h.app.inject({ url: `/events/${id}` })).json();
    expect(page.look).toEqual({ logoUrl: look.logoUrl, logoAlt: 'Acme Live', colors: look.colors });
    expect(page.copy.en.WAITING).toBe('You are in the Acme line.');
    expect(page.copy.es.WAITING).toBe('Estás en la fila de Acme.');
    expect(page.copy.es.PAUSED).toMatch(/pausa/);

    const fan = await login(h.app, 'spanish-fan');
    const headers = { authorization: `Bearer ${fan}`, 'x-device-id': 'telefono-de-ana', 'accept-language': 'es-MX,es;q=0.9,en;q=0.5' };
    // A live controller (its heartbeat) admitting nobody yet: the line reads WAITING once the store API has read it.
    await sql`UPDATE queue_state SET heartbeat_at = now() + interval '5 minutes' WHERE event_id = ${id}`.execute(h.t.db);
    await expect
      .poll(async () => (await h.app.inject({ method: 'POST', url: `/events/${id}/queue`, headers })).json().state)
      .toBe('WAITING');
    const joined = await h.app.inject({ method: 'POST', url: `/events/${id}/queue`, headers });
    expect(joined.statusCode).toBe(200);
    expect(joined.headers['content-language']).toBe('es');
    expect(joined.json().message).toBe('Estás en la fila de Acme.');
    const status = await h.app.inject({
      url: `/events/${id}/queue/status`,
      headers: { ...headers, 'accept-language': 'fr-FR, en;q=0.8', 'x-queue-token': joined.json().queueToken },
    });
    expect(status.headers['content-language']).toBe('en');
    expect(status.headers.vary).toContain('Accept-Language');
    expect(status.json().message).toBe('You are in the Acme line.');
  });
});
