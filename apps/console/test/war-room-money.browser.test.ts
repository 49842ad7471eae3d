import { get } from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Browser, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildBff } from '@onsale/bff';
import { pauseQueue } from '@onsale/shared/admission';
import { sql } from '@onsale/shared/db';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { createTestDatabase, docsScreenshotDir, type TestDatabase, PAGE_WAIT_MS } from '@onsale/shared/testing';
import { createUser } from '@onsale/shared/users';
import { builtConsole, consoleSessions, launchChromium, sideways, VIEWS } from './browser-helpers';

// The war room's first screen and its money, in Chromium at 1440 and 390 px, against the BFF serving a production
// build of the console (compressed) on a real PostgreSQL: a sale in pounds with orders, its board tile, the charts
// from the open, the alert history with the alerts firing now, and a paused sale that says so once.
// Screenshots go to docs/console/ with UPDATE_SCREENSHOTS=1 only.

const docsShots = docsScreenshotDir('console');
const OPERATOR = { email: 'ops@money.test', password: 'operator password for the money test' };
/** The orders of the pounds sale, in pence: four confirmed and one cancelled (left out of the money). */
const ORDERS = [5_000, 2_500, 7_500, 2_500];
const CANCELLED = 9_900;

let tdb: TestDatabase;
let bff: Awaited<ReturnType<typeof buildBff>>;
let browser: Browser;
let baseUrl: string;
let poundsId: string;
let pausedId: string;
let poundsOnsale: Date;
const { pageErrors, contexts, pageAs, release } = consoleSessions(() => ({ browser, baseUrl }));

async function event(name: string, currency: string, onsaleAt: Date): Promise<string> {
  const { eventId } = await tdb.db.transaction().execute((trx) =>
    createEvent(
      trx,
      parseEventFile({
        name,
        venueName: 'Money Hall',
        onsaleAt: onsaleAt.toISOString(),
        startsAt: new Date(Date.now() + 7 * 86_400_000).toISOString(),
        currency,
        fairnessMode: 'FIFO',
        priceLevels: [{ code: 'P1', name: 'Floor', priceCents: 2_500 }],
        sections: [{ code: 'A', name: 'Floor', priceLevel: 'P1', qualityRank: 1, rowCount: 4, seatsPerRow: 10 }],
      }),
      'test',
      { signOff: true },
    ),
  );
  return eventId;
}

/** A paid order (or a cancelled one) of the event, made `minutesAgo` minutes ago. */
async function order(eventId: string, i: number, pence: number, status: 'CONFIRMED' | 'CANCELLED' = 'CONFIRMED') {
  const account = `money-fan-${i}`;
  await sql`INSERT INTO accounts (id) VALUES (${account}) ON CONFLICT DO NOTHING`.execute(tdb.db);
  const { rows } = await sql<{ id: string }>`
    INSERT INTO holds (event_id, account_id, section_code, quantity, status, expires_at)
    VALUES (${eventId}, ${account}, 'A', 2, 'PURCHASED', now() + interval '5 minutes') RETURNING id`.execute(tdb.db);
  await sql`
    INSERT INTO orders (hold_id, event_id, account_id, idempotency_key, seat_count, amount_cents, instrument_fingerprint, payment_reference, status)
    VALUES (${rows[0]!.id}, ${eventId}, ${account}, ${`money-${i}`}, 2, ${pence}, 'card', ${`ref-${i}`}, ${status})`.execute(tdb.db);
}

beforeAll(async () => {
  const distDir = await builtConsole();
  tdb = await createTestDatabase(inject('templateDatabaseUrl'), { max: 6 });
  poundsOnsale = new Date(Date.now() - 10 * 60_000);
  poundsId = await event('Pounds Night', 'GBP', poundsOnsale);
  pausedId = await event('Paused Matinee', 'EUR', new Date(Date.now() - 5 * 60_000));
  for (const [i, pence] of ORDERS.entries()) await order(poundsId, i, pence);
  await order(poundsId, 99, CANCELLED, 'CANCELLED');
  await tdb.db.transaction().execute((trx) => pauseQueue(trx, pausedId, { actor: 'ops@money.test', reason: 'payment provider down' }));
  await tdb.db.transaction().execute((trx) => createUser(trx, { ...OPERATOR, role: 'operator' }, 'test'));
  bff = await buildBff({ db: tdb.db, consoleDir: distDir });
  await bff.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(bff.server.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await browser?.close();
  await bff?.close();
  await tdb?.drop();
});

/** The bytes that cross the wire for `url` when the client accepts `encoding`, and the encoding the server chose. */
function wire(url: string, encoding: string): Promise<{ bytes: number; encoding: string | undefined }> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { 'accept-encoding': encoding } }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ bytes, encoding: res.headers['content-encoding'] }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

