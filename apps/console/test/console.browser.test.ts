import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildBff } from '@onsale/bff';
import { sql } from '@onsale/shared/db';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { createTestDatabase, type TestDatabase } from '@onsale/shared/testing';
import { assignEventOrganisation, createUser } from '@onsale/shared/users';
import { launchChromium, numberAt, signIn } from './browser-helpers';

const consoleRoot = fileURLToPath(new URL('..', import.meta.url));
const distDir = join(consoleRoot, 'dist');
const resultsDir = join(consoleRoot, '..', '..', '.test-results');
const EVENT_NAME = 'Browser Test Night';
const ACME_EVENT_NAME = 'Acme Browser Matinee';
const ADMIN = { email: 'admin@browser.test', password: 'admin password for the browser' };
const PROMOTER = { email: 'promoter@acme.test', password: 'promoter password for the browser' };

/** Newest modification time under a path (routeTree.gen.ts is the build's own output, so it does not count). */
function newestMtime(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return path.endsWith('routeTree.gen.ts') ? 0 : st.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((n) => newestMtime(join(path, n))));
}

/** Builds the console when dist/ is missing or older than its sources, so the test never checks a stale UI. */
function ensureConsoleBuilt(): void {
  const index = join(distDir, 'index.html');
  const sources = ['src', 'index.html', 'vite.config.ts'].map((p) => join(consoleRoot, p));
  if (existsSync(index) && statSync(index).mtimeMs >= Math.max(...sources.map(newestMtime))) return;
  const viteBin = join(dirname(createRequire(join(consoleRoot, 'package.json')).resolve('vite/package.json')), 'bin', 'vite.js');
  execFileSync(process.execPath, [viteBin, 'build', '--logLevel', 'warn'], { cwd: consoleRoot, stdio: 'inherit' });
}

let tdb: TestDatabase;
let app: Awaited<ReturnType<typeof buildBff>>;
let browser: Browser;
let page: Page;
let baseUrl: string;
let eventId: string;
let acmeEventId: string;
const pageErrors: string[] = [];

beforeAll(async () => {
  ensureConsoleBuilt();

  tdb = await createTestDatabase(inject('templateDatabaseUrl'));
  ({ eventId } = await tdb.db.transaction().execute((trx) =>
    createEvent(
      trx,
      parseEventFile({
        name: EVENT_NAME,
        venueName: 'Browser Arena',
        startsAt: '2030-06-01T19:00:00Z',
        onsaleAt: '2030-03-01T10:00:00Z',
        priceLevels: [
          { code: 'P1', name: 'Floor', priceCents: 15_000 },
          { code: 'P2', name: 'Tier', priceCents: 7_500 },
        ],
        sections: [
          { code: 'FLR', name: 'Floor', priceLevel: 'P1', qualityRank: 1, rowCount: 4, seatsPerRow: 10 },
          { code: 'T1', name: 'Tier 1', priceLevel: 'P2', qualityRank: 2, rowCount: 3, seatsPerRow: 8 },
        ],
      }),
      'test',
      { signOff: true },
    ),
  ));
  // Some seats held (live holds), some sold, so the page must show three different non-trivial numbers.
  await sql`UPDATE seats SET status = 'HELD', hold_id = gen_random_uuid(), expires_at = now() + interval '5 min'
            WHERE event_id = ${eventId} AND section_code = 'FLR' AND row_index = 0 AND seat_number <= 3`.execute(tdb.db);
  await sql`UPDATE seats SET status = 'SOLD', hold_id = gen_random_uuid()
            WHERE event_id = ${eventId} AND section_code = 'T1' AND row_index = 0 AND seat_number <= 5`.execute(tdb.db);

  // A promoter's event (the one above is a house event, which promoters do not see), and the console's users.
  ({ eventId: acmeEventId } = await tdb.db.transaction().execute((trx) =>
    createEvent(
      trx,
      parseEventFile({
        name: ACME_EVENT_NAME,
        venueName: 'Acme Hall',
        startsAt: '2030-07-01T19:00:00Z',
        onsaleAt: '2030-04-01T10:00:00Z',
        priceLevels: [{ code: 'P1', name: 'All', priceCents: 5_000 }],
        sections: [{ code: 'S', name: 'Stalls', priceLevel: 'P1', qualityRank: 1, rowCount: 2, seatsPerRow: 5 }],
      }),
      'test',
      { signOff: true },
    ),
  ));
  await tdb.db.transaction().execute(async (trx) => {
    await createUser(trx, { ...ADMIN, role: 'admin' }, 'test');
    await createUser(trx, { ...PROMOTER, role: 'promoter', organisation: 'Acme Live' }, 'test');
    await assignEventOrganisation(trx, acmeEventId, 'Acme Live', 'test');
  });

  app = await buildBff({ db: tdb.db, consoleDir: distDir });
  await app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('pageerror', (err) => pageErrors.push(err.message));
  // React catches render errors for its error boundary and reports them on the console instead.
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text());
  });
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await tdb?.drop();
});

