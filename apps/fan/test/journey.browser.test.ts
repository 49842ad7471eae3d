import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { TEST_CARDS } from '@onsale/shared/checkout';
import { PAGE_WAIT_MS } from '@onsale/shared/testing';
import {
  advanceUntil,
  builtFanPage,
  devSignIn,
  docsShots,
  fanPage,
  launch,
  makeEvent,
  noOverflow,
  openSaleNow,
  startStack,
  WIDTHS,
  type Stack,
} from './harness';

// The fan's way from the link a promoter publishes to a paid order, in Chromium at 1440 and 390 px, against the
// store API serving the built page, the worker's admission controller and PostgreSQL: sign in, join before the open,
// wait, be admitted at the open, hold, extend when payment starts, pay, see the order; and a reload on the way.

let stack: Stack;
let browser: Browser;

beforeAll(async () => {
  const dir = await builtFanPage();
  stack = await startStack(dir);
  browser = await launch();
  mkdirSync(docsShots, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

async function waitForOpen(eventId: string): Promise<void> {
  // The controller seals the pre-open cohort at the open and starts admitting.
  await expect
    .poll(
      async () =>
        (await sql<{ n: number }>`SELECT admitted_through::int AS n FROM queue_state WHERE event_id = ${eventId}`.execute(stack.t.db))
          .rows[0]?.n ?? 0,
      {
        timeout: PAGE_WAIT_MS,
        interval: 250,
      },
    )
    .toBeGreaterThan(0);
}

describe.each([
  ['desktop', WIDTHS.desktop],
  ['phone', WIDTHS.phone],
] as const)('a fan at %s width', (name, size) => {
  it('signs in, joins before the open, waits, is admitted, holds, extends, pays and sees the order; a reload keeps each step', async () => {
    const eventId = await makeEvent(stack.t, { name: `Opening Night (${name})`, onsaleAt: new Date(Date.now() + 3_600_000).toISOString() });
    const { page, errors, context } = await fanPage(browser, size);
    const scripts: { name: string; sent: number; raw: number }[] = [];
    page.on('response', (r) => {
      if (!r.url().endsWith('.js')) return;
      // A script that arrives as the test closes its page (a lazy chunk) has no body to read: not counted, not an error.
      void Promise.all([r.request().sizes(), r.body()]).then(
        ([sizes, body]) => scripts.push({ name: r.url().split('/').pop()!, sent: sizes.responseBodySize, raw: body.length }),
        () => undefined,
      );
    });
    await page.goto(`${stack.url}/e/${eventId}`);
    await page.getByTestId('sign-in').waitFor();
    expect(await page.getByTestId('event-name').textContent()).toBe(`Opening Night (${name})`);
    await page.screenshot({ path: join(docsShots, `sign-in-${name}.png`), fullPage: true });
    await devSignIn(page, `journey-${name}`);

    // Before the open: in line, no place yet (the pre-open cohort is drawn at the open), the rule in plain words.
    const card = page.getByTestId('queue-card');
    await card.waitFor();
    expect(await page.getByTestId('queue-state').getAttribute('data-state')).toBe('WAITING');
    expect(await page.getByTestId('queue-position').getAttribute('data-position')).toBe('');
    await page.getByTestId('opens-in').waitFor();
    expect(await page.getByTestId('fairness').textContent()).toContain('random place at the open');
    expect(await page.getByTestId('fairness-audit').getAttribute('href')).toBe(`/events/${eventId}/fairness`);
    await noOverflow(page);
    await page.screenshot({ path: join(docsShots, `waiting-preopen-${name}.png`), fullPage: true });

    // What the waiting room cost to load: every script the page fetched so far, as sent (compressed) and as run.
    const sent = scripts.reduce((a, r) => a + r.sent, 0);
    const raw = scripts.reduce((a, r) => a + r.raw, 0);
    console.log(
      `waiting room (${name}): ${scripts.length} script(s) ${scripts.map((s) => s.name).join(', ')}: ${(sent / 1024).toFixed(1)} KB sent (gzip), ${(raw / 1024).toFixed(1)} KB raw`,
    );
    expect(scripts.length).toBeGreaterThan(0);
    expect(raw).toBeLessThan(100 * 1024);
    expect(sent).toBeLessThan(35 * 1024);

    // A reload before the open keeps the place (the queue token is on the device; no second join).
    const joins = await sql<{ n: number }>`SELECT count(*)::int AS n FROM queue_entries WHERE event_id = ${eventId}`.execute(stack.t.db);
    await page.reload();
    await card.waitFor();
    expect(await page.getByTestId('queue-state').getAttribute('data-state')).toBe('WAITING');
    expect(
      (await sql<{ n: number }>`SELECT count(*)::int AS n FROM queue_entries WHERE event_id = ${eventId}`.execute(stack.t.db)).rows[0]!.n,
    ).toBe(joins.rows[0]!.n);

    // The open (brought forward to now): the next poll (after Retry-After, skipped on the page's clock) admits the fan.
    await openSaleNow(stack.t, eventId);
    await waitForOpen(eventId);
    await advanceUntil(page, () => page.getByTestId('seats').isVisible(), 'the seats step');
    await noOverflow(page);
    await page.screenshot({ path: join(docsShots, `admitted-${name}.png`), fullPage: true });

    // Best available: two in the stalls.
    await page.getByTestId('section-STALLS').click();
    await page.getByTestId('quantity').selectOption('2');
    await page.getByTestId('find-seats').click();
    await page.getByTestId('hold').waitFor();
    const before = Number(await page.getByTestId('hold-countdown').getAttribute('data-seconds'));
    expect(before).toBeGreaterThan(300);
    expect(before).toBeLessThanOrEqual(362);
    expect(await page.getByTestId('held-seats').locator('li').count()).toBe(2);
    expect(await page.getByTestId('hold-total').textContent()).toContain('130.00');
    await noOverflow(page);
    await page.screenshot({ path: join(docsShots, `hold-${name}.png`), fullPage: true });

    // A reload keeps the hold (read back from the store API).
    await page.reload();
    await page.getByTestId('hold').waitFor();

    // Payment starts: the one extension.
    await page.getByTestId('continue-to-pay').click();
    await page.getByTestId('hold-extended').waitFor();
    const extended = Number(await page.getByTestId('hold-countdown').getAttribute('data-seconds'));
    expect(extended).toBeGreaterThan(before + 120);
    await page.getByTestId('test-cards').waitFor();
    // A declined card first: plain words, the seats stay held.
    await page.getByTestId('card-number').fill(TEST_CARDS.declined);
    await page.getByTestId('pay').click();
    await expect.poll(() => page.getByTestId('refusal').textContent()).toContain('declined');
    await page.getByTestId('card-number').fill(TEST_CARDS.success);
    await page.screenshot({ path: join(docsShots, `pay-${name}.png`), fullPage: true });
    await page.getByTestId('pay').click();
    await page.getByTestId('order').waitFor({ timeout: PAGE_WAIT_MS });
    expect(await page.getByTestId('order-paid').textContent()).toContain('130.00');
    await noOverflow(page);
    await page.screenshot({ path: join(docsShots, `order-${name}.png`), fullPage: true });

    const orders = await sql<{
      n: number;
      seats: number;
    }>`SELECT count(*)::int AS n, coalesce(sum(seat_count), 0)::int AS seats FROM orders WHERE event_id = ${eventId} AND status = 'CONFIRMED'`.execute(
      stack.t.db,
    );
    expect(orders.rows[0]).toEqual({ n: 1, seats: 2 });
    // And after a reload, still the order.
    await page.reload();
    await page.getByTestId('order').waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });
});
