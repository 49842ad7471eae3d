import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runScheduledControl, setRateOverride } from '@onsale/shared/admission';
import { sql } from '@onsale/shared/db';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { createTestDatabase, docsScreenshotDir, type TestDatabase, PAGE_WAIT_MS } from '@onsale/shared/testing';
import { setQueueCopy } from '@onsale/shared/sale-setup';
import { assignEventOrganisation, createUser } from '@onsale/shared/users';
import { eventually, launchChromium, builtConsole, consoleSessions, sideways, VIEWS, startProduct } from './browser-helpers';

// Talking to the queue from the war room, in Chromium at 1440 and 390 px wide, against the product as `npm start`
// runs it (the store API, the admission controller and the BFF serving a production build of the console) on real
// PostgreSQL: controls scheduled for a time (and cancelled), the words waiting fans read changed live (a fan's
// next poll reads them), the event's alert history, and the alert receivers page; each confirmed by reading the
// server's state back, audited, refused to the roles the BFF refuses, and nothing wider than a phone at 390 px.
// With UPDATE_SCREENSHOTS=1 the screenshots go to docs/console/.

const docsShots = docsScreenshotDir('console');
const OPERATOR = { email: 'ops@talk.test', password: 'operator password for the talk test' };
const VIEWER = { email: 'viewer@talk.test', password: 'viewer password for the talk test' };
const PROMOTER = { email: 'pat@acme-talk.test', password: 'promoter password for the talk test' };
const ZONE = 'America/New_York';

let tdb: TestDatabase;
let browser: Browser;
let storeUrl: string;
let stopProduct: (() => Promise<void>) | undefined;
let baseUrl: string;
let distDir: string;
let eventId: string;
/** An event with presales, whose controls may be set for one presale's queue. */
let presaleId: string;
const { pageErrors, contexts, pageAs, release } = consoleSessions(() => ({ browser, baseUrl }));

const minutes = (n: number) => new Date(Date.now() + n * 60_000).toISOString();

