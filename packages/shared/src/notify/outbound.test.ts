import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JobHelpers } from 'graphile-worker';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOpenEvent, createTestDatabase, type TestDatabase } from '../testing/index.js';
import { alertDeliverTask } from '../warroom/alert-delivery.js';
import { addAlertEndpoint, listAlertDeliveries } from '../warroom/alerts.service.js';
import { WarRoomMonitor } from '../warroom/monitor.js';
import {
  addWebhookEndpoint,
  enqueueDeliveries,
  outboundPolicyFromEnv,
  refusedAddress,
  webhookDeliverTask,
  type OutboundPolicy,
  type ResolveHost,
} from './index.js';

// Server-side request forgery: webhooks and alert receivers are URLs an operator types, posted to by the worker from
// inside the install's network. Every internal address, in every spelling, and every name that resolves to one is
// refused when the receiver is registered and again when a delivery connects (a name whose DNS answer changes
// later, or a row written before the check). A local receiver counts what reaches it: nothing may.

let t: TestDatabase;
let receiver: Server;
let port: number;
const hits: string[] = [];

/** The local resolver stand-in: the names these tests use and what they resolve to (no /etc/hosts edits). */
const zone = new Map<string, string[]>([
  ['loopback.rebind.test', ['127.0.0.1']],
  ['v6-loopback.rebind.test', ['::1']],
  ['metadata.rebind.test', ['169.254.169.254']],
  ['mixed.rebind.test', ['93.184.215.14', '10.0.0.1']],
  ['hooks.partner.test', ['93.184.215.14']],
  ['hooks.corp.test', ['127.0.0.1']],
]);
const resolve: ResolveHost = async (host) => {
  const addresses = zone.get(host.toLowerCase());
  if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};
/** The default policy (no internal host allowed), with the stand-in resolver. */
const strict: OutboundPolicy = { allowHosts: [], resolve };

/** Every spelling of an internal address the issue lists, and more; `{port}` is the local receiver's. */
const INTERNAL_URLS = [
  'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
  'http://10.0.0.1/',
  'http://[fd00:ec2::254]/latest/meta-data/',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://localhost:{port}/',
  'http://2130706433:{port}/',
  'http://[::ffff:127.0.0.1]:{port}/',
  'http://0x7f.1:{port}/',
  'http://0177.0.0.1:{port}/',
  'http://127.1:{port}/',
  'http://127.0.0.1:{port}/',
  'http://[::1]:{port}/',
  'http://[0:0:0:0:0:ffff:7f00:1]:{port}/',
  'http://0.0.0.0:{port}/',
  'http://192.168.1.1/',
  'http://172.16.0.1/',
  'http://100.64.0.1/',
  'http://224.0.0.1/',
  'http://240.0.0.1/',
  'http://255.255.255.255/',
  'http://[fe80::1]/',
  'http://[ff02::1]/',
  'http://app.localhost:{port}/',
  'http://db:5432/',
  'http://loopback.rebind.test:{port}/',
  'http://v6-loopback.rebind.test:{port}/',
  'http://metadata.rebind.test/',
  'http://mixed.rebind.test/',
];
const urls = () => INTERNAL_URLS.map((u) => u.replace('{port}', String(port)));

beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
  receiver = createServer((req, res) => {
    hits.push(req.url ?? '/');
    if (req.url === '/moved') res.writeHead(302, { location: `http://127.0.0.1:${port}/landed` }).end();
    else if (req.url === '/broken') res.writeHead(500, { 'content-type': 'text/plain' }).end('db password is hunter2');
    else res.writeHead(200).end('ok');
  });
  // Both stacks (127.0.0.1 and ::1) where the machine has IPv6; 127.0.0.1 only otherwise.
  await new Promise<void>((r) => {
    receiver.once('error', () => receiver.listen(0, '127.0.0.1', r));
    receiver.listen({ port: 0, host: '::', ipv6Only: false }, r);
  });
  port = (receiver.address() as AddressInfo).port;
});

afterAll(async () => {
  receiver?.closeAllConnections();
  await new Promise((r) => receiver?.close(r));
  await t?.drop();
});

const helpers = (attempts = 1, maxAttempts = 10) => ({ job: { attempts, max_attempts: maxAttempts } }) as unknown as JobHelpers;

