import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import { DomainError } from '../errors.js';
import { createTestDatabase, type TestDatabase } from '../testing/index.js';
import {
  addWebhookEndpoint,
  enqueueDeliveries,
  listDeliveries,
  listWebhookEndpoints,
  redeliver,
  setWebhookEndpointActive,
  WEBHOOK_DELIVER_TASK,
  WEBHOOK_LANES_PER_ENDPOINT,
} from './index.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase(inject('templateDatabaseUrl'));
});
afterAll(() => t.drop());

const newListing = async (name = 'Listing') =>
  (await t.db.insertInto('listings').values({ name }).returning('id').executeTakeFirstOrThrow()).id;

/** The graphile jobs that carry deliveries, as the worker will see them. */
async function deliveryJobs(deliveryIds: number[]) {
  if (deliveryIds.length === 0) return [];
  const { rows } = await sql<{ delivery_id: number; max_attempts: number; queue_name: string | null }>`
    SELECT (p.payload->>'deliveryId')::bigint AS delivery_id, j.max_attempts, j.queue_name
    FROM graphile_worker.jobs j JOIN graphile_worker._private_jobs p ON p.id = j.id
    WHERE j.task_identifier = ${WEBHOOK_DELIVER_TASK} AND (p.payload->>'deliveryId')::bigint = ANY(${deliveryIds}::bigint[])
    ORDER BY 1`.execute(t.db);
  return rows;
}

async function expectDomainError(p: Promise<unknown>, match: Partial<Pick<DomainError, 'kind' | 'code'>> & { field?: string }) {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(DomainError);
  const d = e as DomainError;
  const { field, ...rest } = match;
  expect(d).toMatchObject(rest);
  if (field !== undefined) expect(d.details.field).toBe(field);
}

