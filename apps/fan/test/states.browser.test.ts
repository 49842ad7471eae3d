import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { pauseQueue, resumeQueue, setRateOverride } from '@onsale/shared/admission';
import { cancelOrder, TEST_CARDS } from '@onsale/shared/checkout';
import { admissionClaimsFor, createTokenKey, hashDevice, signToken } from '@onsale/shared/queue';
import { testSecrets, PAGE_WAIT_MS } from '@onsale/shared/testing';
import {
  advanceUntil,
  builtFanPage,
  devSignIn,
  docsShots,
  fanPage,
  http,
  launch,
  makeEvent,
  noOverflow,
  scriptedFan,
  startStack,
  stateOf,
  WIDTHS,
  type Stack,
} from './harness';

// The waiting room's other states in Chromium: a paused line that resumes without a reload (and a reload that keeps
// the place), a join the bot gate challenges (the proof-of-work solved in a Web Worker), and a sale that goes
// LAST_CHANCE then SOLD_OUT, where the page offers the waitlist and a returned seat's offer reaches it.

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

const admittedThrough = async (eventId: string) =>
  (await sql<{ n: number }>`SELECT admitted_through::int AS n FROM queue_state WHERE event_id = ${eventId}`.execute(stack.t.db)).rows[0]
    ?.n ?? 0;

