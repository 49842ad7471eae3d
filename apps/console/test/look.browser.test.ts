import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildBff } from '@onsale/bff';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { createTestDatabase, docsScreenshotDir, type TestDatabase } from '@onsale/shared/testing';
import { createUser } from '@onsale/shared/users';
import { launchChromium, signIn, builtConsole } from './browser-helpers';

// The fans' page look in the event form: colours checked for contrast at the field, a logo uploaded, the Spanish
// words per state, the preview of the fan page in every state and both languages (the page's own components), and
// the look saved with the event.

const docsShots = docsScreenshotDir('fan-pages');
let distDir: string;
const ADMIN = { email: 'admin@look.test', password: 'admin password for the look test' };
const LOGO_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40"><rect width="120" height="40" rx="8" fill="#fbbf24"/><text x="60" y="27" font-family="sans-serif" font-size="18" font-weight="700" text-anchor="middle" fill="#3b0764">ACME</text></svg>';

let tdb: TestDatabase;
let app: Awaited<ReturnType<typeof buildBff>>;
let browser: Browser;
let page: Page;
let baseUrl: string;
let eventId: string;
const pageErrors: string[] = [];

beforeAll(async () => {
  mkdirSync(docsShots, { recursive: true });
  distDir = await builtConsole();
  tdb = await createTestDatabase(inject('templateDatabaseUrl'));
  await tdb.db.transaction().execute((trx) => createUser(trx, { ...ADMIN, role: 'admin' }, 'test'));
  const spec = parseEventFile({
    name: 'Acme Summer Night',
    venueName: 'Riverside Arena',
    startsAt: '2031-07-01T19:30:00Z',
    onsaleAt: '2031-05-01T09:00:00Z',
    priceLevels: [{ code: 'P1', name: 'Standard', priceCents: 5500 }],
    sections: [{ code: 'FLOOR', name: 'Floor', priceLevel: 'P1', qualityRank: 1, rowCount: 4, seatsPerRow: 10 }],
  });
  eventId = (await tdb.db.transaction().execute((trx) => createEvent(trx, spec, 'test'))).eventId;
  app = await buildBff({ db: tdb.db, consoleDir: distDir });
  await app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1440, height: 1000 }, timezoneId: 'UTC' });
  page.on('pageerror', (err) => pageErrors.push(err.message));
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await tdb?.drop();
});

describe("the fans' page look in the event form", () => {
  it('refuses a brand colour white text cannot be read on, at the field', async () => {
    await page.goto(`${baseUrl}/sign-in`);
    await signIn(page, ADMIN);
    await page.waitForURL(`${baseUrl}/`);
    await page.goto(`${baseUrl}/events/${eventId}/edit`);
    const editor = page.getByTestId('look-editor');
    await editor.waitFor();
    await editor.getByLabel('Brand colour', { exact: true }).fill('#ffee00');
    await page.getByTestId('event-form').getByRole('button', { name: 'Save changes' }).click();
    await page.getByTestId('error-look.colors.brand').waitFor();
    expect(await page.getByTestId('error-look.colors.brand').textContent()).toMatch(
      /^Text on the brand colour is hard to read: contrast 1\.\d:1/,
    );
    expect((await tdb.db.selectFrom('events').select('look').where('id', '=', eventId).executeTakeFirstOrThrow()).look).toBeNull();
  });

  it('previews the fan page in every state and both languages with the logo, colours and words, and saves the look', async () => {
    const editor = page.getByTestId('look-editor');
    await editor.getByLabel('Brand colour', { exact: true }).fill('#3b0764');
    await editor.getByLabel('Page background', { exact: true }).fill('#faf5ff');
    await page.getByTestId('look-logo-file').setInputFiles({ name: 'acme.svg', mimeType: 'image/svg+xml', buffer: Buffer.from(LOGO_SVG) });
    await editor.getByLabel('Logo description').fill('Acme Live');
    await editor.getByText('Words per state in Spanish (optional)').click();
    await editor.getByLabel('Waiting (Spanish)').fill('Estás en la fila de Acme. No cierres esta página.');

    const preview = page.getByTestId('look-preview');
    await preview.getByTestId('logo').waitFor();
    expect(await preview.getByTestId('logo').getAttribute('alt')).toBe('Acme Live');
    for (const state of ['WAITING', 'PAUSED', 'ADMITTED', 'LAST_CHANCE', 'SOLD_OUT']) {
      await page.getByTestId(`preview-state-${state}`).click();
      await expect.poll(() => preview.getByTestId('queue-state').getAttribute('data-state')).toBe(state);
      expect(await preview.getByTestId('event-name').textContent()).toBe('Acme Summer Night');
      await preview.screenshot({ path: join(docsShots, `preview-${state.toLowerCase().replace('_', '-')}.png`) });
    }
    await page.getByTestId('preview-state-WAITING').click();
    await page.getByTestId('preview-language-es').click();
    await expect.poll(() => preview.getByTestId('queue-message').textContent()).toBe('Estás en la fila de Acme. No cierres esta página.');
    expect(await preview.getByTestId('queue-state').textContent()).toBe('En espera');
    await preview.screenshot({ path: join(docsShots, 'preview-waiting-es.png') });

    await page.getByTestId('event-form').getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved as version 2: look.').waitFor();
    await page.getByTestId('look-editor').screenshot({ path: join(docsShots, 'console-look-editor.png') });
    const { look } = await tdb.db.selectFrom('events').select('look').where('id', '=', eventId).executeTakeFirstOrThrow();
    expect(look).toMatchObject({
      logoAlt: 'Acme Live',
      colors: { brand: '#3b0764', background: '#faf5ff' },
      copy: { es: { WAITING: 'Estás en la fila de Acme. No cierres esta página.' } },
    });
    expect(look!.logoUrl).toMatch(/^data:image\/svg\+xml;base64,/);
    // The edit form reads it back unchanged.
    await page.reload();
    await page.getByTestId('look-editor').waitFor();
    await page.getByTestId('event-form').getByRole('button', { name: 'Save changes' }).click();
    expect(await page.getByTestId('saved').textContent()).toContain('Nothing to save');
    expect(pageErrors).toEqual([]);
  });
});
