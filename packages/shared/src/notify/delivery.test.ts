import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger, run, type Runner } from 'graphile-worker';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createMetrics, type Metrics } from '../metrics/index.js';
import { createOpenEvent, createTestDatabase, waitUntil, type TestDatabase } from '../testing/index.js';
import {
  addWebhookEndpoint,
  DELIVERY_HEADER,
  enqueueDeliveries,
  notifyTasks,
  setWebhookEndpointActive,
  SIGNATURE_HEADER,
  verifyWebhookSignature,
  WEBHOOK_DELIVER_TASK,
  WEBHOOK_LANES_PER_ENDPOINT,
  type WebhookPayload,
} from './index.js';

// Deliveries end to end: real PostgreSQL, a real graphile-worker runner, and a real HTTP receiver whose behaviour
// each test sets per path (answer, refuse with 500, never answer, or hold the request until released).

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}
type Behaviour = { kind: 'ok' } | { kind: 'status'; status: number } | { kind: 'silent' } | { kind: 'hold'; held: ServerResponse[] };

let t: TestDatabase;
let server: Server;
let base: string;
let runner: Runner;
let metrics: Metrics;
const received: Received[] = [];
const behaviours = new Map<string, Behaviour>();

// The receiver is on this machine, which webhooks may not reach by default: the tests' install names it.
const LOCAL = { allowHosts: ['127.0.0.1'] };

const requestsTo = (path: string) => received.filter((r) => r.path === path);

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const b = behaviours.get(path) ?? { kind: 'ok' };
      if (b.kind === 'silent') return; // never answers: the sender's timeout must end it
      if (b.kind === 'hold') return void b.held.push(res);
      res.writeHead(b.kind === 'status' ? b.status : 200, { 'Content-Type': 'text/plain' });
      res.end(b.kind === 'status' ? `receiver says ${b.status}` : 'ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  metrics = createMetrics();
  runner = await run({
    connectionString: t.url,
    concurrency: 12,
    noHandleSignals: true,
    pollInterval: 200,
    taskList: notifyTasks({
      db: t.db,
      metrics,
      // Until the waitlist's renderNotifications lands: the rows themselves.
      render: (ids) => t.db.selectFrom('notifications').selectAll().where('id', 'in', ids).orderBy('id').execute(),
      outbound: LOCAL,
    }),
    logger: new Logger(() => () => {}),
  });
});

afterAll(async () => {
  await runner?.stop();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await t?.drop();
});

/** A listing with an availability event and `count` notifications of it, as the fan-out leaves them. */
async function notificationsOf(count: number) {
  const { eventId } = await createOpenEvent(t.db);
  const { listing_id: listingId } = await t.db
    .selectFrom('events')
    .select('listing_id')
    .where('id', '=', eventId)
    .executeTakeFirstOrThrow();
  const { rows } = await sql<{ id: number; created_at: Date }>`
    INSERT INTO availability_events (listing_id, event_id, cause, performance_date, sections, seat_count, mode)
    VALUES (${listingId}, ${eventId}, 'HOLD_RELEASED', current_date + 1, '[]', 2, 'BROADCAST') RETURNING id, created_at`.execute(t.db);
  const availabilityId = rows[0]!.id;
  const ids = await t.db
    .insertInto('notifications')
    .values(
      Array.from({ length: count }, (_, i) => ({
        account_id: `fan-${i}`,
        listing_id: listingId,
        availability_id: availabilityId,
        entry_id: i + 1,
        kind: 'BROADCAST' as const,
      })),
    )
    .returning('id')
    .execute();
  return { listingId, availabilityId, notificationIds: ids.map((r) => r.id) };
}

const enqueue = (b: { listingId: string; availabilityId: number; notificationIds: number[] }) =>
  t.db.transaction().execute((trx) => enqueueDeliveries(trx, b));

const deliveries = (ids: number[]) => t.db.selectFrom('webhook_deliveries').selectAll().where('id', 'in', ids).orderBy('id').execute();
const endpointRow = (id: string) => t.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

/** Due now: the jobs of these deliveries (as if their backoff had passed). */
async function hurry(deliveryIds: number[]) {
  await sql`UPDATE graphile_worker._private_jobs SET run_at = now()
            WHERE locked_at IS NULL AND (payload->>'deliveryId')::bigint = ANY(${deliveryIds}::bigint[])`.execute(t.db);
}

