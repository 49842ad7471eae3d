import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { addWebhookEndpointAs } from '@onsale/shared/notify';
import { createTestDatabase, type TestDatabase, PAGE_WAIT_MS } from '@onsale/shared/testing';
import { createUser } from '@onsale/shared/users';
import {
  cardNumber,
  eventually,
  launchChromium,
  builtConsole,
  consoleSessions,
  sideways,
  VIEWS,
  type View,
  startProduct,
} from './browser-helpers';

// Operations pages' changes in Chromium at 1440 and 390 px wide, against the product as `npm start` runs it (the
// store API, the admission controller and the BFF serving a production build of the console) on real PostgreSQL:
// the post-sale review's cluster cancel (a reason required, each order audited, the cluster gone from the review
// read again), a webhook endpoint disabled (a dead delivery cannot be sent to it), enabled and the delivery sent
// again, and an admin changing a user's role (a promoter without an organisation refused at the field). Each page's
// result is what the server answers when read back; nothing scrolls sideways at 390 px.

const ADMIN = { email: 'admin@ops-pages.test', password: 'admin password for the operations test' };
const OPERATOR = { email: 'ops@ops-pages.test', password: 'operator password for the operations test' };
/** Two fans per width who pay with one card: no digits in their ids, so only the card links them. */
const PAIRS: Record<View['name'], [string, string]> = { desktop: ['rowan-desk', 'ellis-desk'], phone: ['rowan-phone', 'ellis-phone'] };

let tdb: TestDatabase;
let browser: Browser;
let storeUrl: string;
let stopProduct: (() => Promise<void>) | undefined;
let baseUrl: string;
let distDir: string;
let eventId: string;
const endpoints: Partial<Record<View['name'], { id: string; url: string; deliveryId: number }>> = {};
const { pageErrors, contexts, pageAs, release } = consoleSessions(() => ({ browser, baseUrl }));

const minutes = (n: number) => new Date(Date.now() + n * 60_000).toISOString();

const auditCount = async (action: string, needle: string) =>
  (
    await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM audit_log WHERE action = ${action} AND details::text LIKE ${`%${needle}%`}`.execute(tdb.db)
  ).rows[0]!.n;

/** One store-API call, retried as a client should when the store sheds load (503 with Retry-After). */
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

/** A fan joins, is let in, holds a seat and pays with `card`. */
async function buyWith(accountId: string, card: string): Promise<void> {
  const login = await storeCall('POST', '/auth/dev-login', {}, { accountId });
  const headers = { authorization: `Bearer ${login.json.token as string}`, 'x-device-id': `device-of-${accountId}` };
  const joined = await storeCall('POST', `/events/${eventId}/queue`, headers);
  expect(joined.status, JSON.stringify(joined.json)).toBeLessThan(300);
  const admitted = await eventually(async () => {
    const s = await storeCall('GET', `/events/${eventId}/queue/status`, { ...headers, 'x-queue-token': joined.json.queueToken as string });
    expect(s.json.state).toBe('ADMITTED');
    return s.json;
  });
  const admission = { ...headers, 'x-admission-token': admitted.admissionToken as string };
  const hold = await storeCall(
    'POST',
    `/events/${eventId}/holds`,
    { ...admission, 'idempotency-key': `hold-${accountId}` },
    { section: 'A', quantity: 1 },
  );
  expect(hold.status, JSON.stringify(hold.json)).toBe(201);
  const paid = await storeCall(
    'POST',
    `/holds/${hold.json.holdId as string}/checkout`,
    { ...admission, 'idempotency-key': `pay-${accountId}` },
    { payment: { instrument: { type: 'card', number: card } } },
  );
  expect(paid.status, JSON.stringify(paid.json)).toBe(200);
}

beforeAll(async () => {
  distDir = await builtConsole();
  tdb = await createTestDatabase(inject('templateDatabaseUrl'), { max: 4 });
  ({ eventId } = await tdb.db.transaction().execute((trx) =>
    createEvent(
      trx,
      parseEventFile({
        name: 'Review Night',
        venueName: 'Review Hall',
        timeZone: 'Europe/London',
        onsaleAt: minutes(-1),
        startsAt: minutes(7 * 24 * 60),
        fairnessMode: 'FIFO',
        // A plan that lets the scripted fans in within seconds.
        pacing: { targetSaleMinutes: 1, ticketsPerOrder: 1 },
        priceLevels: [{ code: 'P1', name: 'Stalls', priceCents: 4_000 }],
        sections: [{ code: 'A', name: 'Stalls', priceLevel: 'P1', qualityRank: 1, rowCount: 2, seatsPerRow: 10 }],
      }),
      'test',
      { signOff: true },
    ),
  ));
  await tdb.db.transaction().execute(async (trx) => {
    await createUser(trx, { ...ADMIN, role: 'admin' }, 'test');
    await createUser(trx, { ...OPERATOR, role: 'operator' }, 'test');
    for (const view of VIEWS)
      await createUser(
        trx,
        { email: `casey-${view.name}@ops-pages.test`, password: 'a password nobody types here', role: 'viewer' },
        'test',
      );
  });
  // A waitlist endpoint per width with one delivery that gave up (as the delivery job leaves it after its attempts).
  for (const view of VIEWS) {
    const url = `https://messages.example/onsale/${view.name}`;
    const e = await addWebhookEndpointAs(tdb.db, { url }, 'test');
    const { rows } = await sql<{ id: string }>`
      INSERT INTO webhook_deliveries (endpoint_id, notification_ids, status, attempts, last_status_code, last_error)
      VALUES (${e.id}, '{}', 'DEAD', 8, 502, 'HTTP 502 after 84 ms') RETURNING id`.execute(tdb.db);
    endpoints[view.name] = { id: e.id, url, deliveryId: Number(rows[0]!.id) };
  }

  ({ storeUrl, baseUrl, stop: stopProduct } = await startProduct(tdb.db, tdb.url, distDir, 'operations-test'));
  browser = await launchChromium();
});

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await browser?.close();
  await stopProduct?.();
  await tdb?.drop();
});