async function refusal(p: Promise<unknown>): Promise<{ code: string; field: unknown; message: string } | null> {
  try {
    await p;
    return null;
  } catch (e) {
    const d = e as { code: string; message: string; details: { field?: unknown } };
    return { code: d.code, field: d.details?.field, message: d.message };
  }
}

/** A listing with `count` notifications of one availability event, and the webhook delivery rows for them. */
async function listingWithNotifications() {
  const { eventId } = await createOpenEvent(t.db);
  const { listing_id: listingId } = await t.db
    .selectFrom('events')
    .select('listing_id')
    .where('id', '=', eventId)
    .executeTakeFirstOrThrow();
  const { rows } = await sql<{ id: number }>`
    INSERT INTO availability_events (listing_id, event_id, cause, performance_date, sections, seat_count, mode)
    VALUES (${listingId}, ${eventId}, 'HOLD_RELEASED', current_date + 1, '[]', 2, 'BROADCAST') RETURNING id`.execute(t.db);
  const ids = await t.db
    .insertInto('notifications')
    .values({ account_id: 'fan-1', listing_id: listingId, availability_id: rows[0]!.id, entry_id: 1, kind: 'BROADCAST' })
    .returning('id')
    .execute();
  return { listingId, availabilityId: rows[0]!.id, notificationIds: ids.map((r) => r.id) };
}

/** Endpoints written straight to the table (registered before the check, or by a name whose DNS changed since). */
async function deliveriesTo(endpointUrls: string[]) {
  const batch = await listingWithNotifications();
  // Only these endpoints: the public ones registered above (every listing's) would get a delivery too.
  await t.db.updateTable('webhook_endpoints').set({ active: false }).execute();
  for (const url of endpointUrls)
    await t.db.insertInto('webhook_endpoints').values({ url, secret: 'a-secret-of-enough-length', listing_id: batch.listingId }).execute();
  const ids = await t.db.transaction().execute((trx) => enqueueDeliveries(trx, batch));
  // Only this test's own task runs them (no runner): the jobs stay queued and are removed with the database.
  return t.db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .select(['d.id', 'e.url'])
    .where('d.id', 'in', ids)
    .execute();
}

