// Shared by the console's browser tests: Debian's Chromium, waiting on conditions, the sign-in form, numbers on the
// page, and card numbers for scripted checkouts.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { inject } from 'vitest';
import { consoleBuildDir, waitUntil } from '@onsale/shared/testing';

/** Debian's Chromium; playwright-core never downloads a browser. */
export const CHROMIUM = '/usr/bin/chromium';

/** Launches Debian's Chromium headless, or says how to install it. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`Debian Chromium not found at ${CHROMIUM}: apt-get install -y chromium`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
}

/** Retries `fn` until it stops throwing; its last failure is rethrown after `ms`. */
export async function eventually<T>(fn: () => Promise<T>, ms = 20_000, every = 250): Promise<T> {
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
  execFileSync(process.execPath, [viteBin, 'build', '--logLevel', 'warn', '--outDir', dir, '--emptyOutDir'], { cwd: consoleRoot, stdio: 'inherit' });
  writeFileSync(done, '');
  return dir;
}
