import { parse } from 'csv-parse/sync';
import { mkdirSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildBff } from '@onsale/bff';
import { checkAccessCode } from '@onsale/shared/allocations';
import { sql } from '@onsale/shared/db';
import { createNodeTokenKey } from '@onsale/shared/queue';
import { testSecrets, createTestDatabase, type TestDatabase, PAGE_WAIT_MS } from '@onsale/shared/testing';
import { createUser } from '@onsale/shared/users';
import { sentence } from '@onsale/shared/words';
import { registerForLottery } from '@onsale/shared/lottery';
import { launchChromium, signIn, builtConsole } from './browser-helpers';

// Event configuration, the fairness audit and the audit log in Chromium, against the built console served by the
// BFF: a promoter creates an event from the form (after an inline error), sees it listed, opens its fairness audit
// and downloads the summary, then filters the audit log.

const consoleRoot = fileURLToPath(new URL('..', import.meta.url));
const resultsDir = join(consoleRoot, '..', '..', '.test-results');
// Built into a directory of this test's own: other browser tests build into dist/ and may run at the same time.
let distDir: string;
const PROMOTER = { email: 'promoter@acme.test', password: 'promoter password for the browser' };
const OPERATOR = { email: 'operator@configure.test', password: 'operator password for the browser' };
const EVENT_NAME = 'Form Made Night';
const TIERED_NAME = 'Tiered Form Night';
const LOTTERY_NAME = 'Lottery Form Night';
// The promoter works in New York: the form's times are theirs, the database keeps instants.
const TIMEZONE = 'America/New_York';

let tdb: TestDatabase;
let app: Awaited<ReturnType<typeof buildBff>>;
let browser: Browser;
let page: Page;
let baseUrl: string;
let eventId: string;
const pageErrors: string[] = [];

beforeAll(async () => {
  mkdirSync(resultsDir, { recursive: true });
  distDir = await builtConsole();
  tdb = await createTestDatabase(inject('templateDatabaseUrl'));
  await tdb.db.transaction().execute((trx) => createUser(trx, { ...PROMOTER, role: 'promoter', organisation: 'Acme Live' }, 'test'));
  // The store API's development token secret: the presale tiers test issues access codes the store API accepts.
  app = await buildBff({ db: tdb.db, consoleDir: distDir, auth: { queueTokenSecret: testSecrets().queueTokenSecret } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 }, timezoneId: TIMEZONE, acceptDownloads: true });
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text());
  });
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await tdb?.drop();
});

