import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildBff } from '@onsale/bff';
import { sql } from '@onsale/shared/db';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { createTestDatabase, docsScreenshotDir, type TestDatabase } from '@onsale/shared/testing';
import { createUser } from '@onsale/shared/users';
import { builtConsole, consoleSessions, launchChromium, sideways, VIEWS, type View } from './browser-helpers';

// What a promoter and a support agent stumbled on, in Chromium at 1440 and 390 px on real PostgreSQL (the BFF serving
// a production build of the console): a show time and an on-sale that have passed refused at their fields as they
// are typed, "Open the sale now", the questions asked before Create (a free price, no fairness sign-off); a GBP
// event's money in pounds on every console page that shows money; support finding an order by the reference the fan
// reads, by e-mail and by name, cancelling it from the order's page and refunding it there (the audit log saying
// how much, in pounds). Screenshots go to docs/console/ only when asked.

const ADMIN = { email: 'admin@forms.test', password: 'admin password for the forms test' };
const shots = docsScreenshotDir('console');

let tdb: TestDatabase;
let browser: Browser;
let app: Awaited<ReturnType<typeof buildBff>>;
let baseUrl: string;
let gbpEventId: string;
const orders: Partial<Record<View['name'], { id: string; reference: string; email: string }>> = {};
const { pageErrors, contexts, pageAs, release } = consoleSessions(() => ({ browser, baseUrl }));

const days = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString();
/** A datetime-local value in UTC (the pages run in UTC and the form's zone is set to UTC). */
const local = (ms: number) => new Date(ms).toISOString().slice(0, 16);

/** A paid order of `n` seats of the GBP event for `accountId` (the checkout's rows, written as checkout writes them). */
async function paidOrder(accountId: string, n: number, card: string): Promise<string> {
  await sql`INSERT INTO accounts (id) VALUES (${accountId}) ON CONFLICT DO NOTHING`.execute(tdb.db);
  const { rows } = await sql<{ id: string }>`
    INSERT INTO holds (event_id, account_id, section_code, quantity, status, expires_at)
    VALUES (${gbpEventId}, ${accountId}, 'STALLS', ${n}, 'PURCHASED', now() + interval '5 min') RETURNING id`.execute(tdb.db);
  const holdId = rows[0]!.id;
  await sql`UPDATE seats SET status = 'SOLD', hold_id = ${holdId}, expires_at = NULL
            WHERE id IN (SELECT id FROM seats WHERE event_id = ${gbpEventId} AND status = 'AVAILABLE' ORDER BY id LIMIT ${n})`.execute(
    tdb.db,
  );
  const o = await sql<{ id: string }>`
    INSERT INTO orders (hold_id, event_id, account_id, idempotency_key, seat_count, amount_cents, instrument_fingerprint, payment_reference)
    VALUES (${holdId}, ${gbpEventId}, ${accountId}, ${`k-${holdId}`}, ${n}, ${n * 6_000}, ${card}, ${`sim_${holdId}`}) RETURNING id`.execute(
    tdb.db,
  );
  return o.rows[0]!.id;
}

/** The money shown in the page's main content: every amount, to check its currency. */
const moneyTexts = (page: Page) =>
  page.evaluate(() => (document.querySelector('main') ?? document.body).innerText.match(/[£$€][\d,.]+|[\d,.]+\s?[£$€]/g) ?? []);

beforeAll(async () => {
  const distDir = await builtConsole();
  tdb = await createTestDatabase(inject('templateDatabaseUrl'), { max: 4 });
  await tdb.db.transaction().execute((trx) => createUser(trx, { ...ADMIN, role: 'admin' }, 'test'));
  ({ eventId: gbpEventId } = await tdb.db.transaction().execute((trx) =>
    createEvent(
      trx,
      parseEventFile({
        name: 'London Pounds Night',
        venueName: 'Wigmore Rooms',
        timeZone: 'Europe/London',
        currency: 'GBP',
        onsaleAt: days(-1),
        startsAt: days(30),
        priceLevels: [{ code: 'P1', name: 'Stalls', priceCents: 6_000 }],
        sections: [{ code: 'STALLS', name: 'Stalls', priceLevel: 'P1', qualityRank: 1, rowCount: 4, seatsPerRow: 10 }],
      }),
      'test',
      { signOff: true },
    ),
  ));
  for (const view of VIEWS) {
    const email = `maya.${view.name}@fans.test`;
    // Two accounts paying with one card: the post-sale review shows them as a cluster, with its money.
    const id = await paidOrder(email, 2, `card-${view.name}`);
    // The name the fan's identity provider gave (the store API keeps a token's `name` claim with the account).
    await sql`UPDATE accounts SET display_name = ${`Maya Okafor ${view.name}`} WHERE id = ${email}`.execute(tdb.db);
    await paidOrder(`other.${view.name}@fans.test`, 1, `card-${view.name}`);
    orders[view.name] = { id, reference: id.slice(0, 8).toUpperCase(), email };
  }
  app = await buildBff({ db: tdb.db, consoleDir: distDir });
  await app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined); // a context the browser already lost: nothing to close
  await browser?.close();
  await app?.close();
  await tdb?.drop();
});

