import type { Browser, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { TEST_CARDS } from '@onsale/shared/checkout';
import { loadStoreApiConfig } from '@onsale/store-api/env';
import { startLocalEdge, type LocalEdge } from '@onsale/edge/local';
import { PAGE_WAIT_MS } from '@onsale/shared/testing';
import {
  advanceUntil,
  builtFanPage,
  devSignIn,
  fanPage,
  launch,
  makeEvent,
  noOverflow,
  openSaleNow,
  startStack,
  WIDTHS,
  type Stack,
} from './harness';

// The fans' page through the edge, as `npm start -- --edge` serves it: the edge worker on workerd serve in
// front of the store API, the page loaded from the edge's URL in Chromium. A fan joins before the open, waits, is
// admitted, holds, extends and pays through it; every status poll is answered by the edge (X-Onsale-Edge: hit) and
// none reaches the store API; the page and its assets come from the edge's cache once it has them.

let stack: Stack;
let edge: LocalEdge;
let browser: Browser;

beforeAll(async () => {
  const dir = await builtFanPage();
  // Behind the local edge the store API believes its X-Forwarded-For, as npm start -- --edge sets it up.
  const env = { STORE_API_TRUST_PROXY: 'loopback' };
  stack = await startStack(dir, env);
  const config = loadStoreApiConfig({ NODE_ENV: 'test', DEV_AUTH: 'true', FAN_DIR: dir, ...env });
  edge = await startLocalEdge({ storeApiUrl: stack.url, queueTokenSecret: config.queueTokenSecret, authSecret: config.authSecret });
  browser = await launch();
});

afterAll(async () => {
  await browser?.close();
  await edge?.close();
  await stack?.close();
});

/** Requests the store API answered, by route (its own /metrics). */
async function originCounts(): Promise<Map<string, number>> {
  const text = (await stack.app.inject({ method: 'GET', url: '/metrics' })).body;
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^http_request_duration_seconds_count\{.*route="([^"]+)".*\} (\d+)/.exec(line);
    if (m) counts.set(m[1]!, (counts.get(m[1]!) ?? 0) + Number(m[2]));
  }
  return counts;
}

interface Seen {
  url: string;
  method: string;
  status: number;
  edge: string | null;
}

function record(page: { on(ev: 'response', f: (r: Response) => void): void }): Seen[] {
  const seen: Seen[] = [];
  page.on('response', (r) => {
    const url = new URL(r.url());
    seen.push({ url: url.pathname, method: r.request().method(), status: r.status(), edge: r.headers()['x-onsale-edge'] ?? null });
  });
  return seen;
}

