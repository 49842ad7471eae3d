import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
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
  startStack,
  WIDTHS,
  type Stack,
} from './harness';

// What a fan stumbled on (issue 31), in Chromium at 1440 and 390 px against the store API serving the built page, the
// worker's admission controller and PostgreSQL: a GBP event reads £ on every step; being let in is read out in the
// live region; the seat map fits a phone with 44 px seats, one tab stop, arrow keys, and Space that keeps the focus;
// the order confirmation a fan keeps, with its .ics; and a place that follows its fan to a second device.

let stack: Stack;
let browser: Browser;

beforeAll(async () => {
  stack = await startStack(await builtFanPage());
  browser = await launch();
});

afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

const focused = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    return { label: el?.getAttribute('aria-label') ?? null, pressed: el?.getAttribute('aria-pressed') ?? null, testid: el?.dataset.testid };
  });

describe.each([
  ['desktop', WIDTHS.desktop],
  ['phone', WIDTHS.phone],
] as const)('at %s width', (name, size) => {
  it('a GBP event in £ throughout; admission announced; the seat map by keyboard; the order confirmation and its .ics', async () => {
    const startsAt = new Date(Date.now() + 30 * 86_400_000);
    startsAt.setUTCHours(19, 30, 0, 0);
    const eventId = await makeEvent(stack.t, {
      name: `London Night (${name})`,
      currency: 'GBP',
      timeZone: 'Europe/London',
      startsAt: startsAt.toISOString(),
      holds: { ttlSeconds: 420, extensionSeconds: 180 },
    });
    const { page, errors, context } = await fanPage(browser, size);
    await page.goto(`${stack.url}/e/${eventId}`);
    await devSignIn(page, `londoner-${name}`);
    await advanceUntil(page, () => page.getByTestId('seats').isVisible(), 'the seats step');

    // Let in: the polite live region says so, with the event's real turn and hold times (7 minutes, not the default 6).
    const announcer = page.getByTestId('announcer');
    expect(await announcer.getAttribute('aria-live')).toBe('polite');
    await expect.poll(() => announcer.textContent(), { timeout: PAGE_WAIT_MS }).toContain('Your turn.');
    expect(await announcer.textContent()).toContain('You have 10 minutes to choose your seats');
    expect(await announcer.textContent()).toContain('held for you for 7 minutes');
    expect(await page.getByTestId('admitted-message').textContent()).toContain('held for you for 7 minutes');
    expect(await page.getByTestId('admitted-message').textContent()).not.toContain('{');

    // Prices in pounds, written the viewer's way (en-GB).
    expect(await page.getByTestId('section-STALLS').textContent()).toContain('£65.00 each');
    expect(await page.getByTestId('section-CIRCLE').textContent()).toContain('£40.00 each');
    expect(await page.locator('body').textContent()).not.toMatch(/US\$|\$\d/);

    // The seat map: stage, price, 44 px seats, no sideways scrolling, one tab stop.
    await page.getByTestId('section-STALLS').click();
    await page.getByTestId('tab-map').click();
    await page.getByTestId('seat-map').waitFor();
    expect(await page.getByTestId('stage').textContent()).toBe('Stage');
    expect(await page.getByTestId('seat-map-price').textContent()).toContain('£65.00 each');
    await noOverflow(page);
    const box = (await page.getByTestId('seat').first().boundingBox())!;
    expect(box.width).toBeGreaterThanOrEqual(44);
    expect(box.height).toBeGreaterThanOrEqual(44);
    expect(await page.locator('[data-testid="seat"][tabindex="0"]').count()).toBe(1);
    await page.screenshot({ path: join(docsShots, `seat-map-${name}.png`), fullPage: true });

    // Into the grid with Tab from the section chosen; arrows move; Space picks and the focus stays on the seat.
    await page.locator('input[name="section"][value="STALLS"]').focus();
    await page.keyboard.press('Tab');
    expect(await focused(page)).toEqual({ label: 'Row A, seat 1, £65.00', pressed: 'false', testid: 'seat' });
    await page.keyboard.press('Space');
    expect(await focused(page)).toEqual({ label: 'Row A, seat 1, £65.00', pressed: 'true', testid: 'seat' });
    await page.keyboard.press('ArrowRight');
    expect((await focused(page)).label).toBe('Row A, seat 2, £65.00');
    await page.keyboard.press('ArrowDown');
    expect((await focused(page)).label).toBe('Row B, seat 2, £65.00');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press(' ');
    expect(await focused(page)).toEqual({ label: 'Row A, seat 2, £65.00', pressed: 'true', testid: 'seat' });
    await page.keyboard.press('End');
    expect((await focused(page)).label).toBe('Row A, seat 8, £65.00');
    expect(await page.locator('[data-testid="seat"][tabindex="0"]').count()).toBe(1);
    expect(await page.getByTestId('seats-picked').textContent()).toContain('2 seats chosen');
    expect(await page.evaluate(() => window.scrollX)).toBe(0);
    await noOverflow(page);

    // The hold and the payment in pounds.
    await page.getByTestId('find-seats').click();
    await page.getByTestId('hold').waitFor();
    expect(await page.getByTestId('hold-total').textContent()).toBe('£130.00');
    expect(await page.getByTestId('held-seats').textContent()).toContain('£65.00');
    await page.getByTestId('continue-to-pay').click();
    await page.getByTestId('card-number').fill(TEST_CARDS.success);
    expect(await page.getByTestId('pay').textContent()).toBe('Pay £130.00');
    await page.getByTestId('pay').click();
    await page.getByTestId('order').waitFor({ timeout: PAGE_WAIT_MS });

    // The confirmation a fan keeps.
    const orderId = (
      await sql<{ id: string }>`SELECT id FROM orders WHERE event_id = ${eventId} AND status = 'CONFIRMED'`.execute(stack.t.db)
    ).rows[0]!.id;
    const reference = orderId.slice(0, 8).toUpperCase();
    expect(await page.getByTestId('order-id').textContent()).toBe(`Order reference ${reference}`);
    expect(await page.getByTestId('order-show').textContent()).toBe(`London Night (${name})`);
    const when = (await page.getByTestId('order-when').textContent())!;
    for (const part of ['weekday', 'day', 'month', 'year'] as const)
      expect(when).toContain(
        startsAt.toLocaleDateString('en-GB', { [part]: part === 'day' || part === 'year' ? 'numeric' : 'long', timeZone: 'Europe/London' }),
      );
    expect(when).toMatch(/19:30 GMT, the venue's local time/);
    expect(await page.getByTestId('order-venue').textContent()).toBe('The Test Hall');
    expect(await page.getByTestId('order-seats').textContent()).toContain('Section Stalls, row A, seat 1');
    expect(await page.getByTestId('order-seats').textContent()).toContain('Section Stalls, row A, seat 2');
    expect(await page.getByTestId('order-paid').textContent()).toBe('Paid £130.00');
    expect(await page.getByTestId('order-delivery').textContent()).toContain(`londoner-${name}`);
    expect(await page.getByTestId('fairness').count()).toBe(0);
    expect(await page.getByTestId('event-name').locator('..').textContent()).toContain('GMT');
    await noOverflow(page);
    await page.screenshot({ path: join(docsShots, `order-gbp-${name}.png`), fullPage: true });

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('add-to-calendar').click()]);
    expect(download.suggestedFilename()).toBe(`London-Night-${name}.ics`);
    const ics = readFileSync(await download.path(), 'utf8');
    expect(ics).toMatch(/^BEGIN:VCALENDAR\r\n/);
    expect(ics).toContain(`SUMMARY:London Night (${name})`);
    expect(ics).toContain('LOCATION:The Test Hall');
    expect(ics).toContain(
      `DTSTART:${startsAt
        .toISOString()
        .replace(/[-:]/g, '')
        .replace(/\.\d{3}/, '')}`,
    );
    expect(ics.replace(/\r\n /g, '')).toContain(`Order reference ${reference}`);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('a place in line follows its fan to a second device; the first device says the place moved and can bring it back', async () => {
    const eventId = await makeEvent(stack.t, {
      name: `Two Devices (${name})`,
      onsaleAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const fan = `two-devices-${name}`;
    const phone = await fanPage(browser, size);
    await phone.page.goto(`${stack.url}/e/${eventId}`);
    await devSignIn(phone.page, fan);
    await phone.page.getByTestId('queue-card').waitFor();

    const laptop = await fanPage(browser, size);
    await laptop.page.goto(`${stack.url}/e/${eventId}`);
    await devSignIn(laptop.page, fan);
    await laptop.page.getByTestId('queue-card').waitFor();
    expect(await laptop.page.getByTestId('queue-state').getAttribute('data-state')).toBe('WAITING');
    const rows = await sql<{ n: number; moves: number }>`
      SELECT count(*)::int AS n, max(device_moves)::int AS moves FROM queue_entries WHERE event_id = ${eventId} AND account_id = ${fan}`.execute(
      stack.t.db,
    );
    expect(rows.rows[0]).toEqual({ n: 1, moves: 1 });

    // The first device's next poll (brought forward on its clock) learns the place moved, and says so.
    await advanceUntil(phone.page, () => phone.page.getByTestId('place-moved').isVisible(), 'the place moved');
    expect(await phone.page.getByTestId('place-moved').textContent()).toContain('moved to another device where you signed in');
    await expect.poll(() => phone.page.getByTestId('announcer').textContent()).toContain('moved to another device');
    await noOverflow(phone.page);
    await phone.page.screenshot({ path: join(docsShots, `place-moved-${name}.png`), fullPage: true });
    // A reload does not take it back by itself.
    await phone.page.reload();
    await phone.page.getByTestId('place-moved').waitFor();

    // Brought back: the phone has the place again and the laptop is told in turn.
    await phone.page.getByTestId('move-here').click();
    await phone.page.getByTestId('queue-card').waitFor();
    await advanceUntil(laptop.page, () => laptop.page.getByTestId('place-moved').isVisible(), 'the place moved back');
    expect(
      (
        await sql<{
          moves: number;
        }>`SELECT device_moves AS moves FROM queue_entries WHERE event_id = ${eventId} AND account_id = ${fan}`.execute(stack.t.db)
      ).rows[0]!.moves,
    ).toBe(2);
    expect(phone.errors).toEqual([]);
    expect(laptop.errors).toEqual([]);
    await phone.context.close();
    await laptop.context.close();
  });
});
