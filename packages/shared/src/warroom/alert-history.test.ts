import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JobHelpers } from 'graphile-worker';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startWorker } from '../jobs/worker.js';
import { verifyWebhookSignature } from '../notify/signature.js';
import { createOpenEvent, createTestDatabase, type TestDatabase } from '../testing/index.js';
import { alertDeliverTask } from './alert-delivery.js';
import { alertMessage, diffAlerts, type OpenAlert } from './alert-history.js';
import { evaluateAlerts, type Alert, type AlertInput } from './alerts.js';
import { ALERT_DELIVER_TASK } from './alerts.repository.js';
import { addAlertEndpoint, listAlertDeliveries, listAlertEndpoints, listAlertHistory, setAlertEndpointActive } from './alerts.service.js';
import { WarRoomMonitor } from './monitor.js';

// Alert history per event in PostgreSQL, and alert messages outside the browser: webhooks
// (Slack-compatible JSON) when an alert fires and when it resolves, de-duplicated, carried by graphile-worker jobs.

const T0 = new Date('2026-12-02T10:00:00Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);
const alert = (over: Partial<Alert> = {}): Alert => ({
  code: 'CHECKOUT_ERRORS',
  scope: '',
  severity: 'warning',
  metric: 'checkoutErrorRate',
  title: 'Payments are failing at the payment gateway',
  action: "Check the payment provider's status.",
  detail: '5 of 100 failed.',
  value: 0.05,
  threshold: 0.02,
  source: 'docs/architecture.md: payment throughput',
  ...over,
});

describe('diffAlerts (pure)', () => {
  const open: OpenAlert[] = [{ id: 7, code: 'CHECKOUT_ERRORS', scope: '', severity: 'warning', lastSeenAt: at(0) }];

  it('a new alert fires; an open one still firing continues (the same alert, not a new one)', () => {
    expect(diffAlerts([], [alert()], at(0))).toEqual({ fired: [alert()], continuing: [], resolved: [] });
    expect(diffAlerts(open, [alert()], at(5))).toEqual({
      fired: [],
      continuing: [{ id: 7, alert: alert(), escalated: false }],
      resolved: [],
    });
  });

  it('from warning to critical it escalates; back to warning it just continues', () => {
    expect(diffAlerts(open, [alert({ severity: 'critical' })], at(5)).continuing[0]!.escalated).toBe(true);
    expect(diffAlerts([{ ...open[0]!, severity: 'critical' }], [alert()], at(5)).continuing[0]!.escalated).toBe(false);
  });

  it('resolves only after staying quiet for the resolve period: a figure hovering at its threshold is one alert', () => {
    expect(diffAlerts(open, [], at(29), 30_000).resolved).toEqual([]);
    expect(diffAlerts(open, [], at(30), 30_000).resolved).toEqual([7]);
    // Back within the period: still the same open alert.
    expect(diffAlerts(open, [alert()], at(20), 30_000)).toMatchObject({ fired: [], continuing: [{ id: 7 }], resolved: [] });
  });

  it("one alert per (code, scope): a presale tier's alert is its own, and a duplicate in one reading counts once", () => {
    const tier = alert({ code: 'QUEUE_PAUSED', scope: 'FANCLUB' });
    const d = diffAlerts(open, [alert(), tier, tier], at(1));
    expect(d.fired).toEqual([tier]);
    expect(d.continuing).toHaveLength(1);
  });
});

describe('alertMessage (Slack-compatible)', () => {
  const base = {
    deliveryId: 41,
    alert: {
      id: 9,
      code: 'CHECKOUT_ERRORS',
      scope: '',
      severity: 'critical' as const,
      title: 'Payments are failing at the payment gateway',
      action: "Check the payment provider's status.",
      detail: '30 of 100 failed <gateway>.',
      firedAt: at(0),
      resolvedAt: null,
    },
    event: { id: 'e-1', name: 'Stadium & Night' },
    warRoomUrl: 'https://ops.example.com/events/e-1/war-room',
    sentAt: at(1),
  };

  it('firing: text and blocks say what is wrong and what to do; the facts for parsers; a dedupe key per message', () => {
    const m = alertMessage({ ...base, kind: 'FIRING' });
    expect(m.text).toBe(
      "CRITICAL: Stadium & Night: Payments are failing at the payment gateway What to do: Check the payment provider's status.",
    );
    const section = (m.blocks[0] as { text: { text: string } }).text.text;
    expect(section).toContain('*Stadium &amp; Night*');
    expect(section).toContain("_What to do:_ Check the payment provider's status.");
    expect(section).toContain('&lt;gateway&gt;');
    expect(JSON.stringify(m.blocks[1])).toContain('<https://ops.example.com/events/e-1/war-room|war room>');
    expect(m.onsale).toMatchObject({
      kind: 'FIRING',
      dedupeKey: 'alert:9:FIRING',
      alertId: 9,
      eventId: 'e-1',
      severity: 'critical',
      resolvedAt: null,
    });
  });

  it('a platform-wide alert says so: it fires on every event on sale, not because of this one', () => {
    const m = alertMessage({
      ...base,
      kind: 'FIRING',
      alert: { ...base.alert, code: 'HOLD_LATENCY_P99', title: 'Seat holds are slow', action: 'Lower the admission rate.' },
    });
    expect(m.text).toBe(
      'CRITICAL: Stadium & Night (platform-wide: every event on sale): Seat holds are slow What to do: Lower the admission rate.',
    );
    expect(m.onsale).toMatchObject({ reach: 'platform', code: 'HOLD_LATENCY_P99' });
    expect(alertMessage({ ...base, kind: 'FIRING' }).onsale).toMatchObject({ reach: 'event' });
  });

  it('resolved: says so, and for how long it lasted', () => {
    const m = alertMessage({ ...base, kind: 'RESOLVED', alert: { ...base.alert, resolvedAt: at(240) } });
    expect(m.text).toBe('RESOLVED after 4 min: Stadium & Night: Payments are failing at the payment gateway');
    expect(m.onsale).toMatchObject({ kind: 'RESOLVED', dedupeKey: 'alert:9:RESOLVED', resolvedAt: at(240).toISOString() });
  });
});

/** A local receiver (what Slack's incoming webhook would be): records every request, answers `status`. */
function receiver(status: () => number) {
  const got: { headers: IncomingHttpHeaders; raw: string; body: { text: string; blocks: unknown[]; onsale: Record<string, unknown> } }[] =
    [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      got.push({ headers: req.headers, raw, body: JSON.parse(raw) });
      res.writeHead(status(), { 'content-type': 'text/plain' }).end(status() >= 300 ? 'channel_not_found' : 'ok');
    });
  });
  return {
    got,
    async start() {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}/services/T000/B000/XXXX`;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

// The local receiver is on this machine, which alert receivers may not reach by default: the tests' install names it.
const LOCAL = { allowHosts: ['127.0.0.1'] };

const helpers = (attempts: number, maxAttempts = 10) => ({ job: { attempts, max_attempts: maxAttempts } }) as unknown as JobHelpers;

describe('alert history and webhooks against PostgreSQL', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(inject('templateDatabaseUrl'));
  });
  afterAll(() => t.drop());

  const jobsOf = async (deliveryIds: number[]) =>
    (
      await sql<{ delivery_id: number; queue_name: string | null }>`
        SELECT (p.payload->>'deliveryId')::bigint AS delivery_id, j.queue_name FROM graphile_worker.jobs j JOIN graphile_worker._private_jobs p ON p.id = j.id
        WHERE j.task_identifier = ${ALERT_DELIVER_TASK} AND (p.payload->>'deliveryId')::bigint = ANY(${deliveryIds}::bigint[])`.execute(
        t.db,
      )
    ).rows;

  it('records each firing once with its history, queues one FIRING per receiver, and RESOLVED to those told, after the quiet period', async () => {
    const { eventId } = await createOpenEvent(t.db, { name: 'Alerting Night', onsaleAt: new Date(Date.now() - 60_000).toISOString() });
    const { eventId: other } = await createOpenEvent(t.db, { name: 'Other Night' });
    const all = await addAlertEndpoint(t.db, { url: 'https://hooks.slack.com/services/T1/B1/all' }, 'ops@example.com');
    const mine = await addAlertEndpoint(
      t.db,
      { url: 'https://hooks.example.com/mine', eventId, minSeverity: 'critical' },
      'ops@example.com',
    );
    const theirs = await addAlertEndpoint(t.db, { url: 'https://hooks.example.com/theirs', eventId: other }, 'ops@example.com');
    expect(all.secret).toMatch(/^whsec_/);
    expect((await listAlertEndpoints(t.db)).map((e) => e.id)).toEqual([all.id, mine.id, theirs.id]);

    // No controller heartbeat after the open: CONTROLLER_SILENT (critical) fires.
    const monitor = new WarRoomMonitor({ db: t.db, resolveAfterMs: 0 });
    const first = await monitor.runOnce();
    expect(first).toMatchObject({ skipped: false, alerts: { fired: 2 } }); // this event's and the other's
    const history = await listAlertHistory(t.db, eventId);
    expect(history).toMatchObject([
      {
        code: 'CONTROLLER_SILENT',
        severity: 'critical',
        resolvedAt: null,
        title: 'Nobody is being let in: the admission controller has stopped reporting',
      },
    ]);
    const deliveries = await t.db.selectFrom('alert_deliveries').selectAll().where('alert_id', '=', history[0]!.id).orderBy('id').execute();
    // Every-event receiver and this event's critical-only receiver; not the other event's.
    expect(deliveries.map((d) => [d.endpoint_id, d.kind])).toEqual([
      [all.id, 'FIRING'],
      [mine.id, 'FIRING'],
    ]);
    const jobs = await jobsOf(deliveries.map((d) => Number(d.id)));
    expect(jobs.map((j) => j.queue_name).sort()).toEqual([`alert:${all.id}`, `alert:${mine.id}`].sort());

    // Read again with the same problem: the same alert, no new message.
    await monitor.runOnce();
    expect(await listAlertHistory(t.db, eventId)).toHaveLength(1);
    expect(await t.db.selectFrom('alert_deliveries').select('id').where('alert_id', '=', history[0]!.id).execute()).toHaveLength(2);

    // The controller reports again: resolved (quiet period 0 here), RESOLVED to both receivers that heard it fire.
    await sql`UPDATE queue_state SET heartbeat_at = now() + interval '1 hour' WHERE event_id = ${eventId}`.execute(t.db);
    const second = await monitor.runOnce();
    expect(second.alerts.resolved).toBeGreaterThanOrEqual(1);
    const resolved = await listAlertHistory(t.db, eventId);
    expect(resolved[0]).toMatchObject({ code: 'CONTROLLER_SILENT', resolvedAt: expect.any(Date), messages: { queued: 4 } });
    const kinds = await t.db
      .selectFrom('alert_deliveries')
      .select(['endpoint_id', 'kind'])
      .where('alert_id', '=', history[0]!.id)
      .orderBy('kind')
      .orderBy('endpoint_id')
      .execute();
    expect(kinds.filter((k) => k.kind === 'RESOLVED')).toEqual(
      [all.id, mine.id].sort().map((endpoint_id) => ({ endpoint_id, kind: 'RESOLVED' })),
    );
    // It fires again later: a new alert in the history, and new messages.
    await sql`UPDATE queue_state SET heartbeat_at = NULL WHERE event_id = ${eventId}`.execute(t.db);
    await monitor.runOnce();
    expect((await listAlertHistory(t.db, eventId)).map((a) => a.resolvedAt === null)).toEqual([true, false]);

    // A disabled receiver gets nothing new.
    await setAlertEndpointActive(t.db, all.id, false);
    await sql`UPDATE queue_state SET heartbeat_at = now() + interval '1 hour' WHERE event_id = ${eventId}`.execute(t.db);
    await monitor.runOnce();
    const latest = (await listAlertHistory(t.db, eventId))[0]!;
    const latestKinds = await t.db
      .selectFrom('alert_deliveries')
      .select(['endpoint_id', 'kind'])
      .where('alert_id', '=', latest.id)
      .execute();
    expect(latestKinds.map((k) => `${k.endpoint_id === all.id ? 'all' : 'mine'} ${k.kind}`).sort()).toEqual([
      'all FIRING',
      'mine FIRING',
      'mine RESOLVED',
    ]);
    await setAlertEndpointActive(t.db, all.id, true);
  });

  it("several monitors at once record each alert once; one holding the lock makes the others skip; the sale's series is kept by minute", async () => {
    const { eventId } = await createOpenEvent(t.db, { name: 'Busy Monitor', onsaleAt: new Date(Date.now() - 60_000).toISOString() });
    const endpoint = await addAlertEndpoint(t.db, { url: 'https://hooks.example.com/busy', eventId }, 'ops@example.com');
    await Promise.all([1, 2, 3, 4].map(() => new WarRoomMonitor({ db: t.db }).runOnce()));
    expect(await t.db.selectFrom('event_alerts').select('id').where('event_id', '=', eventId).execute()).toHaveLength(1);
    expect(await t.db.selectFrom('alert_deliveries').select('kind').where('endpoint_id', '=', endpoint.id).execute()).toEqual([
      { kind: 'FIRING' },
    ]);
    // Another process in the middle of its pass (holding the monitor's lock): this one skips and writes nothing.
    await t.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtextextended('onsale:war-room-monitor', 0))`.execute(trx);
      expect((await new WarRoomMonitor({ db: t.db }).runOnce()).skipped).toBe(true);
    });
    const minutes = await t.db.selectFrom('sale_minutes').selectAll().where('event_id', '=', eventId).execute();
    expect(minutes).toHaveLength(1);
    expect(minutes[0]).toMatchObject({ capacity: 20, available: 20, state: 'FAILED_CLOSED', alerts_critical: 1 });
  });

  it('sends each message as Slack-compatible JSON, signed; a refusing receiver is retried, then dead-lettered on the last try', async () => {
    let status = 200;
    const r = receiver(() => status);
    const url = await r.start();
    try {
      const { eventId } = await createOpenEvent(t.db, { name: 'Delivery Night', onsaleAt: new Date(Date.now() - 60_000).toISOString() });
      const endpoint = await addAlertEndpoint(t.db, { url, eventId }, 'ops@example.com', { outbound: LOCAL });
      await new WarRoomMonitor({ db: t.db }).runOnce();
      const [delivery] = await listAlertDeliveries(t.db, endpoint.id);
      const task = alertDeliverTask({ db: t.db, consoleUrl: 'https://ops.example.com', outbound: LOCAL });
      await task({ deliveryId: delivery!.id }, helpers(1));
      expect(r.got).toHaveLength(1);
      const msg = r.got[0]!;
      expect(msg.headers['content-type']).toBe('application/json');
      expect(verifyWebhookSignature(endpoint.secret, msg.headers['x-onsale-signature'] as string, msg.raw)).toBe(true);
      expect(msg.body.text).toMatch(/^CRITICAL: Delivery Night: Nobody is being let in/);
      expect(msg.body.blocks).toHaveLength(2);
      expect(msg.body.onsale).toMatchObject({
        kind: 'FIRING',
        eventId,
        code: 'CONTROLLER_SILENT',
        warRoomUrl: `https://ops.example.com/events/${eventId}/war-room`,
      });
      expect((await listAlertDeliveries(t.db, endpoint.id))[0]).toMatchObject({ status: 'DELIVERED', attempts: 1, lastStatusCode: 200 });
      // A duplicate job of a delivered message sends nothing.
      await task({ deliveryId: delivery!.id }, helpers(1));
      expect(r.got).toHaveLength(1);

      // A receiver that refuses: RETRYING (the job throws so graphile retries), then DEAD on the job's last try.
      status = 404;
      await sql`UPDATE alert_deliveries SET status = 'PENDING' WHERE id = ${delivery!.id}`.execute(t.db);
      await expect(task({ deliveryId: delivery!.id }, helpers(1))).rejects.toThrow(/HTTP 404/);
      // Its status and the time it took, never its body (an internal service's answer must not reach the console).
      expect((await listAlertDeliveries(t.db, endpoint.id))[0]).toMatchObject({
        status: 'RETRYING',
        lastStatusCode: 404,
        lastError: expect.stringMatching(/^HTTP 404 after \d+ ms$/),
      });
      await task({ deliveryId: delivery!.id }, helpers(10, 10));
      expect((await listAlertDeliveries(t.db, endpoint.id))[0]).toMatchObject({ status: 'DEAD' });
      expect((await listAlertEndpoints(t.db)).find((e) => e.id === endpoint.id)).toMatchObject({
        failing: 1,
        lastError: expect.stringMatching(/^HTTP 404 after \d+ ms$/),
      });
    } finally {
      await r.close();
    }
  });

  it('end to end: the worker notices an alert on its own, sends FIRING through its job, and RESOLVED when it clears', async () => {
    const r = receiver(() => 200);
    const url = await r.start();
    const { eventId } = await createOpenEvent(t.db, { name: 'Worker Night', onsaleAt: new Date(Date.now() - 60_000).toISOString() });
    await addAlertEndpoint(t.db, { url, eventId }, 'ops@example.com', { outbound: LOCAL });
    const worker = await startWorker({
      outbound: LOCAL,
      connectionString: t.url,
      db: t.db,
      concurrency: 2,
      claimTokenSecret: 'alert-test-claim-secret',
      admission: false,
      warRoomMonitor: { everyMs: 200, resolveAfterMs: 0, consoleUrl: 'https://ops.example.com' },
    });
    try {
      const mineOnly = () => r.got.filter((g) => g.body.onsale.eventId === eventId);
      await expect.poll(() => mineOnly().map((g) => g.body.onsale.kind), { timeout: 20_000 }).toEqual(['FIRING']);
      await sql`UPDATE queue_state SET heartbeat_at = now() + interval '1 hour' WHERE event_id = ${eventId}`.execute(t.db);
      await expect.poll(() => mineOnly().map((g) => g.body.onsale.kind), { timeout: 20_000 }).toEqual(['FIRING', 'RESOLVED']);
      expect(mineOnly()[1]!.body.text).toMatch(/^RESOLVED after \d+ s: Worker Night: Nobody is being let in/);
    } finally {
      await worker.stop();
      await r.close();
    }
  });

  it('refuses a receiver that is not a web address, or for an event that does not exist, at the field', async () => {
    const refused = (p: Promise<unknown>) =>
      p.then(
        () => null,
        (e: { code: string; details: { field?: string } }) => ({ code: e.code, field: e.details.field }),
      );
    expect(await refused(addAlertEndpoint(t.db, { url: 'ftp://example.com/x' }, 'x'))).toEqual({
      code: 'INVALID_ALERT_ENDPOINT',
      field: 'url',
    });
    expect(await refused(addAlertEndpoint(t.db, { url: 'not a url' }, 'x'))).toEqual({ code: 'INVALID_ALERT_ENDPOINT', field: 'url' });
    expect(await refused(addAlertEndpoint(t.db, { url: 'https://x.example.com', minSeverity: 'loud' as 'critical' }, 'x'))).toEqual({
      code: 'INVALID_ALERT_ENDPOINT',
      field: 'minSeverity',
    });
    expect(
      await refused(addAlertEndpoint(t.db, { url: 'https://x.example.com', eventId: '00000000-0000-4000-8000-000000000000' }, 'x')),
    ).toEqual({ code: 'EVENT_NOT_FOUND', field: 'eventId' });
  });
});

