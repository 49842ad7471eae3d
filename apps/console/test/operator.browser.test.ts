import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pauseQueue, setRateOverride } from '@onsale/shared/admission';
import { TEST_CARDS } from '@onsale/shared/checkout';
import { sql } from '@onsale/shared/db';
import { AWAITING_SIGNOFF_MESSAGES, parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { createTestDatabase, docsScreenshotDir, type TestDatabase, PAGE_WAIT_MS } from '@onsale/shared/testing';
import { assignEventOrganisation, createUser } from '@onsale/shared/users';
import { cardNumber, eventually, launchChromium, builtConsole, consoleSessions, sideways, VIEWS, startProduct } from './browser-helpers';

// An operator's day, in Chromium at 1440 and at 390 px wide, against the product as `npm start` runs it (the
// store API, the admission controller and the BFF serving a production build of the console) on real PostgreSQL:
// the stall explained, the alert sample rule (a declined card is not a platform error), a control during a
// connection loss, an unsigned event that does not open, a form error summary with focus, the board order, a
// redacted summary, no horizontal overflow at 390 px on any page, and the operations pages (fan support, post-sale
// review, webhooks, users) with their happy paths and their refusals by role. One browser, a context per width and
// role. With UPDATE_SCREENSHOTS=1 the screenshots go to docs/console/, where docs/console.md shows them.

const docsShots = docsScreenshotDir('console');
const ADMIN = { email: 'admin@operator.test', password: 'admin password for the operator test' };
const OPERATOR = { email: 'ops@operator.test', password: 'operator password for the operator test' };
const VIEWER = { email: 'viewer@operator.test', password: 'viewer password for the operator test' };
const PROMOTER = { email: 'pat@acme.test', password: 'promoter password for the operator test' };
const PAUSE_REASON = 'doors delayed by the fire marshal';
const PUBLIC_NOTE = 'Paused while the doors opened late';

let tdb: TestDatabase;
let browser: Browser;
let storeUrl: string;
let stopProduct: (() => Promise<void>) | undefined;
let baseUrl: string;
let distDir: string;
const ids: Record<'live' | 'stalled' | 'unsigned' | 'paused' | 'soon' | 'later', string> = {
  live: '',
  stalled: '',
  unsigned: '',
  paused: '',
  soon: '',
  later: '',
};
let liveListingId: string;
const { pageErrors, contexts, pageAs, release } = consoleSessions(() => ({ browser, baseUrl }));

const minutes = (n: number) => new Date(Date.now() + n * 60_000).toISOString();

async function newEvent(name: string, onsaleInMinutes: number, signOff: boolean): Promise<{ eventId: string; listingId: string }> {
  return tdb.db.transaction().execute((trx) =>
    createEvent(
      trx,
      parseEventFile({
        name,
        venueName: `${name} Hall`,
        timeZone: 'Europe/London',
        onsaleAt: minutes(onsaleInMinutes),
        startsAt: minutes(7 * 24 * 60),
        fairnessMode: 'FIFO',
        // A plan that lets the scripted fans in within seconds (20 seats, one a fan, in a minute).
        pacing: { targetSaleMinutes: 1, ticketsPerOrder: 1 },
        priceLevels: [{ code: 'P1', name: 'Stalls', priceCents: 4_000 }],
        sections: [{ code: 'A', name: 'Stalls', priceLevel: 'P1', qualityRank: 1, rowCount: 2, seatsPerRow: 10 }],
      }),
      'test',
      { signOff },
    ),
  );
}

// The scripted load: fans on the store API over plain HTTP.
interface Fan {
  id: string;
  headers: Record<string, string>;
  queueToken?: string;
  admissionToken?: string;
  holdId?: string;
}

/**
 * One store-API call, retried as a client should when the store sheds load (503 with Retry-After: joins are idempotent
 * per account, holds and checkouts carry an Idempotency-Key), at most five times.
 */
async function storeCall(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(`${storeUrl}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (res.status !== 503 || attempt === 5) return { status: res.status, json };
    await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? 1) * 1000));
  }
}

async function newFan(id: string): Promise<Fan> {
  const login = await storeCall('POST', '/auth/dev-login', {}, { accountId: id });
  expect(login.status).toBe(200);
  return { id, headers: { authorization: `Bearer ${login.json.token as string}`, 'x-device-id': `device-of-${id}` } };
}

async function joinQueue(fan: Fan, eventId: string): Promise<void> {
  const r = await storeCall('POST', `/events/${eventId}/queue`, fan.headers);
  expect(r.status, JSON.stringify(r.json)).toBeLessThan(300);
  fan.queueToken = r.json.queueToken as string;
}

async function statusOf(fan: Fan, eventId: string): Promise<Record<string, unknown>> {
  const r = await storeCall('GET', `/events/${eventId}/queue/status`, { ...fan.headers, 'x-queue-token': fan.queueToken! });
  expect(r.status).toBe(200);
  return r.json;
}

async function admitAndHold(fan: Fan, eventId: string): Promise<void> {
  await joinQueue(fan, eventId);
  const admitted = await eventually(async () => {
    const s = await statusOf(fan, eventId);
    expect(s.state).toBe('ADMITTED');
    return s;
  });
  fan.admissionToken = admitted.admissionToken as string;
  const hold = await storeCall(
    'POST',
    `/events/${eventId}/holds`,
    { ...fan.headers, 'x-admission-token': fan.admissionToken, 'idempotency-key': `hold-${fan.id}` },
    { section: 'A', quantity: 1 },
  );
  expect(hold.status, JSON.stringify(hold.json)).toBe(201);
  fan.holdId = hold.json.holdId as string;
}

async function pay(fan: Fan, card: string, key: string): Promise<{ status: number; json: Record<string, unknown> }> {
  return storeCall(
    'POST',
    `/holds/${fan.holdId}/checkout`,
    { ...fan.headers, 'x-admission-token': fan.admissionToken!, 'idempotency-key': key },
    { payment: { instrument: { type: 'card', number: card } } },
  );
}

/** The page's words, for checking that no raw network error reaches a person. */
const pageText = (page: Page) => page.evaluate(() => document.body.innerText);

beforeAll(async () => {
  distDir = await builtConsole();
  tdb = await createTestDatabase(inject('templateDatabaseUrl'), { max: 4 });
  let live: { eventId: string; listingId: string };
  [live, { eventId: ids.stalled }, { eventId: ids.unsigned }, { eventId: ids.paused }, { eventId: ids.soon }, { eventId: ids.later }] = [
    await newEvent('Live Night', -1, true),
    await newEvent('Stalled Night', -1, true),
    await newEvent('Unsigned Night', -1, false),
    await newEvent('Paused Night', -1, true),
    await newEvent('Soon Night', 30, true),
    await newEvent('Later Night', 3 * 24 * 60, true),
  ];
  ids.live = live.eventId;
  liveListingId = live.listingId;
  await tdb.db.transaction().execute(async (trx) => {
    await createUser(trx, { ...ADMIN, role: 'admin' }, 'test');
    await createUser(trx, { ...OPERATOR, role: 'operator' }, 'test');
    await createUser(trx, { ...VIEWER, role: 'viewer' }, 'test');
    await createUser(trx, { ...PROMOTER, role: 'promoter', organisation: 'Acme Live' }, 'test');
    await assignEventOrganisation(trx, ids.later, 'Acme Live', 'test');
  });
  await setRateOverride(tdb.db, ids.stalled, 0, { actor: OPERATOR.email, reason: 'holding the queue for a stage check' });
  await pauseQueue(tdb.db, ids.paused, { actor: OPERATOR.email, reason: PAUSE_REASON, publicNote: PUBLIC_NOTE });

  // Request limits and the bot gate off, as in the store API's own tests: one loopback client stands for many fans.
  ({ storeUrl, baseUrl, stop: stopProduct } = await startProduct(tdb.db, tdb.url, distDir, 'operator-test'));
  browser = await launchChromium();
  mkdirSync(docsShots, { recursive: true });
});

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await browser?.close();
  await stopProduct?.();
  await tdb?.drop();
});

describe('the console an operator would pick, in Chromium at 1440 and 390 px', () => {
  const fans: Record<string, Fan> = {};

  it('a scripted load: on Live Night two fans pay with one card, one card is declined, one fan holds; fans wait on the stalled and the unsigned events', async () => {
    for (const id of ['live-1', 'live-2', 'live-3', 'live-4', 'stall-1', 'stall-2', 'stall-3', 'unsigned-1']) fans[id] = await newFan(id);
    await Promise.all(['live-1', 'live-2', 'live-3', 'live-4'].map((id) => admitAndHold(fans[id]!, ids.live)));
    const shared = cardNumber(1);
    expect((await pay(fans['live-1']!, shared, 'op-pay-1')).status).toBe(200);
    expect((await pay(fans['live-2']!, shared, 'op-pay-2')).status).toBe(200);
    const declined = await pay(fans['live-3']!, TEST_CARDS.declined, 'op-pay-3');
    expect(declined.json.error).toBe('PAYMENT_DECLINED');
    for (const id of ['stall-1', 'stall-2', 'stall-3']) await joinQueue(fans[id]!, ids.stalled);
    await joinQueue(fans['unsigned-1']!, ids.unsigned);

    // The controller has ticked over every event (Live Night's fans are in): the unsigned sale did not open, and its
    // fan reads why in plain words; nobody on the stalled sale was let in.
    const unsigned = await statusOf(fans['unsigned-1']!, ids.unsigned);
    expect(unsigned.state).toBe('WAITING');
    expect(unsigned.admissionToken).toBeUndefined();
    expect(unsigned.message).toBe(AWAITING_SIGNOFF_MESSAGES.en);
    for (const id of ['stall-1', 'stall-2', 'stall-3']) expect((await statusOf(fans[id]!, ids.stalled)).state).toBe('WAITING');
  });

  for (const view of VIEWS) {
    describe(`at ${view.width} px`, () => {
      let page: Page;

      beforeAll(async () => {
        page = await pageAs(OPERATOR, view);
      });
      afterAll(() => release(page));

      it('the events board puts what needs attention first: paused, live, opening soonest, scheduled, then drafts; each row says its state', async () => {
        await page.getByTestId('events-table').waitFor();
        const rows = page.getByTestId('event-row');
        await expect.poll(() => rows.count()).toBe(6);
        expect(await page.getByTestId('event-link').allTextContents()).toEqual([
          'Paused Night',
          'Live Night',
          'Stalled Night',
          'Soon Night',
          'Later Night',
          'Unsigned Night',
        ]);
        const states = (await page.getByTestId('event-state').allTextContents()).map((s) => s.trim());
        expect(states[0]).toMatch(/^Paused/);
        expect(states[1]).toMatch(/^Live/);
        expect(states[3]).toMatch(/^Opening in \d+ min/);
        expect(states[4]).toMatch(/^Scheduled/);
        expect(states[5]).toMatch(/^Draft/);
        expect(await sideways(page)).toBeLessThanOrEqual(0);
        await page.screenshot({ path: join(docsShots, `events-board-${view.width}.png`), fullPage: true });
      });

      it('the stall is explained: why nobody is let in, what to do, and the time to clear the queue at the current rate', async () => {
        await page.goto(`${baseUrl}/events/${ids.stalled}/war-room`);
        await page.locator('[data-testid="wr-connection"][data-state="live"]').waitFor({ timeout: PAGE_WAIT_MS });
        const why = page.getByTestId('wr-why');
        await expect.poll(() => why.getAttribute('data-code')).toBe('OVERRIDE_ZERO');
        expect(await why.getAttribute('data-stalled')).toBe('true');
        expect(await page.getByTestId('wr-why-sentence').textContent()).toBe(
          'Nobody is let in: an operator set the admission rate to 0 a minute.',
        );
        expect(await page.getByTestId('wr-why-action').textContent()).toBe('Set a rate, or clear the override to follow the plan.');
        expect(await page.getByTestId('wr-clear-queue').textContent()).toBe('At 0 a minute the 3 fans waiting are not let in.');
        expect(await sideways(page)).toBeLessThanOrEqual(0);
        await page.screenshot({ path: join(docsShots, `war-room-stall-${view.width}.png`), fullPage: false });
      });

      it('an unsigned event does not open: the war room and the event page say so before anything else', async () => {
        await page.goto(`${baseUrl}/events/${ids.unsigned}/war-room`);
        await page.locator('[data-testid="wr-connection"][data-state="live"]').waitFor({ timeout: PAGE_WAIT_MS });
        await expect.poll(() => page.getByTestId('wr-state-banner').getAttribute('data-state')).toBe('AWAITING_SIGNOFF');
        expect(await page.getByTestId('wr-state').textContent()).toBe('NOT OPEN — AWAITING FAIRNESS SIGN-OFF');
        expect(await page.getByTestId('wr-why').getAttribute('data-code')).toBe('AWAITING_SIGNOFF');
        await page.getByTestId('signoff-missing').first().waitFor();
        expect(await page.getByTestId('wr-watermark').textContent()).toBe('0');
        await page.goto(`${baseUrl}/events/${ids.unsigned}`);
        await page.getByTestId('signoff-missing').first().waitFor();
        expect(await sideways(page)).toBeLessThanOrEqual(0);
      });

      it("the alert sample rule: a card declined by its issuer is counted as the fan's outcome, not as a payment failure, and raises no alert", async () => {
        // A fan of this width's own is let in, holds and pays with a card its issuer declines (the war room counts the
        // last two minutes).
        const fan = await newFan(`declined-${view.name}`);
        await admitAndHold(fan, ids.live);
        expect((await pay(fan, TEST_CARDS.declined, `op-declined-${view.name}`)).json.error).toBe('PAYMENT_DECLINED');
        await page.goto(`${baseUrl}/events/${ids.live}/war-room`);
        await page.locator('[data-testid="wr-connection"][data-state="live"]').waitFor({ timeout: PAGE_WAIT_MS });
        await expect.poll(() => page.getByTestId('wr-checkout-declined').textContent(), { timeout: PAGE_WAIT_MS }).not.toBe('0');
        expect(await page.getByTestId('wr-checkout-errors').textContent()).toBe('0%');
        expect(await page.locator('[data-testid="wr-checkout-errors-alert"]').count()).toBe(0);
        expect(await page.locator('[data-code="CHECKOUT_ERRORS"]').count()).toBe(0);
        // Hold latency needs 50 holds before it may alert: four holds at the open raise nothing.
        expect(await page.locator('[data-code="HOLD_LATENCY_P99"]').count()).toBe(0);
      });

      it('the whole sale, minute by minute, downloads as CSV', async () => {
        // The worker's monitor writes a minute as it reads the figures; here, one minute as it would.
        await sql`
          INSERT INTO sale_minutes (event_id, minute, state, capacity, available, held, sold, joined, waiting, admitted_through, admitted, controller_rate_per_min,
                                    plan_admits_per_min, rate_override_per_min, checkout_attempts, checkout_failed, checkout_declined, payment_attempts_per_second,
                                    hold_latency_p99_ms, alerts_critical, alerts_warning)
          VALUES (${ids.live}, date_trunc('minute', now()), 'ADMITTING', 20, 16, 2, 2, 4, 0, 4, 4, 10, 10, NULL, 3, 0, 1, 0.05, NULL, 0, 0)
          ON CONFLICT DO NOTHING`.execute(tdb.db);
        await page.reload();
        const panel = page.getByTestId('wr-whole-sale');
        await expect
          .poll(async () => Number(await panel.getAttribute('data-minutes')), { timeout: PAGE_WAIT_MS })
          .toBeGreaterThanOrEqual(1);
        const [csv] = await Promise.all([page.waitForEvent('download'), page.getByTestId('wr-series-csv').click()]);
        expect(csv.suggestedFilename()).toBe(`onsale-series-${ids.live}.csv`);
        const rows = parse<Record<string, string>>(readFileSync(await csv.path(), 'utf8'), { columns: true });
        expect(rows.length).toBeGreaterThanOrEqual(1);
        expect(rows.at(-1)).toMatchObject({ Capacity: '20', 'Cards declined by their issuer': expect.any(String) });
        expect(await sideways(page)).toBeLessThanOrEqual(0);
      });

      it('a control during a connection loss: the controls say they cannot reach the server and send nothing; back online, a pause is confirmed by reading the state back', async () => {
        await page.goto(`${baseUrl}/events/${ids.live}/war-room`);
        await page.locator('[data-testid="wr-connection"][data-state="live"]').waitFor({ timeout: PAGE_WAIT_MS });
        const context = page.context();
        await context.setOffline(true);
        await page.getByTestId('wr-controls-offline').waitFor();
        expect(await page.getByTestId('wr-controls-offline').textContent()).toContain('Cannot reach the server');
        expect(await page.getByTestId('wr-pause').isDisabled()).toBe(true);
        expect(await page.getByTestId('wr-rate').isDisabled()).toBe(true);
        // The figures say they are not live either.
        await expect.poll(() => page.getByTestId('wr-connection').getAttribute('data-state')).toBe('lost');
        expect(await page.getByTestId('wr-area').getAttribute('data-live')).toBe('false');
        expect(await pageText(page)).not.toMatch(/Failed to fetch|NetworkError/);
        await page.getByTestId('wr-title').scrollIntoViewIfNeeded();
        await page.screenshot({ path: join(docsShots, `war-room-connection-lost-${view.width}.png`), fullPage: false });
        await context.setOffline(false);
        await page.locator('[data-testid="wr-connection"][data-state="live"]').waitFor({ timeout: PAGE_WAIT_MS });
        await expect.poll(() => page.getByTestId('wr-pause').isEnabled()).toBe(true);

        // The request is lost on its way (the server never sees it): the page says it cannot tell, then what the
        // server reports.
        await page.route('**/trpc/warRoom.pause*', (route) => route.abort('internetdisconnected'));
        await page.getByTestId('wr-pause').click();
        let dialog = page.getByTestId('wr-dialog-pause');
        await dialog.getByLabel(/Why pause/).fill('testing a lost request');
        await dialog.getByTestId('wr-confirm').click();
        await expect
          .poll(() => dialog.locator('.form-error').textContent())
          .toContain('Could not reach the server. It is not known whether this took effect');
        expect(await pageText(page)).not.toMatch(/Failed to fetch|NetworkError/);
        await dialog.getByRole('button', { name: 'Cancel' }).click();
        await expect.poll(() => page.getByTestId('wr-control-outcome').getAttribute('data-status')).toBe('not-applied');
        expect(await page.getByTestId('wr-control-outcome').textContent()).toContain('did not take effect');
        expect(await page.getByTestId('wr-state').textContent()).toBe('ADMITTING');
        await page.unroute('**/trpc/warRoom.pause*');

        // Reachable again: a pause the server confirms by its state read back; the banner follows the server.
        await page.getByTestId('wr-pause').click();
        dialog = page.getByTestId('wr-dialog-pause');
        await dialog.getByLabel(/Why pause/).fill(`${view.name}: checking the gateway`);
        await dialog.getByTestId('wr-confirm').click();
        await dialog.waitFor({ state: 'detached' });
        await expect.poll(() => page.getByTestId('wr-control-outcome').getAttribute('data-status')).toBe('confirmed');
        await expect.poll(() => page.getByTestId('wr-state').textContent()).toBe('PAUSED');
        await page.getByTestId('wr-resume').click();
        dialog = page.getByTestId('wr-dialog-resume');
        await dialog.getByLabel(/reason/i).fill(`${view.name}: gateway fine`);
        await dialog.getByTestId('wr-confirm').click();
        await dialog.waitFor({ state: 'detached' });
        await expect.poll(() => page.getByTestId('wr-control-outcome').getAttribute('data-status')).toBe('confirmed');
        await expect.poll(() => page.getByTestId('wr-state').textContent()).toBe('ADMITTING');
      });

      it('the publishable summary is redacted: the public note only, no reason, no e-mail; the operator export keeps both', async () => {
        await page.goto(`${baseUrl}/events/${ids.paused}/fairness`);
        await page.getByTestId('fairness-title').waitFor();
        const [md] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-markdown').click()]);
        const published = readFileSync(await md.path(), 'utf8');
        expect(published).toContain(PUBLIC_NOTE);
        expect(published).not.toContain(PAUSE_REASON);
        expect(published).not.toContain(OPERATOR.email);
        const [ops] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-operator-markdown').click()]);
        const operator = readFileSync(await ops.path(), 'utf8');
        expect(operator).toContain(PAUSE_REASON);
        expect(operator).toContain(OPERATOR.email);
        expect(await sideways(page)).toBeLessThanOrEqual(0);
      });

      it("fan support: an account's queue places, holds and orders; release a hold with a reason (audited)", async () => {
        // A hold made now (a hold lives 6 minutes), released from the support page with a reason.
        const fan = await newFan(`support-${view.name}`);
        await admitAndHold(fan, ids.live);
        await page.goto(`${baseUrl}/support?account=${fan.id}`);
        await page.getByTestId('support-holds').waitFor();
        const hold = page.getByTestId('support-hold-row').first();
        {
          await hold.getByTestId('release-hold').click();
          await page.getByTestId('release-hold-reason').fill('fan asked on the phone');
          await page.getByTestId('release-hold-confirm').click();
          // Confirmed by reading the account back: the row says released and offers no release any more.
          await expect.poll(() => hold.textContent(), { timeout: PAGE_WAIT_MS }).toContain('released');
          expect(await hold.getByTestId('release-hold').count()).toBe(0);
          await expect
            .poll(
              async () =>
                (
                  await sql<{
                    n: number;
                  }>`SELECT count(*)::int AS n FROM audit_log WHERE action = 'hold.released' AND details->>'accountId' = ${fan.id}`.execute(
                    tdb.db,
                  )
                ).rows[0]!.n,
            )
            .toBe(1);
        }
        await page.goto(`${baseUrl}/support?account=live-1`);
        await page.getByTestId('support-orders').waitFor();
        expect(await page.getByTestId('support-order-row').count()).toBe(1);
        expect(await sideways(page)).toBeLessThanOrEqual(0);
        await page.screenshot({ path: join(docsShots, `support-${view.width}.png`), fullPage: true });
      });

      it('the post-sale review finds the two orders paid with one card', async () => {
        await page.goto(`${baseUrl}/events/${ids.live}/review`);
        await page.getByTestId('review-summary').waitFor();
        await expect.poll(() => page.getByTestId('review-cluster').count()).toBe(1);
        expect(await page.getByTestId('review-cluster').textContent()).toContain('live-1');
        expect(await sideways(page)).toBeLessThanOrEqual(0);
      });

      it('webhooks: an operator adds an endpoint (the secret shown once)', async () => {
        await page.goto(`${baseUrl}/webhooks`);
        const form = page.getByTestId('webhook-add');
        await form.getByLabel('Receiver URL').fill(`https://hooks.example.test/${view.name}`);
        await form.getByLabel('Listing id').fill(liveListingId);
        await form.getByRole('button', { name: 'Add endpoint' }).click();
        await page.getByTestId('webhook-secret').waitFor();
        await expect.poll(() => page.getByTestId('webhook-endpoint-row').count()).toBeGreaterThanOrEqual(1);
        expect(await sideways(page)).toBeLessThanOrEqual(0);
      });
    });
  }

  it('a form error summary takes focus and links to each field, at both widths', async () => {
    for (const view of VIEWS) {
      const page = await pageAs(ADMIN, view);
      await page.goto(`${baseUrl}/events/new`);
      const form = page.getByTestId('event-form');
      await form.getByRole('button', { name: 'Create event' }).click();
      const summary = page.getByTestId('error-summary');
      await summary.waitFor();
      await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('error-summary');
      const links = summary.locator('a[data-field]');
      expect(await links.count()).toBeGreaterThan(0);
      for (const text of await links.allTextContents()) expect(text).not.toMatch(/Too small|Invalid ISO|expected string/);
      const field = await links.first().getAttribute('data-field');
      await links.first().click();
      await expect
        .poll(() => page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name || document.activeElement?.id))
        .toBe(field);
      expect(await sideways(page)).toBeLessThanOrEqual(0);
      await page.screenshot({ path: join(docsShots, `form-error-summary-${view.width}.png`), fullPage: false });
      await release(page);
    }
  });

  it('users: an admin changes a role and disables and enables a user; an operator, a viewer and a promoter are refused the page and the calls', async () => {
    const admin = await pageAs(ADMIN, VIEWS[1]);
    await admin.goto(`${baseUrl}/users`);
    await admin.getByTestId('users-table').waitFor();
    const row = admin.locator(`[data-testid="user-row"][data-email="${VIEWER.email}"]`);
    await row.getByTestId('user-manage').click();
    await admin.getByTestId('user-disable').click();
    await expect.poll(() => row.getAttribute('data-disabled')).toBe('true');
    await admin.getByTestId('user-enable').click();
    await expect.poll(() => row.getAttribute('data-disabled')).toBe('false');
    expect(await sideways(admin)).toBeLessThanOrEqual(0);
    await release(admin);

    for (const user of [OPERATOR, VIEWER, PROMOTER]) {
      const page = await pageAs(user, VIEWS[1]);
      await page.goto(`${baseUrl}/users`);
      await page.getByTestId('forbidden').waitFor();
      expect(await page.getByTestId('nav-users').count()).toBe(0);
      const r = await page.evaluate(async () => (await fetch('/trpc/users.list')).status);
      expect(r).toBe(403);
      if (user !== OPERATOR) {
        for (const path of ['/support', '/webhooks', `/events/${ids.later}/review`]) {
          await page.goto(`${baseUrl}${path}`);
          await page.getByTestId('forbidden').waitFor();
        }
        const support = await page.evaluate(
          async () => (await fetch(`/trpc/support.lookup?input=${encodeURIComponent(JSON.stringify({ accountId: 'live-1' }))}`)).status,
        );
        expect(support).toBe(403);
      }
      await release(page);
    }
  });

  it('nothing scrolls sideways at 390 px on any page, for an admin (every page) and a promoter', async () => {
    const admin = await pageAs(ADMIN, VIEWS[1]);
    const routes = [
      '/',
      '/war-room',
      '/events/new',
      `/events/${ids.live}`,
      `/events/${ids.live}/edit`,
      `/events/${ids.live}/war-room`,
      `/events/${ids.live}/plan`,
      `/events/${ids.live}/fairness`,
      `/events/${ids.live}/review`,
      '/listings',
      `/listings/${liveListingId}`,
      '/support?account=live-1',
      '/webhooks',
      '/audit-log',
      '/users',
      '/account',
    ];
    const overflowing: string[] = [];
    for (const route of routes) {
      await admin.goto(`${baseUrl}${route}`);
      await admin.locator('main h1').first().waitFor();
      // The war room's figures and charts are drawn once its stream is live.
      if (route.endsWith('/war-room') && route !== '/war-room')
        await admin.locator('[data-testid="wr-connection"][data-state="live"]').waitFor({ timeout: PAGE_WAIT_MS });
      const over = await sideways(admin);
      if (over > 0) overflowing.push(`${route}: ${over}px`);
    }
    const promoter = await pageAs(PROMOTER, VIEWS[1]);
    for (const route of ['/', `/events/${ids.later}`, `/events/${ids.later}/war-room`, '/audit-log', '/account']) {
      await promoter.goto(`${baseUrl}${route}`);
      await promoter.locator('main h1').first().waitFor();
      const over = await sideways(promoter);
      if (over > 0) overflowing.push(`promoter ${route}: ${over}px`);
    }
    await release(promoter);
    // The sign-in page, signed out.
    const signedOut = await browser.newContext({ viewport: { width: 390, height: 844 } });
    contexts.push(signedOut);
    const signInPage = await signedOut.newPage();
    await signInPage.goto(`${baseUrl}/sign-in`);
    await signInPage.getByTestId('sign-in-form').waitFor();
    if ((await sideways(signInPage)) > 0) overflowing.push('/sign-in');
    await release(signInPage);
    expect(overflowing).toEqual([]);

    // The menu folds at phone width, and Sign out is reachable through it.
    await admin.goto(`${baseUrl}/`);
    expect(await admin.getByTestId('sign-out').isVisible()).toBe(false);
    await admin.getByTestId('menu-button').click();
    await admin.getByTestId('sign-out').waitFor({ state: 'visible' });
    await admin.screenshot({ path: join(docsShots, 'menu-390.png'), fullPage: false });
    await release(admin);
  });

  it('logged no errors in the pages but the refusals the role tests asked for', () => {
    expect(pageErrors.filter((m) => !/status of (401|403)/.test(m) && !/ERR_INTERNET_DISCONNECTED|net::ERR/.test(m))).toEqual([]);
  });
});
