import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildBff } from '@onsale/bff';
import { AdmissionController, pauseQueue, planAdmission } from '@onsale/shared/admission';
import { parseEventFile } from '@onsale/shared/events';
import { createEvent } from '@onsale/shared/sale-setup';
import { createTestDatabase, type TestDatabase, PAGE_WAIT_MS } from '@onsale/shared/testing';
import { createUser } from '@onsale/shared/users';
import { buildStoreApi } from '@onsale/store-api';
import { loadStoreApiConfig } from '@onsale/store-api/env';
import { cardNumber, eventually, launchChromium, numberAt as numberIn, signIn as signInAs, builtConsole } from './browser-helpers';

// The war room and the admission plan preview in Chromium, against the product as `npm start` runs it: the store
// API, the admission controller and the BFF serving a production build of the console, on one real PostgreSQL.
// A scripted load joins the queue and holds seats through the store API while the page watches.

const consoleRoot = fileURLToPath(new URL('..', import.meta.url));
const screenshots = join(consoleRoot, 'test', 'screenshots');
const OPERATOR = { email: 'ops@warroom.test', password: 'operator password for the war room' };
const VIEWER = { email: 'viewer@warroom.test', password: 'viewer password for the war room' };
const EVENT_NAME = 'War Room Rehearsal';
const FANS = 10;
/** Fans of the load who pay for their hold. */
const PAYING = 7;

let tdb: TestDatabase;
let store: Awaited<ReturnType<typeof buildStoreApi>>;
let bff: Awaited<ReturnType<typeof buildBff>>;
let controller: AdmissionController;
let browser: Browser;
let page: Page;
let storeUrl: string;
let baseUrl: string;
let eventId: string;
let distDir: string;
const pageErrors: string[] = [];
/**
 * The clock the admission controller ticks on and the war room judges each event's state by: the wall clock, until a
 * test stops it (see the board's test) so that a controller's heartbeat is as fresh as its last tick whatever the
 * machine's load.
 */
let stoppedAt: number | null = null;
const clock = () => stoppedAt ?? Date.now();

/**
 * A production build of the console in a directory of this run's own: the other browser test may be rebuilding
 * apps/console/dist at the same moment.
 */
