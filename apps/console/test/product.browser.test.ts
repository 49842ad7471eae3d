import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { planAdmission } from '@onsale/shared/admission';
import { createTestDatabase, freePort, type TestDatabase, PAGE_WAIT_MS } from '@onsale/shared/testing';
import { cardNumber, eventually, launchChromium, numberAt, signIn } from './browser-helpers';

// The console end to end, against the product started as the README says: `npm start` (scripts/start.ts,
// run by node itself so the process stopped at the end is the product's) on a fresh database given as DATABASE_URL,
// on free ports, building the console it serves; the first admin made with the CLI's user:create. Then in Chromium:
// sign in, create an event from the form, watch the war room while a scripted load joins and holds through the
// store API, pause and read PAUSED from the store API's status route, resume, download the audit summary, and a
// promoter of another organisation is refused the event. Nothing is built in-process: every call crosses HTTP.

const root = fileURLToPath(new URL('../../..', import.meta.url));
const screenshots = fileURLToPath(new URL('./screenshots', import.meta.url));
const resultsDir = join(root, '.test-results');
const ADMIN_EMAIL = 'admin@product.test';
const ACME = { email: 'pat@acme.test', password: 'acme promoter password', organisation: 'Acme Live' };
const RIVAL = { email: 'sam@rival.test', password: 'rival promoter password', organisation: 'Rival Live' };
const EVENT_NAME = 'Product Run Night';
/** The event the form creates: one 10 x 20 section, a plan that admits quickly enough for a test. */
const SEATS = 200;
const PACING = { seats: SEATS, ticketsPerOrder: 2, targetSaleMinutes: 1, overbookFactor: 1.3, checkoutMinutes: 6, paymentTps: 1000 };
const FANS = 8;
const PAYING = 3;
const PAUSE_REASON = 'payment provider returning 429s';
/** What the operator chose to tell the public about the pause: the only word of it the publishable summary carries. */
const PUBLIC_NOTE = 'Paused while the payment provider recovered';

let tdb: TestDatabase;
let product: ChildProcess | undefined;
let productExit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
let output = '';
let workDir: string;
let storeUrl: string;
let consoleUrl: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let admin: { email: string; password: string };
let eventId: string;
const pageErrors: string[] = [];

/** The environment an operator's shell would give `npm start` and the CLI: this one without the test runner's. */
function operatorEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('VITEST') || k === 'NODE_ENV' || k === 'TEST_DATABASE_URL') delete env[k];
  // As scripts/bootstrap.mjs runs the workspace's binaries: node_modules/.bin first on PATH.
  return { ...env, PATH: `${join(root, 'node_modules', '.bin')}${delimiter}${env.PATH ?? ''}`, ...extra };
}

