import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@onsale/shared/db';
import { admissionClaimsFor, createTokenKey, hashDevice, signToken } from '@onsale/shared/queue';
import { testSecrets } from '@onsale/shared/testing';
import {
  advanceUntil,
  builtFanPage,
  devSignIn,
  fanPage,
  http,
  launch,
  makeEvent,
  noOverflow,
  resultsDir,
  scriptedFan,
  startStack,
  WIDTHS,
  type Stack,
} from './harness';

// Seats that fit the party, in Chromium at 390 px: a party of four where only pairs are left reads, in plain words,
// that it cannot sit together, and is offered two pairs (taken in one hold) or two seats together; a pick on the seat
// map that would leave one seat on its own is refused with the seats beside it offered instead.

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

/** Seat ids of an event by row and number. */
async function seatIds(eventId: string) {
  const { rows } = await sql<{ id: number; row: string; n: number }>`
    SELECT id, row_label AS row, seat_number AS n FROM seats WHERE event_id = ${eventId} ORDER BY row_index, seat_number`.execute(
    stack.t.db,
  );
  return (row: string, n: number) => rows.find((r) => r.row === row && r.n === n)!.id;
}

/** Another fan, admitted, holds exact seats. */
async function someoneHolds(eventId: string, who: string, seats: number[]) {
  const fan = await scriptedFan(stack.url, who);
  const key = await createTokenKey(testSecrets().queueTokenSecret);
  const deviceHash = await hashDevice(fan.headers['x-device-id']!, fan.id);
  const admission = await signToken(
    key,
    admissionClaimsFor(
      { kind: 'queue', eventId, accountId: fan.id, deviceHash, joinIndex: 0, cohort: 'FIFO', iat: 0, exp: 0 },
      1,
      Date.now(),
    ),
  );
  const r = await http(
    stack.url,
    'POST',
    `/events/${eventId}/holds`,
    { ...fan.headers, 'x-admission-token': admission },
    { seatIds: seats },
  );
  expect(r.status, JSON.stringify(r.json)).toBe(201);
}

describe('seats that fit the party', () => {
  it('a party of four where only pairs are left is offered two pairs in plain words, and takes them in one hold', async () => {
    const eventId = await makeEvent(stack.t, {
      name: 'Pairs Night',
      sections: [
        {
          code: 'STALLS',
          name: 'Stalls',
          priceLevel: 'P1',
          qualityRank: 1,
          rows: [
            { label: 'A', seats: 6 },
            { label: 'B', seats: 6 },
          ],
        },
      ],
    });
    const seat = await seatIds(eventId);
    await someoneHolds(eventId, 'middle-buyer', [seat('A', 3), seat('A', 4), seat('B', 3), seat('B', 4)]);

    const { page, errors, context } = await fanPage(browser, WIDTHS.phone);
    await page.goto(`${stack.url}/e/${eventId}`);
    await devSignIn(page, 'party-of-four');
    await advanceUntil(page, () => page.getByTestId('seats').isVisible(), 'the seats step');
    await page.getByTestId('section-STALLS').click();
    await page.getByTestId('quantity').selectOption('4');
    await page.getByTestId('find-seats').click();
    await page.getByTestId('refusal').waitFor();
    expect(await page.getByTestId('refusal').textContent()).toContain(
      'There are no 4 seats together left in that section. You can still have:',
    );
    expect(await page.getByTestId('take-split').textContent()).toMatch(
      /^2 \+ 2 seats, in groups side by side: row [AB] seats (1-2|5-6), row [AB] seats (1-2|5-6)$/,
    );
    expect(await page.getByTestId('take-fewer').textContent()).toBe('2 seats together');
    await noOverflow(page);
    await page.screenshot({ path: join(resultsDir, 'split-offer-phone.png'), fullPage: true });

    await page.getByTestId('take-split').click();
    await page.getByTestId('hold').waitFor();
    expect(await page.getByTestId('held-seats').locator('li').count()).toBe(4);
    const held = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM seats s JOIN holds h ON h.id = s.hold_id
      WHERE s.event_id = ${eventId} AND h.account_id = 'party-of-four' AND s.status = 'HELD'`.execute(stack.t.db);
    expect(held.rows[0]!.n).toBe(4);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('a pick on the seat map that would leave one seat on its own is refused, with the seats beside it to hold instead', async () => {
    const eventId = await makeEvent(stack.t, {
      name: 'Picking Night',
      sections: [{ code: 'STALLS', name: 'Stalls', priceLevel: 'P1', qualityRank: 1, rows: [{ label: 'A', seats: 6 }] }],
    });
    const { page, errors, context } = await fanPage(browser, WIDTHS.phone);
    await page.goto(`${stack.url}/e/${eventId}`);
    await devSignIn(page, 'picker');
    await advanceUntil(page, () => page.getByTestId('seats').isVisible(), 'the seats step');
    await page.getByTestId('section-STALLS').click();
    await page.getByTestId('tab-map').click();
    await page.getByTestId('seat-map').waitFor();
    await page.getByRole('button', { name: 'Row A, seat 2' }).click();
    await page.getByRole('button', { name: 'Row A, seat 3' }).click();
    await page.getByTestId('find-seats').click();
    await page.getByTestId('refusal').waitFor();
    expect(await page.getByTestId('refusal').textContent()).toContain('Those seats would leave one seat on its own');
    expect(await page.getByTestId('take-instead').textContent()).toBe('Hold row A seats 1-2');
    await page.getByTestId('take-instead').click();
    await page.getByTestId('hold').waitFor();
    expect(await page.getByTestId('held-seats').locator('li').count()).toBe(2);
    expect(errors).toEqual([]);
    await context.close();
  });
});