beforeAll(async () => {
  distDir = await builtConsole();
  tdb = await createTestDatabase(inject('templateDatabaseUrl'));
  ({ eventId } = await tdb.db.transaction().execute((trx) =>
    createEvent(
      trx,
      parseEventFile({
        name: EVENT_NAME,
        venueName: 'Rehearsal Arena',
        onsaleAt: new Date(Date.now() - 60_000).toISOString(),
        startsAt: new Date(Date.now() + 7 * 86_400_000).toISOString(),
        fairnessMode: 'FIFO',
        priceLevels: [
          { code: 'P1', name: 'Floor', priceCents: 9_000 },
          { code: 'P2', name: 'Tier', priceCents: 4_500 },
        ],
        sections: [
          { code: 'FLR', name: 'Floor', priceLevel: 'P1', qualityRank: 1, rowCount: 5, seatsPerRow: 10 },
          { code: 'T1', name: 'Tier 1', priceLevel: 'P2', qualityRank: 2, rowCount: 5, seatsPerRow: 10 },
        ],
      }),
      'test',
      { signOff: true },
    ),
  ));
  await tdb.db.transaction().execute(async (trx) => {
    await createUser(trx, { ...OPERATOR, role: 'operator' }, 'test');
    await createUser(trx, { ...VIEWER, role: 'viewer' }, 'test');
  });

  // Request limits and the bot gate off, as in the store API's own tests: the scripted load is one loopback client
  // with no browser headers standing for many fans.
  store = await buildStoreApi({
    db: tdb.db,
    config: loadStoreApiConfig({
      NODE_ENV: 'test',
      DEV_AUTH: 'true',
      RATE_LIMIT_ENABLED: 'false',
      BOT_GATE_ENABLED: 'false',
      LOAD_SHED_ENABLED: 'false',
    }),
  });
  await store.listen({ port: 0, host: '127.0.0.1' });
  storeUrl = `http://127.0.0.1:${(store.server.address() as AddressInfo).port}`;
  controller = new AdmissionController({ db: tdb.db, connectionString: tdb.url, tickMs: 500, instanceId: 'war-room-test', clock });
  await controller.start();
  bff = await buildBff({ db: tdb.db, consoleDir: distDir, storeApiUrls: [storeUrl], clock: () => new Date(clock()) });
  await bff.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(bff.server.address() as AddressInfo).port}`;

  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  // The staleness test mutes the stream's figures while its connection stays up (the BFF's pings still come): the
  // page's EventSource drops its 'message' events while `window.__muteFigures` is set.
  await page.addInitScript(() => {
    // eslint-disable-next-line @typescript-eslint/unbound-method -- called below with the EventSource as `this`
    const add = EventSource.prototype.addEventListener;
    EventSource.prototype.addEventListener = function (this: EventSource, type: string, listener: unknown, options?: unknown) {
      if (type !== 'message' || typeof listener !== 'function') return add.call(this, type, listener as EventListener, options as boolean);
      const muted = (e: Event) => {
        if (!(window as unknown as { __muteFigures?: boolean }).__muteFigures) (listener as EventListener).call(this, e);
      };
      return add.call(this, type, muted, options as boolean);
    } as typeof add;
  });
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text());
  });
  mkdirSync(screenshots, { recursive: true });
  // The console's production build (or the wait for another file's), Chromium and three servers: past the default
  // two minutes when two full runs share the machine's two cores (CPU, not a timed wait).
});

afterAll(async () => {
  await browser?.close();
  await bff?.close();
  await controller?.stop();
  await store?.close();
  await tdb?.drop();
});

/** A fan of the scripted load: signed in through the store API's development sign-in, on their own device. */
interface Fan {
  id: string;
  headers: Record<string, string>;
  queueToken?: string;
  admissionToken?: string;
  holdId?: string;
}

async function storeCall(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${storeUrl}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function newFan(n: number): Promise<Fan> {
  const id = `war-room-fan-${n}`;
  const login = await storeCall('POST', '/auth/dev-login', {}, { accountId: id });
  expect(login.status).toBe(200);
  return { id, headers: { authorization: `Bearer ${login.json.token as string}`, 'x-device-id': `device-of-${id}` } };
}

async function joinQueue(fan: Fan): Promise<void> {
  const r = await storeCall('POST', `/events/${eventId}/queue`, fan.headers);
  expect(r.status).toBeLessThan(300);
  fan.queueToken = r.json.queueToken as string;
}

async function status(fan: Fan): Promise<{ state: string; admissionToken?: string }> {
  const r = await storeCall('GET', `/events/${eventId}/queue/status`, { ...fan.headers, 'x-queue-token': fan.queueToken! });
  expect(r.status).toBe(200);
  return r.json as { state: string; admissionToken?: string };
}

const numberAt = (testId: string) => numberIn(page, testId);
const signIn = (user: { email: string; password: string }) => signInAs(page, user);

/** Opens the control dialog `kind`, fills the reason (and rate), confirms, and waits for the dialog to close. */
async function control(kind: 'pause' | 'resume' | 'rate', reason: string, rate?: string): Promise<void> {
  await page.getByTestId(`wr-${kind}`).click();
  const dialog = page.getByTestId(`wr-dialog-${kind}`);
  await dialog.waitFor();
  if (rate !== undefined) await dialog.getByLabel('Admits per minute').fill(rate);
  await dialog.getByLabel(/reason|Why pause/i).fill(reason);
  await dialog.getByTestId('wr-confirm').click();
  await dialog.waitFor({ state: 'detached' });
}

describe('the war room in Chromium', () => {
  const fans: Fan[] = [];

  it('an operator signs in and opens the war room of an event: live, ADMITTING, nothing joined yet', async () => {
    await page.goto(`${baseUrl}/events/${eventId}/war-room`);
    await page.waitForURL(/\/sign-in\?redirect=/);
    await signIn(OPERATOR);
    await page.waitForURL(`**/events/${eventId}/war-room`);
    await page.getByTestId('wr-title').waitFor();
    await page.locator('[data-testid="wr-connection"][data-state="live"]').waitFor();
    await eventually(async () => expect(await page.getByTestId('wr-state').textContent()).toBe('ADMITTING'));
    expect(await numberAt('wr-joined')).toBe(0);
    expect(await numberAt('wr-held')).toBe(0);
    expect(await numberAt('wr-available')).toBe(100);
    expect(await numberAt('wr-drift')).toBe(0);
    const plan = planAdmission({
      seats: 100,
      ticketsPerOrder: 2.5,
      targetSaleMinutes: 25,
      overbookFactor: 1.3,
      checkoutMinutes: 6,
      paymentTps: 1000,
    });
    expect(await page.getByTestId('wr-plan-per-min').textContent()).toBe(
      plan.admitsPerMinute.toLocaleString('en-US', { maximumFractionDigits: 1 }),
    );
  });

  it('a rate override, confirmed in a dialog with a reason, is refused out of bounds at the field and then applied', async () => {
    await page.getByTestId('wr-rate').click();
    const dialog = page.getByTestId('wr-dialog-rate');
    await dialog.getByLabel('Admits per minute').fill('250000');
    await dialog.getByLabel(/reason/i).fill('rehearsal: let the scripted load in');
    await dialog.getByTestId('wr-confirm').click();
    expect(await dialog.getByTestId('error-perMinute').textContent()).toContain('100,000');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await control('rate', 'rehearsal: let the scripted load in', '600');
    await eventually(async () => expect(await page.getByTestId('wr-controls').textContent()).toContain('600/min set by an operator'));
  });

  it('watches the figures move, without a reload, while a scripted load joins the queue and holds seats through the store API', async () => {
    const navigations: string[] = [];
    page.on('framenavigated', (f) => navigations.push(f.url()));
    for (let n = 0; n < FANS; n++) fans.push(await newFan(n));
    for (const fan of fans) await joinQueue(fan);
    await eventually(async () => expect(await numberAt('wr-joined')).toBe(FANS));

    // The controller admits them at the operator's rate; each fan polls, takes the admission token and holds 2 seats.
    for (const fan of fans) {
      const s = await eventually(async () => {
        const r = await status(fan);
        expect(r.state).toBe('ADMITTED');
        return r;
      });
      fan.admissionToken = s.admissionToken!;
      const hold = await storeCall(
        'POST',
        `/events/${eventId}/holds`,
        { ...fan.headers, 'x-admission-token': fan.admissionToken },
        { section: 'FLR', quantity: 2 },
      );
      expect(hold.status).toBe(201);
      fan.holdId = hold.json.holdId as string;
    }
    await eventually(async () => expect(await numberAt('wr-held')).toBe(2 * FANS));
    // Most of them pay: held seats become sold, and the payment attempts show against the ceiling.
    for (const [i, fan] of fans.slice(0, PAYING).entries()) {
      const paid = await storeCall(
        'POST',
        `/holds/${fan.holdId}/checkout`,
        { ...fan.headers, 'x-admission-token': fan.admissionToken!, 'idempotency-key': `war-room-checkout-${i}` },
        { payment: { instrument: { type: 'card', number: cardNumber(i) } } },
      );
      expect(paid.status).toBe(200);
    }
    await eventually(async () => {
      expect(await numberAt('wr-held')).toBe(2 * (FANS - PAYING));
      expect(await numberAt('wr-sold')).toBe(2 * PAYING);
      expect(await numberAt('wr-available')).toBe(100 - 2 * FANS);
      expect(await page.getByTestId('wr-checkout-errors').textContent()).toBe('0%');
      expect(await numberAt('wr-watermark')).toBeGreaterThanOrEqual(FANS);
      expect(await numberAt('wr-waiting')).toBe(0);
    });
    expect(await numberAt('wr-drift')).toBe(0);
    // Hold latency comes from the store API's /metrics: measured now that holds were made.
    await eventually(async () => expect(await page.getByTestId('wr-hold-p99').textContent()).toMatch(/\d+ ms/));
    expect(navigations).toEqual([]);
    expect(Number(await page.getByTestId('wr-inventory-chart').getAttribute('data-points'))).toBeGreaterThan(3);
  });

  it('pauses with a reason: the page shows PAUSED unmistakably and the store API tells a waiting fan PAUSED; resume lets fans in again', async () => {
    const late = await newFan(99);
    await control('pause', 'payment provider returning 429s');
    await eventually(async () => expect(await page.getByTestId('wr-state').textContent()).toBe('PAUSED'));
    expect(await page.getByTestId('wr-fan-state').textContent()).toBe('PAUSED');
    expect(await page.getByTestId('wr-paused-by').textContent()).toContain(`Paused by ${OPERATOR.email}`);
    expect(await page.getByTestId('wr-paused-by').textContent()).toContain('payment provider returning 429s');
    // One PAUSED notice: the banner says who and why; the pause is not repeated as an alert.
    expect(await page.locator('[data-testid="wr-alert"][data-code="QUEUE_PAUSED"]').count()).toBe(0);

    // A fan who joins now is told PAUSED by the store API's status route (the queue fails closed).
    await joinQueue(late);
    await eventually(async () => expect((await status(late)).state).toBe('PAUSED'));
    await page.screenshot({ path: join(screenshots, 'war-room-paused.png'), fullPage: true });

    await control('resume', 'gateway healthy again');
    await eventually(async () => expect(await page.getByTestId('wr-state').textContent()).toBe('ADMITTING'));
    await eventually(async () => expect((await status(late)).state).toBe('ADMITTED'));
    await eventually(async () => expect(await numberAt('wr-joined')).toBe(FANS + 1));

    const audit = await tdb.db
      .selectFrom('audit_log')
      .select(['action', 'actor'])
      .where('event_id', '=', eventId)
      .where('action', 'in', ['queue.paused', 'queue.resumed', 'queue.rate_override'])
      .orderBy('id')
      .execute();
    expect(audit).toEqual([
      { action: 'queue.rate_override', actor: OPERATOR.email },
      { action: 'queue.paused', actor: OPERATOR.email },
      { action: 'queue.resumed', actor: OPERATOR.email },
    ]);
  });

  it('a dropped stream shows "connection lost" and greys the figures, then comes back live by itself', async () => {
    await page.route('**/trpc/warRoom.watch**', (route) => route.abort());
    bff.server.closeAllConnections();
    await page.locator('[data-testid="wr-connection"][data-state="lost"]').waitFor({ timeout: PAGE_WAIT_MS });
    expect(await page.getByTestId('wr-area').getAttribute('data-live')).toBe('false');
    expect(await page.getByTestId('wr-connection').textContent()).toContain('Connection lost');
    await page.screenshot({ path: join(screenshots, 'war-room-connection-lost.png') });
    await page.unroute('**/trpc/warRoom.watch**');
    await page.locator('[data-testid="wr-connection"][data-state="live"]').waitFor({ timeout: PAGE_WAIT_MS });
    expect(await page.getByTestId('wr-area').getAttribute('data-live')).toBe('true');
  });

  it('figures that stop coming while the connection stays up go stale: "connection lost", their age counting up, then live again', async () => {
    await page.locator('[data-testid="wr-connection"][data-state="live"]').waitFor({ timeout: PAGE_WAIT_MS });
    expect(await page.getByTestId('wr-connection').textContent()).toMatch(/^Live · updated (just now|\d+ s ago)$/);
    const mute = (on: boolean) => page.evaluate((v) => ((window as unknown as { __muteFigures?: boolean }).__muteFigures = v), on);
    await mute(true);
    try {
      // No figures for STALE_AFTER_MS (4.5 s): the page says so by itself and stays so (tRPC may reconnect a quiet
      // stream meanwhile; with the page's staleness timer broken, that reconnect flickered it back to live).
      await page.locator('[data-testid="wr-connection"][data-state="lost"]').waitFor({ timeout: PAGE_WAIT_MS });
      expect(await page.getByTestId('wr-area').getAttribute('data-live')).toBe('false');
      expect(await page.getByTestId('wr-connection').textContent()).toMatch(
        /^Connection lost — reconnecting… The figures below are from \d\d:\d\d:\d\d \(\d+ s ago\) and are not live\.$/,
      );
      const age = async () => Number((await page.getByTestId('wr-connection-age').textContent())!.match(/^(\d+) s ago$/)![1]);
      const first = await age();
      expect(first).toBeGreaterThanOrEqual(4);
      // The age counts up on the banner's own clock while nothing else on the page changes.
      await expect.poll(age, { timeout: PAGE_WAIT_MS }).toBeGreaterThan(first);
      expect(await page.getByTestId('wr-connection').getAttribute('data-state')).toBe('lost');
    } finally {
      await mute(false);
    }
    await page.locator('[data-testid="wr-connection"][data-state="live"]').waitFor({ timeout: PAGE_WAIT_MS });
    expect(await page.getByTestId('wr-area').getAttribute('data-live')).toBe('true');
  });

  it('saves the war-room screenshot', async () => {
    // Three more points in the charts first (a tick each).
    const chart = page.getByTestId('wr-inventory-chart');
    const points = Number(await chart.getAttribute('data-points'));
    await eventually(async () => expect(Number(await chart.getAttribute('data-points'))).toBeGreaterThanOrEqual(points + 3));
    await page.locator('[data-testid="wr-area"][data-live="true"]').waitFor();
    await page.screenshot({ path: join(screenshots, 'war-room.png'), fullPage: true });
  });

  it('the board shows every on-sale of a busy Saturday (40 at once), one tile each, from one stream', async () => {
    // 39 more events open now beside the rehearsal; the controller picks them all up. One is paused.
    const others: string[] = [];
    for (let n = 1; n < 40; n++) {
      const { eventId: id } = await tdb.db.transaction().execute((trx) =>
        createEvent(
          trx,
          parseEventFile({
            name: `Saturday on-sale ${String(n).padStart(2, '0')}`,
            venueName: `Venue ${n}`,
            onsaleAt: new Date(Date.now() - 30_000).toISOString(),
            startsAt: new Date(Date.now() + 7 * 86_400_000).toISOString(),
            priceLevels: [{ code: 'P', name: 'All', priceCents: 5_000 }],
            sections: [{ code: 'S', name: 'Stalls', priceLevel: 'P', qualityRank: 1, rowCount: 2, seatsPerRow: 10 }],
          }),
          'test',
          { signOff: true },
        ),
      );
      others.push(id);
    }
    await pauseQueue(tdb.db, others[6]!, { actor: OPERATOR.email, reason: 'promoter asked to hold the open' });

    // Until the controller's first tick of a new event, that event fails closed and counts as paused; so does one
    // whose last tick is older than the heartbeat's limit, which a pass over 40 events on a loaded machine can be.
    // The clock stops here, and one pass of the controller ticks every event at that instant: each heartbeat is then
    // fresh at the time the board judges it, and only the operator's pause counts.
    stoppedAt = Date.now();
    try {
      const pass = await controller.tickOnce();
      for (const id of [eventId, ...others]) expect(pass.events).toContainEqual(expect.objectContaining({ eventId: id, status: 'ticked' }));

      await page.getByTestId('nav-war-room').click();
      await page.waitForURL('**/war-room');
      // The board is read every 2 s (40 events at once): generous bounds, the figures are already what they will be.
      const board = (fn: () => Promise<void>) => eventually(fn);
      await board(async () => expect(await page.getByTestId('board-count').textContent()).toBe('40'));
      const tile = page.locator(`[data-testid="board-tile"][data-event-id="${eventId}"]`);
      await board(async () => expect(await tile.getAttribute('data-state')).toBe('ADMITTING'));
      const paused = page.locator(`[data-testid="board-tile"][data-event-id="${others[6]}"]`);
      await board(async () => expect(await paused.getAttribute('data-state')).toBe('PAUSED'));
      expect(await paused.getByTestId('board-tile-paused').textContent()).toContain('promoter asked to hold the open');
      await board(async () => expect(await page.getByTestId('board-paused').textContent()).toBe('1'));
      await page.locator('[data-testid="wr-area"][data-live="true"]').waitFor();
      await page.screenshot({ path: join(screenshots, 'war-room-board.png'), fullPage: true, animations: 'disabled' });
      await tile.click();
      await page.waitForURL(`**/events/${eventId}/war-room`);
    } finally {
      stoppedAt = null;
    }
  });

  it("the plan preview shows the event's pacing inputs and follows every change, with stranded seats by hold TTL", async () => {
    await page.goto(`${baseUrl}/events/${eventId}/plan`);
    await page.getByTestId('plan-title').waitFor();
    const inputs = page.getByTestId('plan-inputs');
    expect(await inputs.getByLabel('Seats on sale').inputValue()).toBe('100');
    expect(await inputs.getByLabel('A hold lasts (min)').inputValue()).toBe('6');
    await page.locator('[data-testid="plan-stranded-chart"] .recharts-surface').waitFor();

    // The reference sale's stadium (docs/architecture.md): 60,000 seats, 2.5 per order, 25 min, x1.3, 6-min checkout, 1,000 TPS.
    await inputs.getByLabel('Seats on sale').fill('60000');
    const stadium = planAdmission({
      seats: 60_000,
      ticketsPerOrder: 2.5,
      targetSaleMinutes: 25,
      overbookFactor: 1.3,
      checkoutMinutes: 6,
      paymentTps: 1000,
      holdTtlMinutes: [6, 15],
    });
    await eventually(async () => expect(await numberAt('plan-admits')).toBe(Math.round(stadium.admitsPerMinute)));
    expect(await numberAt('plan-shoppers')).toBe(Math.round(stadium.concurrentShoppers));
    expect(await page.getByTestId('plan-duration').textContent()).toBe('25 min');
    expect(await numberAt('plan-stranded')).toBe(Math.round(stadium.strandedSeatsByHoldTtl![0]!.strandedSeats));
    await inputs.getByLabel('A hold lasts (min)').fill('15');
    await eventually(async () =>
      expect(await numberAt('plan-stranded')).toBe(Math.round(stadium.strandedSeatsByHoldTtl![1]!.strandedSeats)),
    );
    expect(await page.getByTestId('plan-whatif').textContent()).toContain('not saved');

    // A payment ceiling below the pacing rate binds, and the expected duration grows.
    await inputs.getByLabel('Payments a second').fill('10');
    await eventually(async () =>
      expect(await page.getByTestId('plan-binding').textContent()).toContain('payments per second the card processor accepts'),
    );
    await inputs.getByLabel('Payments a second').fill('1000');

    // A value the planner refuses is shown at its field.
    await inputs.getByLabel('Fans let in per buyer').fill('0.5');
    await page.getByTestId('error-overbookFactor').waitFor();
    expect(await page.getByTestId('plan-preview').getAttribute('data-valid')).toBe('false');
    await inputs.getByLabel('Fans let in per buyer').fill('1.3');
    await inputs.getByLabel('A hold lasts (min)').fill('6');
    await page.locator('[data-testid="plan-preview"][data-valid="true"]').waitFor();
    await page.screenshot({ path: join(screenshots, 'plan-preview.png'), fullPage: true });
  });

  it('a viewer watches the same war room but is offered no controls', async () => {
    await page.getByTestId('sign-out').click();
    await page.waitForURL('**/sign-in');
    await page.goto(`${baseUrl}/events/${eventId}/war-room`);
    await page.waitForURL(/\/sign-in\?redirect=/);
    await signIn(VIEWER);
    await page.waitForURL(`**/events/${eventId}/war-room`);
    await page.locator('[data-testid="wr-connection"][data-state="live"]').waitFor();
    expect(await page.getByTestId('wr-controls').count()).toBe(0);
    expect(await numberAt('wr-held')).toBe(2 * (FANS - PAYING));
    expect(await numberAt('wr-sold')).toBe(2 * PAYING);
  });

  it('logged no errors in the page', () => {
    // The aborted stream of the connection test is expected; so is the 401 of the first, signed-out visit.
    expect(pageErrors.filter((m) => !/status of 401|ERR_FAILED|ERR_CONNECTION|net::|EventSource/.test(m))).toEqual([]);
  });
});
