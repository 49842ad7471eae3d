// The fans' page against the real thing, in-process: a store API serving the built page (as `npm start` does), the
// background worker with its admission controller, a fresh PostgreSQL database, and Debian's Chromium.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { inject } from 'vitest';
import { buildStoreApi } from '@onsale/store-api';

type FastifyInstance = Awaited<ReturnType<typeof buildStoreApi>>;
import { loadStoreApiConfig } from '@onsale/store-api/env';
import { SimulatedPaymentGateway } from '@onsale/shared/checkout';
import { parseEventFile, type EventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { sql } from '@onsale/shared/db';
import { startWorker, type BackgroundWorker } from '@onsale/shared/jobs';
import { createTestDatabase, docsScreenshotDir, fanBuildDir, PAGE_WAIT_MS, type TestDatabase, waitUntil } from '@onsale/shared/testing';

const fanRoot = fileURLToPath(new URL('..', import.meta.url));
export const resultsDir = join(fanRoot, '..', '..', '.test-results');
/** docs/fan-pages/ with UPDATE_SCREENSHOTS=1, else a git-ignored directory of the test results. */
export const docsShots = docsScreenshotDir('fan-pages');

/**
 * A production build of the fans' page, made once per test run and shared by the fan browser tests (each used to
 * build its own: a vite build and a Node process each, about 2 s of CPU). The first file to ask builds it into a
 * directory named after this run; the others wait for it; the run's global teardown removes it. No test writes
 * into it.
 */
export async function builtFanPage(): Promise<string> {
  const out = fanBuildDir(inject('templateDatabaseUrl'));
  const done = join(out, '.built');
  if (existsSync(done)) return out;
  try {
    mkdirSync(`${out}.lock`);
  } catch {
    await waitUntil("the fans' page build of this run", async () => existsSync(done), { timeoutMs: 600_000, intervalMs: 200 });
    return out;
  }
  const viteBin = join(dirname(createRequire(join(fanRoot, 'package.json')).resolve('vite/package.json')), 'bin', 'vite.js');
  execFileSync(process.execPath, [viteBin, 'build', '--outDir', out, '--emptyOutDir', '--logLevel', 'warn'], {
    cwd: fanRoot,
    stdio: 'inherit',
  });
  writeFileSync(done, '');
  return out;
}

export interface Stack {
  t: TestDatabase;
  app: FastifyInstance;
  url: string;
  worker: BackgroundWorker;
  /** Another store API on the same database with other settings (e.g. a bot gate that challenges everyone). */
  extraApi(env: Record<string, string>): Promise<{ app: FastifyInstance; url: string }>;
  close(): Promise<void>;
}

export async function startStack(fanDir: string, env: Record<string, string> = {}): Promise<Stack> {
  const t = await createTestDatabase(inject('templateDatabaseUrl'), { max: 12 });
  // Load shedding off: the browser driver and the page's build share this process's event loop with the server.
  const base = { NODE_ENV: 'test', DEV_AUTH: 'true', FAN_DIR: fanDir, LOAD_SHED_ENABLED: 'false', ...env };
  const make = async (extra: Record<string, string>) => {
    const config = loadStoreApiConfig({ ...base, ...extra });
    const payments = new SimulatedPaymentGateway({ tps: 1000, latencyMs: 20, failureRate: 0 });
    const app = await buildStoreApi({ db: t.db, config, payments });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
  };
  const main = await make({});
  const extras: FastifyInstance[] = [];
  const config = loadStoreApiConfig(base);
  const worker = await startWorker({
    connectionString: t.url,
    db: t.db,
    claimTokenSecret: config.queueTokenSecret,
    admission: { tickMs: 500 },
  });
  return {
    t,
    app: main.app,
    url: main.url,
    worker,
    async extraApi(extra) {
      const s = await make(extra);
      extras.push(s.app);
      return s;
    },
    async close() {
      await worker.stop();
      for (const a of [main.app, ...extras]) await a.close();
      await t.drop();
    },
  };
}

/** An event made from an event file (the club-sized default: one 5 x 8 section and a 2 x 5 one). */
export async function makeEvent(t: TestDatabase, over: Partial<EventFile> = {}): Promise<string> {
  const spec = parseEventFile({
    name: 'Fan Page Night',
    venueName: 'The Test Hall',
    startsAt: new Date(Date.now() + 30 * 86_400_000).toISOString(),
    onsaleAt: new Date(Date.now() - 60_000).toISOString(),
    seatPickingOpensAfterMinutes: 0,
    fairnessMode: 'RANDOMIZED_PREOPEN_THEN_FIFO',
    holds: { ttlSeconds: 360, extensionSeconds: 180 },
    pacing: { targetSaleMinutes: 1, ticketsPerOrder: 1, checkoutMinutes: 6, paymentTps: 1000, overbookFactor: 1.3 },
    priceLevels: [
      { code: 'P1', name: 'Stalls', priceCents: 6500 },
      { code: 'P2', name: 'Circle', priceCents: 4000 },
    ],
    sections: [
      { code: 'STALLS', name: 'Stalls', priceLevel: 'P1', qualityRank: 1, rowCount: 5, seatsPerRow: 8 },
      { code: 'CIRCLE', name: 'Circle', priceLevel: 'P2', qualityRank: 2, rowCount: 2, seatsPerRow: 5 },
    ],
    ...over,
  });
  const r = await t.db.transaction().execute((trx) => createEvent(trx, spec, 'test', { signOff: true }));
  return r.eventId;
}

export const CHROMIUM = '/usr/bin/chromium';

export async function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`Debian Chromium not found at ${CHROMIUM}: apt-get install -y chromium`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}