const top = async (page: Page, testId: string) => (await page.getByTestId(testId).first().boundingBox())!.y;

describe('the war room: money and the first screen, in Chromium at 1440 and 390 px', () => {
  for (const view of VIEWS) {
    describe(`at ${view.width} px`, () => {
      let page: Page;
      beforeAll(async () => {
        page = await pageAs(OPERATOR, view);
      });
      afterAll(() => release(page));

      it('the first screen: waiting, let in, sold, gross sales in pounds and the alerts, before any chart', async () => {
        await page.goto(`${baseUrl}/events/${poundsId}/war-room`);
        const revenue = page.getByTestId('wr-revenue');
        await revenue.waitFor({ timeout: PAGE_WAIT_MS });
        expect(await revenue.textContent()).toBe('£175.00');
        const headline = await page.getByTestId('wr-headline').textContent();
        expect(headline).toContain('4 orders · average £43.75');
        expect(headline).not.toContain('$');
        expect(await page.getByTestId('wr-head-sold').textContent()).toBe('0');
        expect(await page.getByTestId('wr-head-waiting').textContent()).toBe('0');
        expect(await page.getByTestId('wr-head-admitted').textContent()).toBe('0');
        // Nobody ticks this sale: the controller is silent, an alert of this event's own.
        expect(await page.getByTestId('wr-head-alerts').textContent()).not.toBe('None');
        const silent = page.locator('[data-testid="wr-alert"][data-code="CONTROLLER_SILENT"]');
        expect(await silent.getByTestId('wr-alert-reach').getAttribute('data-reach')).toBe('event');
        // The five figures start on the first screen, and come before the alerts' details, the panels and every chart.
        expect(await top(page, 'wr-headline')).toBeLessThan(view.height);
        expect(await top(page, 'wr-headline')).toBeLessThan(await top(page, 'wr-alerts'));
        expect(await top(page, 'wr-alerts')).toBeLessThan(await top(page, 'wr-queue'));
        expect(await top(page, 'wr-queue')).toBeLessThan(await top(page, 'wr-charts'));
        expect(await sideways(page)).toBe(0);
        await page.screenshot({ path: join(docsShots, `war-room-first-screen-${view.width}.png`) });
      });

      it('plain words on the figures, the technical term in the tooltip', async () => {
        const watermark = page.getByTestId('wr-queue').locator('.wr-term').first();
        expect(await watermark.textContent()).toBe('Let in up to place');
        expect(await watermark.getAttribute('title')).toMatch(/^Watermark/);
        const text = await page.getByTestId('wr-area-figures').innerText();
        for (const jargon of ['Watermark', 'Invariant drift', 'HOLD_COMMIT', 'TPS']) expect(text).not.toContain(jargon);
      });

      it('the charts start at the open, and the money has its chart by the minute', async () => {
        const charts = page.getByTestId('wr-charts');
        expect(await charts.getAttribute('data-from')).toBe(new Date(Math.floor(poundsOnsale.getTime() / 60_000) * 60_000).toISOString());
        // One bar a minute from the open's minute to now (the page's figures are at most a few seconds old).
        const minutes = Number(await page.getByTestId('wr-sales-chart').getAttribute('data-minutes'));
        const openMinute = Math.floor(poundsOnsale.getTime() / 60_000);
        expect(minutes).toBeGreaterThanOrEqual(11);
        expect(minutes).toBeLessThanOrEqual(Math.floor(Date.now() / 60_000) - openMinute + 1);
        await page.getByTestId('wr-sales-chart').locator('svg.recharts-surface').first().waitFor({ timeout: PAGE_WAIT_MS });
      });

      it('the alert history includes the alerts firing now, saying whose they are', async () => {
        const history = page.getByTestId('wr-alert-history');
        const live = history.locator('[data-testid="wr-alert-history-row"][data-code="CONTROLLER_SILENT"]');
        await live.waitFor({ timeout: PAGE_WAIT_MS });
        expect(await live.getAttribute('data-resolved')).toBe('false');
        expect(await live.getByTestId('wr-alert-reach').textContent()).toBe('This event');
        expect(Number(await history.getAttribute('data-count'))).toBeGreaterThanOrEqual(1);
        expect(await history.getByTestId('wr-alert-history-summary').textContent()).toMatch(/firing now/);
        expect(await history.getByTestId('wr-alert-history-empty').count()).toBe(0);
      });

      it("the console's scripts arrived compressed (brotli) and cached as immutable", async () => {
        // A first visit, with nothing cached: every script the sign-in page loads.
        const context = await browser.newContext({ viewport: { width: view.width, height: view.height } });
        contexts.push(context);
        const fresh = await context.newPage();
        const scripts: Response[] = [];
        fresh.on('response', (r) => {
          if (/\/assets\/[^/]+\.js$/.test(new URL(r.url()).pathname)) scripts.push(r);
        });
        await fresh.goto(`${baseUrl}/sign-in`, { waitUntil: 'networkidle' });
        expect(scripts.length).toBeGreaterThan(0);
        let largest = { url: '', bytes: 0 };
        for (const r of scripts) {
          const h = await r.allHeaders();
          const { bytes } = await wire(r.url(), 'identity');
          if (bytes > largest.bytes) largest = { url: r.url(), bytes };
          // Under 1 KB a script is not worth compressing (the build's threshold): it comes as it is.
          if (bytes >= 1024) expect(h['content-encoding'], r.url()).toBe('br');
          expect(h['cache-control']).toBe('public, max-age=31536000, immutable');
        }
        expect(largest.bytes).toBeGreaterThan(100_000);
        // What crossed the wire against the script itself, for the largest one.
        const url = largest.url;
        const [br, plain] = await Promise.all([wire(url, 'br'), wire(url, 'identity')]);
        expect(br.encoding).toBe('br');
        expect(plain.encoding).toBeUndefined();
        expect(br.bytes).toBeLessThan(plain.bytes / 3);
        console.info(`largest console script: ${plain.bytes} bytes, ${br.bytes} over the wire with brotli (${url.split('/').pop()})`);
      });

      it('a paused sale says so once: the banner with who and why, not an alert and a "why" line besides', async () => {
        await page.goto(`${baseUrl}/events/${pausedId}/war-room`);
        await page.getByTestId('wr-state-banner').waitFor({ timeout: PAGE_WAIT_MS });
        expect(await page.getByTestId('wr-state').textContent()).toBe('PAUSED');
        expect(await page.getByTestId('wr-paused-by').textContent()).toContain('payment provider down');
        expect(await page.locator('[data-testid="wr-alert"][data-code="QUEUE_PAUSED"]').count()).toBe(0);
        expect(await page.getByTestId('wr-why').count()).toBe(0);
        expect(await page.getByTestId('wr-revenue').textContent()).toBe('€0.00');
        expect(await sideways(page)).toBe(0);
      });

      it("the board shows each sale's money in its own currency", async () => {
        await page.goto(`${baseUrl}/war-room`);
        const tile = page.locator(`[data-testid="board-tile"][data-event-id="${poundsId}"]`);
        await tile.waitFor({ timeout: PAGE_WAIT_MS });
        expect(await tile.getByTestId('board-tile-revenue').textContent()).toMatch(/^£175\.00 · 4 orders · average £43\.75/);
        const paused = page.locator(`[data-testid="board-tile"][data-event-id="${pausedId}"]`);
        expect(await paused.getByTestId('board-tile-revenue').textContent()).toMatch(/^€0\.00 · 0 orders/);
        expect(await page.getByTestId('board-gross').textContent()).toBe('€0.00 + £175.00 gross sales');
        expect(await sideways(page)).toBe(0);
        await page.screenshot({ path: join(docsShots, `war-room-board-money-${view.width}.png`), fullPage: true });
      });

      it('no page error', () => {
        expect(pageErrors).toEqual([]);
      });
    });
  }
});