describe('webhook endpoints', () => {
  it('adds an endpoint with a generated secret shown once; listing endpoints never shows it', async () => {
    const listingId = await newListing();
    const added = await addWebhookEndpoint(t.db, { url: 'https://gateway.example/hooks', listingId, maxAttempts: 3, timeoutMs: 2000 });
    expect(added).toMatchObject({
      url: 'https://gateway.example/hooks',
      listingId,
      active: true,
      maxAttempts: 3,
      timeoutMs: 2000,
      consecutiveFailures: 0,
      openUntil: null,
    });
    expect(added.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const again = await addWebhookEndpoint(t.db, { url: 'https://second.gateway.example/x' });
    expect(again.secret).not.toBe(added.secret);
    expect(again).toMatchObject({ listingId: null, maxAttempts: 8, timeoutMs: 5000 });
    const given = await addWebhookEndpoint(t.db, { url: 'https://third.gateway.example/y', secret: 'a-shared-secret-of-enough-length' });
    expect(given.secret).toBe('a-shared-secret-of-enough-length');

    const listed = await listWebhookEndpoints(t.db);
    expect(listed.map((e) => e.id)).toEqual(expect.arrayContaining([added.id, again.id, given.id]));
    for (const e of listed) expect(e).not.toHaveProperty('secret');
    for (const e of [added, again, given]) await setWebhookEndpointActive(t.db, e.id, false);
  });

  it('refuses bad input naming the field, and an unknown listing as LISTING_NOT_FOUND', async () => {
    await expectDomainError(addWebhookEndpoint(t.db, { url: 'ftp://example.com/x' }), {
      kind: 'invalid',
      code: 'INVALID_WEBHOOK_ENDPOINT',
      field: 'url',
    });
    await expectDomainError(addWebhookEndpoint(t.db, { url: 'not a url' }), { kind: 'invalid', field: 'url' });
    await expectDomainError(addWebhookEndpoint(t.db, { url: 'https://x.example', maxAttempts: 0 }), {
      kind: 'invalid',
      field: 'maxAttempts',
    });
    await expectDomainError(addWebhookEndpoint(t.db, { url: 'https://x.example', timeoutMs: 60_001 }), {
      kind: 'invalid',
      field: 'timeoutMs',
    });
    await expectDomainError(addWebhookEndpoint(t.db, { url: 'https://x.example', secret: 'short' }), { kind: 'invalid', field: 'secret' });
    await expectDomainError(addWebhookEndpoint(t.db, { url: 'https://x.example', listingId: 'nope' }), {
      kind: 'invalid',
      field: 'listingId',
    });
    await expectDomainError(addWebhookEndpoint(t.db, { url: 'https://x.example', listingId: '00000000-0000-4000-8000-000000000000' }), {
      kind: 'not_found',
      code: 'LISTING_NOT_FOUND',
      field: 'listingId',
    });
    await expectDomainError(setWebhookEndpointActive(t.db, '00000000-0000-4000-8000-000000000000', false), {
      kind: 'not_found',
      code: 'WEBHOOK_ENDPOINT_NOT_FOUND',
    });
    await expectDomainError(setWebhookEndpointActive(t.db, 'not-a-uuid', false), { kind: 'not_found', code: 'WEBHOOK_ENDPOINT_NOT_FOUND' });
    await expectDomainError(listDeliveries(t.db, { status: 'LOST' as never, limit: 10 }), { kind: 'invalid', field: 'status' });
  });
});

describe('enqueueDeliveries', () => {
  it('creates nothing when the listing has no endpoint', async () => {
    const listingId = await newListing();
    const before = await sql<{ d: number; j: number }>`
      SELECT (SELECT count(*) FROM webhook_deliveries)::int AS d, (SELECT count(*) FROM graphile_worker.jobs)::int AS j`.execute(t.db);
    const ids = await t.db
      .transaction()
      .execute((trx) => enqueueDeliveries(trx, { listingId, availabilityId: null, notificationIds: [1, 2, 3] }));
    expect(ids).toEqual([]);
    const after = await sql<{ d: number; j: number }>`
      SELECT (SELECT count(*) FROM webhook_deliveries)::int AS d, (SELECT count(*) FROM graphile_worker.jobs)::int AS j`.execute(t.db);
    expect(after.rows[0]).toEqual(before.rows[0]);
  });

  it('one delivery and one job (with the endpoint max_attempts, in the endpoint lane) per active endpoint of the listing or of all listings', async () => {
    const listingId = await newListing();
    const other = await newListing();
    const mine = await addWebhookEndpoint(t.db, { url: 'https://a.example/hook', listingId, maxAttempts: 3 });
    const all = await addWebhookEndpoint(t.db, { url: 'https://b.example/hook', maxAttempts: 5 });
    const off = await addWebhookEndpoint(t.db, { url: 'https://c.example/hook', listingId });
    await setWebhookEndpointActive(t.db, off.id, false);
    const elsewhere = await addWebhookEndpoint(t.db, { url: 'https://d.example/hook', listingId: other });

    const ids = await t.db
      .transaction()
      .execute((trx) => enqueueDeliveries(trx, { listingId, availabilityId: null, notificationIds: [10, 11, 12] }));
    expect(ids).toHaveLength(2);
    const rows = await t.db.selectFrom('webhook_deliveries').selectAll().where('id', 'in', ids).orderBy('id').execute();
    expect(rows.map((r) => r.endpoint_id).sort()).toEqual([mine.id, all.id].sort());
    for (const r of rows)
      expect({ ...r, notification_ids: r.notification_ids.map(Number) }).toMatchObject({
        status: 'PENDING',
        attempts: 0,
        notification_ids: [10, 11, 12],
        availability_id: null,
      });

    const jobs = await deliveryJobs(ids);
    expect(jobs).toHaveLength(2);
    for (const j of jobs) {
      const d = rows.find((r) => r.id === j.delivery_id)!;
      expect(j.max_attempts).toBe(d.endpoint_id === mine.id ? 3 : 5);
      expect(j.queue_name).toBe(`webhook:${d.endpoint_id}:${d.id % WEBHOOK_LANES_PER_ENDPOINT}`);
    }
    for (const e of [all, elsewhere]) await setWebhookEndpointActive(t.db, e.id, false);
  });

  it('rolls back with the fan-out: no delivery and no job survive a rolled-back transaction', async () => {
    const listingId = await newListing();
    const e = await addWebhookEndpoint(t.db, { url: 'https://a.example/hook', listingId });
    let ids: number[] = [];
    await expect(
      t.db.transaction().execute(async (trx) => {
        ids = await enqueueDeliveries(trx, { listingId, availabilityId: null, notificationIds: [1] });
        throw new Error('fan-out failed');
      }),
    ).rejects.toThrow('fan-out failed');
    expect(ids).toHaveLength(1);
    expect(await t.db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', e.id).execute()).toEqual([]);
    expect(await deliveryJobs(ids)).toEqual([]);
    await setWebhookEndpointActive(t.db, e.id, false);
  });

  it('batches: 200,000 notifications in 400 chunks of 500 to 3 endpoints make 1,200 deliveries and jobs (one per chunk and endpoint), not one per notification', async () => {
    const listingId = await newListing();
    const endpoints = await Promise.all([1, 2, 3].map((i) => addWebhookEndpoint(t.db, { url: `https://e${i}.example/hook`, listingId })));
    let enqueueMs = 0;
    let created = 0;
    const started = performance.now();
    // As the fan-out does it: one transaction per chunk (its commit is the fan-out's cost; the enqueue is timed apart).
    for (let chunk = 0; chunk < 400; chunk++) {
      const notificationIds = Array.from({ length: 500 }, (_, i) => chunk * 500 + i + 1);
      await t.db.transaction().execute(async (trx) => {
        const t0 = performance.now();
        created += (await enqueueDeliveries(trx, { listingId, availabilityId: null, notificationIds })).length;
        enqueueMs += performance.now() - t0;
      });
    }
    const seconds = enqueueMs / 1000;
    const withCommits = (performance.now() - started) / 1000;
    expect(created).toBe(1200);
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM graphile_worker.jobs j JOIN graphile_worker._private_jobs p ON p.id = j.id
        JOIN webhook_deliveries d ON d.id = (p.payload->>'deliveryId')::bigint
      WHERE j.task_identifier = ${WEBHOOK_DELIVER_TASK} AND d.endpoint_id = ANY(${endpoints.map((e) => e.id)}::uuid[])`.execute(t.db);
    expect(rows[0]!.n).toBe(1200);
    // The time is reported, not a pass mark (about 1 s on an idle machine).
    console.info(
      `enqueueDeliveries: 400 chunks x 3 endpoints: ${seconds.toFixed(2)} s enqueueing, ${withCommits.toFixed(2)} s with a commit per chunk`,
    );
    for (const e of endpoints) await setWebhookEndpointActive(t.db, e.id, false);
  });
});

describe('deliveries: list and redeliver', () => {
  it('lists by endpoint and status, and redelivers only a DEAD delivery of an active endpoint', async () => {
    const listingId = await newListing();
    const e = await addWebhookEndpoint(t.db, { url: 'https://a.example/hook', listingId, maxAttempts: 4 });
    const [a, b] = await t.db
      .transaction()
      .execute(async (trx) => [
        ...(await enqueueDeliveries(trx, { listingId, availabilityId: null, notificationIds: [1] })),
        ...(await enqueueDeliveries(trx, { listingId, availabilityId: null, notificationIds: [2] })),
      ]);
    // As the worker leaves them: one dead-lettered (its job gone), one still pending.
    await sql`DELETE FROM graphile_worker._private_jobs WHERE (payload->>'deliveryId')::bigint = ${a!}`.execute(t.db);
    await t.db
      .updateTable('webhook_deliveries')
      .set({ status: 'DEAD', attempts: 4, last_status_code: 500, last_error: 'HTTP 500' })
      .where('id', '=', a!)
      .execute();

    expect((await listDeliveries(t.db, { endpointId: e.id, limit: 10 })).map((d) => d.id)).toEqual([b, a]);
    const dead = await listDeliveries(t.db, { endpointId: e.id, status: 'DEAD', limit: 10 });
    expect(dead).toEqual([
      expect.objectContaining({ id: a, status: 'DEAD', attempts: 4, lastStatusCode: 500, lastError: 'HTTP 500', notificationIds: [1] }),
    ]);

    await expectDomainError(redeliver(t.db, b!), { kind: 'conflict', code: 'DELIVERY_NOT_DEAD' });
    await expectDomainError(redeliver(t.db, 987654321), { kind: 'not_found', code: 'WEBHOOK_DELIVERY_NOT_FOUND' });

    await setWebhookEndpointActive(t.db, e.id, false);
    await expectDomainError(redeliver(t.db, a!), { kind: 'conflict', code: 'WEBHOOK_ENDPOINT_INACTIVE' });
    await setWebhookEndpointActive(t.db, e.id, true);

    const again = await redeliver(t.db, a!);
    expect(again).toMatchObject({ id: a, status: 'PENDING', attempts: 0 });
    expect(await deliveryJobs([a!])).toEqual([
      { delivery_id: a, max_attempts: 4, queue_name: `webhook:${e.id}:${a! % WEBHOOK_LANES_PER_ENDPOINT}` },
    ]);
    await expectDomainError(redeliver(t.db, a!), { kind: 'conflict', code: 'DELIVERY_NOT_DEAD' });
    await setWebhookEndpointActive(t.db, e.id, false);
  });
});