/** A tRPC mutation sent from the page with its session, as a hand-made request would be: the HTTP status. */
const mutationStatus = (page: Page, path: string, input: unknown) =>
  page.evaluate(
    async ({ path, input }) =>
      (
        await fetch(`/trpc/${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-csrf': '1' },
          body: JSON.stringify(input),
        })
      ).status,
    { path, input },
  );

const auditCount = async (action: string, needle: string) =>
  (
    await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM audit_log WHERE action = ${action} AND details::text LIKE ${`%${needle}%`}`.execute(tdb.db)
  ).rows[0]!.n;

/** A fan waiting in the event's line, polling the store API as the fans' page does. */
async function waitingFan(id: string): Promise<() => Promise<{ state: string; message: string }>> {
  const login = await fetch(`${storeUrl}/auth/dev-login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ accountId: id }),
  });
  const { token } = (await login.json()) as { token: string };
  const headers = { authorization: `Bearer ${token}`, 'x-device-id': `device-of-${id}` };
  const join = await fetch(`${storeUrl}/events/${eventId}/queue`, { method: 'POST', headers });
  expect(join.status).toBeLessThan(300);
  const { queueToken } = (await join.json()) as { queueToken: string };
  return async () =>
    (await (
      await fetch(`${storeUrl}/events/${eventId}/queue/status`, { headers: { ...headers, 'x-queue-token': queueToken } })
    ).json()) as { state: string; message: string };
}

beforeAll(async () => {
  distDir = await builtConsole();
  tdb = await createTestDatabase(inject('templateDatabaseUrl'), { max: 4 });
  ({ eventId } = await tdb.db.transaction().execute((trx) =>
    createEvent(
      trx,
      parseEventFile({
        name: 'Talk Night',
        venueName: 'Talk Hall',
        timeZone: ZONE,
        onsaleAt: minutes(-1),
        startsAt: minutes(7 * 24 * 60),
        fairnessMode: 'FIFO',
        priceLevels: [{ code: 'P1', name: 'Stalls', priceCents: 4_000 }],
        sections: [{ code: 'A', name: 'Stalls', priceLevel: 'P1', qualityRank: 1, rowCount: 2, seatsPerRow: 10 }],
      }),
      'test',
      { signOff: true },
    ),
  ));
  ({ eventId: presaleId } = await tdb.db.transaction().execute((trx) =>
    createEvent(
      trx,
      parseEventFile({
        name: 'Presale Night',
        venueName: 'Talk Hall',
        timeZone: ZONE,
        onsaleAt: minutes(24 * 60),
        startsAt: minutes(7 * 24 * 60),
        fairnessMode: 'FIFO',
        priceLevels: [{ code: 'P1', name: 'Stalls', priceCents: 4_000 }],
        sections: [{ code: 'A', name: 'Stalls', priceLevel: 'P1', qualityRank: 1, rowCount: 2, seatsPerRow: 10 }],
        allocations: [
          {
            code: 'FANCLUB',
            name: 'Fan club',
            share: 0.5,
            access: 'OPEN',
            opensAt: minutes(-30),
            closesAt: minutes(120),
            fairnessMode: 'FIFO',
          },
          { code: 'GENERAL', name: 'General sale' },
        ],
      }),
      'test',
      { signOff: true },
    ),
  ));
  await tdb.db.transaction().execute(async (trx) => {
    await createUser(trx, { ...OPERATOR, role: 'operator' }, 'test');
    await createUser(trx, { ...VIEWER, role: 'viewer' }, 'test');
    await createUser(trx, { ...PROMOTER, role: 'promoter', organisation: 'Acme Talk' }, 'test');
    await assignEventOrganisation(trx, eventId, 'Acme Talk', 'test');
  });
  // Nobody is let in (rate 0): the fans of this test stay WAITING and read the WAITING words.
  await setRateOverride(tdb.db, eventId, 0, { actor: OPERATOR.email, reason: 'holding the line while the words are checked' });
  // The event's alert history as the worker's monitor writes it: one alert that fired and resolved (its FIRING and
  // RESOLVED messages delivered), one still firing.
  await sql`
    INSERT INTO event_alerts (event_id, code, scope, severity, peak_severity, metric, title, action, detail, source, fired_at, last_seen_at, resolved_at)
    VALUES (${eventId}, 'ADMISSIONS_BELOW_PLAN', '', 'warning', 'warning', 'admittedPerMin', 'Fewer fans let in than planned',
            'Check why admissions are below the plan: a pause, a rate override or the controller slowing down.', 'Admitted 0 a minute against a plan of 20.', 'war room rule',
            now() - interval '40 minutes', now() - interval '28 minutes', now() - interval '28 minutes'),
           (${eventId}, 'DRIFT', '', 'critical', 'critical', 'drift', 'Seat counts do not add up',
            'Stop admissions and call the on-call engineer.', 'available + held + sold differs from capacity by 1.', 'inventory invariant',
            now() - interval '5 minutes', now(), NULL)`.execute(tdb.db);

  ({ storeUrl, baseUrl, stop: stopProduct } = await startProduct(tdb.db, tdb.url, distDir, 'talk-test'));
  browser = await launchChromium();
  mkdirSync(docsShots, { recursive: true });
});

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await browser?.close();
  await stopProduct?.();
  await tdb?.drop();
});

describe('talking to the queue from the war room, in Chromium at 1440 and 390 px', () => {
  for (const view of VIEWS) {
    describe(`at ${view.width} px`, () => {
      let page: Page;

      beforeAll(async () => {
        page = await pageAs(OPERATOR, view);
        await page.goto(`${baseUrl}/events/${eventId}/war-room`);
        await page.locator('[data-testid="wr-connection"][data-state="live"]').waitFor({ timeout: PAGE_WAIT_MS });
      });
      afterAll(() => release(page));

      it("schedules a rate change for a time in the venue's zone: a missing reason is named in the error summary; the server lists it; cancelled with a reason, audited", async () => {
        const panel = page.getByTestId('wr-schedules');
        await panel.getByTestId('wr-schedule-open').click();
        const dialog = page.getByTestId('wr-dialog-schedule');
        await dialog.getByLabel('What to do').selectOption('RATE');
        expect(await dialog.getByLabel(/^When/).inputValue()).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/);
        expect(await dialog.locator('label[for="runAt"]').textContent()).toBe(`When (venue time, ${ZONE})`);
        // Two hours ahead on the venue's clock, to the minute.
        const runAt = new Date(Math.ceil((Date.now() + 2 * 3_600_000) / 60_000) * 60_000);
        const wall = new Intl.DateTimeFormat('sv-SE', {
          timeZone: ZONE,
          year: 'numeric',
          month: '2-digit',
          day: '2-digit',
          hour: '2-digit',
          minute: '2-digit',
          hourCycle: 'h23',
        })
          .format(runAt)
          .replace(' ', 'T');
        await dialog.getByLabel(/^When/).fill(wall);
        await dialog.getByLabel('Admits per minute').fill('45');
        await dialog.getByTestId('wr-schedule-confirm').click();

        const summary = dialog.getByTestId('wr-schedule-errors');
        await summary.waitFor();
        await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('wr-schedule-errors');
        expect(await summary.locator('a[data-field]').allTextContents()).toEqual(['Reason: Give a reason.']);
        await dialog.getByLabel(/^Reason/).fill(`${view.name}: the second wave of the presale list`);
        await dialog.getByTestId('wr-schedule-confirm').click();
        await dialog.waitFor({ state: 'detached' });

        // Confirmed by the server's list, at the venue's time.
        await expect
          .poll(() => page.getByTestId('wr-schedule-outcome').getAttribute('data-status'), { timeout: PAGE_WAIT_MS })
          .toBe('confirmed');
        const row = panel
          .locator('[data-testid="wr-schedule-row"][data-status="PENDING"]')
          .filter({ hasText: `${view.name}: the second wave` });
        await row.waitFor();
        expect(await row.getByTestId('wr-schedule-what').textContent()).toBe('Set the rate to 45 a minute');
        const when = row.locator('time');
        expect(await when.getAttribute('data-zone')).toBe(ZONE);
        expect(Date.parse((await when.getAttribute('datetime'))!)).toBe(runAt.getTime());
        expect(await when.textContent()).toMatch(/\b(EST|EDT|GMT-[45])\b/);
        expect(await auditCount('queue.control_scheduled', `${view.name}: the second wave`)).toBe(1);
        expect(await sideways(page)).toBeLessThanOrEqual(0);
        await panel.scrollIntoViewIfNeeded();
        await panel.screenshot({ path: join(docsShots, `war-room-schedules-${view.width}.png`) });

        // Cancelled with a reason: the row reads cancelled once the server says so.
        await row.getByTestId('wr-schedule-cancel').click();
        await row.getByTestId('wr-schedule-cancel-reason').fill('the presale list was merged');
        await row.getByTestId('wr-schedule-cancel-confirm').click();
        const cancelled = panel
          .locator('[data-testid="wr-schedule-row"][data-status="CANCELLED"]')
          .filter({ hasText: `${view.name}: the second wave` });
        await cancelled.waitFor({ timeout: PAGE_WAIT_MS });
        expect(await cancelled.getByTestId('wr-schedule-state').textContent()).toContain(`Cancelled by ${OPERATOR.email}`);
        await expect.poll(() => auditCount('queue.schedule_cancelled', 'the presale list was merged')).toBe(VIEWS.indexOf(view) + 1);
      });

      it('changes the words waiting fans read: an empty state is refused at its field; saved, read back from the server, audited, and a waiting fan reads them on the next poll', async () => {
        const poll = await waitingFan(`talk-fan-${view.name}`);
        const before = await poll();
        expect(before.state).toBe('WAITING');
        const panel = page.getByTestId('wr-words');
        await expect
          .poll(() => panel.locator('[data-testid="wr-words-state"][data-state="WAITING"] .pill').textContent())
          .toContain('fans read this now');
        await panel.getByTestId('wr-words-edit').click();
        const form = panel.getByTestId('wr-words-form');
        const words = `Doors open at 7 (${view.name}). Keep this page open; you keep your place.`;
        await form.getByLabel(/^Waiting in line/).fill('   ');
        await form.getByLabel(/^Reason/).fill(`${view.name}: the doors time changed`);
        await form.getByTestId('wr-words-save').click();
        const summary = form.getByTestId('wr-words-errors');
        await summary.waitFor();
        expect(await summary.locator('a[data-field]').allTextContents()).toEqual(['Waiting in line (English): Write the words fans read.']);
        await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('wr-words-errors');
        await summary.locator('a[data-field]').first().click();
        await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('words.en.WAITING');
        await form.getByLabel(/^Waiting in line/).fill(words);
        await form.getByTestId('wr-words-save').click();

        await expect
          .poll(() => panel.getByTestId('wr-words-outcome').getAttribute('data-status'), { timeout: PAGE_WAIT_MS })
          .toBe('confirmed');
        expect(await panel.getByTestId('wr-words-outcome').textContent()).toContain('one state’s words changed');
        expect(
          await panel.locator('[data-testid="wr-words-state"][data-state="WAITING"] [data-testid="wr-words-text"]').textContent(),
        ).toBe(words);
        expect(await auditCount('event.queue_copy_changed', `${view.name}: the doors time changed`)).toBe(1);
        // The fan's next poll (the store API re-reads the words with the watermark, every 500 ms).
        await eventually(async () => expect((await poll()).message).toBe(words));
        expect(await sideways(page)).toBeLessThanOrEqual(0);
        await panel.scrollIntoViewIfNeeded();
        await panel.screenshot({ path: join(docsShots, `war-room-words-${view.width}.png`) });
      });

      it("the event's alert history: what fired, when in the venue's zone, for how long, still firing", async () => {
        const history = page.getByTestId('wr-alert-history');
        await expect.poll(() => history.getByTestId('wr-alert-history-row').count(), { timeout: PAGE_WAIT_MS }).toBe(2);
        const resolved = history.locator('[data-testid="wr-alert-history-row"][data-resolved="true"]');
        expect(await resolved.getByTestId('wr-alert-history-title').textContent()).toBe('Fewer fans let in than planned');
        expect(await resolved.getByTestId('wr-alert-history-lasted').textContent()).toBe('12 min');
        expect(await resolved.locator('time').getAttribute('data-zone')).toBe(ZONE);
        const firing = history.locator('[data-testid="wr-alert-history-row"][data-resolved="false"]');
        expect(await firing.getByTestId('wr-alert-history-lasted').textContent()).toBe('still firing');
        // The rule's reference is a details line, not the alert's words.
        expect(await firing.getByTestId('wr-alert-history-title').textContent()).toBe('Seat counts do not add up');
        expect(await sideways(page)).toBeLessThanOrEqual(0);
        await history.scrollIntoViewIfNeeded();
        await history.screenshot({ path: join(docsShots, `war-room-alert-history-${view.width}.png`) });
      });

      it('alert receivers: an operator adds one for the event (the secret shown once), turns it off and on (confirmed by the server), and reads its messages', async () => {
        await page.getByTestId('wr-alert-receivers-link').click();
        await page.waitForURL(`${baseUrl}/alerts`);
        const form = page.getByTestId('alert-receiver-add');
        await form.getByLabel('Receiver URL').fill('slack.example/not-a-url');
        await form.getByTestId('alert-receiver-add-submit').click();
        await page.getByTestId('error-summary').waitFor();
        expect(await page.getByTestId('error-summary').locator('a[data-field]').allTextContents()).toEqual([
          'Receiver URL: Enter a web address starting with https:// (or http://)',
        ]);
        const url = `https://hooks.slack.example/services/${view.name}`;
        await form.getByLabel('Receiver URL').fill(url);
        await form.getByLabel('Event').selectOption({ label: 'Talk Night' });
        await form.getByLabel('Send').selectOption('critical');
        await form.getByTestId('alert-receiver-add-submit').click();
        await page.getByTestId('alert-receiver-secret').waitFor();
        const row = page.locator(`[data-testid="alert-receiver-row"][data-url="${url}"]`);
        await row.waitFor({ timeout: PAGE_WAIT_MS });
        expect(await row.textContent()).toContain('Talk Night: critical alerts only');
        expect(await auditCount('alerts.receiver_added', url)).toBe(1);

        // One message of the firing alert, as the worker's delivery job leaves it.
        await sql`
          INSERT INTO alert_deliveries (endpoint_id, alert_id, kind, status, attempts, last_status_code, delivered_at)
          SELECT e.id, a.id, 'FIRING', 'DELIVERED', 1, 200, now() FROM alert_endpoints e, event_alerts a WHERE e.url = ${url} AND a.code = 'DRIFT'`.execute(
          tdb.db,
        );
        await row.getByTestId('alert-receiver-messages').click();
        const deliveries = page.getByTestId('alert-deliveries');
        await expect.poll(() => deliveries.getByTestId('alert-delivery-row').count(), { timeout: PAGE_WAIT_MS }).toBe(1);
        expect(await deliveries.getByTestId('alert-delivery-row').textContent()).toContain('Talk Night: “Seat counts do not add up” fired');

        await row.getByTestId('alert-receiver-off').click();
        await expect
          .poll(() => page.getByTestId('alert-receiver-outcome').getAttribute('data-status'), { timeout: PAGE_WAIT_MS })
          .toBe('confirmed');
        expect(await row.getAttribute('data-active')).toBe('false');
        expect(await page.getByTestId('alert-receiver-outcome').textContent()).toContain('as off');
        expect(await auditCount('alerts.receiver_disabled', url)).toBe(1);
        expect(await sideways(page)).toBeLessThanOrEqual(0);
        await page.screenshot({ path: join(docsShots, `alert-receivers-${view.width}.png`), fullPage: true });
        await row.getByTestId('alert-receiver-on').click();
        await expect.poll(() => row.getAttribute('data-active'), { timeout: PAGE_WAIT_MS }).toBe('true');
        await expect.poll(() => page.getByTestId('alert-receiver-outcome').getAttribute('data-status')).toBe('confirmed');
      });
    });
  }

  it('a scheduled pause runs at its time: the row says it ran and the war room reads PAUSED from the server; resumed from the button', async () => {
    const page = await pageAs(OPERATOR, VIEWS[0]);
    await page.goto(`${baseUrl}/events/${eventId}/war-room`);
    await page.locator('[data-testid="wr-connection"][data-state="live"]').waitFor({ timeout: PAGE_WAIT_MS });
    // While the server cannot be reached, nothing is scheduled or saved from the page.
    await page.context().setOffline(true);
    await page.getByTestId('wr-controls-offline').waitFor({ timeout: PAGE_WAIT_MS });
    expect(await page.getByTestId('wr-schedule-open').isDisabled()).toBe(true);
    expect(await page.getByTestId('wr-words-edit').isDisabled()).toBe(true);
    await page.context().setOffline(false);
    await page.locator('[data-testid="wr-connection"][data-state="live"]').waitFor({ timeout: PAGE_WAIT_MS });
    await expect.poll(() => page.getByTestId('wr-schedule-open').isEnabled(), { timeout: PAGE_WAIT_MS }).toBe(true);
    await page.getByTestId('wr-schedule-open').click();
    const dialog = page.getByTestId('wr-dialog-schedule');
    // The time the dialog offers (ten minutes ahead on the venue's clock) is kept.
    await dialog.getByLabel(/^Reason/).fill('doors check before the second wave');
    await dialog.getByTestId('wr-schedule-confirm').click();
    await dialog.waitFor({ state: 'detached' });
    await expect
      .poll(() => page.getByTestId('wr-schedule-outcome').getAttribute('data-status'), { timeout: PAGE_WAIT_MS })
      .toBe('confirmed');
    const row = page.locator('[data-testid="wr-schedule-row"]').filter({ hasText: 'doors check before the second wave' });
    expect(await row.getByTestId('wr-schedule-what').textContent()).toBe('Pause admissions');
    // The worker's job runs it at its time; here the test runs it now instead of waiting ten minutes.
    const ran = await runScheduledControl(tdb.db, Number(await row.getAttribute('data-id')));
    expect(ran?.status).toBe('DONE');
    await expect.poll(() => row.getAttribute('data-status'), { timeout: PAGE_WAIT_MS }).toBe('DONE');
    expect(await row.getByTestId('wr-schedule-state').textContent()).toMatch(/^Ran \d{2}:\d{2}/);
    await expect.poll(() => page.getByTestId('wr-state').textContent(), { timeout: PAGE_WAIT_MS }).toBe('PAUSED');
    expect(await page.getByTestId('wr-paused-by').textContent()).toContain('doors check before the second wave (scheduled by');
    await page.getByTestId('wr-resume').click();
    const resume = page.getByTestId('wr-dialog-resume');
    await resume.getByLabel(/reason/i).fill('doors checked');
    await resume.getByTestId('wr-confirm').click();
    await expect
      .poll(() => page.getByTestId('wr-control-outcome').getAttribute('data-status'), { timeout: PAGE_WAIT_MS })
      .toBe('confirmed');
    await release(page);
  });

  it("a control scheduled for one presale's queue", async () => {
    const page = await pageAs(OPERATOR, VIEWS[1]);
    await page.goto(`${baseUrl}/events/${presaleId}/war-room`);
    await page.getByTestId('wr-schedule-open').click();
    const dialog = page.getByTestId('wr-dialog-schedule');
    await dialog.getByLabel('Which queue').selectOption('FANCLUB');
    await dialog.getByLabel(/^Reason/).fill('the fan club list closes early');
    await dialog.getByTestId('wr-schedule-confirm').click();
    await dialog.waitFor({ state: 'detached' });
    await expect
      .poll(() => page.getByTestId('wr-schedule-outcome').getAttribute('data-status'), { timeout: PAGE_WAIT_MS })
      .toBe('confirmed');
    expect(await page.getByTestId('wr-schedule-what').textContent()).toBe('Pause admissions (presale FANCLUB)');
    expect(await sideways(page)).toBeLessThanOrEqual(0);
    await release(page);
  });

  it('a promoter changes the words; a change someone saved meanwhile is not overwritten: the save is refused with a way to load the current words', async () => {
    const page = await pageAs(PROMOTER, VIEWS[0]);
    await page.goto(`${baseUrl}/events/${eventId}/war-room`);
    const panel = page.getByTestId('wr-words');
    await panel.getByTestId('wr-words-edit').click();
    const form = panel.getByTestId('wr-words-form');
    const version = Number(await panel.getAttribute('data-version'));
    // An operator saves other words meanwhile.
    const theirs = 'The line is paused while the doors are checked. You keep your place.';
    await tdb.db
      .transaction()
      .execute((trx) =>
        setQueueCopy(trx, { eventId, expectedVersion: version, words: { en: { PAUSED: theirs } }, reason: 'doors check' }, OPERATOR.email),
      );
    await form.getByLabel(/^Line paused/).fill('Paused for a moment: the promoter’s words.');
    await form.getByLabel(/^Reason/).fill('our own tone');
    await form.getByTestId('wr-words-save').click();
    const error = form.getByTestId('wr-words-error');
    await error.waitFor({ timeout: PAGE_WAIT_MS });
    expect(await error.textContent()).toContain('someone changed this event since you opened the words');
    await form.getByTestId('wr-words-reload').click();
    await expect.poll(() => form.getByLabel(/^Line paused/).inputValue()).toBe(theirs);
    const ours = `${theirs} Thank you for waiting.`;
    await form.getByLabel(/^Line paused/).fill(ours);
    await form.getByLabel(/^Reason/).fill('our own tone, on top of the doors check');
    await form.getByTestId('wr-words-save').click();
    await expect.poll(() => panel.getByTestId('wr-words-outcome').getAttribute('data-status'), { timeout: PAGE_WAIT_MS }).toBe('confirmed');
    expect(await panel.locator('[data-testid="wr-words-state"][data-state="PAUSED"] [data-testid="wr-words-text"]').textContent()).toBe(
      ours,
    );
    expect(await auditCount('event.queue_copy_changed', 'our own tone, on top')).toBe(1);
    await release(page);
  });

  it('refusals by role: a viewer reads the schedules, the words and the alert history but changes nothing; a promoter changes the words but schedules nothing; neither manages alert receivers', async () => {
    const phone = VIEWS[1];
    const viewer = await pageAs(VIEWER, phone);
    await viewer.goto(`${baseUrl}/events/${eventId}/war-room`);
    await viewer.locator('[data-testid="wr-connection"][data-state="live"]').waitFor({ timeout: PAGE_WAIT_MS });
    await viewer.getByTestId('wr-schedule-row').first().waitFor();
    await viewer.getByTestId('wr-words-state').first().waitFor();
    await expect.poll(() => viewer.getByTestId('wr-alert-history-row').count()).toBe(2);
    expect(await viewer.getByTestId('wr-schedule-open').count()).toBe(0);
    expect(await viewer.getByTestId('wr-schedule-cancel').count()).toBe(0);
    expect(await viewer.getByTestId('wr-words-edit').count()).toBe(0);
    expect(await viewer.getByTestId('wr-schedules').textContent()).toContain('Admins and operators schedule controls.');
    expect(await viewer.getByTestId('wr-alert-receivers-link').count()).toBe(0);
    expect(await sideways(viewer)).toBeLessThanOrEqual(0);
    const version = Number(await viewer.getByTestId('wr-words').getAttribute('data-version'));
    const words = { eventId, expectedVersion: version, words: { en: { WAITING: 'a viewer was here' } }, reason: 'not allowed' };
    const schedule = { eventId, action: 'PAUSE', runAt: minutes(60), reason: 'not allowed' };
    expect(await mutationStatus(viewer, 'warRoom.setQueueCopy', words)).toBe(403);
    expect(await mutationStatus(viewer, 'warRoom.schedule', schedule)).toBe(403);
    expect(await mutationStatus(viewer, 'warRoom.addAlertReceiver', { url: 'https://hooks.example/viewer' })).toBe(403);
    await viewer.goto(`${baseUrl}/alerts`);
    await viewer.getByTestId('forbidden').waitFor();
    expect(await viewer.getByTestId('nav-alerts').count()).toBe(0);
    await release(viewer);

    const promoter = await pageAs(PROMOTER, phone);
    await promoter.goto(`${baseUrl}/events/${eventId}/war-room`);
    await promoter.locator('[data-testid="wr-connection"][data-state="live"]').waitFor({ timeout: PAGE_WAIT_MS });
    await promoter.getByTestId('wr-words-edit').waitFor();
    expect(await promoter.getByTestId('wr-schedule-open').count()).toBe(0);
    expect(await mutationStatus(promoter, 'warRoom.schedule', schedule)).toBe(403);
    expect(
      await mutationStatus(promoter, 'warRoom.setAlertReceiverActive', { id: '00000000-0000-4000-8000-000000000000', active: false }),
    ).toBe(403);
    await promoter.goto(`${baseUrl}/alerts`);
    await promoter.getByTestId('forbidden').waitFor();
    // Nothing the refused calls asked for happened.
    expect(await auditCount('event.queue_copy_changed', 'not allowed')).toBe(0);
    expect(await auditCount('queue.control_scheduled', 'not allowed')).toBe(0);
    await release(promoter);
  });

  it('logged no errors in the pages but the refusals the role and stale tests asked for', () => {
    expect(pageErrors.filter((m) => !/status of (401|403|409)/.test(m) && !/ERR_INTERNET_DISCONNECTED|net::ERR/.test(m))).toEqual([]);
  });
});
