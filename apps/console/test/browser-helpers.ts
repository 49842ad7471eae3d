// Shared by the console's browser tests: Debian's Chromium, waiting on conditions, the sign-in form, numbers on the
// page, and card numbers for scripted checkouts.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';

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