describe("the fans' page through the edge", () => {
  it('a fan loads the page from the edge, joins, waits, is admitted, holds, extends and pays; the polls are answered by the edge', async () => {
    const eventId = await makeEvent(stack.t, { name: 'Edge Night', onsaleAt: new Date(Date.now() + 3_600_000).toISOString() });
    const before = await originCounts();
    const { page, errors, context } = await fanPage(browser, WIDTHS.phone);
    const seen = record(page);

    await page.goto(`${edge.url}/e/${eventId}`);
    await page.getByTestId('sign-in').waitFor();
    expect(await page.getByTestId('event-name').textContent()).toBe('Edge Night');
    const document = seen.find((s) => s.url === `/e/${eventId}`)!;
    expect(document).toMatchObject({ status: 200 });
    expect(['miss', 'hit']).toContain(document.edge);
    await devSignIn(page, 'edge-fan');

    // Before the open: in line through the edge.
    await page.getByTestId('queue-card').waitFor();
    expect(await page.getByTestId('queue-state').getAttribute('data-state')).toBe('WAITING');
    expect(seen.find((s) => s.method === 'POST' && s.url === `/events/${eventId}/queue`)).toMatchObject({ status: 200, edge: 'miss' });
    await expect.poll(() => seen.filter((s) => s.url === `/events/${eventId}/queue/status`).length).toBeGreaterThan(0);
    await noOverflow(page);

    // The open: the controller admits, the edge learns it from the origin's state and signs the admission itself.
    await openSaleNow(stack.t, eventId);
    await expect
      .poll(
        async () =>
          (await sql<{ n: number }>`SELECT admitted_through::int AS n FROM queue_state WHERE event_id = ${eventId}`.execute(stack.t.db))
            .rows[0]?.n ?? 0,
        { timeout: PAGE_WAIT_MS, interval: 250 },
      )
      .toBeGreaterThan(0);
    await advanceUntil(page, () => page.getByTestId('seats').isVisible(), 'the seats step');

    await page.getByTestId('section-STALLS').click();
    await page.getByTestId('quantity').selectOption('2');
    await page.getByTestId('find-seats').click();
    await page.getByTestId('hold').waitFor();
    expect(await page.getByTestId('held-seats').locator('li').count()).toBe(2);
    await page.getByTestId('continue-to-pay').click();
    await page.getByTestId('hold-extended').waitFor();
    await page.getByTestId('card-number').fill(TEST_CARDS.success);
    await page.getByTestId('pay').click();
    await page.getByTestId('order').waitFor({ timeout: PAGE_WAIT_MS });
    expect(await page.getByTestId('order-paid').textContent()).toContain('130.00');

    // Every status poll the page made was answered at the edge, and none reached the store API.
    const polls = seen.filter((s) => s.url === `/events/${eventId}/queue/status`);
    expect(polls.length).toBeGreaterThanOrEqual(2);
    expect(polls.every((s) => s.status === 200 && s.edge === 'hit')).toBe(true);
    const after = await originCounts();
    expect(after.get('/events/:id/queue/status') ?? 0).toBe(before.get('/events/:id/queue/status') ?? 0);
    expect(after.get('/events/:id/edge-state') ?? 0).toBeGreaterThan(before.get('/events/:id/edge-state') ?? 0);
    // The way in and the money went to the origin through the edge, unchanged.
    expect(seen.find((s) => s.method === 'POST' && s.url === `/events/${eventId}/holds`)).toMatchObject({ status: 201, edge: 'miss' });
    expect(seen.find((s) => s.method === 'POST' && /^\/holds\/[^/]+\/checkout$/.test(s.url))).toMatchObject({ status: 200, edge: 'miss' });
    const orders = await sql<{
      n: number;
      seats: number;
    }>`SELECT count(*)::int AS n, coalesce(sum(seat_count), 0)::int AS seats FROM orders WHERE event_id = ${eventId} AND status = 'CONFIRMED'`.execute(
      stack.t.db,
    );
    expect(orders.rows[0]).toEqual({ n: 1, seats: 2 });
    expect(errors).toEqual([]);
    await context.close();

    // Another fan (a browser with nothing cached) opens the same link: the page and its scripts come from the edge's
    // cache, and the store API serves none of them again.
    // Counted once the first fan's page is closed: after a purchase it loads its tickets' chunks (the code and its QR)
    // by itself, so what the origin served is read when that page can ask for nothing more.
    const settled = await originCounts();
    const pageServed = settled.get('/e/:eventId') ?? 0;
    const assetsServed = [...settled].filter(([route]) => route.startsWith('/e/assets')).reduce((a, [, n]) => a + n, 0);
    const second = await fanPage(browser, WIDTHS.desktop);
    const seen2 = record(second.page);
    await second.page.goto(`${edge.url}/e/${eventId}`);
    await second.page.getByTestId('sign-in').waitFor();
    expect(await second.page.getByTestId('event-name').textContent()).toBe('Edge Night');
    const fromEdge = seen2.filter((s) => s.url === `/e/${eventId}` || s.url.startsWith('/e/assets/'));
    expect(fromEdge.length).toBeGreaterThan(1);
    expect(
      fromEdge.every((s) => s.status === 200 && s.edge === 'hit'),
      JSON.stringify(fromEdge),
    ).toBe(true);
    const again = await originCounts();
    expect(again.get('/e/:eventId') ?? 0).toBe(pageServed);
    expect([...again].filter(([route]) => route.startsWith('/e/assets')).reduce((a, [, n]) => a + n, 0)).toBe(assetsServed);
    expect(second.errors).toEqual([]);
    await second.context.close();
  });
});