export const WIDTHS = { desktop: { width: 1440, height: 1000 }, phone: { width: 390, height: 844 } } as const;

/** A fan's browser: its own context (storage), at a width, in a language, with page errors collected. */
export async function fanPage(
  browser: Browser,
  size: { width: number; height: number },
  locale = 'en-GB',
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({
    viewport: size,
    locale,
    timezoneId: 'UTC',
    isMobile: size.width < 500,
    hasTouch: size.width < 500,
  });
  context.setDefaultTimeout(PAGE_WAIT_MS);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) errors.push(m.text());
  });
  // The page's timers on a clock the test can move: polls honour Retry-After (15-30 s) and the test skips the wait.
  await page.clock.install();
  return { context, page, errors };
}

/** No horizontal scrolling at this width. */
export async function noOverflow(page: Page): Promise<void> {
  const { scroll, client } = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    client: document.documentElement.clientWidth,
  }));
  if (scroll > client) throw new Error(`the page overflows: scrollWidth ${scroll} > clientWidth ${client}`);
}

/** Signs in with the development sign-in as `name`. */
export async function devSignIn(page: Page, name: string): Promise<void> {
  const form = page.getByTestId('dev-sign-in');
  await form.locator('input').fill(name);
  await form.getByRole('button').click();
}

/** What a browser sends, for fans scripted over HTTP beside the one in Chromium (the bot gate lets them join). */
export const BROWSER_HEADERS = {
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36',
  accept: 'application/json',
  'accept-language': 'en-GB,en;q=0.9',
};

/** A scripted fan on the store API: signed in, on a device of their own. */
export async function scriptedFan(url: string, id: string): Promise<{ id: string; headers: Record<string, string> }> {
  const r = await fetch(`${url}/auth/dev-login`, {
    method: 'POST',
    headers: { ...BROWSER_HEADERS, 'content-type': 'application/json' },
    body: JSON.stringify({ accountId: id }),
  });
  const { token } = (await r.json()) as { token: string };
  return { id, headers: { ...BROWSER_HEADERS, authorization: `Bearer ${token}`, 'x-device-id': `device-of-${id}` } };
}

export async function http(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const r = await fetch(`${url}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> };
}

/**
 * Moves the page's clock on by `stepMs` (a poll the server asked to come back later is due at once) until `check`
 * holds; the store API serves each poll from a watermark it re-reads every 500 ms, so one step may see the old state.
 * Each step waits up to 15 s of real time for the page to show it (a poll and a render on a loaded machine), returning
 * as soon as it does.
 */
export async function advanceUntil(page: Page, check: () => Promise<boolean>, what: string, stepMs = 35_000, tries = 8): Promise<void> {
  for (let i = 0; i < tries; i++) {
    await page.clock.fastForward(stepMs);
    const end = Date.now() + 15_000;
    while (Date.now() < end) {
      if (await check().catch(() => false)) return;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`the page never showed ${what}`);
}

/** Opens an event's sale now (a test's clock for the on-sale): the controller seals the pre-open cohort on its next tick. */
export async function openSaleNow(t: TestDatabase, eventId: string): Promise<void> {
  await sql`UPDATE events SET seat_picking_opens_at = now() + (seat_picking_opens_at - onsale_at), onsale_at = now() WHERE id = ${eventId}`.execute(
    t.db,
  );
}

export const stateOf = (page: Page) => page.getByTestId('queue-state').getAttribute('data-state', { timeout: 1000 });