const render = (ids: number[]) => t.db.selectFrom('notifications').selectAll().where('id', 'in', ids).execute();
const deliveryRow = (id: number) => t.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('every internal address is refused at registration', () => {
  it('webhooks: INVALID_WEBHOOK_ENDPOINT at url, saying which address and the setting that allows it', async () => {
    for (const url of urls()) {
      const r = await refusal(addWebhookEndpoint(t.db, { url }, { outbound: strict }));
      expect(r, url).toMatchObject({ code: 'INVALID_WEBHOOK_ENDPOINT', field: 'url' });
      expect(r!.message, url).toMatch(/WEBHOOK_ALLOW_HOSTS/);
    }
    expect(await t.db.selectFrom('webhook_endpoints').select('id').execute()).toEqual([]);
    expect(hits).toEqual([]);
  });

  it('alert receivers: INVALID_ALERT_ENDPOINT at url', async () => {
    for (const url of urls())
      expect(await refusal(addAlertEndpoint(t.db, { url }, 'ops@example.com', { outbound: strict })), url).toMatchObject({
        code: 'INVALID_ALERT_ENDPOINT',
        field: 'url',
      });
    expect(await t.db.selectFrom('alert_endpoints').select('id').execute()).toEqual([]);
  });

  it('says what the address is: the metadata service, this machine, a private network', async () => {
    const why = async (url: string) => (await refusal(addWebhookEndpoint(t.db, { url }, { outbound: strict })))!.message;
    expect(await why('http://169.254.169.254/')).toMatch(/169\.254\.169\.254 is a link-local address \(the cloud metadata service/);
    expect(await why('http://2130706433/')).toMatch(/127\.0\.0\.1 is a loopback address/);
    expect(await why('http://[::ffff:127.0.0.1]/')).toMatch(/127\.0\.0\.1 is a loopback address/);
    expect(await why('http://[fd00:ec2::254]/')).toMatch(/fd00:ec2::254 is a unique-local/);
    expect(await why('http://metadata.google.internal/')).toMatch(/metadata\.google\.internal is an internal name/);
    expect(await why('http://loopback.rebind.test/')).toMatch(/loopback\.rebind\.test resolves to 127\.0\.0\.1, a loopback address/);
    expect(await why('http://mixed.rebind.test/')).toMatch(/resolves to 10\.0\.0\.1, a private network address/);
  });

  it('public receivers are accepted, and so is a name that does not resolve yet (each delivery checks again)', async () => {
    for (const url of [
      'https://hooks.partner.test/onsale',
      'http://93.184.215.14/x',
      'https://[2606:4700::6810:84e5]/x',
      'https://nowhere.example/x',
    ])
      expect(await refusal(addWebhookEndpoint(t.db, { url }, { outbound: strict })), url).toBeNull();
  });

  it('WEBHOOK_ALLOW_HOSTS admits the internal receivers it names (by name, address or range), and nothing else', async () => {
    const allow = (v: string): OutboundPolicy => ({ ...outboundPolicyFromEnv({ WEBHOOK_ALLOW_HOSTS: v }), resolve });
    expect(await refusal(addWebhookEndpoint(t.db, { url: 'http://hooks.corp.test/x' }, { outbound: allow('hooks.corp.test') }))).toBeNull();
    expect(await refusal(addWebhookEndpoint(t.db, { url: 'http://10.0.0.7/x' }, { outbound: allow('10.0.0.0/24') }))).toBeNull();
    expect(await refusal(addWebhookEndpoint(t.db, { url: 'http://[::ffff:10.0.0.9]/x' }, { outbound: allow('10.0.0.9') }))).toBeNull();
    // Naming one host allows that host only.
    expect(await refusal(addWebhookEndpoint(t.db, { url: 'http://10.0.1.7/x' }, { outbound: allow('10.0.0.0/24') }))).toMatchObject({
      field: 'url',
    });
    expect(
      await refusal(addWebhookEndpoint(t.db, { url: 'http://169.254.169.254/' }, { outbound: allow('hooks.corp.test') })),
    ).toMatchObject({
      field: 'url',
    });
    expect(() => outboundPolicyFromEnv({ WEBHOOK_ALLOW_HOSTS: 'hooks.corp.test, http://x/' })).toThrow(/WEBHOOK_ALLOW_HOSTS/);
    expect(outboundPolicyFromEnv({}).allowHosts).toEqual([]);
    // Nothing may open the metadata service, nor the whole address space.
    for (const v of [
      '169.254.169.254',
      '169.254.0.0/16',
      '[fd00:ec2::254]',
      'fd00::/8',
      'metadata.google.internal',
      '0.0.0.0/0',
      '::/0',
      '10.0.0.0/7',
    ])
      expect(() => outboundPolicyFromEnv({ WEBHOOK_ALLOW_HOSTS: v }), v).toThrow(/WEBHOOK_ALLOW_HOSTS: .*(metadata|at most)/);
  });

  it('classifies with ipaddr.js: only public unicast is reachable', () => {
    expect(refusedAddress('8.8.8.8')).toBeNull();
    expect(refusedAddress('2606:4700::6810:84e5')).toBeNull();
    for (const a of ['127.0.0.1', '::1', '::ffff:169.254.169.254', '64:ff9b::a00:1', '2002:7f00:1::', '198.18.0.1', '192.0.0.8', '::'])
      expect(refusedAddress(a), a).not.toBeNull();
  });
});

describe('every internal address is refused at delivery, after DNS, with no request made', () => {
  it('webhooks: DEAD at once with the reason, the endpoint circuit untouched, nothing reaching the local receiver', async () => {
    const rows = await deliveriesTo(urls());
    const task = webhookDeliverTask({ db: t.db, render, outbound: strict });
    for (const d of rows) {
      await task({ deliveryId: d.id }, helpers());
      const row = await deliveryRow(d.id);
      expect(row.status, d.url).toBe('DEAD');
      expect(row.attempts, d.url).toBe(0);
      expect(row.last_error, d.url).toMatch(/^refused, no request made: .*WEBHOOK_ALLOW_HOSTS/);
    }
    expect(hits).toEqual([]);
  });

  it('DNS rebinding: a name that resolved to a public address at registration and to loopback at delivery is refused', async () => {
    let answers = ['93.184.215.14'];
    const flipping: OutboundPolicy = { allowHosts: [], resolve: async () => answers.map((address) => ({ address, family: 4 })) };
    const url = `http://flip.rebind.test:${port}/rebound`;
    expect(await refusal(addWebhookEndpoint(t.db, { url }, { outbound: flipping }))).toBeNull();
    answers = ['127.0.0.1'];
    const [d] = await deliveriesTo([url]);
    await webhookDeliverTask({ db: t.db, render, outbound: flipping })({ deliveryId: d!.id }, helpers());
    expect(await deliveryRow(d!.id)).toMatchObject({ status: 'DEAD', attempts: 0 });
    expect((await deliveryRow(d!.id)).last_error).toMatch(/flip\.rebind\.test resolves to 127\.0\.0\.1, a loopback address/);
    expect(hits).toEqual([]);
  });

  it('alert receivers: dead at once with the reason, no request made', async () => {
    const { eventId } = await createOpenEvent(t.db, { name: 'Forgery Night', onsaleAt: new Date(Date.now() - 60_000).toISOString() });
    const ids: string[] = [];
    for (const url of urls()) {
      const { rows } = await sql<{ id: string }>`
        INSERT INTO alert_endpoints (url, event_id, min_severity, secret, created_by)
        VALUES (${url}, ${eventId}, 'warning', 'a-secret-of-enough-length', 'test') RETURNING id`.execute(t.db);
      ids.push(rows[0]!.id);
    }
    await new WarRoomMonitor({ db: t.db }).runOnce();
    const task = alertDeliverTask({ db: t.db, outbound: strict });
    for (const [i, id] of ids.entries()) {
      const [delivery] = await listAlertDeliveries(t.db, id);
      expect(delivery, INTERNAL_URLS[i]).toBeDefined();
      await task({ deliveryId: delivery!.id }, helpers());
      expect((await listAlertDeliveries(t.db, id))[0], INTERNAL_URLS[i]).toMatchObject({
        status: 'DEAD',
        attempts: 0,
        lastError: expect.stringMatching(/^refused, no request made: /),
      });
    }
    expect(hits).toEqual([]);
  });
});

describe('an allowed receiver: no redirect followed, no body shown', () => {
  const local: OutboundPolicy = { allowHosts: ['127.0.0.1'], resolve };

  it('a redirect is not followed (not even to an allowed host); a failure shows its status and time, not its body', async () => {
    const rows = await deliveriesTo([`http://127.0.0.1:${port}/moved`, `http://127.0.0.1:${port}/broken`, `http://127.0.0.1:${port}/fine`]);
    const task = webhookDeliverTask({ db: t.db, render, outbound: local });
    for (const d of rows) await Promise.resolve(task({ deliveryId: d.id }, helpers())).catch(() => undefined);
    const byPath = async (path: string) => deliveryRow(rows.find((r) => r.url.endsWith(path))!.id);
    expect(await byPath('/moved')).toMatchObject({ status: 'RETRYING', attempts: 1, last_status_code: 302 });
    expect((await byPath('/moved')).last_error).toMatch(/^HTTP 302 after \d+ ms \(a redirect: not followed/);
    expect(await byPath('/broken')).toMatchObject({ status: 'RETRYING', attempts: 1, last_status_code: 500 });
    expect((await byPath('/broken')).last_error).toMatch(/^HTTP 500 after \d+ ms$/);
    expect(await byPath('/fine')).toMatchObject({ status: 'DELIVERED', last_status_code: 200 });
    expect(hits.sort()).toEqual(['/broken', '/fine', '/moved']);
    expect(hits).not.toContain('/landed');
    hits.length = 0;
  });

  it('a host allowed by name is reached through the checked resolver; the same address under another name is not', async () => {
    const corp: OutboundPolicy = { allowHosts: ['hooks.corp.test'], resolve };
    const rows = await deliveriesTo([`http://hooks.corp.test:${port}/corp`, `http://loopback.rebind.test:${port}/other-name`]);
    const task = webhookDeliverTask({ db: t.db, render, outbound: corp });
    for (const d of rows) await task({ deliveryId: d.id }, helpers());
    expect(await deliveryRow(rows.find((r) => r.url.includes('corp'))!.id)).toMatchObject({ status: 'DELIVERED', last_status_code: 200 });
    expect(await deliveryRow(rows.find((r) => r.url.includes('other-name'))!.id)).toMatchObject({ status: 'DEAD', attempts: 0 });
    expect(hits).toEqual(['/corp']);
    hits.length = 0;
  });
});
