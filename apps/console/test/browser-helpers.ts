// Shared by the console's browser tests: Debian's Chromium, waiting on conditions, the sign-in form, numbers on the
// page, and card numbers for scripted checkouts.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { inject } from 'vitest';
import { consoleBuildDir, PAGE_WAIT_MS, waitUntil } from '@onsale/shared/testing';
import type { AddressInfo } from 'node:net';
import { buildBff } from '@onsale/bff';
import { AdmissionController } from '@onsale/shared/admission';
import type { Db } from '@onsale/shared/db';
import { buildStoreApi } from '@onsale/store-api';
import { loadStoreApiConfig } from '@onsale/store-api/env';

/** Debian's Chromium; playwright-core never downloads a browser. */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Launches Debian's Chromium headless, or says how to install it. Every context it opens (and so every page, since
 * `newPage` opens one) waits PAGE_WAIT_MS for an element or a navigation instead of Playwright's 30 s.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`Debian Chromium not found at ${CHROMIUM}: apt-get install -y chromium`);
  const browser = await chromium.launch({
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
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    context.setDefaultTimeout(PAGE_WAIT_MS);
    return context;
  };
  return browser;
}

/** Retries `fn` until it stops throwing; its last failure is rethrown after `ms`. */
export async function eventually<T>(fn: () => Promise<T>, ms = PAGE_WAIT_MS, every = 250): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > end) throw err;
      await new Promise((r) => setTimeout(r, every));
    }
  }
}

/** The number shown by the first element with `testId` under `scope` ("1,234", "12.5 /min" and the like). */
export async function numberAt(scope: Page | Locator, testId: string): Promise<number> {
  const text = await scope.getByTestId(testId).first().textContent();
  return Number((text ?? '').replace(/[^\d.-]/g, ''));
}

/** Fills and sends the console's sign-in form. */
export async function signIn(page: Page, user: { email: string; password: string }): Promise<void> {
  const form = page.getByTestId('sign-in-form');
  await form.getByLabel('E-mail address').fill(user.email);
  await form.getByLabel('Password').fill(user.password);
  await form.getByRole('button', { name: 'Sign in' }).click();
}

/** A card number that passes the Luhn check, different per n (the per-card seat limit is per instrument). */
export function cardNumber(n: number): string {
  const body = `4242${String(n).padStart(11, '0')}`;
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return `${body}${(10 - (sum % 10)) % 10}`;
}

/**
 * A production build of the console, made once per test run and shared by the browser tests (each used to build its
 * own: a few seconds of CPU each). The first test file to ask builds it into a directory named after this run; the
 * others wait for it. The run's global teardown removes it.
 */
export async function builtConsole(): Promise<string> {
  const dir = consoleBuildDir(inject('templateDatabaseUrl'));
  const done = join(dir, '.built');
  if (existsSync(done)) return dir;
  try {
    mkdirSync(`${dir}.lock`);
  } catch {
    await waitUntil('the console build of this run', async () => existsSync(done), { timeoutMs: 600_000, intervalMs: 200 });
    return dir;
  }
  const consoleRoot = fileURLToPath(new URL('..', import.meta.url));
  const viteBin = join(dirname(createRequire(join(consoleRoot, 'package.json')).resolve('vite/package.json')), 'bin', 'vite.js');
  execFileSync(process.execPath, [viteBin, 'build', '--logLevel', 'warn', '--outDir', dir, '--emptyOutDir'], {
    cwd: consoleRoot,
    stdio: 'inherit',
  });
  writeFileSync(done, '');
  return dir;
}

/** The two widths every console page is checked at. */
export const VIEWS = [
  { name: 'desktop', width: 1440, height: 900 },
  { name: 'phone', width: 390, height: 844 },
] as const;
export type View = (typeof VIEWS)[number];

/**
 * Signed-in browser pages for a test file: `pageAs(user, view)` opens a context at the view's width in UTC (so a
 * venue's zone is never the browser's by chance), signs in through the form and lands on the board; every page error
 * and console error is kept in `pageErrors` for the file's "logged no errors" check; `contexts` for its teardown.
 * `where()` gives the browser and the console's URL once the file's setup has made them.
 */
