import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBff } from '@onsale/bff';
import { TEST_CARDS } from '@onsale/shared/checkout';
import { sql } from '@onsale/shared/db';
import { privateKeyOf, signTicketCode, stepOf } from '@onsale/shared/tickets';
import { createUser } from '@onsale/shared/users';
import { docsScreenshotDir, PAGE_WAIT_MS } from '@onsale/shared/testing';
import { builtConsole, cardNumber, signIn } from '../../console/test/browser-helpers';
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
  stateOf,
  WIDTHS,
  type Stack,
} from './harness';

// Issue 29 end to end in Chromium: a fan buys four tickets and reads "arrives on" until the delivery time, then the
// live code; gives one to a friend, whose page shows it with its own code; lists another at face value, which the
// first fan on the waitlist is offered and buys; and the console's door scanner admits the friend's code once, then,
// working offline on a ticket list downloaded before, admits it again and reports the double entry on upload.

const OPERATOR = { email: 'door@tickets-ui.test', password: 'a door password nobody types' };
const consoleShots = docsScreenshotDir('console');

let stack: Stack;
let browser: Browser;
let consoleUrl: string;
let closeBff: () => Promise<void>;

beforeAll(async () => {
  const [fanDir, consoleDir] = [await builtFanPage(), await builtConsole()];
  stack = await startStack(fanDir);
  await stack.t.db.transaction().execute((trx) => createUser(trx, { ...OPERATOR, role: 'operator' }, 'test'));
  const bff = await buildBff({ db: stack.t.db, consoleDir, storeApiUrls: [stack.url] });
  await bff.listen({ port: 0, host: '127.0.0.1' });
  consoleUrl = `http://127.0.0.1:${(bff.server.address() as AddressInfo).port}`;
  closeBff = () => bff.close();
  browser = await launch();
});

afterAll(async () => {
  await browser?.close();
  await closeBff?.();
  await stack?.close();
});

const tickets = (page: Page) => page.getByTestId('my-tickets').getByTestId('ticket');
const ticketsWith = (page: Page, status: string) =>
  page.locator(`[data-testid="my-tickets"] [data-testid="ticket"][data-status="${status}"]`);

/** The fan's turn (the sale is open), best available in the stalls, paid with the test card. */
async function buy(page: Page, quantity: number): Promise<void> {
  await advanceUntil(page, () => page.getByTestId('seats').isVisible(), 'the seats step');
  await page.getByTestId('section-STALLS').click();
  await page.getByTestId('quantity').selectOption(String(quantity));
  await page.getByTestId('find-seats').click();
  await page.getByTestId('hold').waitFor();
  await page.getByTestId('continue-to-pay').click();
  await page.getByTestId('card-number').fill(TEST_CARDS.success);
  await page.getByTestId('pay').click();
  await page.getByTestId('order').waitFor({ timeout: PAGE_WAIT_MS });
}