/** Counts straight from the seats table, with read-time expiry, independent of the code under test. */
async function dbCounts() {
  const { rows } = await sql<{ capacity: number; available: number; held: number; sold: number }>`
    SELECT count(*)::int AS capacity,
           count(*) FILTER (WHERE status = 'AVAILABLE' OR (status = 'HELD' AND expires_at <= now()))::int AS available,
           count(*) FILTER (WHERE status = 'HELD' AND expires_at > now())::int AS held,
           count(*) FILTER (WHERE status = 'SOLD')::int AS sold
    FROM seats WHERE event_id = ${eventId}`.execute(tdb.db);
  return rows[0]!;
}

describe('sign-in in Chromium', () => {
  it('signed out, any page leads to sign-in; mistakes show inline, at the field or on the form', async () => {
    await page.goto(`${baseUrl}/events/${eventId}`);
    await page.waitForURL(/\/sign-in\?redirect=/);
    await page.getByTestId('sign-in-form').waitFor();

    // Blank fields: caught by the shared schema, at each field, before anything is sent.
    await page.getByRole('button', { name: 'Sign in' }).click();
    expect(await page.getByTestId('error-email').textContent()).toBe('Enter your e-mail address.');
    expect(await page.getByTestId('error-password').textContent()).toBe('Enter your password.');

    // A wrong password: the BFF's refusal, shown on the form; no cookie, still on the sign-in page.
    await signIn(page, { email: ADMIN.email, password: 'not the password at all' });
    const error = page.getByTestId('sign-in-error');
    await error.waitFor();
    expect(await error.textContent()).toBe('Wrong e-mail address or password.');
    expect(await page.getByTestId('error-email').count()).toBe(0);
    expect(page.url()).toContain('/sign-in');
    expect((await page.context().cookies()).filter((c) => c.name === 'onsale_console_session')).toEqual([]);
    mkdirSync(resultsDir, { recursive: true });
    await page.screenshot({ path: join(resultsDir, 'console-sign-in-error.png') });
  });

  it('signs in through the page, lands where it was going, and shows who is signed in', async () => {
    await signIn(page, ADMIN);
    await page.waitForURL(`**/events/${eventId}`);
    await page.getByTestId('event-name').waitFor();
    expect(await page.getByTestId('signed-in-user').textContent()).toBe(ADMIN.email);
    expect(await page.getByTestId('signed-in-role').textContent()).toBe('Admin');
    const [cookie] = (await page.context().cookies()).filter((c) => c.name === 'onsale_console_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
    // httpOnly: page scripts cannot read it.
    expect(await page.evaluate(() => document.cookie)).not.toContain('onsale_console_session');
  });
});

describe('operator console in Chromium', () => {
  it('lists the event and shows its inventory counts, equal to the database', async () => {
    const expected = await dbCounts();
    expect(expected).toEqual({ capacity: 64, available: 56, held: 3, sold: 5 });

    await page.goto(`${baseUrl}/`);
    await page.getByRole('link', { name: 'Onsale console' }).waitFor();
    const row = page.locator(`[data-testid="event-row"][data-event-id="${eventId}"]`);
    await row.getByText(EVENT_NAME).waitFor();
    expect(await numberAt(row, 'event-available')).toBe(expected.available);
    expect(await numberAt(row, 'event-held')).toBe(expected.held);
    expect(await numberAt(row, 'event-sold')).toBe(expected.sold);
    mkdirSync(resultsDir, { recursive: true });
    await page.screenshot({ path: join(resultsDir, 'console-events.png') });

    await row.getByTestId('event-link').click();
    await page.waitForURL(`**/events/${eventId}`);
    await page.getByTestId('count-available').waitFor();
    expect(await page.getByTestId('event-name').textContent()).toBe(EVENT_NAME);
    expect(await numberAt(page, 'count-available')).toBe(expected.available);
    expect(await numberAt(page, 'count-held')).toBe(expected.held);
    expect(await numberAt(page, 'count-sold')).toBe(expected.sold);
    expect(await numberAt(page, 'count-capacity')).toBe(expected.capacity);
    expect(await numberAt(page, 'count-drift')).toBe(0);

    const floor = page.locator('[data-testid="section-row"][data-section="FLR"]');
    expect(await numberAt(floor, 'section-held')).toBe(3);
    const tier = page.locator('[data-testid="section-row"][data-section="T1"]');
    expect(await numberAt(tier, 'section-sold')).toBe(5);

    await page.locator('.recharts-surface').first().waitFor();
    await page.screenshot({ path: join(resultsDir, 'console-event.png'), fullPage: true });
  });

  it('serves a deep link to an event page (SPA fallback) and a not-found page for an unknown event', async () => {
    await page.goto(`${baseUrl}/events/${eventId}`);
    await page.getByTestId('count-held').waitFor();
    expect(await numberAt(page, 'count-held')).toBe((await dbCounts()).held);

    await page.goto(`${baseUrl}/events/00000000-0000-4000-8000-000000000000`);
    await page.getByTestId('not-found').waitFor();
  });
});

describe('roles in Chromium', () => {
  it('an admin manages users: the form checks with the shared schema at each field, then creates the user', async () => {
    await page.goto(`${baseUrl}/`);
    await page.getByTestId('nav-users').click();
    await page.waitForURL('**/users');
    await page.getByTestId('users-table').waitFor();
    expect(await page.getByTestId('user-row').count()).toBe(2);

    const form = page.getByTestId('create-user-form');
    await form.getByLabel('E-mail address').fill('not-an-email');
    await form.getByLabel('Role').selectOption('promoter');
    await form.getByLabel('Password').fill('short');
    await form.getByRole('button', { name: 'Create user' }).click();
    expect(await form.getByTestId('error-email').textContent()).toBe('Not an e-mail address.');
    expect(await form.getByTestId('error-organisation').textContent()).toBe('A promoter needs an organisation.');
    expect(await form.getByTestId('error-password').textContent()).toBe('At least 12 characters.');
    // The problems are listed at the top of the form, focused, each a link to its field.
    const summary = form.getByTestId('error-summary');
    expect(await summary.evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await summary.getByRole('link').allTextContents()).toEqual([
      'E-mail address: Not an e-mail address.',
      'Organisation: A promoter needs an organisation.',
      'Password: At least 12 characters.',
    ]);
    await summary.getByRole('link', { name: /^Organisation/ }).click();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('organisation');

    await form.getByLabel('E-mail address').fill('second@acme.test');
    await form.getByLabel('Organisation').fill('Acme Live');
    await form.getByLabel('Password').fill('');
    await form.getByRole('button', { name: 'Create user' }).click();
    await page.getByTestId('user-created').waitFor();
    expect(await page.getByTestId('generated-password').textContent()).toMatch(/^[A-Za-z0-9_-]{20}$/);
    await page.locator('[data-testid="user-row"][data-email="second@acme.test"]').waitFor();
    expect(await form.getByTestId('error-email').count()).toBe(0);

    // A password too easy to guess is refused by the server with zxcvbn's feedback, at the password field.
    await form.getByLabel('E-mail address').fill('third@acme.test');
    await form.getByLabel('Role').selectOption('viewer');
    await form.getByLabel('Password').fill('Tr0ub4dor&3xx');
    await form.getByRole('button', { name: 'Create user' }).click();
    await form.getByTestId('error-password').waitFor();
    expect(await form.getByTestId('error-password').textContent()).toMatch(
      /too easy to guess \(strength \d of 4, 3 needed\): .*published as an example.*A few unrelated words make a strong one/i,
    );
    expect(await page.locator('[data-testid="user-row"][data-email="third@acme.test"]').count()).toBe(0);

    // A server-side refusal lands at its field too: the e-mail is taken.
    await form.getByLabel('E-mail address').fill(ADMIN.email);
    await form.getByLabel('Role').selectOption('viewer');
    await form.getByLabel('Password').fill('a long enough password');
    await form.getByRole('button', { name: 'Create user' }).click();
    await form.getByTestId('error-email').waitFor();
    expect(await form.getByTestId('error-email').textContent()).toContain('already exists');
    await page.screenshot({ path: join(resultsDir, 'console-users.png'), fullPage: true });
  });

  it('sign-out ends the session: the page goes to sign-in and the old cookie no longer works', async () => {
    const [cookie] = (await page.context().cookies()).filter((c) => c.name === 'onsale_console_session');
    await page.getByTestId('sign-out').click();
    await page.waitForURL('**/sign-in');
    const res = await fetch(`${baseUrl}/trpc/events.list`, { headers: { cookie: `${cookie!.name}=${cookie!.value}` } });
    expect(res.status).toBe(401);
    await page.goto(`${baseUrl}/users`);
    await page.waitForURL(/\/sign-in\?redirect=/);
  });

  it("a promoter sees only their organisation's events, no user admin, and is refused another organisation's event", async () => {
    await page.goto(`${baseUrl}/sign-in`);
    await signIn(page, PROMOTER);
    await page.waitForURL(`${baseUrl}/`);
    await page.getByTestId('events-table').waitFor();
    expect(await page.getByTestId('signed-in-role').textContent()).toBe('Promoter · Acme Live');
    expect(await page.getByTestId('event-link').allTextContents()).toEqual([ACME_EVENT_NAME]);
    expect(await page.getByTestId('nav-users').count()).toBe(0);

    await page.goto(`${baseUrl}/events/${eventId}`);
    await page.getByTestId('forbidden').waitFor();
    await page.goto(`${baseUrl}/users`);
    await page.getByTestId('forbidden').waitFor();
    await page.getByTestId('sign-out').click();
    await page.waitForURL('**/sign-in');
  });

  it('logged no errors in the page', () => {
    // Expected refusals, which Chromium logs anyway: the weak password's 400, the unknown event's 404, the wrong
    // password's 401, the promoter's 403 and the taken e-mail's 409.
    expect(pageErrors.filter((m) => !/status of (400|401|403|404|409)/.test(m))).toEqual([]);
  });
});