export function consoleSessions(where: () => { browser: Browser; baseUrl: string }) {
  const pageErrors: string[] = [];
  const contexts: BrowserContext[] = [];
  async function pageAs(user: { email: string; password: string }, view: View): Promise<Page> {
    const { browser, baseUrl } = where();
    const context = await browser.newContext({
      viewport: { width: view.width, height: view.height },
      timezoneId: 'UTC',
      acceptDownloads: true,
    });
    contexts.push(context);
    const page = await context.newPage();
    page.on('pageerror', (err) => pageErrors.push(`${view.name}: ${err.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') pageErrors.push(`${view.name} ${page.url()}: ${m.text()}`);
    });
    await page.goto(`${baseUrl}/sign-in`);
    await signIn(page, user);
    await page.waitForURL(`${baseUrl}/`);
    return page;
  }
  /**
   * Closes the pages' contexts once a test is done with them. A page left open keeps working: a war room streams
   * figures every second and re-renders, its controls are re-read every 1.5 s, lists every few seconds, and the BFF
   * samples the database for it. Left open to the file's end, they took CPU from every test after them.
   * Their errors are kept in `pageErrors`.
   */
  async function release(...pages: (Page | undefined)[]): Promise<void> {
    for (const page of pages) {
      if (!page) continue;
      const context = page.context();
      const i = contexts.indexOf(context);
      if (i >= 0) contexts.splice(i, 1);
      await context.close();
    }
  }
  return { pageErrors, contexts, pageAs, release };
}

/**
 * How far the page scrolls sideways: 0 when nothing overflows the viewport. When something does, the elements that
 * reach past the right edge are named in a warning (tables scroll inside their own box and are not counted).
 */
export async function sideways(page: Page): Promise<number> {
  const r = await page.evaluate(() => {
    const over = document.documentElement.scrollWidth - window.innerWidth;
    const offenders: string[] = [];
    if (over > 0)
      for (const el of Array.from(document.querySelectorAll('body *'))) {
        const box = el.getBoundingClientRect();
        if (box.right + window.scrollX > window.innerWidth + 1 && offenders.length < 8)
          offenders.push(
            `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}.${String(el.className).replace(/\s+/g, '.')} (${Math.round(box.width)} px)`,
          );
      }
    return { over, offenders };
  });
  if (r.over > 0) console.warn(`${page.url()} scrolls ${r.over} px sideways: ${r.offenders.join(', ')}`);
  return r.over;
}

/**
 * The product as the console's browser tests run it on their database: a store API (dev sign-in; no request limits,
 * bot gate or load shedding, since the test runner shares its event loop), the admission controller and the BFF
 * serving `consoleDir`, each on a free port. `stop()` closes them in order.
 */
export async function startProduct(db: Db, connectionString: string, consoleDir: string, instanceId: string) {
  const store = await buildStoreApi({
    db,
    config: loadStoreApiConfig({
      NODE_ENV: 'test',
      DEV_AUTH: 'true',
      RATE_LIMIT_ENABLED: 'false',
      BOT_GATE_ENABLED: 'false',
      LOAD_SHED_ENABLED: 'false',
    }),
  });
  await store.listen({ port: 0, host: '127.0.0.1' });
  const storeUrl = `http://127.0.0.1:${(store.server.address() as AddressInfo).port}`;
  const controller = new AdmissionController({ db, connectionString, tickMs: 500, instanceId });
  await controller.start();
  const bff = await buildBff({ db, consoleDir, storeApiUrls: [storeUrl] });
  await bff.listen({ port: 0, host: '127.0.0.1' });
  const baseUrl = `http://127.0.0.1:${(bff.server.address() as AddressInfo).port}`;
  return {
    storeUrl,
    baseUrl,
    stop: async () => {
      await bff.close();
      await controller.stop();
      await store.close();
    },
  };
}