describe('tickets on the fans’ page and at the door', () => {
  it('arrives on, the live code, a transfer to a friend, a face-value resale to the waitlist, and the door admitting once', async () => {
    const startsAt = new Date(Date.now() + 3 * 86_400_000);
    const eventId = await makeEvent(stack.t, {
      name: 'Ticket Night',
      startsAt: startsAt.toISOString(),
      sections: [{ code: 'STALLS', name: 'Stalls', priceLevel: 'P1', qualityRank: 1, rowCount: 1, seatsPerRow: 4 }],
      tickets: { deliveryHoursBeforeShow: 24, transferLimit: 1, resale: true, resaleFeeCapPercent: 10 },
    });

    // The friend and the waitlisted fan sign in first (a transfer goes to an account that exists).
    const friend = await fanPage(browser, WIDTHS.phone);
    await friend.page.goto(`${stack.url}/e/${eventId}`);
    await devSignIn(friend.page, 'friend-b');
    await friend.page.getByTestId('queue-card').waitFor();

    // The buyer takes all four seats: the show sells out.
    const buyer = await fanPage(browser, WIDTHS.phone);
    await buyer.page.goto(`${stack.url}/e/${eventId}`);
    await devSignIn(buyer.page, 'buyer-a');
    await buy(buyer.page, 4);
    await expect.poll(() => tickets(buyer.page).count(), { timeout: PAGE_WAIT_MS }).toBe(4);
    // Before the delivery time: each ticket says when it arrives, and shows no code.
    expect(await ticketsWith(buyer.page, 'PENDING_DELIVERY').count()).toBe(4);
    const arrives = await buyer.page.getByTestId('ticket-arrives').first().textContent();
    expect(arrives).toMatch(/^Your ticket arrives on .+\d/);
    expect(await buyer.page.getByTestId('ticket-qr').count()).toBe(0);
    await noOverflow(buyer.page);
    await buyer.page.screenshot({ path: join(docsShots, 'tickets-arrive-phone.png'), fullPage: true });

    // Delivery brought forward to the past (the promoter's setting): the next read shows a QR per ticket.
    await sql`UPDATE events SET ticket_delivery_hours_before = NULL, ticket_delivery_at = now() - interval '1 minute' WHERE id = ${eventId}`.execute(
      stack.t.db,
    );
    await advanceUntil(buyer.page, async () => (await buyer.page.getByTestId('ticket-qr').count()) === 4, 'four live codes').catch(
      async (e: Error) => {
        throw new Error(`${e.message}: ${await buyer.page.locator('main').innerText()} / errors: ${buyer.errors.join('; ')}`);
      },
    );
    const codeA = await buyer.page.getByTestId('ticket-code').first().getAttribute('data-code');
    expect(codeA).toMatch(/^[A-Za-z0-9_-]{100,}$/);
    await noOverflow(buyer.page);
    await buyer.page.getByTestId('ticket-code').first().scrollIntoViewIfNeeded();
    await buyer.page.screenshot({ path: join(docsShots, 'tickets-code-phone.png') });

    // Give the first ticket to the friend, by keyboard: the form opens, the field takes focus, Enter sends.
    const first = tickets(buyer.page).first();
    const transferred = await first.getAttribute('data-ticket-id');
    await first.getByTestId('ticket-transfer-open').focus();
    await buyer.page.keyboard.press('Enter');
    await expect.poll(() => buyer.page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('ticket-friend');
    await buyer.page.keyboard.type('friend-b');
    await buyer.page.screenshot({ path: join(docsShots, 'tickets-transfer-phone.png'), fullPage: true });
    await buyer.page.keyboard.press('Enter');
    await expect.poll(() => buyer.page.getByTestId('tickets-notice').textContent()).toContain('friend-b');
    await expect.poll(() => ticketsWith(buyer.page, 'TRANSFERRED').count()).toBe(1);
    expect(await ticketsWith(buyer.page, 'ACTIVE').count()).toBe(3);

    // The friend opens the page again and then "My tickets" (a page that never saw tickets for the account reads none
    // by itself: the on-sale's crowd costs no read), and it shows the ticket, with a live code of its own, bound to the
    // friend's device. From then on the page reads them when it opens (the reloads below).
    await friend.page.reload();
    await friend.page.getByTestId('tickets-open').click();
    await friend.page.getByTestId('ticket-qr').waitFor();
    expect(await tickets(friend.page).count()).toBe(1);
    await noOverflow(friend.page);
    await friend.page.screenshot({ path: join(docsShots, 'tickets-friend-phone.png'), fullPage: true });

    // The waitlisted fan: sold out, on the waitlist for one seat.
    const waiting = await fanPage(browser, WIDTHS.desktop);
    await waiting.page.goto(`${stack.url}/e/${eventId}`);
    await devSignIn(waiting.page, 'waitlisted-c');
    await waiting.page.getByTestId('queue-card').waitFor();
    await advanceUntil(waiting.page, async () => (await stateOf(waiting.page)) === 'SOLD_OUT', 'SOLD_OUT');
    await waiting.page.getByTestId('wl-quantity').selectOption('1');
    await waiting.page.getByTestId('waitlist-join').click();
    await waiting.page.getByTestId('waitlist-place').waitFor();

    // The buyer lists another ticket at face value (the price is filled in).
    const second = ticketsWith(buyer.page, 'ACTIVE').first();
    const listed = await second.getAttribute('data-ticket-id');
    await second.getByTestId('ticket-resale-open').click();
    expect(await buyer.page.getByTestId('ticket-price').inputValue()).toBe('65.00');
    await buyer.page.getByTestId('ticket-resale-send').click();
    await expect.poll(() => buyer.page.locator(`[data-ticket-id="${listed}"]`).getAttribute('data-status')).toBe('LISTED');
    expect(await buyer.page.getByTestId('ticket-listed').textContent()).toContain('65.00');
    await noOverflow(buyer.page);
    await buyer.page.screenshot({ path: join(docsShots, 'tickets-listed-phone.png'), fullPage: true });

    // The waitlisted fan is offered it, claims and pays by the same checkout, and holds a ticket of their own.
    await advanceUntil(waiting.page, () => waiting.page.getByTestId('offer').isVisible(), 'the resale offer', 20_000);
    await waiting.page.screenshot({ path: join(docsShots, 'tickets-resale-offer-desktop.png'), fullPage: true });
    await waiting.page.getByTestId('claim').click();
    await waiting.page.getByTestId('hold').waitFor();
    await waiting.page.getByTestId('continue-to-pay').click();
    // A card of their own: the buyer's card has paid for as many seats as one card may (the per-card limit).
    await waiting.page.getByTestId('card-number').fill(cardNumber(29));
    await waiting.page.getByTestId('pay').click();
    await waiting.page
      .getByTestId('order')
      .waitFor({ timeout: PAGE_WAIT_MS })
      .catch(async (e: Error) => {
        throw new Error(`${e.message}: ${await waiting.page.locator('main').innerText()}`);
      });
    await expect.poll(() => tickets(waiting.page).count(), { timeout: PAGE_WAIT_MS }).toBe(1);
    await waiting.page.getByTestId('ticket-qr').waitFor();
    expect(await waiting.page.getByTestId('my-tickets').getByTestId('ticket').getAttribute('data-ticket-id')).not.toBe(listed);
    await waiting.page.screenshot({ path: join(docsShots, 'tickets-resold-desktop.png'), fullPage: true });
    // The seller's page: sold on the exchange.
    await advanceUntil(
      buyer.page,
      async () => (await buyer.page.locator(`[data-ticket-id="${listed}"]`).getAttribute('data-status')) === 'RESOLD',
      'RESOLD',
    );

    // The door. A gate starts with its own credential and downloads the ticket list (the friend's ticket not yet in).
    const door = await browser.newContext({ viewport: WIDTHS.desktop, timezoneId: 'UTC' });
    door.setDefaultTimeout(PAGE_WAIT_MS);
    const gate = await door.newPage();
    const gateErrors: string[] = [];
    gate.on('pageerror', (e) => gateErrors.push(e.message));
    await gate.goto(`${consoleUrl}/sign-in`);
    await signIn(gate, OPERATOR);
    await gate.waitForURL(`${consoleUrl}/`);
    await gate.goto(`${consoleUrl}/events/${eventId}/scanner`);
    await gate.getByTestId('scanner-gate-name').fill('North gate');
    await gate.getByTestId('scanner-start-button').click();
    await gate.getByTestId('scanner-download').click();
    await expect.poll(() => gate.getByTestId('scanner-manifest').textContent()).toMatch(/Ticket list: \d+ tickets/);

    // The friend's phone shows its live code, typed in at the gate: ADMIT. The phone then reads "Used" and shows no
    // code; the same ticket's current code (as a copy on another phone would show it, signed with the event's key)
    // is refused at the gate, and later let through by a gate offline on an older list.
    const friendTicket = (await tickets(friend.page).first().getAttribute('data-ticket-id'))!;
    const friendCode = async () => {
      await friend.page.reload();
      await friend.page.getByTestId('ticket-code').waitFor();
      return (await friend.page.getByTestId('ticket-code').getAttribute('data-code'))!;
    };
    const copyOfFriendCode = async () => {
      const k = await sql<{ key: string; generation: number }>`
        SELECT k.private_key AS key, t.generation FROM ticket_keys k JOIN tickets t ON t.event_id = k.event_id WHERE t.id = ${friendTicket}`.execute(
        stack.t.db,
      );
      return signTicketCode(privateKeyOf(k.rows[0]!.key), { id: friendTicket, generation: k.rows[0]!.generation }, stepOf(Date.now()));
    };
    const scan = async (code: string) => {
      await gate.getByTestId('scanner-code').fill(code);
      await gate.getByTestId('scanner-check').click();
    };
    const resultOf = () => gate.getByTestId('scan-result').getAttribute('data-result');
    await scan(await friendCode());
    await expect.poll(resultOf).toBe('ADMIT');
    expect(await gate.getByTestId('scan-result').textContent()).toContain('Section STALLS, row A');
    await gate.screenshot({ path: join(consoleShots, 'scanner-admit-1440.png'), fullPage: true });
    await friend.page.reload();
    await friend.page.getByTestId('ticket-admitted').waitFor();
    await scan(await copyOfFriendCode());
    await expect.poll(() => gate.getByTestId('scan-log').locator('li').count()).toBe(1);
    await expect.poll(resultOf).toBe('ALREADY_ADMITTED');
    expect(await gate.getByTestId('scan-result').textContent()).toContain('North gate');
    // The seller's old code for the ticket sold on: REVOKED.
    await scan(codeA!);
    await expect.poll(() => gate.getByTestId('scan-log').locator('li').count()).toBe(2);
    expect(['REVOKED', 'EXPIRED_CODE']).toContain(await resultOf());
    const admitted = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM tickets WHERE event_id = ${eventId} AND status = 'ADMITTED'`.execute(stack.t.db);
    expect(admitted.rows[0]!.n).toBe(1);

    // The network goes: the gate checks against its list, made before the friend came in, and lets the code through;
    // back online, the upload reports the double entry.
    await gate.getByTestId('scanner-offline').check();
    await expect.poll(() => gate.getByTestId('scanner-status').getAttribute('data-offline')).toBe('true');
    await scan(await copyOfFriendCode());
    await expect.poll(() => gate.getByTestId('scanner-pending').textContent()).toBe('1 scan to upload');
    expect(await resultOf()).toBe('ADMIT');
    await gate.screenshot({ path: join(consoleShots, 'scanner-offline-1440.png'), fullPage: true });
    await gate.getByTestId('scanner-offline').uncheck();
    await expect.poll(() => gate.getByTestId('scanner-report').textContent(), { timeout: PAGE_WAIT_MS }).toContain('1 double entry');
    expect(await gate.getByTestId('scanner-pending').count()).toBe(0);
    await gate.setViewportSize(WIDTHS.phone);
    expect(await gate.evaluate(() => document.documentElement.scrollWidth - innerWidth)).toBeLessThanOrEqual(0);
    await gate.screenshot({ path: join(consoleShots, 'scanner-390.png'), fullPage: true });

    expect(transferred).not.toBe(listed);
    expect([...buyer.errors, ...friend.errors, ...waiting.errors, ...gateErrors]).toEqual([]);
    for (const c of [buyer.context, friend.context, waiting.context, door]) await c.close();
  });
});