describe.each(VIEWS)('console forms at $width px', (view) => {
  let page: Page;
  beforeAll(async () => {
    page = await pageAs(ADMIN, view);
  });
  afterAll(() => release(page));

  it('refuses a show time and an on-sale that have passed at their fields; "Open the sale now"; asks before Create about a free price and no sign-off', async () => {
    const name = `Tonight Only ${view.name}`;
    await page.goto(`${baseUrl}/events/new`);
    const form = page.getByTestId('event-form');
    await form.getByLabel('Venue time zone').selectOption('UTC');
    await form.getByLabel('Event name').fill(name);
    await form.getByLabel('Venue', { exact: true }).fill('Corner Stage');
    await form.getByLabel('Show starts').fill('2025-01-01T20:00');
    await form.getByLabel('On sale from').fill('2025-01-01T10:00');
    // At the fields as typed, before anything is sent.
    expect(await page.getByTestId('error-startsAt').textContent()).toBe(
      'This time has passed: enter when the show starts, later than now.',
    );
    expect(await page.getByTestId('error-onsaleAt').textContent()).toBe(
      'This time has passed: choose when the sale opens, later than now, or open the sale now.',
    );
    expect(await sideways(page)).toBe(0);
    await page.screenshot({ path: join(shots, `event-form-past-${view.width}.png`), fullPage: false });

    await form.getByLabel('Show starts').fill(local(Date.now() + 14 * 86_400_000));
    expect(await page.getByTestId('error-startsAt').count()).toBe(0);
    await form.getByTestId('open-now').click();
    await page.getByTestId('onsale-now').waitFor();
    expect(await page.getByTestId('error-onsaleAt').count()).toBe(0);

    const level = form.getByTestId('price-level-row').first();
    await level.getByLabel('Code').fill('FREE');
    await level.getByLabel('Name').fill('Guest list');
    await level.getByLabel('Price (USD)').fill('0');
    const section = form.getByTestId('section-editor').first();
    await section.getByLabel('Code').fill('FLOOR');
    await section.getByLabel('Price level').selectOption('FREE');
    await section.getByLabel('Rows', { exact: true }).fill('2');
    await section.getByLabel('Seats per row').fill('5');
    await form.getByRole('button', { name: 'Create event' }).click();

    // Asked first; nothing is written until the promoter says so.
    const warnings = page.getByTestId('create-warnings');
    await warnings.waitFor();
    expect(await warnings.getByTestId('create-warning').evaluateAll((ws) => ws.map((w) => w.getAttribute('data-code')))).toEqual([
      'FREE_PRICE_LEVEL',
      'FAIRNESS_NOT_SIGNED_OFF',
    ]);
    expect(await warnings.textContent()).toContain('The price level "Guest list" costs nothing');
    expect(await tdb.db.selectFrom('events').select('id').where('name', '=', name).execute()).toEqual([]);
    await page.getByTestId('create-anyway').click();
    await page.waitForURL(/\/events\/[0-9a-f-]{36}$/);
    const row = await tdb.db.selectFrom('events').select(['onsale_at', 'starts_at']).where('name', '=', name).executeTakeFirstOrThrow();
    // "Now" is the moment of Create: within the last minutes, not the 2025 that was typed first.
    expect(Date.now() - row.onsale_at.getTime()).toBeGreaterThanOrEqual(0);
    expect(Date.now() - row.onsale_at.getTime()).toBeLessThan(5 * 60_000);
  });

  it('a GBP event shows pounds on every page that shows money: the event, support, the order, the post-sale review', async () => {
    const o = orders[view.name]!;
    const pages: [string, string][] = [
      [`/events/${gbpEventId}`, 'sections-table'],
      [`/support?account=${encodeURIComponent(o.email)}`, 'support-orders'],
      [`/support?q=${o.reference}`, 'support-found-orders'],
      [`/orders/${o.id}`, 'order-amount'],
      [`/events/${gbpEventId}/review`, 'review-cluster'],
    ];
    for (const [path, testId] of pages) {
      await page.goto(`${baseUrl}${path}`);
      await page.getByTestId(testId).first().waitFor();
      const money = await moneyTexts(page);
      expect(money.length, path).toBeGreaterThan(0);
      expect(
        money.filter((m) => !m.includes('£')),
        path,
      ).toEqual([]);
      expect(await sideways(page), path).toBe(0);
    }
    expect(await page.getByTestId('review-cluster').first().textContent()).toContain('£180.00');
  });

  it('support finds an order by the reference the fan reads, by e-mail and by name, cancels it and refunds it from its page', async () => {
    const o = orders[view.name]!;
    await page.goto(`${baseUrl}/support`);
    const lookup = page.getByTestId('support-lookup');
    await lookup.getByLabel('Order reference, name, e-mail or account id').fill(`#${o.reference.toLowerCase()}`);
    await lookup.getByRole('button', { name: 'Find' }).click();
    const found = page.locator(`[data-testid="support-found-order"][data-order-id="${o.id}"]`);
    await found.waitFor();
    expect(await found.getByTestId('order-reference').textContent()).toBe(o.reference);
    expect(await found.textContent()).toContain('£120.00');
    await page.screenshot({ path: join(shots, `support-reference-${view.width}.png`), fullPage: true });

    // By e-mail: the account, then its orders with their references.
    await lookup.getByLabel('Order reference, name, e-mail or account id').fill(o.email.toUpperCase());
    await lookup.getByRole('button', { name: 'Find' }).click();
    await page.getByTestId('support-found-account').filter({ hasText: o.email }).click();
    const orderRow = page.locator(`[data-testid="support-order-row"][data-order-id="${o.id}"]`);
    await orderRow.waitFor();
    expect(await orderRow.getByTestId('order-reference').textContent()).toBe(o.reference);
    await orderRow.getByTestId('order-reference').click();

    await page.getByTestId('order-page').waitFor();
    expect(await page.getByTestId('order-page-reference').textContent()).toBe(o.reference);
    expect(await page.getByTestId('order-amount').textContent()).toBe('£120.00');
    expect(await sideways(page)).toBe(0);
    await page.getByTestId('cancel-order').click();
    await page.getByTestId('cancel-order-reason').fill('fan asked on the phone');
    await page.getByTestId('cancel-order-confirm').click();
    await expect.poll(() => page.getByTestId('order-status').textContent()).toBe('Cancelled');
    await page.screenshot({ path: join(shots, `order-cancelled-${view.width}.png`), fullPage: true });
    const row = await tdb.db.selectFrom('orders').select('status').where('id', '=', o.id).executeTakeFirstOrThrow();
    expect(row.status).toBe('CANCELLED');
    const audited = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM audit_log WHERE action = 'order.cancel' AND details->>'orderId' = ${o.id}
        AND details->>'reason' = 'fan asked on the phone' AND actor = ${ADMIN.email}`.execute(tdb.db);
    expect(audited.rows[0]!.n).toBe(1);

    // By name, in part and in any case: the account with its name, then its whole picture under that name.
    await page.goto(`${baseUrl}/support`);
    await lookup.getByLabel('Order reference, name, e-mail or account id').fill(`okafor ${view.name}`.toUpperCase());
    await lookup.getByRole('button', { name: 'Find' }).click();
    await page
      .getByTestId('support-found-account')
      .filter({ hasText: `Maya Okafor ${view.name}` })
      .click();
    await expect.poll(() => page.getByTestId('support-account-name').textContent()).toBe(`Maya Okafor ${view.name}`);

    // The cancelled order is refunded from its page, confirmed with a reason, and read back.
    await page.goto(`${baseUrl}/orders/${o.id}`);
    await page.getByTestId('order-page').waitFor();
    expect(await page.getByTestId('order-account').textContent()).toBe(`Maya Okafor ${view.name}`);
    expect(await page.getByTestId('refund-order').textContent()).toBe('Refund £120.00');
    await page.getByTestId('refund-order').click();
    expect(await page.getByTestId('refund-order-form').textContent()).toContain('£120.00 goes back to the fan');
    await page.getByTestId('refund-order-reason').fill('show moved, fan cannot come');
    await page.getByTestId('refund-order-confirm').click();
    await expect.poll(() => page.getByTestId('order-status').textContent()).toBe('Cancelled and refunded');
    expect(await page.getByTestId('order-refunded').textContent()).toMatch(/^£120\.00 on /);
    expect(await page.getByTestId('refund-order').count()).toBe(0);
    expect(await sideways(page)).toBe(0);
    await page.screenshot({ path: join(shots, `order-refunded-${view.width}.png`), fullPage: true });
    const refunded = await tdb.db.selectFrom('orders').select(['status', 'refunded_at']).where('id', '=', o.id).executeTakeFirstOrThrow();
    expect(refunded.status).toBe('CANCELLED');
    expect(refunded.refunded_at).not.toBeNull();

    // The audit log says how much, in pounds, never in pence.
    await page.goto(`${baseUrl}/audit-log?action=order.refund`);
    const entry = page.getByTestId('audit-row').filter({ hasText: 'show moved, fan cannot come' }).first();
    await entry.waitFor();
    expect(await entry.textContent()).toContain('£120.00 refunded');
    expect(await entry.textContent()).not.toContain('minor units');
    expect(await sideways(page)).toBe(0);
  });
});

it('logged no page errors', () => {
  expect(pageErrors).toEqual([]);
});