/** Each delivery's job: its lane (graphile queue), how often graphile has run it, and whether it runs now. */
async function jobTries(deliveryIds: number[]) {
  const { rows } = await sql<{ id: number; lane: number; attempts: number; locked: boolean }>`
    SELECT id, job_queue_id AS lane, attempts, locked_at IS NOT NULL AS locked FROM graphile_worker._private_jobs
    WHERE (payload->>'deliveryId')::bigint = ANY(${deliveryIds}::bigint[])`.execute(t.db);
  return rows;
}

async function counter(channel: string, status: string) {
  const m = await metrics.waitlistNotifications.get();
  return m.values.find((v) => v.labels.channel === channel && v.labels.status === status)?.value ?? 0;
}

describe('webhook_deliver on a real worker', () => {
  it('delivers a signed POST the receiver can verify; DELIVERED, counted, latency observed', async () => {
    const batch = await notificationsOf(3);
    const endpoint = await addWebhookEndpoint(t.db, { url: `${base}/ok/signed`, listingId: batch.listingId }, { outbound: LOCAL });
    const [deliveryId] = await enqueue(batch);

    const [d] = await waitUntil('delivered', async () => {
      const rows = await deliveries([deliveryId!]);
      return rows[0]?.status === 'DELIVERED' && rows;
    });
    expect(d).toMatchObject({ status: 'DELIVERED', attempts: 1, last_status_code: 200, last_error: null });
    expect(d!.delivered_at).toBeInstanceOf(Date);

    const [req] = requestsTo('/ok/signed');
    expect(requestsTo('/ok/signed')).toHaveLength(1);
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.headers[DELIVERY_HEADER.toLowerCase()]).toBe(String(deliveryId));
    const signature = req!.headers[SIGNATURE_HEADER.toLowerCase()] as string;
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature(endpoint.secret, signature, req!.body)).toBe(true);
    expect(verifyWebhookSignature('whsec_not_the_secret_at_all', signature, req!.body)).toBe(false);

    const payload = JSON.parse(req!.body) as WebhookPayload;
    expect(payload).toMatchObject({ deliveryId, endpointId: endpoint.id, sentAt: expect.any(String) });
    expect((payload.notifications as { id: number; account_id: string }[]).map((n) => [n.id, n.account_id])).toEqual(
      batch.notificationIds.map((id, i) => [id, `fan-${i}`]),
    );

    expect(await counter('webhook', 'delivered')).toBe(3);
    const latency = await metrics.waitlistNotifyLatency.get();
    expect(
      latency.values.find((v) => v.metricName === 'waitlist_notify_latency_seconds_count' && v.labels.channel === 'webhook')?.value,
    ).toBe(1);
    await setWebhookEndpointActive(t.db, endpoint.id, false);
  });

  it('a 500ing endpoint is retried with backoff and ends DEAD after max_attempts, its job gone', async () => {
    behaviours.set('/fail/500', { kind: 'status', status: 500 });
    const batch = await notificationsOf(2);
    const endpoint = await addWebhookEndpoint(
      t.db,
      { url: `${base}/fail/500`, listingId: batch.listingId, maxAttempts: 2 },
      { outbound: LOCAL },
    );
    const [deliveryId] = await enqueue(batch);

    const retrying = await waitUntil('first failure', async () => (await deliveries([deliveryId!])).find((r) => r.attempts === 1));
    // The status and the time, never the receiver's words (an internal service's answer must not reach the console).
    expect(retrying).toMatchObject({ status: 'RETRYING', last_status_code: 500 });
    expect(retrying.last_error).toMatch(/^HTTP 500 after \d+ ms$/);
    // graphile's backoff (e^1 s) and the circuit (2^1 s) bring the second and last attempt a few seconds later.
    const dead = await waitUntil('dead', async () => (await deliveries([deliveryId!])).find((r) => r.status === 'DEAD'), {
      timeoutMs: 20_000,
    });
    expect(dead).toMatchObject({ attempts: 2, last_status_code: 500, delivered_at: null });
    const sent = requestsTo('/fail/500');
    expect(sent).toHaveLength(2);
    expect(sent.map((r) => r.headers[DELIVERY_HEADER.toLowerCase()])).toEqual([String(deliveryId), String(deliveryId)]);
    expect(sent[1]!.at - sent[0]!.at).toBeGreaterThan(2000);
    // Not rethrown once DEAD: graphile completes the job (a moment after the row is written).
    await waitUntil('job completed', async () => {
      const { rows } = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE (payload->>'deliveryId')::bigint = ${deliveryId!}`.execute(t.db);
      return rows[0]!.n === 0;
    });
    expect(await counter('webhook', 'dead')).toBeGreaterThanOrEqual(2);
    await setWebhookEndpointActive(t.db, endpoint.id, false);
  });

  it('an endpoint that does not answer does not delay a healthy one: the healthy one is DELIVERED while the other still waits', async () => {
    // The receiver holds the slow endpoint's requests until the test answers them: however long the healthy one
    // takes on a loaded machine, the slow one is still waiting.
    const held: ServerResponse[] = [];
    behaviours.set('/slow', { kind: 'hold', held });
    const batches = [];
    for (let i = 0; i < 6; i++) batches.push(await notificationsOf(2));
    // One listing for every chunk, so both endpoints get all six.
    const listingId = batches[0]!.listingId;
    const slow = await addWebhookEndpoint(t.db, { url: `${base}/slow`, listingId, timeoutMs: 60_000 }, { outbound: LOCAL });
    const healthy = await addWebhookEndpoint(t.db, { url: `${base}/ok/healthy`, listingId }, { outbound: LOCAL });
    const ids = (await Promise.all(batches.map((b) => enqueue({ ...b, listingId })))).flat();
    expect(ids).toHaveLength(12);

    const healthyIds = (await deliveries(ids)).filter((d) => d.endpoint_id === healthy.id).map((d) => d.id);
    await waitUntil('healthy delivered', async () => (await deliveries(healthyIds)).every((d) => d.status === 'DELIVERED'));
    // Not one attempt of the slow endpoint has ended, and it held at most its lanes' worth of requests at once.
    const slowRows = (await deliveries(ids)).filter((d) => d.endpoint_id === slow.id);
    expect(slowRows).toHaveLength(6);
    for (const d of slowRows) expect(d).toMatchObject({ status: 'PENDING', attempts: 0 });
    expect(requestsTo('/slow').length).toBeGreaterThanOrEqual(1);
    expect(requestsTo('/slow').length).toBeLessThanOrEqual(WEBHOOK_LANES_PER_ENDPOINT);
    expect(held).toHaveLength(requestsTo('/slow').length);

    await setWebhookEndpointActive(t.db, slow.id, false);
    await setWebhookEndpointActive(t.db, healthy.id, false);
    behaviours.set('/slow', { kind: 'ok' });
    for (const r of held) r.writeHead(200).end('ok');
  });

  it("no answer within the endpoint's timeout is a failed attempt: RETRYING with the reason, its circuit open", async () => {
    behaviours.set('/silent', { kind: 'silent' });
    const batch = await notificationsOf(1);
    const silent = await addWebhookEndpoint(
      t.db,
      { url: `${base}/silent`, listingId: batch.listingId, timeoutMs: 300 },
      { outbound: LOCAL },
    );
    const [deliveryId] = await enqueue(batch);
    const timedOut = await waitUntil('timed out', async () => (await deliveries([deliveryId!])).find((d) => d.status === 'RETRYING'));
    expect(timedOut.last_error).toBe('timeout: no answer within 300 ms');
    expect(timedOut.last_status_code).toBeNull();
    const e = await endpointRow(silent.id);
    expect(e.consecutive_failures).toBe(1);
    expect(e.open_until!.getTime()).toBeGreaterThan(Date.now());
    await setWebhookEndpointActive(t.db, silent.id, false);
  });

  it('the circuit opens after failures (no requests while open), lets one probe through when it half-opens, and closes on success', async () => {
    const path = '/flaky';
    behaviours.set(path, { kind: 'status', status: 503 });
    const batches = [];
    for (let i = 0; i < 8; i++) batches.push(await notificationsOf(1));
    const listingId = batches[0]!.listingId;
    const endpoint = await addWebhookEndpoint(t.db, { url: `${base}${path}`, listingId, maxAttempts: 10 }, { outbound: LOCAL });
    const ids = (await Promise.all(batches.map((b) => enqueue({ ...b, listingId })))).flat();
    expect(ids).toHaveLength(8);

    // Every job tried once: the first in each lane asked the endpoint and failed, the rest found the circuit open.
    await waitUntil('every delivery tried once', async () => {
      const { rows } = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM graphile_worker._private_jobs
        WHERE attempts >= 1 AND locked_at IS NULL AND (payload->>'deliveryId')::bigint = ANY(${ids}::bigint[])`.execute(t.db);
      return rows[0]!.n === 8;
    });
    const failed = requestsTo(path).length;
    expect(failed).toBeGreaterThanOrEqual(1);
    expect(failed).toBeLessThanOrEqual(WEBHOOK_LANES_PER_ENDPOINT);
    let rows = await deliveries(ids);
    expect(rows.filter((d) => d.attempts === 0)).toHaveLength(8 - failed); // skipped: no request, no attempt counted
    expect(rows.every((d) => d.status !== 'DELIVERED' && d.status !== 'DEAD')).toBe(true);
    let e = await endpointRow(endpoint.id);
    expect(e.consecutive_failures).toBe(failed);
    expect(e.open_until!.getTime()).toBeGreaterThan(Date.now());
    const { rows: skipped } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM graphile_worker._private_jobs
      WHERE last_error LIKE '%circuit open%' AND (payload->>'deliveryId')::bigint = ANY(${ids}::bigint[])`.execute(t.db);
    expect(skipped[0]!.n).toBe(8 - failed);

    // Half-open: the window has passed and every job is due; the receiver holds what it gets.
    const held: ServerResponse[] = [];
    behaviours.set(path, { kind: 'hold', held });
    await sql`UPDATE webhook_endpoints SET open_until = now() WHERE id = ${endpoint.id}`.execute(t.db);
    const triesBefore = new Map((await jobTries(ids)).map((j) => [j.id, j.attempts]));
    await hurry(ids);
    await waitUntil('the probe', async () => held.length === 1);
    // Every due job that could run has run once more (all but the probe's lane, which waits behind the probe) and
    // found the circuit open: none of them reached the endpoint.
    await waitUntil('every other lane tried again', async () => {
      const now = await jobTries(ids);
      const probeLane = now.find((j) => j.locked)?.lane;
      return now.filter((j) => j.lane !== probeLane).every((j) => !j.locked && j.attempts > triesBefore.get(j.id)!);
    });
    expect(held).toHaveLength(1);

    // The probe succeeds: the circuit closes, and the rest go through.
    behaviours.set(path, { kind: 'ok' });
    held[0]!.writeHead(200).end('ok');
    await waitUntil('circuit closed', async () => (await endpointRow(endpoint.id)).consecutive_failures === 0);
    e = await endpointRow(endpoint.id);
    expect(e.open_until).toBeNull();
    await hurry(ids);
    rows = await waitUntil('all delivered', async () => {
      const r = await deliveries(ids);
      return r.every((d) => d.status === 'DELIVERED') && r;
    });
    expect(rows.every((d) => d.last_status_code === 200)).toBe(true);
    await setWebhookEndpointActive(t.db, endpoint.id, false);
  });

  it('a disabled endpoint: its pending delivery goes DEAD with the reason, without a request', async () => {
    const batch = await notificationsOf(1);
    const [deliveryId, endpointId] = await t.db.transaction().execute(async (trx) => {
      const e = await addWebhookEndpoint(trx, { url: `${base}/ok/disabled`, listingId: batch.listingId }, { outbound: LOCAL });
      const [id] = await enqueueDeliveries(trx, batch);
      await setWebhookEndpointActive(trx, e.id, false);
      return [id!, e.id] as const;
    });
    const dead = await waitUntil('dead', async () => (await deliveries([deliveryId])).find((d) => d.status === 'DEAD'));
    expect(dead).toMatchObject({ endpoint_id: endpointId, attempts: 0, last_error: 'endpoint disabled' });
    expect(requestsTo('/ok/disabled')).toHaveLength(0);
  });

  it('the task identifier the worker runs is webhook_deliver', () => {
    expect(Object.keys(notifyTasks({ db: t.db, render: async () => [] }))).toEqual([WEBHOOK_DELIVER_TASK]);
  });
});