// The alert sample rule stays where it is tested (alerts.test.ts); here, that a first burst of holds at the open
// does not page anyone: no hold-latency alert on 6 holds, whatever their p99.
describe('no page for a handful of holds at the open', () => {
  it('evaluateAlerts with 6 slow holds fires nothing', () => {
    const input = {
      paused: false,
      pausedBy: null,
      pausedReason: null,
      controllerSilent: false,
      heartbeatAgeSeconds: 0.2,
      inventoryState: 'AVAILABLE',
      admittedLastMinute: 6,
      holdsCreatedLastMinute: 6,
      holdsRefusedLastMinute: 0,
      planAdmitsPerMin: 120,
      rateOverridePerMin: null,
      holdLatencyP99Ms: 1_800,
      holdLatencyObserved: 6,
      checkoutAttempts: 0,
      checkoutFailed: 0,
      paymentTps: 0,
      paymentTpsCeiling: 1000,
      drift: 0,
      orderDrift: 0,
      soldOutPropagationP99Seconds: null,
      soldOutOnce: false,
      available: 300,
      oldestExpiredUnsweptSeconds: null,
      expiredUnsweptSeats: 0,
      waitlistOldestPendingSeconds: null,
    } satisfies AlertInput;
    expect(evaluateAlerts(input)).toEqual([]);
  });
});