describe('the waiting room', () => {
  it('reads PAUSED while an operator pauses the line, keeps the place over a reload, and moves on when it resumes, without a reload', async () => {
    const eventId = await makeEvent(stack.t, { name: 'Paused Night' });
    await pauseQueue(stack.t.db, eventId, { actor: 'ops@test', reason: 'payment provider slow' });
    // Twelve fans ahead, joined over HTTP.
    for (let i = 0; i < 12; i++) {
      const other = await scriptedFan(stack.url, `ahead-${i}`);
      expect((await http(stack.url, 'POST', `/events/${eventId}/queue`, other.headers)).status).toBe(200);
    }
    const { page, errors, context } = await fanPage(browser, WIDTHS.phone);
    await page.goto(`${stack.url}/e/${eventId}`);
    await devSignIn(page, 'paused-fan');
    await page.getByTestId('queue-card').waitFor();
    await expect.poll(() => page.getByTestId('queue-state').getAttribute('data-state')).toBe('PAUSED');
    expect(await page.getByTestId('queue-message').textContent()).toContain('paused');
    expect(await page.getByTestId('queue-position').getAttribute('data-position')).toBe('13');
    expect(await page.getByTestId('queue-live').textContent()).toBe('Your place in line: 13. 12 ahead of you.');
    await noOverflow(page);
    await page.screenshot({ path: join(docsShots, 'paused-phone.png'), fullPage: true });

    // Overload and outage on the status route: still in line, the place kept, checking again after Retry-After.
    const answers = [
      { status: 503, retryAfter: '12', body: { error: 'DATABASE_UNAVAILABLE', message: 'the database is not reachable' } },
      { status: 429, retryAfter: '9', body: { error: 'RATE_LIMITED', message: 'too many requests', retryAfterSeconds: 9 } },
      null, // no answer at all
    ];
    let polled = 0;
    await page.route('**/queue/status', async (route) => {
      const a = answers[polled++];
      if (a === undefined) return route.continue();
      if (a === null) return route.abort('connectionrefused');
      return route.fulfill({
        status: a.status,
        headers: { 'retry-after': a.retryAfter, 'content-type': 'application/json' },
        body: JSON.stringify(a.body),
      });
    });
    const notice = page.getByTestId('queue-notice');
    await advanceUntil(
      page,
      async () => /very busy.*Still in line\. Checking again in 1[0-5] s\./.test((await notice.textContent({ timeout: 500 })) ?? ''),
      'the 503 as still in line',
    );
    expect(await page.getByTestId('queue-position').getAttribute('data-position')).toBe('13');
    expect(await page.getByTestId('page-error').count()).toBe(0);
    await page.screenshot({ path: join(docsShots, 'busy-phone.png'), fullPage: true });
    await advanceUntil(
      page,
      async () => polled >= 2 && /Checking again in [0-9] s\./.test((await notice.textContent({ timeout: 500 })) ?? ''),
      'the 429 as still in line',
      13_000,
    );
    await advanceUntil(
      page,
      async () => polled >= 3 && /cannot reach the site.*Still in line/.test((await notice.textContent({ timeout: 500 })) ?? ''),
      'no answer as still in line',
      10_000,
    );
    await advanceUntil(page, async () => polled >= 4 && (await notice.count()) === 0, 'the line again', 6_000);
    expect(await stateOf(page)).toBe('PAUSED');
    await page.unroute('**/queue/status');

    await page.reload();
    await page.getByTestId('queue-card').waitFor();
    await expect.poll(() => page.getByTestId('queue-position').getAttribute('data-position')).toBe('13');

    // Resumed at a slow rate: the next poll reads WAITING with people ahead and a wait.
    await setRateOverride(stack.t.db, eventId, 6, { actor: 'ops@test' });
    await resumeQueue(stack.t.db, eventId, { actor: 'ops@test' });
    await expect.poll(() => admittedThrough(eventId), { timeout: PAGE_WAIT_MS }).toBeGreaterThan(0);
    await advanceUntil(page, async () => (await stateOf(page)) === 'WAITING', 'WAITING');
    const ahead = Number(await page.getByTestId('queue-ahead').getAttribute('data-ahead'));
    expect(ahead).toBeGreaterThan(0);
    expect(ahead).toBeLessThanOrEqual(12);
    // The wait shows once the controller publishes its rate (the first poll after the resume may come before).
    await advanceUntil(
      page,
      async () => /About .* to wait/.test((await page.getByTestId('queue-wait').textContent({ timeout: 500 })) ?? ''),
      'the wait estimate',
      10_000,
    );
    await page.screenshot({ path: join(docsShots, 'waiting-phone.png'), fullPage: true });

    await setRateOverride(stack.t.db, eventId, 1200, { actor: 'ops@test' });
    await expect.poll(() => admittedThrough(eventId), { timeout: PAGE_WAIT_MS }).toBeGreaterThanOrEqual(13);
    await advanceUntil(page, () => page.getByTestId('seats').isVisible(), 'the seats step');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('solves the proof-of-work a challenged join asks for, in a Web Worker, then joins', async () => {
    // A store API whose bot gate challenges every join (a browser's score is above 0).
    const strict = await stack.extraApi({ BOT_CHALLENGE_SCORE: '0', BOT_LOW_PRIORITY_SCORE: '1' });
    const eventId = await makeEvent(stack.t, { name: 'Challenged Night' });
    const { page, errors, context } = await fanPage(browser, WIDTHS.desktop);
    await page.goto(`${strict.url}/e/${eventId}`);
    await devSignIn(page, 'challenged-fan');
    await page.getByTestId('challenge').waitFor();
    // A quick solve can end the challenge step before it is read: the progress line is checked while it is there.
    const progress = await page
      .getByTestId('challenge-progress')
      .textContent({ timeout: 1000 })
      .catch(() => null);
    if (progress !== null) {
      expect(progress).toMatch(/Checking your browser before you join: \d+% done/);
      await page.screenshot({ path: join(docsShots, 'challenge-desktop.png') }).catch(() => undefined);
    }
    await page.getByTestId('queue-card').or(page.getByTestId('seats')).first().waitFor({ timeout: PAGE_WAIT_MS });
    const metrics = await (await fetch(`${strict.url}/metrics`)).text();
    expect(metrics).toMatch(/bot_gate_decisions_total\{decision="CHALLENGED"\} 1/);
    expect(metrics).toMatch(/bot_gate_decisions_total\{decision="SOLVED"\} 1/);
    const entries = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM queue_entries WHERE event_id = ${eventId} AND account_id = 'challenged-fan'`.execute(stack.t.db);
    expect(entries.rows[0]!.n).toBe(1);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('reads LAST_CHANCE while every seat is held, SOLD_OUT when they are paid, offers the waitlist, and a returned seat’s offer reaches the page', async () => {
    const eventId = await makeEvent(stack.t, {
      name: 'Sold Out Night',
      sections: [{ code: 'BOX', name: 'Box', priceLevel: 'P1', qualityRank: 1, rowCount: 1, seatsPerRow: 2 }],
    });
    // Another fan, admitted, holds both seats.
    const buyer = await scriptedFan(stack.url, 'box-buyer');
    const key = await createTokenKey(testSecrets().queueTokenSecret);
    const deviceHash = await hashDevice(buyer.headers['x-device-id']!, buyer.id);
    const admission = await signToken(
      key,
      admissionClaimsFor(
        { kind: 'queue', eventId, accountId: buyer.id, deviceHash, joinIndex: 0, cohort: 'FIFO', iat: 0, exp: 0 },
        1,
        Date.now(),
      ),
    );
    const buyerHeaders = { ...buyer.headers, 'x-admission-token': admission };
    const hold = await http(stack.url, 'POST', `/events/${eventId}/holds`, buyerHeaders, { section: 'BOX', quantity: 2 });
    expect(hold.status).toBe(201);

    const { page, errors, context } = await fanPage(browser, WIDTHS.phone);
    await page.goto(`${stack.url}/e/${eventId}`);
    await devSignIn(page, 'waitlist-fan');
    await page.getByTestId('queue-card').waitFor();
    await expect.poll(() => page.getByTestId('queue-state').getAttribute('data-state'), { timeout: PAGE_WAIT_MS }).toBe('LAST_CHANCE');
    await page.screenshot({ path: join(docsShots, 'last-chance-phone.png'), fullPage: true });

    const paid = await http(
      stack.url,
      'POST',
      `/holds/${hold.json.holdId as string}/checkout`,
      { ...buyerHeaders, 'idempotency-key': 'box-buyer-pay-1' },
      { payment: { instrument: { type: 'card', number: TEST_CARDS.success } } },
    );
    expect(paid.status).toBe(200);
    await expect
      .poll(
        async () =>
          (await sql<{ s: string }>`SELECT inventory_state AS s FROM queue_state WHERE event_id = ${eventId}`.execute(stack.t.db)).rows[0]
            ?.s,
        { timeout: PAGE_WAIT_MS },
      )
      .toBe('SOLD_OUT');
    await advanceUntil(page, async () => (await stateOf(page)) === 'SOLD_OUT', 'SOLD_OUT');
    await page.getByTestId('waitlist-form').waitFor();
    await page.getByTestId('waitlist-join').click();
    await page.getByTestId('waitlist-place').waitFor();
    expect(await page.getByTestId('waitlist-place').getAttribute('data-place')).toBe('1');
    await noOverflow(page);
    await page.screenshot({ path: join(docsShots, 'sold-out-waitlist-phone.png'), fullPage: true });

    // The buyer's order is cancelled: the seats go to the waitlist, whose first match is offered them.
    await cancelOrder(stack.t.db, paid.json.orderId as string, { actor: 'ops@test', reason: 'duplicate order' });
    await expect
      .poll(
        async () =>
          (
            await sql<{
              n: number;
            }>`SELECT count(*)::int AS n FROM waitlist_offers WHERE account_id = 'waitlist-fan' AND status = 'OPEN'`.execute(stack.t.db)
          ).rows[0]!.n,
        {
          timeout: PAGE_WAIT_MS,
        },
      )
      .toBe(1);
    await advanceUntil(page, () => page.getByTestId('offer').isVisible(), 'the offer', 20_000);
    expect(await page.getByTestId('offer-deadline').textContent()).toMatch(/Claim within \d+:\d\d/);
    await page.screenshot({ path: join(docsShots, 'offer-phone.png'), fullPage: true });
    await page.getByTestId('claim').click();
    await page.getByTestId('hold').waitFor();
    await page.getByTestId('continue-to-pay').click();
    await page.getByTestId('card-number').fill(TEST_CARDS.success);
    await page.getByTestId('pay').click();
    await page.getByTestId('order').waitFor({ timeout: PAGE_WAIT_MS });
    const orders = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM orders WHERE event_id = ${eventId} AND account_id = 'waitlist-fan' AND status = 'CONFIRMED'`.execute(
      stack.t.db,
    );
    expect(orders.rows[0]!.n).toBe(1);
    expect(errors).toEqual([]);
    await context.close();
  });
});