describe('event configuration in Chromium', () => {
  it('signs in as a promoter', async () => {
    await page.goto(`${baseUrl}/sign-in`);
    await signIn(page, PROMOTER);
    await page.waitForURL(`${baseUrl}/`);
    expect(await page.getByTestId('signed-in-role').textContent()).toBe('Promoter · Acme Live');
  });

  it('creates an event from the form: a bad field is refused inline first, nothing is written, then it is created and signed off', async () => {
    await page.getByTestId('nav-new-event').click();
    await page.waitForURL('**/events/new');
    const form = page.getByTestId('event-form');
    await form.getByLabel('Event name').fill(EVENT_NAME);
    await form.getByLabel('Venue', { exact: true }).fill('Form Hall');
    await form.getByLabel('Show starts').fill('2031-06-01T19:30:00');
    await form.getByLabel('On sale from').fill('2031-03-01T10:00:00');
    const level = form.getByTestId('price-level-row').first();
    await level.getByLabel('Code').fill('P1');
    await level.getByLabel('Name').fill('Stalls');
    await level.getByLabel('Price (USD)').fill('65.50');
    const section = form.getByTestId('section-editor').first();
    await section.getByLabel('Code').fill('STALLS 1');
    await section.getByLabel('Name').fill('Stalls');
    await section.getByLabel('Price level').selectOption('P1');
    await section.getByLabel('Rows', { exact: true }).fill('4');
    await section.getByLabel('Seats per row').fill('10');
    await form.getByLabel('Seats per account').fill('0');
    await form.getByRole('button', { name: 'Create event' }).click();

    // The shared schema's words, at the fields, before anything is sent.
    expect(await page.getByTestId('error-sections.0.code').textContent()).toBe('Use letters, digits, "-" and "_" only (no spaces)');
    expect(await page.getByTestId('error-limits.perAccountSeats').textContent()).toBe('Enter 1 or more.');
    await page.getByTestId('form-error').waitFor();
    expect(page.url()).toContain('/events/new');
    expect(await tdb.db.selectFrom('events').select('id').execute()).toEqual([]);
    await page.screenshot({ path: join(resultsDir, 'console-event-form-error.png'), fullPage: true });

    await section.getByLabel('Code').fill('STALLS');
    await form.getByLabel('Seats per account').fill('6');
    await page.getByTestId('sign-off-on-create').check();
    await form.getByRole('button', { name: 'Create event' }).click();
    await page.waitForURL(/\/events\/[0-9a-f-]{36}$/);
    await page.getByTestId('event-name').waitFor();
    expect(await page.getByTestId('event-name').textContent()).toBe(EVENT_NAME);
    eventId = page.url().split('/').pop()!;
    expect(await page.getByTestId('error-sections.0.code').count()).toBe(0);

    const row = await tdb.db.selectFrom('events').selectAll().where('id', '=', eventId).executeTakeFirstOrThrow();
    // 10:00 in New York on 1 March 2031 is 15:00 UTC (EST); 19:30 on 1 June is 23:30 UTC (EDT).
    expect(row.onsale_at.toISOString()).toBe('2031-03-01T15:00:00.000Z');
    expect(row.starts_at.toISOString()).toBe('2031-06-01T23:30:00.000Z');
    expect(row).toMatchObject({ capacity: 40, per_account_seat_limit: 6, version: 1 });
    const org = await tdb.db.selectFrom('organisations').select('id').where('name', '=', 'Acme Live').executeTakeFirstOrThrow();
    expect(row.organisation_id).toBe(org.id);
    const prices = await tdb.db.selectFrom('price_levels').select(['code', 'price_cents']).where('event_id', '=', eventId).execute();
    expect(prices).toEqual([{ code: 'P1', price_cents: 6550 }]);
    const signOff = await tdb.db.selectFrom('fairness_signoffs').selectAll().where('event_id', '=', eventId).executeTakeFirstOrThrow();
    expect(signOff).toMatchObject({ signed_off_by: PROMOTER.email, fairness_mode: 'RANDOMIZED_PREOPEN_THEN_FIFO', superseded_at: null });
  });

  it('lists the new event', async () => {
    await page.goto(`${baseUrl}/`);
    const row = page.locator(`[data-testid="event-row"][data-event-id="${eventId}"]`);
    await row.waitFor();
    expect(await row.getByTestId('event-link').textContent()).toBe(EVENT_NAME);
    expect(await row.getByTestId('event-capacity').textContent()).toBe('40');
    await page.screenshot({ path: join(resultsDir, 'console-events-with-new.png') });
  });

  it('reads the event back into the edit form unchanged: saving it changes nothing; a real change is saved as the next version', async () => {
    await page.goto(`${baseUrl}/events/${eventId}/edit`);
    await page.getByTestId('config-title').waitFor();
    expect(await page.getByTestId('config-version').textContent()).toBe('1');
    expect(await page.getByTestId('signed-off').textContent()).toContain(PROMOTER.email);
    const form = page.getByTestId('event-form');
    expect(await form.getByLabel('On sale from').inputValue()).toBe('2031-03-01T10:00');
    await form.getByRole('button', { name: 'Save changes' }).click();
    expect(await page.getByTestId('saved').textContent()).toContain('Nothing to save');

    await form.getByLabel('Venue', { exact: true }).fill('Form Hall (upstairs)');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved as version 2: venueName.').waitFor();
    await expect.poll(() => page.getByTestId('config-version').textContent()).toBe('2');
    expect(await page.getByTestId('newer-version').count()).toBe(0);
    await page.screenshot({ path: join(resultsDir, 'console-event-config.png'), fullPage: true });
  });

  it('opens the fairness audit: the commitment before the open, the sign-off; downloads the Markdown summary', async () => {
    await page.goto(`${baseUrl}/events/${eventId}`);
    await page.getByTestId('link-fairness').click();
    await page.waitForURL(`**/events/${eventId}/fairness`);
    await page.getByTestId('fairness-title').waitFor();
    const { rows } = await sql<{ seed_commitment: string }>`SELECT seed_commitment FROM queue_state WHERE event_id = ${eventId}`.execute(
      tdb.db,
    );
    const commitment = rows[0]!.seed_commitment;
    expect(await page.getByTestId('seed-commitment').textContent()).toBe(commitment);
    expect(await page.getByTestId('seed').textContent()).toContain('not revealed yet');
    expect(await page.getByTestId('fairness-signoffs').textContent()).toContain(`Signed off by ${PROMOTER.email}`);
    await page.getByTestId('no-histogram').waitFor();
    await page.screenshot({ path: join(resultsDir, 'console-fairness-audit.png'), fullPage: true });

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-markdown').click()]);
    expect(download.suggestedFilename()).toBe(`onsale-audit-${eventId}.md`);
    const markdown = readFileSync(await download.path(), 'utf8');
    expect(markdown).toContain(`# On-sale summary: ${EVENT_NAME}`);
    // Times in the venue's zone (America/New_York in March: 10:00, five hours behind UTC).
    expect(markdown).toContain('Form Hall (upstairs). On sale from 1 Mar 2031, 10:00');
    expect(markdown).toContain(`| Seed commitment (published before the open) | \`${commitment}\` |`);
    expect(markdown).toContain('not revealed yet (published at the open)');
    expect(markdown).toContain('Everyone who joins before the on-sale opens is placed in a random order');
    // The publishable summary names nobody: the sign-off is on the page above, not in what is published.
    expect(markdown).not.toContain(PROMOTER.email);
  });

  it('opens the audit log and filters it by action, then by event', async () => {
    await page.getByTestId('nav-audit-log').click();
    await page.waitForURL('**/audit-log');
    await page.getByTestId('audit-table').waitFor();
    const all = await tdb.db.selectFrom('audit_log').select(['action']).where('event_id', '=', eventId).execute();
    // The promoter's part of the log: their event's entries and their listing's (the waitlist settings it was created with).
    const { rows: listingEntries } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM audit_log WHERE details->>'listingId' = (SELECT listing_id::text FROM events WHERE id = ${eventId})`.execute(
      tdb.db,
    );
    expect(listingEntries[0]!.n).toBe(1);
    expect(await page.getByTestId('audit-row').count()).toBe(all.length + 1);

    const filters = page.getByTestId('audit-filters');
    await filters.getByLabel('Action').selectOption('event.updated');
    await filters.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/action=event.updated/);
    await expect.poll(() => page.getByTestId('audit-row').count()).toBe(1);
    const row = page.getByTestId('audit-row').first();
    expect(await row.getAttribute('data-actor')).toBe(PROMOTER.email);
    // In words: the setting's name and its values, not the event file's keys.
    expect(await row.textContent()).toContain('Changed the configuration');
    expect(await row.textContent()).toContain('venue: Form Hall → Form Hall (upstairs)');

    // A bad range is refused at its field by the shared schema.
    await filters.getByLabel('From', { exact: true }).fill('2031-01-02T00:00:00');
    await filters.getByLabel('To', { exact: true }).fill('2031-01-01T00:00:00');
    await filters.getByRole('button', { name: 'Filter' }).click();
    expect(await page.getByTestId('error-to').textContent()).toBe(sentence('must be after "from"'));

    await page.goto(`${baseUrl}/audit-log`);
    await page.getByTestId('audit-table').waitFor();
    await filters.getByLabel('Event').selectOption(eventId);
    await filters.getByLabel('Action').selectOption('event.');
    await filters.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(new RegExp(`eventId=${eventId}`));
    const eventActions = all.map((a) => a.action).filter((a) => a.startsWith('event.'));
    await expect.poll(() => page.getByTestId('audit-row').count()).toBe(eventActions.length);
    expect((await page.getByTestId('audit-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action')))).sort()).toEqual(
      [...eventActions].sort(),
    );

    // The CSV export: every entry these filters select, words beside the raw values.
    const [csvFile] = await Promise.all([page.waitForEvent('download'), page.getByTestId('audit-export-csv').click()]);
    expect(csvFile.suggestedFilename()).toBe(`onsale-audit-log-${eventId}.csv`);
    const exported = parse<Record<string, string>>(readFileSync(await csvFile.path(), 'utf8'), { columns: true });
    expect(exported.map((r) => r.Action).sort()).toEqual([...eventActions].sort());
    expect(exported.find((r) => r.Action === 'event.updated')).toMatchObject({
      What: 'Changed the configuration',
      Who: PROMOTER.email,
      'Event id': eventId,
    });
    expect(await page.getByTestId('audit-export-note').textContent()).toBe(`Downloaded ${eventActions.length} entries.`);
    await page.screenshot({ path: join(resultsDir, 'console-audit-log.png'), fullPage: true });
  });

  it('turns no single seats off in the edit form: on unless turned off, saved as a change of its own, in words in the audit log', async () => {
    await page.goto(`${baseUrl}/events/${eventId}/edit`);
    await page.getByTestId('config-title').waitFor();
    const form = page.getByTestId('event-form');
    expect(await form.getByLabel('Single seats').inputValue()).toBe('true');
    await form.getByLabel('Single seats').selectOption('false');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText(/Saved as version \d+: noSingleSeats\./).waitFor();
    const row = await sql<{ on: boolean }>`SELECT no_single_seats AS on FROM events WHERE id = ${eventId}`.execute(tdb.db);
    expect(row.rows[0]!.on).toBe(false);
    await page.goto(`${baseUrl}/audit-log?eventId=${eventId}&action=event.updated`);
    await page.getByTestId('audit-table').waitFor();
    await expect.poll(() => page.getByTestId('audit-table').textContent()).toContain('no single seats: yes → no');
  });

  it("imports the CLI's example event file into the form, every field filled and nothing to correct", async () => {
    await page.goto(`${baseUrl}/events/new`);
    await page.getByTestId('import-event-file').locator('summary').click();
    await page.getByTestId('import-file').setInputFiles(join(consoleRoot, '..', '..', 'examples', 'club.json'));
    await page.getByTestId('imported').waitFor();
    const form = page.getByTestId('event-form');
    expect(await form.getByLabel('Event name').inputValue()).toBe('Maya Ortiz Quartet — Late Set');
    expect(await form.getByTestId('section-editor').count()).toBe(3);
    expect(await form.getByTestId('section-editor').first().getByLabel('Layout').inputValue()).toBe('rows');
    expect(await form.getByLabel('Payments per second the card processor accepts').inputValue()).toBe('50');
    expect(await page.locator('.field-error').count()).toBe(0);
    expect(await page.getByTestId('imported').textContent()).not.toContain('need attention');
  });

  it('creates a tiered event from the form: tiers added, refused inline, reordered and previewed; the event page shows them; an edit re-splits them; codes issued; a tier rolled forward', async () => {
    await page.goto(`${baseUrl}/events/new`);
    const form = page.getByTestId('event-form');
    await form.getByLabel('Event name').fill(TIERED_NAME);
    await form.getByLabel('Venue', { exact: true }).fill('Tier Hall');
    await form.getByLabel('Show starts').fill('2031-06-01T19:30:00');
    await form.getByLabel('On sale from').fill('2031-03-01T10:00:00');
    const level = form.getByTestId('price-level-row').first();
    await level.getByLabel('Code').fill('P1');
    await level.getByLabel('Name').fill('Stalls');
    await level.getByLabel('Price (USD)').fill('80');
    const section = form.getByTestId('section-editor').first();
    await section.getByLabel('Code').fill('STALLS');
    await section.getByLabel('Price level').selectOption('P1');
    await section.getByLabel('Rows', { exact: true }).fill('4');
    await section.getByLabel('Seats per row').fill('10');

    // One presale and the general sale to start from; a second presale goes before the general sale.
    await form.getByTestId('no-tiers').waitFor();
    await form.getByTestId('add-tiers').click();
    const tiers = form.getByTestId('tier-editor');
    expect(await tiers.count()).toBe(2);
    expect(await tiers.nth(1).getAttribute('data-general')).toBe('true');
    await form.getByTestId('add-tier').click();
    expect(await tiers.count()).toBe(3);
    const fanClub = tiers.nth(0);
    await fanClub.getByLabel('Code').fill('FANCLUB');
    await fanClub.getByLabel('Name').fill('Fan club');
    await fanClub.getByLabel('Share (%)').fill('30');
    await fanClub.getByLabel('Access').selectOption('ACCESS_CODE');
    await fanClub.getByLabel('Opens').fill('2031-02-20T10:00:00');
    await fanClub.getByLabel('Closes').fill('2031-02-21T10:00:00');
    await fanClub.getByLabel('Queue order').selectOption('FIFO');
    const card = tiers.nth(1);
    await card.getByLabel('Code').fill('CARD');
    await card.getByLabel('Name').fill('Card partner');
    await card.getByLabel('Share (%)').fill('25');
    await card.getByLabel('Access').selectOption('CARD_BIN');
    await tiers.nth(2).getByLabel('Code').fill('GENERAL');
    expect(await tiers.nth(2).getByLabel('Share (%)').count()).toBe(0);

    // The live split: 40 seats, 30% (12), then 25% (round(40 x 0.55) - 12 = 10), the rest (18).
    const summary = form.getByTestId('tier-summary');
    const seatsOf = async () =>
      summary
        .getByTestId('tier-summary-row')
        .evaluateAll((rows) =>
          rows.map((r) => [r.getAttribute('data-tier'), r.querySelector('[data-testid="tier-summary-seats"]')?.textContent]),
        );
    await expect.poll(seatsOf).toEqual([
      ['FANCLUB', '12'],
      ['CARD', '10'],
      ['GENERAL', '18'],
    ]);
    expect(await summary.getByTestId('tier-summary-total').textContent()).toBe('40 of 40');

    // The shared schema refuses the card tier at its fields: no card ranges, no window. Nothing is written.
    await form.getByRole('button', { name: 'Create event' }).click();
    expect(await page.getByTestId('error-allocations.1.binRanges').textContent()).toBe(
      sentence('a CARD_BIN tier needs the card ranges it accepts'),
    );
    expect(await page.getByTestId('error-allocations.1.opensAt').textContent()).toBe('A presale tier needs the time its window opens.');
    expect(await page.getByTestId('error-allocations.1.closesAt').textContent()).toBe('A presale tier needs the time its window closes.');
    expect(await tdb.db.selectFrom('events').select('id').where('name', '=', TIERED_NAME).execute()).toEqual([]);
    await card.getByLabel('Card ranges (FROM-TO per line)').fill('4111');
    await card.getByLabel('Opens').fill('2031-02-25T10:00:00');
    await card.getByLabel('Closes').fill('2031-02-26T10:00:00');
    await form.getByRole('button', { name: 'Create event' }).click();
    expect(await page.getByTestId('error-allocations.1.binRanges').textContent()).toBe(sentence('6-8 digits'));
    await card.getByLabel('Card ranges (FROM-TO per line)').fill('411100-411199');
    await page.screenshot({ path: join(resultsDir, 'console-event-form-tiers.png'), fullPage: true });

    // Reordered, the card partner sells first and takes the front seats; moved back, the split is as before.
    await card.getByRole('button', { name: 'Move tier 2 up' }).click();
    await expect.poll(seatsOf).toEqual([
      ['CARD', '10'],
      ['FANCLUB', '12'],
      ['GENERAL', '18'],
    ]);
    await tiers.nth(0).getByRole('button', { name: 'Move tier 1 down' }).click();
    await expect.poll(seatsOf).toEqual([
      ['FANCLUB', '12'],
      ['CARD', '10'],
      ['GENERAL', '18'],
    ]);

    await form.getByRole('button', { name: 'Create event' }).click();
    // Not signed off: the form asks first, and the promoter creates it anyway (signed off later on the event page).
    await page.getByTestId('create-anyway').click();
    await page.waitForURL(/\/events\/[0-9a-f-]{36}$/);
    await page.getByTestId('tiers-panel').waitFor();
    const tieredId = page.url().split('/').pop()!;
    const row = (code: string) => page.locator(`[data-testid="tier-row"][data-tier="${code}"]`);
    const cell = async (code: string, testId: string) => (await row(code).getByTestId(testId).textContent())?.trim();
    expect(await page.getByTestId('tier-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-tier')))).toEqual([
      'FANCLUB',
      'CARD',
      'GENERAL',
    ]);
    expect(await cell('FANCLUB', 'tier-capacity')).toBe('12');
    expect(await cell('FANCLUB', 'tier-available')).toBe('12');
    expect(await cell('FANCLUB', 'tier-drift')).toBe('0');
    expect(await cell('FANCLUB', 'tier-phase')).toBe('NOT OPEN');
    expect(await cell('FANCLUB', 'tier-roll')).toContain('roll into CARD');
    expect(await cell('CARD', 'tier-access')).toContain('411100–411199');
    expect(await cell('GENERAL', 'tier-capacity')).toBe('18');
    const stored = await tdb.db
      .selectFrom('allocations')
      .select(['code', 'capacity', 'opens_at', 'fairness_mode'])
      .where('event_id', '=', tieredId)
      .orderBy('position')
      .execute();
    // 10:00 in New York on 20 February 2031 is 15:00 UTC.
    expect(stored[0]).toEqual({ code: 'FANCLUB', capacity: 12, opens_at: new Date('2031-02-20T15:00:00Z'), fairness_mode: 'FIFO' });

    // The edit form reads the tiers back; a new share re-splits the seats.
    await page.goto(`${baseUrl}/events/${tieredId}/edit`);
    const edit = page.getByTestId('event-form');
    await edit.getByTestId('tier-summary').waitFor();
    expect(await edit.getByTestId('tier-editor').nth(0).getByLabel('Opens').inputValue()).toBe('2031-02-20T10:00');
    expect(await edit.getByTestId('tier-editor').nth(1).getByLabel('Card ranges (FROM-TO per line)').inputValue()).toBe('411100-411199');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    expect(await page.getByTestId('saved').textContent()).toContain('Nothing to save');
    await edit.getByTestId('tier-editor').nth(0).getByLabel('Share (%)').fill('40');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved as version 2: allocations.').waitFor();
    const capacities = await tdb.db
      .selectFrom('allocations')
      .select(['code', 'capacity'])
      .where('event_id', '=', tieredId)
      .orderBy('position')
      .execute();
    expect(capacities).toEqual([
      { code: 'FANCLUB', capacity: 16 },
      { code: 'CARD', capacity: 10 },
      { code: 'GENERAL', capacity: 14 },
    ]);

    // Access codes for the fan club, from the event page: shown once, checked here as the store API checks them.
    await page.goto(`${baseUrl}/events/${tieredId}`);
    await row('FANCLUB').getByTestId('tier-issue-codes').click();
    const codesDialog = page.getByTestId('tier-dialog-codes');
    await codesDialog.getByLabel('How many').fill('3');
    await codesDialog.getByTestId('tier-confirm-codes').click();
    await codesDialog.getByTestId('codes-issued').waitFor();
    const codes = (await codesDialog.getByTestId('codes-list').inputValue()).split('\n');
    expect(codes).toHaveLength(3);
    const key = await createNodeTokenKey(testSecrets().queueTokenSecret);
    expect(
      (
        await checkAccessCode(key, codes[0]!, {
          eventId: tieredId,
          tier: 'FANCLUB',
          accountId: 'a-fan',
          now: Date.parse('2031-02-20T16:00:00Z'),
        })
      ).ok,
    ).toBe(true);
    await codesDialog.getByRole('button', { name: 'Done' }).click();
    expect(await row('CARD').getByTestId('tier-issue-codes').count()).toBe(0);

    // Roll the fan club forward now: confirmed with a reason; its seats go to the card partner.
    await row('FANCLUB').getByTestId('tier-roll-now').click();
    const rollDialog = page.getByTestId('tier-dialog-roll');
    await rollDialog.getByTestId('tier-confirm-roll').click();
    expect(await rollDialog.getByTestId('error-reason').textContent()).toBe(sentence('give a reason'));
    await rollDialog.getByLabel('Reason (goes to the audit log)').fill('fan club allocation cancelled');
    await rollDialog.getByTestId('tier-confirm-roll').click();
    await expect.poll(() => row('FANCLUB').getAttribute('data-phase')).toBe('ROLLED');
    await expect.poll(() => cell('CARD', 'tier-capacity')).toBe('26');
    expect(await cell('FANCLUB', 'tier-capacity')).toBe('0');
    expect(await cell('FANCLUB', 'tier-roll')).toContain('rolled into CARD');
    const audit = await tdb.db
      .selectFrom('audit_log')
      .select(['actor', 'action', 'details'])
      .where('event_id', '=', tieredId)
      .where('action', 'like', 'allocation.%')
      .orderBy('id')
      .execute();
    expect(audit.map((a) => [a.actor, a.action])).toEqual([
      [PROMOTER.email, 'allocation.codes_issued'],
      [PROMOTER.email, 'allocation.rolled'],
    ]);
    expect(audit[1]!.details).toMatchObject({ from: 'FANCLUB', into: 'CARD', seats: 16, reason: 'fan club allocation cancelled' });
    await page.screenshot({ path: join(resultsDir, 'console-event-tiers.png'), fullPage: true });

    // The war room shows the same tiers, live from its stream; a promoter may roll there too, not pause.
    await page.goto(`${baseUrl}/events/${tieredId}/war-room`);
    await page.getByTestId('wr-connection').and(page.locator('[data-state="live"]')).waitFor();
    const wrTiers = page.getByTestId('tiers-panel');
    expect(
      await wrTiers
        .getByTestId('tier-row')
        .evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-tier'), r.getAttribute('data-phase')])),
    ).toEqual([
      ['FANCLUB', 'ROLLED'],
      ['CARD', 'UPCOMING'],
      ['GENERAL', 'UPCOMING'],
    ]);
    expect(await wrTiers.locator('[data-tier="CARD"]').getByTestId('tier-capacity').textContent()).toBe('26');
    expect(await wrTiers.locator('[data-tier="CARD"]').getByTestId('tier-roll-now').count()).toBe(1);
    expect(await page.getByTestId('wr-controls').count()).toBe(0);
    // Each presale tier's own queue: running, nobody waiting, no controller yet; a promoter has no per-tier pause.
    expect(await wrTiers.locator('[data-tier="CARD"]').getAttribute('data-paused')).toBe('false');
    expect(await wrTiers.locator('[data-tier="CARD"]').getByTestId('tier-heartbeat').getAttribute('data-fresh')).toBe('false');
    expect(await wrTiers.locator('[data-tier="CARD"]').getByTestId('tier-watermark').textContent()).toBe('0');
    expect(await wrTiers.getByTestId('tier-pause').count()).toBe(0);
    await page.screenshot({ path: join(resultsDir, 'console-war-room-tiers.png'), fullPage: true });

    // An operator pauses the card partner's queue only (reason required, confirmed): a PAUSED badge on its row, the
    // event's own queue untouched; then resumes it.
    await tdb.db.transaction().execute((trx) => createUser(trx, { ...OPERATOR, role: 'operator' }, 'test'));
    const opsContext = await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: TIMEZONE });
    try {
      const ops = await opsContext.newPage();
      await ops.goto(`${baseUrl}/sign-in`);
      await signIn(ops, OPERATOR);
      await ops.waitForURL(`${baseUrl}/`);
      await ops.goto(`${baseUrl}/events/${tieredId}/war-room`);
      const opsRow = (code: string) => ops.getByTestId('tiers-panel').locator(`[data-tier="${code}"]`);
      await opsRow('CARD').getByTestId('tier-pause').click();
      const pauseDialog = ops.getByTestId('tier-dialog-pause');
      expect(await pauseDialog.textContent()).toContain("The event's other queues");
      await pauseDialog.getByTestId('tier-confirm-queue').click();
      expect(await pauseDialog.getByTestId('error-reason').textContent()).toBe(sentence('give a reason'));
      await pauseDialog.getByLabel('Why pause? (goes to the audit log)').fill('card partner BIN list wrong');
      await pauseDialog.getByTestId('tier-confirm-queue').click();
      await expect.poll(() => opsRow('CARD').getAttribute('data-paused')).toBe('true');
      expect(await opsRow('CARD').getByTestId('tier-paused-by').textContent()).toContain('card partner BIN list wrong');
      expect(await opsRow('GENERAL').getAttribute('data-paused')).toBe('false');
      const { paused } = await tdb.db.selectFrom('queue_state').select('paused').where('event_id', '=', tieredId).executeTakeFirstOrThrow();
      expect(paused).toBe(false);
      // The event-level pause says it stops every queue.
      await ops.getByTestId('wr-pause').click();
      expect(await ops.getByTestId('wr-pause-all-queues').textContent()).toContain('every queue of the event');
      await ops.getByTestId('wr-dialog-pause').getByRole('button', { name: 'Cancel' }).click();
      await opsRow('CARD').getByTestId('tier-resume').click();
      await ops.getByTestId('tier-dialog-resume').getByLabel('Reason (goes to the audit log)').fill('BIN list fixed');
      await ops.getByTestId('tier-dialog-resume').getByTestId('tier-confirm-queue').click();
      await expect.poll(() => opsRow('CARD').getAttribute('data-paused')).toBe('false');
    } finally {
      await opsContext.close();
    }

    // Once a tier has rolled the tiers are fixed: the edit form says so at the field.
    await page.goto(`${baseUrl}/events/${tieredId}/edit`);
    await page
      .getByTestId('tiers')
      .getByText(/Tiers: fixed: the first presale tier opened/)
      .waitFor();
    expect(await page.getByTestId('tier-editor').nth(0).getByLabel('Share (%)').isDisabled()).toBe(true);
  });

  it('creates a registration lottery from the form (its settings refused inline first), shows the lottery, refuses the draw while registration is open, then draws: winners per window, the seed revealed, verified', async () => {
    await page.goto(`${baseUrl}/events/new`);
    const form = page.getByTestId('event-form');
    await form.getByLabel('Event name').fill(LOTTERY_NAME);
    await form.getByLabel('Venue', { exact: true }).fill('Lottery Hall');
    await form.getByLabel('Show starts').fill('2031-06-01T19:30:00');
    await form.getByLabel('On sale from').fill('2031-03-01T10:00:00');
    const level = form.getByTestId('price-level-row').first();
    await level.getByLabel('Code').fill('P1');
    await level.getByLabel('Name').fill('Stalls');
    await level.getByLabel('Price (USD)').fill('90');
    const section = form.getByTestId('section-editor').first();
    await section.getByLabel('Code').fill('STALLS');
    await section.getByLabel('Price level').selectOption('P1');
    await section.getByLabel('Rows', { exact: true }).fill('4');
    await section.getByLabel('Seats per row').fill('10');

    // The lottery's settings appear with the mode (and the presale tiers go: a lottery sells through its draw).
    expect(await form.getByTestId('lottery-settings').count()).toBe(0);
    await form.getByLabel('Fairness mode').selectOption('REGISTRATION_LOTTERY');
    const lottery = form.getByTestId('lottery-settings');
    await lottery.waitFor();
    expect(await form.getByTestId('tiers').count()).toBe(0);
    // Registration has been open since January (so fans can register now) and, wrongly, closes after the on-sale.
    await lottery.getByLabel('Registration opens').fill('2026-01-01T10:00:00');
    await lottery.getByLabel('Registration closes').fill('2031-03-05T10:00:00');
    await lottery.getByLabel('Expected conversion (%)').fill('150');
    await lottery.getByLabel('Purchase windows (cohorts)').fill('2');
    await lottery.getByLabel('Minutes per purchase window').fill('30');
    await form.getByRole('button', { name: 'Create event' }).click();
    expect(await page.getByTestId('error-lottery.registrationClosesAt').textContent()).toBe(
      sentence('registration must close by the on-sale'),
    );
    expect(await page.getByTestId('error-lottery.expectedConversion').textContent()).toBe(sentence('a percentage above 0, at most 100'));
    expect(await tdb.db.selectFrom('events').select('id').where('name', '=', LOTTERY_NAME).execute()).toEqual([]);
    await lottery.getByLabel('Registration closes').fill('2031-01-01T10:00:00');
    await lottery.getByLabel('Expected conversion (%)').fill('80');
    // 40 seats at 80%: the draw invites winners asking for 50.
    await expect.poll(() => lottery.getByTestId('lottery-summary-invited').textContent(), { timeout: PAGE_WAIT_MS }).toBe('50');
    await page.screenshot({ path: join(resultsDir, 'console-event-form-lottery.png'), fullPage: true });
    await page.getByTestId('sign-off-on-create').check();
    await form.getByRole('button', { name: 'Create event' }).click();
    await page.waitForURL(/\/events\/[0-9a-f-]{36}$/);
    const lotteryId = page.url().split('/').pop()!;
    const row = await tdb.db.selectFrom('lotteries').selectAll().where('event_id', '=', lotteryId).executeTakeFirstOrThrow();
    // 10:00 in New York: 15:00 UTC in January.
    expect(row).toMatchObject({
      registration_opens_at: new Date('2026-01-01T15:00:00Z'),
      registration_closes_at: new Date('2031-01-01T15:00:00Z'),
      expected_conversion: 0.8,
      cohorts: 2,
      cohort_minutes: 30,
      drawn_at: null,
    });

    const panel = page.getByTestId('lottery-panel');
    await panel.waitFor();
    expect(await panel.getAttribute('data-phase')).toBe('OPEN');
    expect(await panel.getByTestId('lottery-registrations').textContent()).toBe('0');
    expect(await panel.getByTestId('lottery-seats-offered').textContent()).toBe('40');
    expect(await panel.getByTestId('lottery-target').textContent()).toBe('50');
    expect(await panel.getByTestId('lottery-commitment').textContent()).toBe(row.seed_commitment);
    expect(await panel.getByTestId('lottery-seed').textContent()).toContain('not revealed yet');

    // The edit form reads the settings back (saving them changes nothing); registration is open, so they are fixed.
    await page.goto(`${baseUrl}/events/${lotteryId}/edit`);
    const edit = page.getByTestId('event-form');
    const settings = edit.getByTestId('lottery-settings');
    await settings.waitFor();
    expect(await settings.getByLabel('Registration closes').inputValue()).toBe('2031-01-01T10:00');
    expect(await settings.getByLabel('Expected conversion (%)').inputValue()).toBe('80');
    expect(await settings.getByLabel('Minutes per purchase window').isDisabled()).toBe(true);
    await settings.getByText(/Lottery: fixed: registration opened/).waitFor();
    await edit.getByRole('button', { name: 'Save changes' }).click();
    expect(await page.getByTestId('saved').textContent()).toContain('Nothing to save');

    // Sixty fans register (through the domain, as the store API registers them), asking for 1 or 2 seats.
    for (let i = 0; i < 60; i++)
      await tdb.db
        .transaction()
        .execute((trx) =>
          registerForLottery(trx, { eventId: lotteryId, accountId: `browser-fan-${i}`, quantity: (i % 2) + 1, now: new Date() }),
        );
    await page.goto(`${baseUrl}/events/${lotteryId}`);
    await expect.poll(() => panel.getByTestId('lottery-registrations').textContent(), { timeout: PAGE_WAIT_MS }).toBe('60');

    // Registration is still open: the draw is refused, and says why.
    await panel.getByTestId('lottery-draw').click();
    const dialog = page.getByTestId('lottery-dialog-draw');
    await dialog.getByTestId('lottery-confirm-draw').click();
    const refused = dialog.getByTestId('lottery-draw-error');
    await refused.waitFor();
    expect(await refused.getAttribute('data-code')).toBe('DRAW_TOO_EARLY');
    expect(await refused.textContent()).toContain('registration is still open');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(
      (await tdb.db.selectFrom('lotteries').select('drawn_at').where('event_id', '=', lotteryId).executeTakeFirstOrThrow()).drawn_at,
    ).toBeNull();

    // Time passes: registration closes; the panel says the draw is due, and the draw runs.
    await sql`UPDATE lotteries SET registration_closes_at = now() - interval '1 second' WHERE event_id = ${lotteryId}`.execute(tdb.db);
    await page.reload();
    await panel.and(page.locator('[data-phase="DRAW_DUE"]')).waitFor();
    await panel.getByTestId('lottery-draw').click();
    await dialog.getByTestId('lottery-confirm-draw').click();
    await expect.poll(() => panel.getAttribute('data-phase'), { timeout: PAGE_WAIT_MS }).toBe('DRAWN');
    expect(await dialog.count()).toBe(0);
    expect(await panel.getByTestId('lottery-draw').count()).toBe(0);

    const drawn = await tdb.db.selectFrom('lotteries').selectAll().where('event_id', '=', lotteryId).executeTakeFirstOrThrow();
    expect(drawn.drawn_by).toBe(PROMOTER.email);
    const winners = await tdb.db.selectFrom('lottery_winners').select(['cohort']).where('event_id', '=', lotteryId).execute();
    expect(await panel.getByTestId('lottery-winners').textContent()).toBe(String(winners.length));
    expect(await panel.getByTestId('lottery-non-winners').textContent()).toBe(String(60 - winners.length));
    expect(await panel.getByTestId('lottery-seed').textContent()).toBe(drawn.seed_hex);
    const perCohort = await panel
      .getByTestId('lottery-cohort')
      .evaluateAll((rows) =>
        rows.map((r) => [r.getAttribute('data-cohort'), r.querySelector('[data-testid="lottery-cohort-winners"]')?.textContent]),
      );
    expect(perCohort).toEqual([0, 1].map((c) => [String(c), String(winners.filter((w) => w.cohort === c).length)]));
    await expect.poll(() => panel.getByTestId('lottery-verify').getAttribute('data-ok'), { timeout: PAGE_WAIT_MS }).toBe('true');
    expect(await panel.getByTestId('lottery-verify-result').textContent()).toContain(`the ${winners.length} winners re-derived`);
    // Every registered fan was told, in the draw's transaction.
    const { rows: told } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM notifications WHERE event_id = ${lotteryId}`.execute(
      tdb.db,
    );
    expect(told[0]!.n).toBe(60);
    await page.screenshot({ path: join(resultsDir, 'console-event-lottery.png'), fullPage: true });
  });

  it('logged no errors in the page', () => {
    expect(pageErrors.filter((m) => !/status of (401|403|404|409)/.test(m))).toEqual([]);
  });
});