/** Runs a workspace entry point with node itself (tsx as a loader, no wrapper process), from the repository root. */
function node(entry: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', join(root, entry), ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** `npm run onsale -- <args>` against the product's database: scripts/bootstrap.mjs runs apps/cli/src/main.ts. */
function onsale(args: string[], extra: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = node('apps/cli/src/main.ts', args, operatorEnv({ DATABASE_URL: tdb.url, ...extra }));
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Waits until the product has printed something matching `pattern`; fails at once if it exits first. */
async function printed(pattern: RegExp, ms: number): Promise<RegExpMatchArray> {
  const end = Date.now() + ms;
  let exited = false;
  void productExit.then(() => (exited = true));
  for (;;) {
    const m = output.match(pattern);
    if (m) return m;
    if (exited) throw new Error(`npm start exited before printing ${pattern}:\n${output}`);
    if (Date.now() > end) throw new Error(`npm start did not print ${pattern} within ${ms / 1000} s:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Stops the product as Ctrl-C would (SIGTERM), and by SIGKILL if it is still there after `ms`. */
async function stopProduct(ms = 30_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const child = product!;
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), ms);
  try {
    return await productExit;
  } finally {
    clearTimeout(timer);
  }
}

beforeAll(async () => {
  tdb = await createTestDatabase(inject('templateDatabaseUrl'), { max: 2 });
  workDir = mkdtempSync(join(tmpdir(), 'onsale-product-'));
  const [storePort, bffPort] = [await freePort(), await freePort()];
  // `npm start` is `node scripts/bootstrap.mjs start`, which installs what is missing and runs scripts/start.ts.
  // The console is built by the start itself, into a directory of this run's own (CONSOLE_DIR, new and empty):
  // other browser tests build into apps/console/dist and may run at the same time.
  product = node(
    'scripts/start.ts',
    [],
    operatorEnv({
      DATABASE_URL: tdb.url,
      STORE_API_PORT: String(storePort),
      BFF_PORT: String(bffPort),
      CONSOLE_DIR: join(workDir, 'console'),
    }),
  );
  productExit = new Promise((resolve) => product!.once('exit', (code, signal) => resolve({ code, signal })));
  product.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  product.stderr!.on('data', (d: Buffer) => (output += d.toString()));

  await printed(/Ctrl-C to stop\./, 240_000);
  storeUrl = (await printed(/^store API\s+(http:\/\/\S+)/m, 0))[1]!;
  consoleUrl = (await printed(/^console\s+(http:\/\/\S+?)\/?\s/m, 0))[1]!;

  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, timezoneId: 'UTC', acceptDownloads: true });
  page = await context.newPage();
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text());
  });
  mkdirSync(screenshots, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  if (product) await stopProduct(20_000);
  // What the product printed, for reading after a failure.
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'product-start.log'), output);
  await tdb?.drop();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

// The scripted load: fans on the store API over plain HTTP, each signed in by the development sign-in on a device of
// their own, sending what a browser sends (the default bot gate then lets them join without a challenge).
const BROWSER_HEADERS = {
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36',
  accept: 'application/json',
  'accept-language': 'en-GB,en;q=0.9',
};

interface Fan {
  id: string;
  headers: Record<string, string>;
  queueToken?: string;
  admissionToken?: string;
  holdId?: string;
}

/**
 * A request to the store API as a fan's page makes it: a 503 (the product as `npm start` runs it sheds load on a
 * loaded machine, before any work) is sent again after its Retry-After, up to ten times.
 */
async function store(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown>; retryAfter: number }> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${storeUrl}${path}`, {
      method,
      headers: { ...BROWSER_HEADERS, ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = {
      status: res.status,
      json: (await res.json()) as Record<string, unknown>,
      retryAfter: Number(res.headers.get('retry-after') ?? 1),
    };
    if (answer.status !== 503 || attempt >= 10) return answer;
    await new Promise((r) => setTimeout(r, Math.min(10, answer.retryAfter) * 1000));
  }
}

async function newFan(n: number): Promise<Fan> {
  const id = `product-fan-${n}`;
  const login = await store('POST', '/auth/dev-login', {}, { accountId: id });
  expect(login.status).toBe(200);
  return { id, headers: { authorization: `Bearer ${login.json.token as string}`, 'x-device-id': `device-of-${id}-0001` } };
}

async function joinQueue(fan: Fan): Promise<void> {
  const r = await store('POST', `/events/${eventId}/queue`, fan.headers);
  expect(r.status, JSON.stringify(r.json)).toBeLessThan(300);
  fan.queueToken = r.json.queueToken as string;
}

/** The store API's status route for this fan's place in line. */
async function queueStatus(fan: Fan): Promise<{ status: number; json: Record<string, unknown>; retryAfter: number }> {
  return store('GET', `/events/${eventId}/queue/status`, { ...fan.headers, 'x-queue-token': fan.queueToken! });
}

/** Polls the status route about once a second (slower when told to by a 429) until the fan reads `state`. */
async function untilState(fan: Fan, state: string, ms = 90_000): Promise<Record<string, unknown>> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    const r = await queueStatus(fan);
    if (r.status === 200 && r.json.state === state) return r.json;
    last = { status: r.status, ...r.json };
    if (Date.now() > end) throw new Error(`${fan.id} never read ${state} from the status route; last answer ${JSON.stringify(last)}`);
    await new Promise((res) => setTimeout(res, r.status === 429 ? r.retryAfter * 1000 : 1000));
  }
}

/** Signed-in calls to the BFF as the browser's session: the session cookie of the page's context. */
async function bffAsPage(path: string, init: RequestInit = {}): Promise<{ status: number; body: string }> {
  const cookie = (await context.cookies(consoleUrl)).map((c) => `${c.name}=${c.value}`).join('; ');
  const res = await fetch(`${consoleUrl}${path}`, { ...init, headers: { ...(init.headers as Record<string, string>), cookie } });
  return { status: res.status, body: await res.text() };
}

const trpcQuery = (name: string, input?: unknown) =>
  `/trpc/${name}${input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`}`;

async function signOut(): Promise<void> {
  await page.getByTestId('sign-out').click();
  await page.waitForURL('**/sign-in');
}

/** Opens the war room's control dialog `kind`, gives the reason, confirms, and waits for the dialog to close. */
async function control(kind: 'pause' | 'resume', reason: string, publicNote?: string): Promise<void> {
  await page.getByTestId(`wr-${kind}`).click();
  const dialog = page.getByTestId(`wr-dialog-${kind}`);
  await dialog.waitFor();
  await dialog.getByLabel(/reason|Why pause/i).fill(reason);
  if (publicNote !== undefined) await dialog.getByTestId('wr-public-note').fill(publicNote);
  await dialog.getByTestId('wr-confirm').click();
  await dialog.waitFor({ state: 'detached' });
}

describe('the product as `npm start` runs it, in Chromium', () => {
  const fans: Fan[] = [];
  let late: Fan;

  it('prints its URLs, answers its health checks and serves the built console; it says how to create the first admin', async () => {
    expect(output).toContain('database: DATABASE_URL');
    expect(output).toContain('building the console (first start only)');
    expect(output).toContain('no console users yet');
    expect(output).toContain('npm run onsale -- user:create --email you@example.com --role admin');
    expect((await fetch(`${storeUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${consoleUrl}/healthz`)).status).toBe(200);
    const index = await fetch(`${consoleUrl}/`);
    expect(index.status).toBe(200);
    expect(await index.text()).toMatch(/<script type="module"[^>]*src="\/assets\//);
  });

  it('the first admin is made with the CLI (user:create prints a generated password once), the promoters too; the admin signs in', async () => {
    const created = await onsale(['user:create', '--email', ADMIN_EMAIL, '--role', 'admin']);
    expect(created.code, created.stderr).toBe(0);
    const user = JSON.parse(created.stdout) as { email: string; role: string; password: string };
    expect(user).toMatchObject({ email: ADMIN_EMAIL, role: 'admin' });
    expect(created.stderr).toContain('shown only this once');
    admin = { email: ADMIN_EMAIL, password: user.password };
    for (const p of [ACME, RIVAL]) {
      const r = await onsale(['user:create', '--email', p.email, '--role', 'promoter', '--organisation', p.organisation], {
        ONSALE_PASSWORD: p.password,
      });
      expect(r.code, r.stderr).toBe(0);
    }

    await page.goto(`${consoleUrl}/`);
    await page.waitForURL(/\/sign-in/);
    await signIn(page, admin);
    await page.waitForURL(`${consoleUrl}/`);
    expect(await page.getByTestId('signed-in-user').textContent()).toBe(ADMIN_EMAIL);
    expect(await page.getByTestId('signed-in-role').textContent()).toBe('Admin');
  });

  it('creates an event from the form (on sale since a minute ago) and the store API serves it', async () => {
    await page.getByTestId('nav-new-event').click();
    await page.waitForURL('**/events/new');
    const form = page.getByTestId('event-form');
    const local = (ms: number) => new Date(ms).toISOString().slice(0, 19); // the page runs in UTC
    await form.getByLabel('Event name').fill(EVENT_NAME);
    await form.getByLabel('Venue', { exact: true }).fill('Product Hall');
    await form.getByLabel('Show starts').fill(local(Date.now() + 30 * 86_400_000));
    await form.getByLabel('On sale from').fill(local(Date.now() - 60_000));
    const level = form.getByTestId('price-level-row').first();
    await level.getByLabel('Code').fill('P1');
    await level.getByLabel('Name').fill('Floor');
    await level.getByLabel('Price (USD)').fill('50.00');
    const section = form.getByTestId('section-editor').first();
    await section.getByLabel('Code').fill('FLR');
    await section.getByLabel('Name').fill('Floor');
    await section.getByLabel('Price level').selectOption('P1');
    await section.getByLabel('Rows', { exact: true }).fill('10');
    await section.getByLabel('Seats per row').fill('20');
    await form.getByLabel('Target sale duration (minutes)').fill(String(PACING.targetSaleMinutes));
    await form.getByLabel('Tickets per order').fill(String(PACING.ticketsPerOrder));
    await page.getByTestId('sign-off-on-create').check();
    await form.getByRole('button', { name: 'Create event' }).click();
    await page.waitForURL(/\/events\/[0-9a-f-]{36}$/);
    expect(await page.getByTestId('event-name').textContent()).toBe(EVENT_NAME);
    eventId = page.url().split('/').pop()!;
    expect(await numberAt(page, 'count-capacity')).toBe(SEATS);

    const pub = await store('GET', `/events/${eventId}`, {});
    expect(pub.status).toBe(200);
    expect(pub.json).toMatchObject({ name: EVENT_NAME });
    // An admin's event is the house's; the README's way to give it to a promoter's organisation is the CLI.
    const given = await onsale(['event:organisation', eventId, '--organisation', ACME.organisation]);
    expect(given.code, given.stderr).toBe(0);
  });

  it("the plan preview shows the form's pacing inputs and follows a change (screenshot)", async () => {
    await page.getByTestId('link-plan').click();
    await page.waitForURL(`**/events/${eventId}/plan`);
    await page.getByTestId('plan-title').waitFor();
    const plan = planAdmission({ ...PACING, holdTtlMinutes: [6, 15] });
    await eventually(async () => expect(await numberAt(page, 'plan-admits')).toBe(Math.round(plan.admitsPerMinute)));
    expect(await numberAt(page, 'plan-shoppers')).toBe(Math.round(plan.concurrentShoppers));
    expect(await numberAt(page, 'plan-stranded')).toBe(Math.round(plan.strandedSeatsByHoldTtl![0]!.strandedSeats));
    const inputs = page.getByTestId('plan-inputs');
    await inputs.getByLabel('A hold lasts (min)').fill('15');
    await eventually(async () =>
      expect(await numberAt(page, 'plan-stranded')).toBe(Math.round(plan.strandedSeatsByHoldTtl![1]!.strandedSeats)),
    );
    await inputs.getByLabel('A hold lasts (min)').fill('6');
    await page.locator('[data-testid="plan-stranded-chart"] .recharts-surface').waitFor();
    await page.locator('[data-testid="plan-preview"][data-valid="true"]').waitFor();
    await page.screenshot({ path: join(screenshots, 'product-plan-preview.png'), fullPage: true });
  });

  it('the war room updates without a reload while a scripted load joins, is admitted, holds and pays through the store API (screenshot)', async () => {
    await page.getByTestId('link-war-room').click();
    await page.waitForURL(`**/events/${eventId}/war-room`);
    await page.locator('[data-testid="wr-connection"][data-state="live"]').waitFor({ timeout: PAGE_WAIT_MS });
    await eventually(async () => expect(await page.getByTestId('wr-state').textContent()).toBe('ADMITTING'));
    expect(await numberAt(page, 'wr-joined')).toBe(0);
    expect(await numberAt(page, 'wr-available')).toBe(SEATS);
    // A mark in the page's memory: a reload or a navigation would lose it.
    await page.evaluate(() => Object.assign(window, { productTestMark: 'same page' }));
    const navigations: string[] = [];
    page.on('framenavigated', (f) => navigations.push(f.url()));

    for (let n = 0; n < FANS; n++) fans.push(await newFan(n));
    for (const fan of fans) await joinQueue(fan);
    await eventually(async () => expect(await numberAt(page, 'wr-joined')).toBe(FANS));

    // Each fan polls until admitted, then holds two seats.
    await Promise.all(
      fans.map(async (fan) => {
        fan.admissionToken = (await untilState(fan, 'ADMITTED')).admissionToken as string;
        const hold = await store(
          'POST',
          `/events/${eventId}/holds`,
          { ...fan.headers, 'x-admission-token': fan.admissionToken },
          { section: 'FLR', quantity: 2 },
        );
        expect(hold.status, JSON.stringify(hold.json)).toBe(201);
        fan.holdId = hold.json.holdId as string;
      }),
    );
    await eventually(async () => {
      expect(await numberAt(page, 'wr-held')).toBe(2 * FANS);
      expect(await numberAt(page, 'wr-available')).toBe(SEATS - 2 * FANS);
      expect(await numberAt(page, 'wr-waiting')).toBe(0);
    });

    for (const [i, fan] of fans.slice(0, PAYING).entries()) {
      const paid = await store(
        'POST',
        `/holds/${fan.holdId}/checkout`,
        { ...fan.headers, 'x-admission-token': fan.admissionToken!, 'idempotency-key': `product-checkout-${i}` },
        { payment: { instrument: { type: 'card', number: cardNumber(i) } } },
      );
      expect(paid.status, JSON.stringify(paid.json)).toBe(200);
    }
    await eventually(async () => {
      expect(await numberAt(page, 'wr-sold')).toBe(2 * PAYING);
      expect(await numberAt(page, 'wr-held')).toBe(2 * (FANS - PAYING));
      expect(await numberAt(page, 'wr-watermark')).toBeGreaterThanOrEqual(FANS);
    });
    expect(await numberAt(page, 'wr-drift')).toBe(0);
    // Hold latency is scraped from the product's own store API /metrics.
    await eventually(async () => expect(await page.getByTestId('wr-hold-p99').textContent()).toMatch(/\d+ ms/));

    expect(navigations).toEqual([]);
    expect(await page.evaluate(() => (window as unknown as { productTestMark?: string }).productTestMark)).toBe('same page');
    await eventually(
      async () => expect(Number(await page.getByTestId('wr-inventory-chart').getAttribute('data-points'))).toBeGreaterThan(3),
      30_000,
    );
    await page.locator('[data-testid="wr-area"][data-live="true"]').waitFor();
    await page.screenshot({ path: join(screenshots, 'product-war-room.png'), fullPage: true });
  });

  it("pauses with a reason: the page shows PAUSED and the store API's status route tells a fan in line PAUSED", async () => {
    late = await newFan(99);
    await control('pause', PAUSE_REASON, PUBLIC_NOTE);
    await eventually(async () => expect(await page.getByTestId('wr-state').textContent()).toBe('PAUSED'));
    expect(await page.getByTestId('wr-paused-by').textContent()).toContain(`Paused by ${ADMIN_EMAIL}`);
    expect(await page.getByTestId('wr-paused-by').textContent()).toContain(PAUSE_REASON);

    await joinQueue(late);
    const paused = await untilState(late, 'PAUSED');
    expect(paused.admissionToken).toBeUndefined();
    await eventually(async () => expect(await numberAt(page, 'wr-joined')).toBe(FANS + 1));
    await page.screenshot({ path: join(screenshots, 'product-war-room-paused.png'), fullPage: true });
  });

  it('resumes with a reason: the fan who waited through the pause is admitted', async () => {
    await control('resume', 'gateway healthy again');
    await eventually(async () => expect(await page.getByTestId('wr-state').textContent()).toBe('ADMITTING'));
    const admitted = await untilState(late, 'ADMITTED');
    expect(typeof admitted.admissionToken).toBe('string');
    await eventually(async () => expect(await numberAt(page, 'wr-waiting')).toBe(0));
  });

  it('downloads the publishable summary (Markdown, JSON: nothing private, the public note) and the complete operator export from the fairness audit page; the CLI verifies and agrees', async () => {
    await page.getByTestId('link-fairness').click();
    await page.waitForURL(`**/events/${eventId}/fairness`);
    await page.getByTestId('fairness-title').waitFor();
    const fairness = await store('GET', `/events/${eventId}/fairness`, {});
    expect(fairness.status).toBe(200);
    const commitment = fairness.json.seedCommitment as string;
    expect(fairness.json.seed).toEqual(expect.any(String));
    expect(await page.getByTestId('seed-commitment').textContent()).toBe(commitment);

    // The publishable summary: what fans and the press may read. The pause is there with its public note only.
    const [md] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-markdown').click()]);
    expect(md.suggestedFilename()).toBe(`onsale-audit-${eventId}.md`);
    const markdown = readFileSync(await md.path(), 'utf8');
    expect(markdown).toContain(`# On-sale summary: ${EVENT_NAME}`);
    expect(markdown).toContain(`| Seed commitment (published before the open) | \`${commitment}\` |`);
    expect(markdown).toContain(`| Seed | \`${fairness.json.seed as string}\` |`);
    expect(markdown).toContain(PUBLIC_NOTE);
    expect(markdown).not.toContain(PAUSE_REASON);
    expect(markdown).not.toContain(ADMIN_EMAIL);

    const [js] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-json').click()]);
    expect(js.suggestedFilename()).toBe(`onsale-audit-${eventId}.json`);
    const publishedText = readFileSync(await js.path(), 'utf8');
    expect(publishedText).not.toContain(PAUSE_REASON);
    expect(publishedText).not.toContain(ADMIN_EMAIL);
    const summary = JSON.parse(publishedText) as {
      eventId: string;
      fairness: { seedCommitment: string; seed: string | null };
      admissions: { admittedThrough: number; totalAdmissionTokensIssued: number };
      pauses: { pausedAt: string; resumedAt: string | null; pausedSeconds: number | null; note: string | null }[];
      inventory: { capacity: number; sold: number };
    };
    expect(summary.eventId).toBe(eventId);
    expect(summary.fairness).toMatchObject({ seedCommitment: commitment, seed: fairness.json.seed });
    expect(summary.pauses).toEqual([
      { pausedAt: expect.any(String), resumedAt: expect.any(String), pausedSeconds: expect.any(Number), note: PUBLIC_NOTE },
    ]);
    expect(summary.admissions.admittedThrough).toBeGreaterThanOrEqual(FANS + 1);
    // Tokens issued are counted by the store API and flushed every half second: the load's are in by now.
    expect(summary.admissions.totalAdmissionTokensIssued).toBeGreaterThanOrEqual(FANS);
    expect(summary.inventory).toMatchObject({ capacity: SEATS, sold: 2 * PAYING });

    // The operator export (admins and operators): complete, with who paused and why.
    const [ops] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-operator-json').click()]);
    expect(ops.suggestedFilename()).toBe(`onsale-audit-${eventId}-operator.json`);
    const operator = JSON.parse(readFileSync(await ops.path(), 'utf8')) as {
      pauses: { pausedBy: string; reason: string; publicNote: string | null; resumedBy: string | null; resumedAt: string | null }[];
    };
    expect(operator.pauses).toEqual([
      expect.objectContaining({
        pausedBy: ADMIN_EMAIL,
        reason: PAUSE_REASON,
        publicNote: PUBLIC_NOTE,
        resumedBy: ADMIN_EMAIL,
        resumedAt: expect.any(String),
      }),
    ]);

    // "Anyone can check with the CLI": the same publishable summary from audit:summary, and audit:verify passes.
    const cli = await onsale(['audit:summary', eventId, '--format', 'json']);
    expect(cli.code, cli.stderr).toBe(0);
    const fromCli = JSON.parse(cli.stdout) as typeof summary;
    expect(fromCli.fairness).toEqual(summary.fairness);
    expect(fromCli.pauses).toEqual(summary.pauses);
    const verified = await onsale(['audit:verify', eventId]);
    expect(verified.code, `${verified.stdout}\n${verified.stderr}`).toBe(0);
  });

  it("a promoter of another organisation does not see the event and is refused it by the server; the event's own promoter sees it", async () => {
    await signOut();
    await signIn(page, RIVAL);
    await page.waitForURL(`${consoleUrl}/`);
    expect(await page.getByTestId('signed-in-role').textContent()).toBe(`Promoter · ${RIVAL.organisation}`);
    await page.getByTestId('no-events').waitFor();
    expect(await page.getByTestId('event-link').count()).toBe(0);
    await page.goto(`${consoleUrl}/events/${eventId}`);
    await page.getByTestId('forbidden').waitFor();
    await page.goto(`${consoleUrl}/events/${eventId}/war-room`);
    await page.getByTestId('forbidden').waitFor();

    // The server, asked directly with the rival's session: FORBIDDEN, for reads and for controls alike.
    for (const [name, input] of [
      ['events.byId', { id: eventId }],
      ['fairnessAudit.get', { eventId }],
    ] as const) {
      const r = await bffAsPage(trpcQuery(name, input));
      expect(r.status, `${name}: ${r.body}`).toBe(403);
      expect(JSON.parse(r.body)).toMatchObject({ error: { data: { code: 'FORBIDDEN' } } });
    }
    const pause = await bffAsPage('/trpc/warRoom.pause', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf': '1' },
      body: JSON.stringify({ eventId, reason: 'not mine to pause' }),
    });
    expect(pause.status, pause.body).toBe(403);
    const list = await bffAsPage(trpcQuery('events.list'));
    expect(list.status).toBe(200);
    expect(list.body).not.toContain(eventId);

    await signOut();
    await signIn(page, ACME);
    await page.waitForURL(`${consoleUrl}/`);
    await page.getByTestId('events-table').waitFor();
    expect(await page.getByTestId('event-link').allTextContents()).toEqual([EVENT_NAME]);
    await page.goto(`${consoleUrl}/events/${eventId}`);
    expect(await page.getByTestId('event-name').textContent()).toBe(EVENT_NAME);
  });

  it('logged no errors in the page', () => {
    // Expected refusals, which Chromium logs anyway: the signed-out first visit's 401 and the rival's 403s; and, on a
    // machine loaded enough that the product sheds load (as it runs here, with load shedding on), its 503s with
    // Retry-After, which the console retries.
    expect(pageErrors.filter((m) => !/status of (401|403|503)/.test(m))).toEqual([]);
  });

  it('stops on SIGTERM as the README says: servers, worker and pools in order, exit 0', async () => {
    const exit = await stopProduct();
    expect(exit, output).toEqual({ code: 0, signal: null });
    expect(output).toContain('SIGTERM: shutting down...');
    expect(output).toContain('stopped.');
  });
});