describe('operations pages change things, in Chromium at 1440 and 390 px', () => {
  it('a scripted load: per width, two fans pay with one card', async () => {
    for (const [i, view] of VIEWS.entries()) {
      const card = cardNumber(100 + i);
      for (const id of PAIRS[view.name]) await buyWith(id, card);
    }
  });

  for (const view of VIEWS) {
    describe(`at ${view.width} px`, () => {
      let operator: Page;
      let admin: Page;

      beforeAll(async () => {
        operator = await pageAs(OPERATOR, view);
        admin = await pageAs(ADMIN, view);
      });
      afterAll(() => release(operator, admin));

      it('the post-sale review cancels a cluster: a reason is required; the orders are cancelled, each audited with it, and the review read again no longer lists the cluster', async () => {
        const [first, second] = PAIRS[view.name];
        await operator.goto(`${baseUrl}/events/${eventId}/review`);
        await operator.getByTestId('review-summary').waitFor();
        const cluster = operator.getByTestId('review-cluster').filter({ hasText: first });
        await cluster.waitFor({ timeout: PAGE_WAIT_MS });
        expect(await cluster.textContent()).toContain(second);
        const clusters = await operator.getByTestId('review-cluster').count();

        await cluster.getByTestId('cancel-cluster').click();
        const form = cluster.getByTestId('cancel-cluster-form');
        await form.getByTestId('cancel-cluster-confirm').click();
        await expect.poll(() => form.locator('.field-error').textContent()).toMatch(/^Give a reason/);
        expect(await auditCount('order.cancel', first)).toBe(0);
        await form.getByTestId('cancel-cluster-reason').fill(`${view.name}: one card bought for two accounts`);
        await form.getByTestId('cancel-cluster-confirm').click();

        const done = operator.getByTestId('cluster-cancelled');
        await expect.poll(() => done.getAttribute('data-gone'), { timeout: PAGE_WAIT_MS }).toBe('true');
        expect(await done.textContent()).toContain(`Cancelled 2 orders of`);
        expect(await operator.getByTestId('review-cluster').filter({ hasText: first }).count()).toBe(0);
        expect(await operator.getByTestId('review-cluster').count()).toBe(clusters - 1);
        expect(await auditCount('order.cancel', `${view.name}: one card bought for two accounts`)).toBe(2);
        const { rows } = await sql<{ status: string }>`SELECT status FROM orders WHERE account_id IN (${first}, ${second})`.execute(tdb.db);
        expect(rows.map((r) => r.status)).toEqual(['CANCELLED', 'CANCELLED']);
        expect(await sideways(operator)).toBeLessThanOrEqual(0);
      });

      it('webhooks: an endpoint disabled (its dead delivery cannot be sent), enabled, and the delivery sent again; each audited', async () => {
        const ep = endpoints[view.name]!;
        await operator.goto(`${baseUrl}/webhooks`);
        const row = operator.locator(`[data-testid="webhook-endpoint-row"][data-url="${ep.url}"]`);
        await row.waitFor({ timeout: PAGE_WAIT_MS });
        await row.getByTestId('webhook-disable').click();
        await expect.poll(() => row.getByTestId('webhook-endpoint-state').textContent(), { timeout: PAGE_WAIT_MS }).toBe('Disabled');
        expect(await auditCount('webhook.disabled', ep.id)).toBe(1);

        await operator.getByLabel('Endpoint', { exact: true }).selectOption({ label: ep.url });
        await operator.getByLabel('Status', { exact: true }).selectOption('DEAD');
        const delivery = operator.getByTestId('webhook-delivery-row').filter({ hasText: String(ep.deliveryId) });
        await delivery.waitFor({ timeout: PAGE_WAIT_MS });
        expect(await delivery.textContent()).toContain('HTTP 502');
        await delivery.getByTestId('webhook-redeliver').click();
        const message = operator.getByTestId('webhook-message');
        await expect.poll(() => message.getAttribute('class')).toBe('form-error');
        expect(await message.textContent()).toMatch(/disabled|inactive/i);
        expect(await auditCount('webhook.redelivered', ep.id)).toBe(0);

        await row.getByTestId('webhook-enable').click();
        await expect.poll(() => row.getByTestId('webhook-endpoint-state').textContent(), { timeout: PAGE_WAIT_MS }).toBe('Active');
        await delivery.getByTestId('webhook-redeliver').click();
        await expect.poll(() => message.textContent()).toBe(`Delivery ${ep.deliveryId} queued again.`);
        // The dead-letter list read again no longer has it; the server has it queued.
        await expect.poll(() => delivery.count(), { timeout: PAGE_WAIT_MS }).toBe(0);
        const { rows } = await sql<{ status: string }>`SELECT status FROM webhook_deliveries WHERE id = ${ep.deliveryId}`.execute(tdb.db);
        expect(rows[0]!.status).not.toBe('DEAD');
        expect(await auditCount('webhook.redelivered', ep.id)).toBe(1);
        expect(await auditCount('webhook.enabled', ep.id)).toBe(1);
        expect(await sideways(operator)).toBeLessThanOrEqual(0);
      });

      it('users: an admin changes a role; a promoter without an organisation is refused at the field; the list read again shows the new role, audited', async () => {
        const email = `casey-${view.name}@ops-pages.test`;
        await admin.goto(`${baseUrl}/users`);
        const row = admin.locator(`[data-testid="user-row"][data-email="${email}"]`);
        await row.waitFor({ timeout: PAGE_WAIT_MS });
        expect(await row.getByTestId('user-role').textContent()).toBe('viewer');
        await row.getByTestId('user-manage').click();
        const manage = admin.getByTestId('manage-user');
        await manage.getByLabel('Role').selectOption('promoter');
        await manage.getByTestId('user-change-role').click();
        const summary = manage.getByTestId('error-summary');
        await summary.waitFor();
        expect(await summary.locator('a[data-field]').allTextContents()).toEqual(['Organisation: A promoter needs an organisation.']);
        expect(await row.getByTestId('user-role').textContent()).toBe('viewer');

        await manage.getByLabel('Role').selectOption('operator');
        await manage.getByTestId('user-change-role').click();
        await expect
          .poll(() => manage.getByTestId('manage-done').textContent(), { timeout: PAGE_WAIT_MS })
          .toBe(`${email} is now operator.`);
        await expect.poll(() => row.getByTestId('user-role').textContent(), { timeout: PAGE_WAIT_MS }).toBe('operator');
        expect(await auditCount('console_user.role_changed', email)).toBe(1);
        expect(await sideways(admin)).toBeLessThanOrEqual(0);
      });
    });
  }

  it('logged no errors in the pages', () => {
    expect(pageErrors.filter((m) => !/status of (400|409)/.test(m))).toEqual([]);
  });
});
